package capsule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
)

// Placeholders in a fuzzed index.json and manifest. Each input's manifest
// and config are stored under their true digests and the placeholders are
// replaced by those digests and sizes, so that hostile bytes get past the
// digest check to the parsers and checks behind it. Inputs are substituted
// as bytes, not decoded and re-encoded, so that what the parsers see is
// what the fuzzer wrote (duplicate keys, odd escapes and all).
const (
	manifestDigestVar = "@manifest.digest@"
	manifestSizeVar   = "@manifest.size@"
	configDigestVar   = "@config.digest@"
	configSizeVar     = "@config.size@"
)

// fuzzOpenOptions keeps an iteration cheap: a layer's declared size is
// what ReadFile preallocates and MaxTotalBytes is what Unpack may write.
// MaxConfigBytes keeps its default (64 MiB), far above any input, so that
// the allocation check shows Open does not trust a declared config size.
var fuzzOpenOptions = capsule.OpenOptions{MaxBlobBytes: 1 << 20, MaxDecompressedBytes: 1 << 20, MaxTotalBytes: 8 << 20}

// openAllocBound is what Open may allocate for a layout whose index,
// manifest and config total n bytes: the buffers it reads the two blobs
// into (their preallocation is capped at 1 MiB each whatever size they
// declare), the decoding of n bytes of JSON, and some slack.
func openAllocBound(n int) uint64 { return 3<<20 + 512*uint64(n) }

