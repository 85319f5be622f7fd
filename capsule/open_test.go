package capsule_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/capsule/internal/layout"
)

func mustOpen(t testing.TB, path string, opts capsule.OpenOptions) *capsule.Capsule {
	t.Helper()
	c, err := capsule.Open(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// packedLayout packs the small test study into a layout directory and
// returns the study and the layout.
func packedLayout(t testing.TB) (studyDir, layout string) {
	t.Helper()
	studyDir, layout = t.TempDir(), filepath.Join(t.TempDir(), "c")
	writePackStudy(t, studyDir, 20)
	mustPack(t, studyDir, layout, capsule.PackOptions{})
	return studyDir, layout
}

// The helpers below edit a packed layout the way a hostile or broken
// capsule would differ from a good one, keeping it a well-formed layout so
// that the check under test is the one that fails.

// putBlob stores b in the layout and returns its descriptor.
func putBlob(t testing.TB, layout, mediaType string, b []byte) ocispec.Descriptor {
	t.Helper()
	d := digest.FromBytes(b)
	if err := os.WriteFile(filepath.Join(layout, "blobs", "sha256", d.Encoded()), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return ocispec.Descriptor{MediaType: mediaType, Digest: d, Size: int64(len(b))}
}

// editManifest rewrites the layout's manifest and points index.json at the
// new one.
func editManifest(t testing.TB, layout string, edit func(m *ocispec.Manifest)) {
	t.Helper()
	var idx ocispec.Index
	readJSON(t, filepath.Join(layout, "index.json"), &idx)
	var m ocispec.Manifest
	readJSON(t, filepath.Join(layout, "blobs", "sha256", idx.Manifests[0].Digest.Encoded()), &m)
	edit(&m)
	b, _ := json.Marshal(m)
	d := putBlob(t, layout, ocispec.MediaTypeImageManifest, b)
	idx.Manifests[0].Digest, idx.Manifests[0].Size = d.Digest, d.Size
	b, _ = json.Marshal(idx)
	if err := os.WriteFile(filepath.Join(layout, "index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// editConfig rewrites the config blob as generic JSON.
func editConfig(t testing.TB, layout string, edit func(cfg map[string]any)) {
	t.Helper()
	editManifest(t, layout, func(m *ocispec.Manifest) {
		var cfg map[string]any
		readJSON(t, filepath.Join(layout, "blobs", "sha256", m.Config.Digest.Encoded()), &cfg)
		edit(cfg)
		b, _ := json.Marshal(cfg)
		m.Config = putBlob(t, layout, m.Config.MediaType, b)
	})
}

// layerIndex finds a layer by a part of its title.
func layerIndex(t testing.TB, m *ocispec.Manifest, part string) int {
	t.Helper()
	for i, l := range m.Layers {
		if strings.Contains(l.Annotations[ocispec.AnnotationTitle], part) {
			return i
		}
	}
	t.Fatalf("no layer %q", part)
	return -1
}

// wantProblem checks that err is an ErrFormat Problem about what.
func wantProblem(t testing.TB, err error, what string) *capsule.Problem {
	t.Helper()
	var p *capsule.Problem
	if !errors.Is(err, capsule.ErrFormat) || !errors.As(err, &p) {
		t.Fatalf("error %v: expected a capsule.Problem about %s", err, what)
	}
	if !strings.Contains(p.What, what) {
		t.Fatalf("problem %q: expected one about %s", err, what)
	}
	return p
}

func TestOpenRoundTrip(t *testing.T) {
	ctx := context.Background()
	studyDir, layout := packedLayout(t)
	tarPath := filepath.Join(t.TempDir(), "c.tar")
	mustPack(t, studyDir, tarPath, capsule.PackOptions{})
	orig := fileTree(t, studyDir)

	for _, p := range []string{layout, tarPath} {
		c := mustOpen(t, p, capsule.OpenOptions{})
		var titles []string
		for _, f := range c.Files() {
			titles = append(titles, f.Path)
			b, err := c.ReadFile(ctx, f.Path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, orig[f.Path]) || int64(len(b)) != f.Size {
				t.Errorf("%s: %d bytes read, %d in the study, size %d", f.Path, len(b), len(orig[f.Path]), f.Size)
			}
		}
		if !slices.Equal(titles, packedTitles()) {
			t.Errorf("files %v", titles)
		}
		if c.Config.Study != "tiny" || len(c.Config.Runs) != 1 || c.Config.Runs[0].Record.End == nil {
			t.Errorf("config %+v", c.Config)
		}

		dest := filepath.Join(t.TempDir(), "unpacked")
		if err := c.Unpack(ctx, dest); err != nil {
			t.Fatal(err)
		}
		want := map[string][]byte{}
		for _, title := range titles {
			want[title] = orig[title]
		}
		sameTree(t, want, fileTree(t, dest))
		// The unpacked study packs to the same capsule.
		res := mustPack(t, dest, filepath.Join(t.TempDir(), "again"), capsule.PackOptions{})
		if res.Manifest.Digest != c.Descriptor.Digest {
			t.Errorf("repacked %s, expected %s", res.Manifest.Digest, c.Descriptor.Digest)
		}
	}
}

func TestOpenRefusesUnsafeTitles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		title string // the results layer's new title
		dup   bool   // or: the same title as run.json
	}{
		{"dot-dot", "../../evil.json", false},
		{"dot-dot inside", "runs/../../evil.json", false},
		{"absolute", "/etc/passwd", false},
		{"backslash", `runs\..\..\evil.json`, false},
		{"empty", "", false},
		{"dot", "./study.json", false},
		{"empty component", "runs//x.json", false},
		{"trailing slash", "runs/x/", false},
		{"hidden", ".git/config", false},
		{"hidden inside", "runs/baseline/.ssh/authorized_keys", false},
		{"control character", "runs/x\n.json", false},
		{"duplicate", "", true},
		{"file and directory", "runs/baseline/run.json/x.json", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, layout := packedLayout(t)
			editManifest(t, layout, func(m *ocispec.Manifest) {
				i := layerIndex(t, m, "results_")
				title := tc.title
				if tc.dup {
					title = "runs/baseline/run.json"
				}
				if tc.name == "empty" {
					delete(m.Layers[i].Annotations, ocispec.AnnotationTitle)
					return
				}
				m.Layers[i].Annotations[ocispec.AnnotationTitle] = title
			})
			_, err := capsule.Open(context.Background(), layout, capsule.OpenOptions{})
			p := wantProblem(t, err, "title")
			if p.Blob == "" {
				t.Errorf("problem names no blob: %v", err)
			}
		})
	}
}

func TestOpenRefusesMismatchedContent(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, layer, what string
		edit              func(t *testing.T, layout string, l *ocispec.Descriptor)
	}{
		{"changed bytes", "run.json", "digest", func(t *testing.T, layout string, l *ocispec.Descriptor) {
			p := filepath.Join(layout, "blobs", "sha256", l.Digest.Encoded())
			b, _ := os.ReadFile(p)
			b[10] ^= 1
			os.WriteFile(p, b, 0o644)
		}},
		{"changed samples", "samples_", "digest", func(t *testing.T, layout string, l *ocispec.Descriptor) {
			p := filepath.Join(layout, "blobs", "sha256", l.Digest.Encoded())
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x55
			os.WriteFile(p, b, 0o644)
		}},
		{"size larger", "study.yaml", "size", func(t *testing.T, layout string, l *ocispec.Descriptor) { l.Size++ }},
		{"size smaller", "study.yaml", "size", func(t *testing.T, layout string, l *ocispec.Descriptor) { l.Size-- }},
		{"missing blob", "report.md", "blob", func(t *testing.T, layout string, l *ocispec.Descriptor) {
			os.Remove(filepath.Join(layout, "blobs", "sha256", l.Digest.Encoded()))
		}},
		{"wrong content digest", "samples_", "decompressed digest", func(t *testing.T, layout string, l *ocispec.Descriptor) {
			l.Annotations[capsule.AnnotationContentDigest] = digest.FromString("other").String()
		}},
		{"wrong content size", "samples_", "decompressed size", func(t *testing.T, layout string, l *ocispec.Descriptor) {
			n, _ := strconv.Atoi(l.Annotations[capsule.AnnotationContentSize])
			l.Annotations[capsule.AnnotationContentSize] = strconv.Itoa(n + 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, layout := packedLayout(t)
			var title string
			editManifest(t, layout, func(m *ocispec.Manifest) {
				i := layerIndex(t, m, tc.layer)
				title = m.Layers[i].Annotations[ocispec.AnnotationTitle]
				tc.edit(t, layout, &m.Layers[i])
			})
			c := mustOpen(t, layout, capsule.OpenOptions{})
			_, err := c.ReadFile(ctx, title)
			if p := wantProblem(t, err, tc.what); p.Path != title {
				t.Errorf("problem %v names %q, expected %q", err, p.Path, title)
			}

			// Unpack stops and leaves nothing: no study, no temporary files.
			parent := t.TempDir()
			err = c.Unpack(ctx, filepath.Join(parent, "study"))
			wantProblem(t, err, tc.what)
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Errorf("unpack left %v", entries)
			}

			v, err := capsule.Verify(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if v.OK || len(v.Problems) == 0 || v.Problems[0].Path != title || !strings.Contains(v.Problems[0].What, tc.what) {
				t.Errorf("verification %s", v)
			}
		})
	}
}

// TestOpenLayoutFileTypes replaces blobs of a layout directory with things
// that are not files: a link out of the layout, a FIFO (which would block
// a reader that opened it).
func TestOpenLayoutFileTypes(t *testing.T) {
	ctx := context.Background()
	_, layout := packedLayout(t)
	c := mustOpen(t, layout, capsule.OpenOptions{})
	for _, tc := range []struct {
		file    string
		replace func(p string) error
	}{
		{"report.md", func(p string) error { return os.Symlink("/etc/passwd", p) }},
		{"report.html", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
	} {
		f, _ := c.File(tc.file)
		p := filepath.Join(layout, "blobs", "sha256", f.Descriptor.Digest.Encoded())
		os.Remove(p)
		if err := tc.replace(p); err != nil {
			t.Skip(err)
		}
		_, err := c.ReadFile(ctx, tc.file)
		wantProblem(t, err, "file type")
	}
	v, err := capsule.Verify(ctx, c)
	if err != nil || v.OK || len(v.Problems) != 2 {
		t.Errorf("%v\n%s", err, v)
	}
}

func TestOpenLimits(t *testing.T) {
	_, layout := packedLayout(t)
	c := mustOpen(t, layout, capsule.OpenOptions{})
	var largest, total, samples int64
	for _, f := range c.Files() {
		largest = max(largest, f.Descriptor.Size)
		total += f.Size
		if f.Compressed() {
			samples = f.Size
		}
	}
	for _, tc := range []struct {
		opts capsule.OpenOptions
		what string
	}{
		{capsule.OpenOptions{MaxBlobBytes: largest - 1}, "size"},
		{capsule.OpenOptions{MaxTotalBytes: total - 1}, "total size"},
		{capsule.OpenOptions{MaxDecompressedBytes: samples - 1}, "decompressed size"},
		{capsule.OpenOptions{MaxConfigBytes: 100}, "size"},
	} {
		_, err := capsule.Open(context.Background(), layout, tc.opts)
		p := wantProblem(t, err, tc.what)
		if !strings.Contains(p.Expected, "Max") {
			t.Errorf("problem %v does not name the limit", p)
		}
	}
}

// zstdLayer replaces the samples layer with the given compressed bytes,
// declaring size and digest for the content.
func zstdLayer(t testing.TB, layout string, compressed []byte, size int64, content digest.Digest) string {
	var title string
	editManifest(t, layout, func(m *ocispec.Manifest) {
		i := layerIndex(t, m, "samples_")
		title = m.Layers[i].Annotations[ocispec.AnnotationTitle]
		d := putBlob(t, layout, capsule.MediaSamples, compressed)
		d.Annotations = map[string]string{
			ocispec.AnnotationTitle:         title,
			capsule.AnnotationContentSize:   strconv.FormatInt(size, 10),
			capsule.AnnotationContentDigest: content.String(),
		}
		m.Layers[i] = d
	})
	return title
}

func TestOpenRefusesZstdBombs(t *testing.T) {
	ctx := context.Background()
	const big = 64 << 20
	zeros := make([]byte, big)
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	bomb := enc.EncodeAll(zeros, nil)
	t.Logf("%d bytes of zeros compress to %d", big, len(bomb))

	// Declared small, inflates large: stopped once past the declared size.
	_, layout := packedLayout(t)
	title := zstdLayer(t, layout, bomb, 1000, digest.FromBytes(zeros[:1000]))
	c := mustOpen(t, layout, capsule.OpenOptions{})
	_, err := c.ReadFile(ctx, title)
	wantProblem(t, err, "decompressed size")

	// Declared honestly, but above the limit: refused before reading.
	_, layout = packedLayout(t)
	zstdLayer(t, layout, bomb, big, digest.FromBytes(zeros))
	_, err = capsule.Open(ctx, layout, capsule.OpenOptions{MaxDecompressedBytes: big - 1})
	wantProblem(t, err, "decompressed size")

	// A frame asking for a window above 8 MiB (of data that does not
	// compress, so that the ratio is not what is refused).
	var wide bytes.Buffer
	w, _ := zstd.NewWriter(&wide, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(64<<20))
	data := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{}).Read(data)
	w.Write(data)
	w.Close()
	_, layout = packedLayout(t)
	title = zstdLayer(t, layout, wide.Bytes(), int64(len(data)), digest.FromBytes(data))
	c = mustOpen(t, layout, capsule.OpenOptions{})
	_, err = c.ReadFile(ctx, title)
	wantProblem(t, err, "zstd window")

	// Not zstd at all.
	_, layout = packedLayout(t)
	title = zstdLayer(t, layout, []byte("not zstd, just text"), 5, digest.FromString("hello"))
	c = mustOpen(t, layout, capsule.OpenOptions{})
	_, err = c.ReadFile(ctx, title)
	wantProblem(t, err, "zstd stream")
}

// zstdZeros is n zero bytes compressed as Pack compresses samples, and
// the digest of the zeros: a zstd bomb, of about 7 KB per 64 MiB.
func zstdZeros(t testing.TB, n int64) ([]byte, digest.Digest) {
	t.Helper()
	var out bytes.Buffer
	enc, err := zstd.NewWriter(&out, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(capsule.MaxZstdWindow))
	if err != nil {
		t.Fatal(err)
	}
	h := digest.SHA256.Digester()
	zeros := make([]byte, 1<<20)
	for left := n; left > 0; left -= int64(len(zeros)) {
		b := zeros[:min(left, int64(len(zeros)))]
		enc.Write(b)
		h.Hash().Write(b)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), h.Digest()
}

// TestOpenRefusesCompressionRatio: a samples layer that declares, honestly,
// far more than its stored size times the cap is refused when the capsule
// is opened, before a byte of it is decompressed; with the cap raised it
// opens and unpacks to what it declares.
func TestOpenRefusesCompressionRatio(t *testing.T) {
	ctx := context.Background()
	const size = 8 << 20
	bomb, sum := zstdZeros(t, size)
	_, layout := packedLayout(t)
	title := zstdLayer(t, layout, bomb, size, sum)
	t.Logf("%d bytes of zeros in %d of zstd: %d times", size, len(bomb), size/len(bomb))

	_, err := capsule.Open(ctx, layout, capsule.OpenOptions{})
	p := wantProblem(t, err, "compression ratio")
	if p.Path != title || !strings.Contains(p.Expected, "MaxCompressionRatio") || !strings.Contains(p.Expected, strconv.Itoa(capsule.DefaultMaxCompressionRatio)) {
		t.Errorf("the problem does not name the layer and the limit: %v", p)
	}
	// A cap just below the layer's ratio refuses it; one just above lets
	// it through.
	for _, tc := range []struct {
		ratio int64
		ok    bool
	}{{size / int64(len(bomb)), false}, {size/int64(len(bomb)) + 1, true}} {
		c, err := capsule.Open(ctx, layout, capsule.OpenOptions{MaxCompressionRatio: tc.ratio})
		if tc.ok != (err == nil) {
			t.Fatalf("ratio cap %d: %v", tc.ratio, err)
		}
		if err != nil {
			continue
		}
		dest := filepath.Join(t.TempDir(), "study")
		if err := c.Unpack(ctx, dest); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(filepath.Join(dest, filepath.FromSlash(title))); err != nil || st.Size() != size {
			t.Errorf("unpacked %v, %v; expected %d bytes", st, err, size)
		}
		c.Close()
	}

	// The limits are overridable, and the smallest default stays above
	// what the packed test study needs.
	_, layout = packedLayout(t)
	for _, f := range mustOpen(t, layout, capsule.OpenOptions{}).Files() {
		if !f.Compressed() {
			continue
		}
		if r := (f.Size - 1) / f.Descriptor.Size; r >= 1 {
			_, err := capsule.Open(ctx, layout, capsule.OpenOptions{MaxCompressionRatio: r})
			wantProblem(t, err, "compression ratio")
		}
	}
}

// TestUnpackRemovesLeftovers: a killed unpack's hidden folder beside the
// destination (".DEST.unpack-N", no process holding its lock) is removed
// by the next unpack to that destination; a concurrent unpack's (locked)
// and other names are left alone.
func TestUnpackRemovesLeftovers(t *testing.T) {
	ctx := context.Background()
	_, lay := packedLayout(t)
	c := mustOpen(t, lay, capsule.OpenOptions{})
	parent := t.TempDir()
	dest := filepath.Join(parent, "study")

	stale := filepath.Join(parent, ".study.unpack-2718281828")
	if err := os.MkdirAll(filepath.Join(stale, "runs", "baseline"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "runs", "baseline", "samples.jsonl"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	live, release, err := layout.MkdirTemp(parent, ".study.unpack-")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	others := []string{filepath.Join(parent, ".study.unpack-mine"), filepath.Join(parent, ".other.unpack-1")}
	for _, o := range others {
		os.Mkdir(o, 0o755)
	}

	if err := c.Unpack(ctx, dest); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed unpack's folder is still there (%v)", err)
	}
	for _, p := range append([]string{live, dest}, others...) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}

	// Once its unpack has ended without cleaning up, it goes too.
	release()
	os.RemoveAll(dest)
	if err := c.Unpack(ctx, dest); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an unlocked leftover is still there (%v)", err)
	}
}

func TestOpenRefusesUnknownTypes(t *testing.T) {
	for _, tc := range []struct {
		name, what string
		edit       func(m *ocispec.Manifest)
	}{
		{"layer media type", "media type", func(m *ocispec.Manifest) { m.Layers[0].MediaType = "application/vnd.example.new+json" }},
		{"config media type", "media type", func(m *ocispec.Manifest) {
			m.Config.MediaType = "application/vnd.evalcapsule.capsule.config.v2+json"
		}},
		{"artifactType", "artifactType", func(m *ocispec.Manifest) { m.ArtifactType = "application/vnd.evalcapsule.capsule.v2" }},
		{"no artifactType", "artifactType", func(m *ocispec.Manifest) { m.ArtifactType = "" }},
		{"bad digest", "digest", func(m *ocispec.Manifest) { m.Layers[1].Digest = "sha256:../../../etc/passwd" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, layout := packedLayout(t)
			editManifest(t, layout, tc.edit)
			_, err := capsule.Open(context.Background(), layout, capsule.OpenOptions{})
			wantProblem(t, err, tc.what)
		})
	}
}

func TestOpenFormatVersion(t *testing.T) {
	ctx := context.Background()
	_, layout := packedLayout(t)
	editConfig(t, layout, func(cfg map[string]any) { cfg["format_version"] = "2.0"; cfg["runs"] = "a new shape" })
	_, err := capsule.Open(ctx, layout, capsule.OpenOptions{})
	p := wantProblem(t, err, "format version")
	if p.Found != `"2.0"` || !strings.Contains(p.Expected, "1.x") || !strings.Contains(err.Error(), "reads capsule format 1.0") {
		t.Errorf("problem %v", err)
	}

	_, layout = packedLayout(t)
	editConfig(t, layout, func(cfg map[string]any) { cfg["schema"] = "evalcapsule.capsule.config/v9" })
	_, err = capsule.Open(ctx, layout, capsule.OpenOptions{})
	wantProblem(t, err, "config schema")

	// A later minor version with a field this program does not know opens.
	_, layout = packedLayout(t)
	editConfig(t, layout, func(cfg map[string]any) { cfg["format_version"] = "1.7"; cfg["signatures"] = []any{"x"} })
	c := mustOpen(t, layout, capsule.OpenOptions{})
	if c.Config.FormatVersion != "1.7" {
		t.Errorf("format version %q", c.Config.FormatVersion)
	}
}

// TestOpenConfigTables checks that the tables come back as they went in:
// NaN (stored as null) and lm-eval's "N/A" included.
func TestOpenConfigTables(t *testing.T) {
	studyDir := t.TempDir()
	writePackStudy(t, studyDir, 10)
	att := &analysis.Attribution{Claims: []analysis.ClaimAttribution{{
		Task: "gsm8k", Metric: "exact_match", Filter: "strict-match", Card: 0.45, Baseline: 0.3, Final: 0.3, Unexplained: 0.15,
		UnexplainedCILow: 0.1, UnexplainedCIHigh: 0.2,
		Steps: []analysis.AttributionStep{{Name: "chat", Kind: "run", Value: 0.3, Delta: 0, P: math.NaN(), CILow: -0.01, CIHigh: 0.01}},
	}}}
	rep := &analysis.RescoreReport{Runs: []*analysis.RunReport{{Path: "runs/baseline/output", LMEvalVersion: "0.4.9.1", Checks: []analysis.Check{{
		Task: "gsm8k", Metric: "exact_match", Filter: "strict-match", N: 10, Reported: analysis.Num(0.1), Recomputed: analysis.Num(0.1),
		ReportedStderr: analysis.NA, RecomputedStderr: analysis.Num(math.NaN()), Level: analysis.LevelRescored, Status: analysis.StatusExact,
	}}}}}
	rep.Levels = analysis.CountLevels(rep.Runs) // as analysis.Rescore fills it
	out := filepath.Join(t.TempDir(), "c.tar")
	mustPackTables(t, studyDir, out, capsule.PackOptions{}, att, rep)
	c := mustOpen(t, out, capsule.OpenOptions{})
	got := c.Config.Attribution.Claims[0]
	if !math.IsNaN(got.Steps[0].P) || got.Steps[0].CILow != -0.01 || got.Card != 0.45 || got.Sensitivity != nil {
		t.Errorf("attribution %+v", got)
	}
	ch := c.Config.Rescore.Runs[0].Checks[0]
	if !ch.ReportedStderr.NA || !math.IsNaN(ch.RecomputedStderr.Value) || !ch.Reported.Equal(analysis.Num(0.1)) || c.Config.Rescore.Runs[0].PythonVersion != "" {
		t.Errorf("rescore %+v", ch)
	}
	a, _ := analysis.MarshalJSON(rep)
	b, _ := analysis.MarshalJSON(c.Config.Rescore)
	if !bytes.Equal(a, b) {
		t.Errorf("rescore round trip:\n%s\n%s", a, b)
	}
}

func TestOpenTag(t *testing.T) {
	ctx := context.Background()
	_, layout := packedLayout(t)
	var idx ocispec.Index
	readJSON(t, filepath.Join(layout, "index.json"), &idx)
	first := idx.Manifests[0]
	// A second capsule: the same one, packed at another time.
	var m ocispec.Manifest
	readJSON(t, filepath.Join(layout, "blobs", "sha256", first.Digest.Encoded()), &m)
	m.Annotations[ocispec.AnnotationCreated] = "2026-01-01T00:00:00Z"
	b, _ := json.Marshal(m)
	second := putBlob(t, layout, ocispec.MediaTypeImageManifest, b)
	second.ArtifactType = capsule.ArtifactType
	second.Annotations = map[string]string{ocispec.AnnotationRefName: "v2"}
	first.Annotations = map[string]string{ocispec.AnnotationRefName: "v1"}
	writeIndex := func(ds ...ocispec.Descriptor) {
		idx.Manifests = ds
		b, _ := json.Marshal(idx)
		os.WriteFile(filepath.Join(layout, "index.json"), b, 0o644)
	}
	writeIndex(first, second)

	if _, err := capsule.Open(ctx, layout, capsule.OpenOptions{}); err == nil || !strings.Contains(err.Error(), "2 capsules") {
		t.Errorf("two capsules, no tag: %v", err)
	}
	if c := mustOpen(t, layout, capsule.OpenOptions{Tag: "v2"}); c.Descriptor.Digest != second.Digest {
		t.Errorf("v2 is %s", c.Descriptor.Digest)
	}
	if c := mustOpen(t, layout, capsule.OpenOptions{Tag: first.Digest.String()}); c.Descriptor.Digest != first.Digest {
		t.Errorf("%s is %s", first.Digest, c.Descriptor.Digest)
	}
	if _, err := capsule.Open(ctx, layout, capsule.OpenOptions{Tag: "v3"}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unknown tag: %v", err)
	}

	// One capsule under two tags, and a replay report beside it: the
	// capsule is the only one.
	report := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: capsule.ReplayArtifactType, Digest: second.Digest, Size: second.Size}
	writeIndex(first, ocispec.Descriptor{MediaType: first.MediaType, Digest: first.Digest, Size: first.Size, ArtifactType: capsule.ArtifactType,
		Annotations: map[string]string{ocispec.AnnotationRefName: "v1.0"}}, report)
	if c := mustOpen(t, layout, capsule.OpenOptions{}); c.Descriptor.Digest != first.Digest {
		t.Errorf("opened %s", c.Descriptor.Digest)
	}
}

func TestUnpackRefusesToWriteOutside(t *testing.T) {
	ctx := context.Background()
	_, layout := packedLayout(t)
	c := mustOpen(t, layout, capsule.OpenOptions{})
	outside := t.TempDir()

	// A dest holding a symbolic link out of it: the capsule's runs/...
	// would go through it.
	dest := filepath.Join(t.TempDir(), "study")
	os.MkdirAll(dest, 0o755)
	if err := os.Symlink(outside, filepath.Join(dest, "runs")); err != nil {
		t.Skip(err)
	}
	if err := c.Unpack(ctx, dest); !errors.Is(err, fs.ErrExist) {
		t.Errorf("dest with a symlink: %v", err)
	}
	// A dest that is itself a link.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(outside, link)
	if err := c.Unpack(ctx, link); err == nil {
		t.Error("unpacked through a symlinked dest")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside: %v", entries)
	}

	// An empty directory is filled.
	empty := filepath.Join(t.TempDir(), "empty")
	os.MkdirAll(empty, 0o755)
	if err := c.Unpack(ctx, empty); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(empty, "runs", "baseline", "run.json")); err != nil {
		t.Error(err)
	}
}