// FuzzOpen opens layouts whose index.json, manifest and config are the
// fuzzer's, beside the real layers of the small test study, and checks that
// Open either refuses them with an error or returns a capsule that is
// consistent: the checks Open promises hold, reading a file gives its
// declared size and digest or an ErrFormat, and Unpack writes the files
// read, or nothing, and nothing outside its destination.
//
// An iteration that opens a capsule unpacks it, so minimizing an input runs
// many unpacks: -fuzzminimizetime 10s keeps that from holding up a run.
func FuzzOpen(f *testing.F) {
	studyDir, packed := packedLayout(f)
	index, manifest, config := layoutTemplate(f, packed)
	f.Add(index, manifest, config)

	// The config with the tables that are decoded apart (NaN, "N/A").
	tables := filepath.Join(f.TempDir(), "tables")
	mustPackTables(f, studyDir, tables, capsule.PackOptions{}, &analysis.Attribution{Claims: []analysis.ClaimAttribution{{
		Task: "gsm8k", Metric: "exact_match", Filter: "strict-match", Card: 0.45, Baseline: 0.3, Final: 0.3, Unexplained: 0.15,
		Steps: []analysis.AttributionStep{{Name: "chat", Kind: "run", Value: 0.3, P: math.NaN(), CILow: -0.01, CIHigh: 0.01}},
	}}}, &analysis.RescoreReport{Runs: []*analysis.RunReport{{Path: "runs/baseline/output", LMEvalVersion: "0.4.9.1", Checks: []analysis.Check{{
		Task: "gsm8k", Metric: "exact_match", Filter: "strict-match", N: 20, Reported: analysis.Num(0.1), Recomputed: analysis.Num(0.1),
		ReportedStderr: analysis.NA, RecomputedStderr: analysis.Num(math.NaN()), Level: analysis.LevelRescored, Status: analysis.StatusExact,
	}}}}})
	_, _, tablesConfig := layoutTemplate(f, tables)
	f.Add(index, manifest, tablesConfig)

	// Titles that must be refused, and an index naming the capsule twice
	// beside an untagged referrer.
	f.Add(index, bytes.Replace(manifest, []byte(`"report.md"`), []byte(`"../report.md"`), 1), config)
	f.Add(index, bytes.Replace(manifest, []byte(`"LICENSE"`), []byte(`"study.yaml/LICENSE"`), 1), config)
	desc := `{"mediaType":"` + ocispec.MediaTypeImageManifest + `","digest":"` + manifestDigestVar + `","size":` + manifestSizeVar
	f.Add([]byte(`{"schemaVersion":2,"manifests":[`+desc+`},`+desc+`,"annotations":{"`+ocispec.AnnotationRefName+`":"latest"}},`+
		desc+`,"artifactType":"`+capsule.ReplayArtifactType+`"}]}`), manifest, config)

	f.Fuzz(func(t *testing.T, index, manifest, config []byte) {
		ctx := context.Background()
		root := t.TempDir()
		layout := filepath.Join(root, "layout")
		index, manifest = writeFuzzLayout(t, packed, layout, index, manifest, config)
		before := treeEntries(t, root)

		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		allocated := ms.TotalAlloc
		c, err := capsule.Open(ctx, layout, fuzzOpenOptions)
		runtime.ReadMemStats(&ms)
		if n := len(index) + len(manifest) + len(config); ms.TotalAlloc-allocated > openAllocBound(n) {
			t.Errorf("Open allocated %d bytes for %d bytes of input (bound %d)", ms.TotalAlloc-allocated, n, openAllocBound(n))
		}
		if err != nil {
			// The one refusal that is not about the format: an index
			// with more than one candidate and no tag to choose.
			var idx ocispec.Index
			if !errors.Is(err, capsule.ErrFormat) && (json.Unmarshal(index, &idx) != nil || len(idx.Manifests) < 2) {
				t.Fatalf("Open: an error that is not an ErrFormat: %v", err)
			}
			return
		}
		defer func() {
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		}()
		checkOpened(t, c, layout)

		// Read every file twice, whole and through a reader.
		content := map[string][]byte{}
		for _, file := range c.Files() {
			b, err := c.ReadFile(ctx, file.Path)
			if err != nil {
				if !errors.Is(err, capsule.ErrFormat) {
					t.Errorf("ReadFile %s: an error that is not an ErrFormat: %v", file.Path, err)
				}
			} else {
				checkContent(t, file, b)
				content[file.Path] = b
			}
			var b2 []byte
			rc, err2 := c.OpenFile(ctx, file.Path)
			if err2 == nil {
				b2, err2 = io.ReadAll(rc)
				rc.Close()
			}
			if (err == nil) != (err2 == nil) || !bytes.Equal(b, b2) {
				t.Errorf("%s: ReadFile read %d bytes (%v), OpenFile %d (%v)", file.Path, len(b), err, len(b2), err2)
			}
		}
		if _, err := c.ReadFile(ctx, "no/such/file"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile of a file not in the capsule: %v", err)
		}

		v, err := capsule.Verify(ctx, c)
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if v.OK && len(content) != len(c.Files()) {
			t.Errorf("Verify found no problem, but only %d of the %d files read", len(content), len(c.Files()))
		}

		dest := filepath.Join(root, "study")
		err = c.Unpack(ctx, dest)
		after := treeEntries(t, root)
		for p, e := range after {
			if p != "study" && !strings.HasPrefix(p, "study/") {
				if be, ok := before[p]; !ok || be != e {
					t.Errorf("Unpack wrote or changed %s outside its destination", p)
				}
			}
		}
		for p := range before {
			if _, ok := after[p]; !ok {
				t.Errorf("Unpack removed %s", p)
			}
		}
		if err != nil {
			if len(content) == len(c.Files()) {
				t.Errorf("Unpack: %v, though every file reads", err)
			}
			if _, ok := after["study"]; ok {
				t.Errorf("Unpack failed (%v) and left a partial study", err)
			}
			return
		}
		if len(content) != len(c.Files()) {
			t.Fatalf("Unpack succeeded, though only %d of %d files read", len(content), len(c.Files()))
		}
		if !after["study"].mode.IsDir() {
			t.Fatalf("Unpack wrote no directory: %v", after["study"].mode)
		}
		for p, e := range after {
			rel, ok := strings.CutPrefix(p, "study/")
			if !ok {
				continue
			}
			if b, isFile := content[rel]; isFile {
				if !e.mode.IsRegular() || e.data != string(b) {
					t.Errorf("Unpack wrote %s (%v, %d bytes); expected the %d bytes read", rel, e.mode, len(e.data), len(b))
				}
			} else if !e.mode.IsDir() || !hasFileUnder(content, rel) {
				t.Errorf("Unpack wrote %s (%v), which is not a file of the capsule or a directory of one", rel, e.mode)
			}
		}
		for p := range content {
			if _, ok := after["study/"+p]; !ok {
				t.Errorf("Unpack did not write %s", p)
			}
		}
	})
}

// layoutTemplate returns the packed layout's index.json, manifest and config,
// the index and manifest with the manifest's and config's descriptors
// templated.
func layoutTemplate(t testing.TB, layout string) (index, manifest, config []byte) {
	t.Helper()
	var idx ocispec.Index
	readJSON(t, filepath.Join(layout, ocispec.ImageIndexFile), &idx)
	var m ocispec.Manifest
	md := idx.Manifests[0]
	readJSON(t, filepath.Join(layout, "blobs", "sha256", md.Digest.Encoded()), &m)
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	template := func(b []byte, d ocispec.Descriptor, digestVar, sizeVar string) []byte {
		re := regexp.MustCompile(`"digest":\s*"` + regexp.QuoteMeta(d.Digest.String()) + `",\s*"size":\s*` + strconv.FormatInt(d.Size, 10) + `\b`)
		if !re.Match(b) {
			t.Fatalf("no descriptor of %s in %s", d.Digest, b)
		}
		return re.ReplaceAllLiteral(b, []byte(`"digest":"`+digestVar+`","size":`+sizeVar))
	}
	index = template(read(filepath.Join(layout, ocispec.ImageIndexFile)), md, manifestDigestVar, manifestSizeVar)
	manifest = template(read(filepath.Join(layout, "blobs", "sha256", md.Digest.Encoded())), m.Config, configDigestVar, configSizeVar)
	config = read(filepath.Join(layout, "blobs", "sha256", m.Config.Digest.Encoded()))
	return index, manifest, config
}