func TestOpenTarSafety(t *testing.T) {
	ctx := context.Background()
	_, layout := packedLayout(t)
	build := func(extra func(tw *tar.Writer)) string {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for rel, b := range fileTree(t, layout) {
			tw.WriteHeader(&tar.Header{Name: "./" + rel, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
			tw.Write(b)
		}
		extra(tw)
		tw.Close()
		p := filepath.Join(t.TempDir(), "c.tar")
		os.WriteFile(p, buf.Bytes(), 0o644)
		return p
	}
	// Entries that would escape if extracted are never extracted.
	outside := t.TempDir()
	evil := filepath.Join(outside, "evil")
	p := build(func(tw *tar.Writer) {
		for _, name := range []string{"../../../../" + evil, evil} {
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: 4, Typeflag: tar.TypeReg})
			tw.Write([]byte("evil"))
		}
		tw.WriteHeader(&tar.Header{Name: "blobs/sha256/link", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink})
	})
	c := mustOpen(t, p, capsule.OpenOptions{})
	if err := c.Unpack(ctx, filepath.Join(t.TempDir(), "s")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(evil); err == nil {
		t.Error("a tar entry was written outside")
	}

	// Two entries of one name: which one is the capsule?
	p = build(func(tw *tar.Writer) {
		b := []byte(`{"schemaVersion":2,"manifests":[]}`)
		tw.WriteHeader(&tar.Header{Name: "index.json", Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
		tw.Write(b)
	})
	_, err := capsule.Open(ctx, p, capsule.OpenOptions{})
	wantProblem(t, err, "tar entry")

	// Not a tar.
	junk := filepath.Join(t.TempDir(), "junk.tar")
	os.WriteFile(junk, bytes.Repeat([]byte("junk"), 300), 0o644)
	if _, err := capsule.Open(ctx, junk, capsule.OpenOptions{}); !errors.Is(err, capsule.ErrFormat) {
		t.Errorf("junk: %v", err)
	}
}

// BenchmarkUnpack unpacks a full-size simulated run (about 180 MB) from a
// tar: every blob's digest checked, the samples decompressed and checked
// again, and written. MB/s counts the files written.
func BenchmarkUnpack(b *testing.B) {
	ctx := context.Background()
	studyDir := fullSizeStudy(b)
	tarPath := filepath.Join(b.TempDir(), "c.tar")
	res := mustPack(b, studyDir, tarPath, capsule.PackOptions{})
	c := mustOpen(b, tarPath, capsule.OpenOptions{})
	out := b.TempDir()
	b.SetBytes(res.Bytes)
	for i := 0; b.Loop(); i++ {
		dest := filepath.Join(out, fmt.Sprint(i))
		if err := c.Unpack(ctx, dest); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(dest)
		b.StartTimer()
	}
}

// BenchmarkUnpackBomb opens and unpacks the test capsule whose samples layer
// is a zstd bomb: 256 MiB of zeros in about 28 KB, its decompressed size
// declared honestly. "capped" uses the default limits: Open refuses the
// layer at the ratio cap before reading a byte of it. "uncapped" lifts the
// cap (as before there was one): the 256 MiB are decompressed, checked and
// written. peak-heap-B is the most heap in use above what it was before,
// sampled every millisecond; alloc-B/op what an Open and Unpack allocated;
// written-B/op what they wrote.
func BenchmarkUnpackBomb(b *testing.B) {
	const size = 256 << 20
	bomb, sum := zstdZeros(b, size)
	_, lay := packedLayout(b)
	zstdLayer(b, lay, bomb, size, sum)
	for _, bc := range []struct {
		name string
		opts capsule.OpenOptions
	}{
		{"capped", capsule.OpenOptions{}},
		{"uncapped", capsule.OpenOptions{MaxCompressionRatio: math.MaxInt64}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			out := b.TempDir()
			runtime.GC()
			sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
			metrics.Read(sample)
			base := sample[0].Value.Uint64()
			var peak atomic.Uint64
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				s := []metrics.Sample{{Name: sample[0].Name}}
				tick := time.NewTicker(time.Millisecond)
				defer tick.Stop()
				for {
					metrics.Read(s)
					if v := s[0].Value.Uint64(); v > peak.Load() {
						peak.Store(v)
					}
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
			}()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			allocated := ms.TotalAlloc
			var written int64
			n := 0
			for i := 0; b.Loop(); i++ {
				n++
				c, err := capsule.Open(ctx, lay, bc.opts)
				if err != nil {
					wantProblem(b, err, "compression ratio")
					continue
				}
				dest := filepath.Join(out, strconv.Itoa(i))
				if err := c.Unpack(ctx, dest); err != nil {
					b.Fatal(err)
				}
				c.Close()
				b.StopTimer()
				written += dirSize(b, dest)
				os.RemoveAll(dest)
				b.StartTimer()
			}
			close(stop)
			<-done
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(peak.Load()-min(base, peak.Load())), "peak-heap-B")
			b.ReportMetric(float64(ms.TotalAlloc-allocated)/float64(n), "alloc-B/op")
			b.ReportMetric(float64(written)/float64(n), "written-B/op")
		})
	}
}

// dirSize is the size of the regular files under dir.
func dirSize(t testing.TB, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		n += fi.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