// writeFuzzLayout writes a layout at dir: the input's config and manifest,
// stored under their digests, its index.json, with the placeholders filled
// in, and the packed layout's oci-layout and the blobs the index or the
// manifest name (linking the others would only make an iteration slower).
// It returns the index and the manifest as written.
func writeFuzzLayout(t *testing.T, packed, dir string, index, manifest, config []byte) ([]byte, []byte) {
	t.Helper()
	fill := func(b []byte, d digest.Digest, size int, digestVar, sizeVar string) []byte {
		b = bytes.ReplaceAll(b, []byte(digestVar), []byte(d.String()))
		return bytes.ReplaceAll(b, []byte(sizeVar), []byte(strconv.Itoa(size)))
	}
	cd := digest.FromBytes(config)
	manifest = fill(manifest, cd, len(config), configDigestVar, configSizeVar)
	md := digest.FromBytes(manifest)
	index = fill(fill(index, md, len(manifest), manifestDigestVar, manifestSizeVar), cd, len(config), configDigestVar, configSizeVar)

	blobs := filepath.Join(dir, "blobs", "sha256")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		t.Fatal(err)
	}
	layout, err := os.ReadFile(filepath.Join(packed, ocispec.ImageLayoutFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		path string
		b    []byte
	}{
		{filepath.Join(blobs, cd.Encoded()), config},
		{filepath.Join(blobs, md.Encoded()), manifest},
		{filepath.Join(dir, ocispec.ImageIndexFile), index},
		{filepath.Join(dir, ocispec.ImageLayoutFile), layout},
	} {
		if _, err := os.Lstat(w.path); err == nil {
			continue // the config and the manifest are one blob
		}
		if err := os.WriteFile(w.path, w.b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(packed, "blobs", "sha256"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := []byte(e.Name())
		dst := filepath.Join(blobs, e.Name())
		if !bytes.Contains(manifest, name) && !bytes.Contains(index, name) {
			continue
		}
		if _, err := os.Lstat(dst); err == nil {
			continue // the input's config or manifest: the same bytes
		}
		src := filepath.Join(packed, "blobs", "sha256", e.Name())
		if os.Link(src, dst) == nil {
			continue
		}
		b, err := os.ReadFile(src)
		if err == nil {
			err = os.WriteFile(dst, b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return index, manifest
}

// checkOpened checks what Open promises of the capsule it returns.
func checkOpened(t *testing.T, c *capsule.Capsule, layout string) {
	t.Helper()
	m, opts := c.Manifest, fuzzOpenOptions
	switch {
	case c.Config == nil:
		t.Fatal("no config")
	case c.Descriptor.MediaType != ocispec.MediaTypeImageManifest || m.MediaType != ocispec.MediaTypeImageManifest:
		t.Errorf("manifest media types %q, %q", c.Descriptor.MediaType, m.MediaType)
	case m.SchemaVersion != 2 || m.ArtifactType != capsule.ArtifactType || m.Config.MediaType != capsule.ConfigMediaType:
		t.Errorf("manifest schemaVersion %d, artifactType %q, config media type %q", m.SchemaVersion, m.ArtifactType, m.Config.MediaType)
	case int64(len(c.RawConfig)) != m.Config.Size || m.Config.Digest.Algorithm().FromBytes(c.RawConfig) != m.Config.Digest:
		t.Errorf("config of %d bytes does not match its descriptor %+v", len(c.RawConfig), m.Config)
	}
	// The manifest is the one its descriptor names.
	d := c.Descriptor.Digest
	mb, err := os.ReadFile(filepath.Join(layout, "blobs", d.Algorithm().String(), d.Encoded()))
	if err != nil || int64(len(mb)) != c.Descriptor.Size || d.Algorithm().FromBytes(mb) != d {
		t.Fatalf("manifest %+v does not match its blob: %v", c.Descriptor, err)
	}
	var again ocispec.Manifest
	if err := json.Unmarshal(mb, &again); err != nil || !reflect.DeepEqual(again, m) {
		t.Errorf("the manifest parsed is not the one stored (%v)", err)
	}

	files := c.Files()
	if len(files) != len(m.Layers) {
		t.Fatalf("%d files of %d layers", len(files), len(m.Layers))
	}
	var stored, total int64
	seen := map[string]bool{}
	for i, file := range files {
		l := m.Layers[i]
		if seen[file.Path] {
			t.Errorf("two files titled %q", file.Path)
		}
		seen[file.Path] = true
		if err := capsule.CheckTitle(file.Path); err != nil || file.Path != l.Annotations[ocispec.AnnotationTitle] {
			t.Errorf("file %q of layer titled %q: %v", file.Path, l.Annotations[ocispec.AnnotationTitle], err)
		}
		if got, ok := c.File(file.Path); !ok || !reflect.DeepEqual(got, file) {
			t.Errorf("File(%q) = %+v, %v; expected %+v", file.Path, got, ok, file)
		}
		for dir := path.Dir(file.Path); dir != "."; dir = path.Dir(dir) {
			if _, ok := c.File(dir); ok {
				t.Errorf("%s is a file and the directory of %s", dir, file.Path)
			}
		}
		if file.Descriptor.Size < 0 || file.Descriptor.Size > opts.MaxBlobBytes || file.Size < 0 {
			t.Errorf("%s: stored size %d, size %d", file.Path, file.Descriptor.Size, file.Size)
		}
		if file.Compressed() && (file.Size > opts.MaxDecompressedBytes || file.Size > capsule.DefaultMaxCompressionRatio*file.Descriptor.Size) ||
			!file.Compressed() && file.Size != file.Descriptor.Size {
			t.Errorf("%s (%s): stored size %d, size %d", file.Path, file.MediaType, file.Descriptor.Size, file.Size)
		}
		stored += file.Descriptor.Size
		total += file.Size
	}
	if stored+m.Config.Size > opts.MaxTotalBytes || total > opts.MaxTotalBytes {
		t.Errorf("%d bytes stored, %d decompressed: over MaxTotalBytes", stored+m.Config.Size, total)
	}
}

// checkContent checks a file's content, read without an error, against its
// size and digest (the decompressed content's, for a compressed file).
func checkContent(t *testing.T, file capsule.File, b []byte) {
	t.Helper()
	want := file.Descriptor.Digest
	if file.Compressed() {
		want = digest.Digest(file.Descriptor.Annotations[capsule.AnnotationContentDigest])
	}
	if int64(len(b)) != file.Size || want.Algorithm().FromBytes(b) != want {
		t.Errorf("%s: read %d bytes of digest %s; expected %d of %s", file.Path, len(b), want.Algorithm().FromBytes(b), file.Size, want)
	}
}

type treeEntry struct {
	mode fs.FileMode
	data string // a regular file's content
}

// treeEntries lists everything under dir by slash path, without following
// links. It reads through an os.Root, as Unpack writes: a title may be
// 4096 bytes long, and dir and a title together more than a path may be.
func treeEntries(t *testing.T, dir string) map[string]treeEntry {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fsys := root.FS()
	out := map[string]treeEntry{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		e := treeEntry{mode: d.Type()}
		if d.Type().IsRegular() {
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			e.data = string(b)
		}
		out[p] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// hasFileUnder reports whether a file of content lies under dir.
func hasFileUnder(content map[string][]byte, dir string) bool {
	for p := range content {
		if strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}
