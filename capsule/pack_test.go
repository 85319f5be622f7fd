package capsule_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/content/oci"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/capsule/internal/layout"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/study"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/format")

// packStudyYAML is a minimal SIMULATED study: one baseline run, one claim.
const packStudyYAML = `# SIMULATED: the runs come from the simulated backend; no model is run.
study: tiny
model: {id: simulated/model-1b}
card:
  source: "simulated: a made-up claim for the capsule tests"
  claims:
    - {task: gsm8k, metric: exact_match, filter: strict-match, value: 0.45}
harness: {version: 0.4.9.1}
runner: {kind: simulated}
baseline: {model: hf, tasks: [gsm8k], num_fewshot: 5, batch_size: 8, seed: [0, 1234, 1234, 1234], log_samples: true}
`

// runEnd is when the test study's run ended: the capsule's created time.
var runEnd = time.Date(2025, 1, 1, 0, 5, 0, 0, time.UTC)

// writePackStudy writes a complete study into dir (SIMULATED): study.yaml,
// the baseline's run.json (done) and its simulated lm-eval output with docs
// gsm8k documents, the files a run directory holds beside them, a notebook,
// a report, plots and labels; and the things Pack must leave out.
func writePackStudy(t testing.TB, dir string, docs int) {
	t.Helper()
	if err := makePackStudy(dir, docs); err != nil {
		t.Fatal(err)
	}
}

func makePackStudy(dir string, docs int) error {
	var failed error
	write := func(rel, text string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil && failed == nil {
			failed = err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil && failed == nil {
			failed = err
		}
	}
	write("study.yaml", packStudyYAML)
	s, err := study.Load(dir)
	if err != nil {
		return err
	}
	pr := s.Plan()[0]
	run := s.RunDir(pr)
	if _, err := simulate.Generate(filepath.Join(run, harness.OutputDir), simulate.Options{Tasks: []string{"gsm8k"}, GSM8KDocs: docs}); err != nil {
		return err
	}
	v, _ := harness.ParseVersion(s.Harness.Version)
	args, err := harness.Argv(pr.Spec, v, "runs/baseline/output")
	if err != nil {
		return err
	}
	start, end, zero := runEnd.Add(-5*time.Minute), runEnd, 0
	rec := &harness.RunRecord{
		Name: pr.Name, Label: pr.Label, Status: harness.StatusDone, Spec: pr.Spec,
		Argv:    append([]string{"lm_eval"}, args...),
		Harness: harness.HarnessInfo{Version: s.Harness.Version, Source: "simulated"},
		Model:   harness.ModelInfo{ID: s.Model.ID}, Seeds: pr.Spec.Seed,
		Runner: harness.RunnerInfo{Kind: "simulated"}, Start: &start, End: &end, ExitCode: &zero, Simulated: true,
	}
	if err := harness.WriteRecord(run, rec); err != nil {
		return err
	}
	for rel, text := range map[string]string{
		"runs/baseline/pip-freeze.txt": "lm_eval==0.4.9.1\n",
		"runs/baseline/lm-eval.log":    "SIMULATED\n",
		"runs/baseline/job.log":        "job done\n",
		"runs/baseline/slurm-42.out":   "slurm output\n",
		"runs/baseline/nvidia-smi.xml": "<nvidia_smi_log></nvidia_smi_log>\n",
		"runs/baseline/nvidia-smi.csv": "name, uuid\n",
		"analysis.ipynb":               `{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}` + "\n",
		"report.html":                  "<!DOCTYPE html><title>tiny</title>\n",
		"report.md":                    "# tiny (SIMULATED)\n",
		"plots/effect.png":             "\x89PNG\r\n\x1a\n",
		"plots/effect.svg":             "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
		"labels/gsm8k.csv":             "doc_id,label\n0,format\n",
		"notes.json":                   "{}\n",
		"LICENSE":                      "CC-BY-4.0\n",
		// Never packed:
		"runs/baseline/output.partial/results.json":    "{}\n",
		"runs/baseline/progress.json":                  "{}\n",
		".hidden":                                      "x\n",
		".ipynb_checkpoints/analysis-checkpoint.ipynb": "{}\n",
		"runs/baseline/.run.json.tmp":                  "x\n",
	} {
		write(rel, text)
	}
	return failed
}

// packedTitles are the titles of the test study's layers, in order.
func packedTitles() []string {
	return []string{
		"LICENSE", "analysis.ipynb", "labels/gsm8k.csv", "notes.json", "plots/effect.png", "plots/effect.svg",
		"report.html", "report.md",
		"runs/baseline/job.log", "runs/baseline/lm-eval.log", "runs/baseline/nvidia-smi.csv", "runs/baseline/nvidia-smi.xml",
		"runs/baseline/output/simulated__model-1b/results_2025-01-01T00-00-00.000000.json",
		"runs/baseline/output/simulated__model-1b/samples_gsm8k_2025-01-01T00-00-00.000000.jsonl",
		"runs/baseline/pip-freeze.txt", "runs/baseline/run.json", "runs/baseline/slurm-42.out",
		"study.yaml",
	}
}

func mustPack(t testing.TB, studyDir, out string, opts capsule.PackOptions) capsule.PackResult {
	t.Helper()
	res, err := packDir(context.Background(), studyDir, out, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// packDir loads the study in studyDir and packs it.
func packDir(ctx context.Context, studyDir, out string, opts capsule.PackOptions) (capsule.PackResult, error) {
	s, err := study.Load(studyDir)
	if err != nil {
		return capsule.PackResult{}, err
	}
	return capsule.Pack(ctx, s, out, opts)
}

// mustPackTables packs the study in studyDir with the tables given (nil:
// none) instead of the computed ones.
func mustPackTables(t testing.TB, studyDir, out string, opts capsule.PackOptions, att *analysis.Attribution, rep *analysis.RescoreReport) capsule.PackResult {
	t.Helper()
	s, err := study.Load(studyDir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := capsule.PackTables(context.Background(), s, out, opts, att, rep)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fileTree reads every regular file under dir, by slash path.
func fileTree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t testing.TB, a, b map[string][]byte) {
	t.Helper()
	for k, v := range a {
		if w, ok := b[k]; !ok {
			t.Errorf("%s: only in the first tree", k)
		} else if !bytes.Equal(v, w) {
			t.Errorf("%s: differs", k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: only in the second tree", k)
		}
	}
}

// copyShuffled copies the study tree to dst with other modification times
// and permissions than the original's, which must not change the capsule.
func copyShuffled(t testing.TB, src, dst string, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	var dirs []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			dirs = append(dirs, target)
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		perm := []fs.FileMode{0o600, 0o640, 0o664, 0o755}[r.IntN(4)]
		if err := os.WriteFile(target, b, perm); err != nil {
			return err
		}
		mt := time.Unix(r.Int64N(2_000_000_000), 0)
		return os.Chtimes(target, mt, mt)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		os.Chmod(d, 0o700)
	}
}

func TestPackReproducible(t *testing.T) {
	ctx := context.Background()
	studyDir, out := t.TempDir(), t.TempDir()
	writePackStudy(t, studyDir, 30)

	a := mustPack(t, studyDir, filepath.Join(out, "a"), capsule.PackOptions{})
	b := mustPack(t, studyDir, filepath.Join(out, "b"), capsule.PackOptions{})
	ta := mustPack(t, studyDir, filepath.Join(out, "a.tar"), capsule.PackOptions{})
	if a.Manifest.Digest != b.Manifest.Digest || a.Manifest.Digest != ta.Manifest.Digest {
		t.Fatalf("digests differ: %s, %s, %s", a.Manifest.Digest, b.Manifest.Digest, ta.Manifest.Digest)
	}
	sameTree(t, fileTree(t, filepath.Join(out, "a")), fileTree(t, filepath.Join(out, "b")))

	// Elsewhere, with other times and permissions, on one and on two
	// threads: the same bytes.
	moved := filepath.Join(t.TempDir(), "elsewhere", "study")
	copyShuffled(t, studyDir, moved, 1)
	tars := map[int][]byte{}
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		res, err := packDir(ctx, moved, filepath.Join(out, fmt.Sprintf("p%d.tar", procs)), capsule.PackOptions{})
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		if res.Manifest.Digest != a.Manifest.Digest {
			t.Errorf("GOMAXPROCS %d, moved study: digest %s, expected %s", procs, res.Manifest.Digest, a.Manifest.Digest)
		}
		tars[procs], _ = os.ReadFile(filepath.Join(out, fmt.Sprintf("p%d.tar", procs)))
	}
	orig, _ := os.ReadFile(filepath.Join(out, "a.tar"))
	if !bytes.Equal(orig, tars[1]) || !bytes.Equal(orig, tars[2]) {
		t.Errorf("tar bytes differ (%d, %d, %d bytes)", len(orig), len(tars[1]), len(tars[2]))
	}

	// The tar is what `tar --sort=name --mtime=@0 --owner=0 --group=0`
	// would write of the layout directory.
	tr := tar.NewReader(bytes.NewReader(orig))
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		mode := int64(0o644)
		if h.Typeflag == tar.TypeDir {
			mode = 0o755
		}
		if h.Format&tar.FormatUSTAR == 0 || len(h.PAXRecords) > 0 {
			t.Errorf("%s: format %v, PAX records %v", h.Name, h.Format, h.PAXRecords)
		}
		if !h.ModTime.Equal(time.Unix(0, 0)) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Mode != mode {
			t.Errorf("%s: mtime %v uid %d gid %d uname %q mode %o", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Mode)
		}
	}
	if !slices.IsSorted(names) || names[0] != "blobs/" || names[len(names)-1] != "oci-layout" {
		t.Errorf("tar entries %v", names)
	}
	t.Logf("manifest %s, %d files, %d bytes, %d stored", a.Manifest.Digest, a.Files, a.Bytes, a.Stored)
}

// TestPackZstdDeterministic checks the samples' compression alone: the
// same bytes on one thread and on several, and readable by the reference
// zstd.
func TestPackZstdDeterministic(t *testing.T) {
	studyDir := t.TempDir()
	writePackStudy(t, studyDir, 400)
	var digests []string
	for _, procs := range []int{1, 2, 8} {
		old := runtime.GOMAXPROCS(procs)
		out := filepath.Join(t.TempDir(), "c")
		mustPack(t, studyDir, out, capsule.PackOptions{})
		runtime.GOMAXPROCS(old)
		c := mustOpen(t, out, capsule.OpenOptions{})
		for _, f := range c.Files() {
			if f.Compressed() {
				digests = append(digests, f.Descriptor.Digest.String())
				blob := filepath.Join(out, "blobs", "sha256", f.Descriptor.Digest.Encoded())
				if zstdBin, err := exec.LookPath("zstd"); err == nil && procs == 1 {
					got, err := exec.Command(zstdBin, "-dc", blob).Output()
					want, _ := os.ReadFile(filepath.Join(studyDir, filepath.FromSlash(f.Path)))
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("zstd -dc %s: %v, %d bytes, expected %d", f.Path, err, len(got), len(want))
					}
				}
			}
		}
	}
	if len(digests) != 3 || digests[0] != digests[1] || digests[1] != digests[2] {
		t.Errorf("samples blobs %v", digests)
	}
}

func TestPackManifest(t *testing.T) {
	studyDir, out := t.TempDir(), filepath.Join(t.TempDir(), "capsule")
	writePackStudy(t, studyDir, 30)
	if err := syscall.Mkfifo(filepath.Join(studyDir, "a-fifo"), 0o644); err != nil {
		t.Log("no FIFO:", err)
	}
	var progress []capsule.Progress
	res := mustPack(t, studyDir, out, capsule.PackOptions{PackerVersion: "v1.2.3", Tag: "v1",
		Progress: func(p capsule.Progress) { progress = append(progress, p) }})

	var m ocispec.Manifest
	readJSON(t, filepath.Join(out, "blobs", "sha256", res.Manifest.Digest.Encoded()), &m)
	if m.ArtifactType != capsule.ArtifactType || m.Config.MediaType != capsule.ConfigMediaType || m.MediaType != ocispec.MediaTypeImageManifest {
		t.Errorf("manifest types %q %q %q", m.MediaType, m.ArtifactType, m.Config.MediaType)
	}
	if len(m.Annotations) != 1 || m.Annotations[ocispec.AnnotationCreated] != runEnd.Format(time.RFC3339) {
		t.Errorf("manifest annotations %v: want only created = the run's end", m.Annotations)
	}
	var titles []string
	for _, l := range m.Layers {
		title := l.Annotations[ocispec.AnnotationTitle]
		titles = append(titles, title)
		if want := capsule.MediaTypeFor(title); l.MediaType != want {
			t.Errorf("%s: media type %s, expected %s", title, l.MediaType, want)
		}
		_, hasContent := l.Annotations[capsule.AnnotationContentDigest]
		if hasContent != (l.MediaType == capsule.MediaSamples) {
			t.Errorf("%s: content annotations %v", title, l.Annotations)
		}
	}
	if want := packedTitles(); !slices.Equal(titles, want) {
		t.Errorf("titles\n%s\nexpected\n%s", strings.Join(titles, "\n"), strings.Join(want, "\n"))
	}
	kinds := map[string]string{
		"study.yaml": capsule.MediaStudy, "runs/baseline/run.json": capsule.MediaRun,
		"runs/baseline/output/simulated__model-1b/results_2025-01-01T00-00-00.000000.json":        capsule.MediaResults,
		"runs/baseline/output/simulated__model-1b/samples_gsm8k_2025-01-01T00-00-00.000000.jsonl": capsule.MediaSamples,
		"analysis.ipynb": capsule.MediaNotebook, "report.html": capsule.MediaHTML, "report.md": capsule.MediaMarkdown,
		"plots/effect.png": capsule.MediaPNG, "plots/effect.svg": capsule.MediaSVG, "runs/baseline/nvidia-smi.xml": capsule.MediaXML,
		"runs/baseline/lm-eval.log": capsule.MediaText, "runs/baseline/slurm-42.out": capsule.MediaText, "labels/gsm8k.csv": capsule.MediaText,
		"runs/baseline/pip-freeze.txt": capsule.MediaText, "notes.json": capsule.MediaJSON, "LICENSE": capsule.MediaOther,
	}
	for title, want := range kinds {
		if got := capsule.MediaTypeFor(title); got != want {
			t.Errorf("MediaTypeFor(%s) = %s, expected %s", title, got, want)
		}
	}

	var idx ocispec.Index
	readJSON(t, filepath.Join(out, "index.json"), &idx)
	if len(idx.Manifests) != 1 || idx.Manifests[0].Digest != res.Manifest.Digest || idx.Manifests[0].Annotations[ocispec.AnnotationRefName] != "v1" ||
		idx.Manifests[0].ArtifactType != capsule.ArtifactType || idx.Manifests[0].Annotations[ocispec.AnnotationTitle] != "" {
		t.Errorf("index.json %+v", idx)
	}
	var cfg capsule.Config
	readJSON(t, filepath.Join(out, "blobs", "sha256", m.Config.Digest.Encoded()), &cfg)
	if cfg.Study != "tiny" || !cfg.Simulated || cfg.Packer != (capsule.Packer{Name: "capsule", Version: "v1.2.3"}) ||
		len(cfg.Runs) != 1 || cfg.Runs[0].Name != "baseline" || cfg.Runs[0].Record.Status != harness.StatusDone ||
		cfg.StudyYAML != packStudyYAML || cfg.FormatVersion != capsule.FormatVersion || cfg.Schema != capsule.ConfigSchema {
		t.Errorf("config %+v", cfg)
	}

	if res.Files != len(titles) || res.Stored <= 0 || res.Stored >= res.Bytes {
		t.Errorf("result %+v", res)
	}
	last := progress[len(progress)-1]
	if last.Files != res.Files || last.TotalFiles != res.Files || last.Bytes != res.Bytes || last.TotalBytes != res.Bytes {
		t.Errorf("last progress %+v, result %+v", last, res)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestPackInterop reads the capsule with oras-go, the library behind the
// ORAS CLI: its layout stores (directory and tar) resolve the tag, and a
// copy to another store checks every blob.
func TestPackInterop(t *testing.T) {
	ctx := context.Background()
	studyDir, out := t.TempDir(), t.TempDir()
	writePackStudy(t, studyDir, 30)
	res := mustPack(t, studyDir, filepath.Join(out, "c"), capsule.PackOptions{})
	mustPack(t, studyDir, filepath.Join(out, "c.tar"), capsule.PackOptions{})

	fromDir, err := oci.NewFromFS(ctx, os.DirFS(filepath.Join(out, "c")))
	if err != nil {
		t.Fatal(err)
	}
	fromTar, err := oci.NewFromTar(ctx, filepath.Join(out, "c.tar"))
	if err != nil {
		t.Fatal(err)
	}
	for name, store := range map[string]oras.ReadOnlyTarget{"dir": fromDir, "tar": fromTar} {
		dst := memory.New()
		desc, err := oras.Copy(ctx, store, capsule.DefaultTag, dst, "x", oras.DefaultCopyOptions)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if desc.Digest != res.Manifest.Digest {
			t.Errorf("%s: resolved %s, expected %s", name, desc.Digest, res.Manifest.Digest)
		}
		b, err := content.FetchAll(ctx, dst, desc)
		if err != nil {
			t.Fatal(err)
		}
		var m ocispec.Manifest
		json.Unmarshal(b, &m)
		if len(m.Layers) != res.Files {
			t.Errorf("%s: %d layers", name, len(m.Layers))
		}
	}
}

func TestPackIncomplete(t *testing.T) {
	ctx := context.Background()
	studyDir := t.TempDir()
	writePackStudy(t, studyDir, 10)
	rec, err := harness.ReadRecord(filepath.Join(studyDir, "runs", "baseline"))
	if err != nil {
		t.Fatal(err)
	}
	rec.Status = harness.StatusRunning
	if err := harness.WriteRecord(filepath.Join(studyDir, "runs", "baseline"), rec); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "c.tar")
	if _, err := packDir(ctx, studyDir, out, capsule.PackOptions{}); !errors.Is(err, study.ErrIncomplete) || !strings.Contains(err.Error(), "baseline (baseline) is running") {
		t.Fatalf("running run: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("out written: %v", err)
	}
	if _, err := packDir(ctx, studyDir, out, capsule.PackOptions{AllowIncomplete: true}); err != nil {
		t.Fatal(err)
	}

	os.RemoveAll(filepath.Join(studyDir, "runs"))
	out = filepath.Join(t.TempDir(), "c")
	if _, err := packDir(ctx, studyDir, out, capsule.PackOptions{}); !errors.Is(err, study.ErrIncomplete) || !strings.Contains(err.Error(), "has not been run") {
		t.Fatalf("missing run: %v", err)
	}
	res, err := packDir(ctx, studyDir, out, capsule.PackOptions{AllowIncomplete: true})
	if err != nil {
		t.Fatal(err)
	}
	c := mustOpen(t, out, capsule.OpenOptions{})
	if len(c.Config.Runs) != 0 || c.Manifest.Annotations[ocispec.AnnotationCreated] != "1970-01-01T00:00:00Z" || res.Files == 0 {
		t.Errorf("runs %v, annotations %v", c.Config.Runs, c.Manifest.Annotations)
	}
}

func TestPackRefusesSymlinks(t *testing.T) {
	studyDir, parent := t.TempDir(), t.TempDir()
	writePackStudy(t, studyDir, 10)
	link := filepath.Join(studyDir, "runs", "baseline", "results-link.json")
	if err := os.Symlink("/etc/passwd", link); err != nil {
		t.Skip(err)
	}
	out := filepath.Join(parent, "c.tar")
	_, err := packDir(context.Background(), studyDir, out, capsule.PackOptions{})
	if !errors.Is(err, capsule.ErrNotPackable) || !strings.Contains(err.Error(), link) {
		t.Fatalf("error %v: expected ErrNotPackable naming %s", err, link)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left in the out directory: %v", entries)
	}
}

func TestPackRefusesBadNames(t *testing.T) {
	studyDir := t.TempDir()
	writePackStudy(t, studyDir, 10)
	os.WriteFile(filepath.Join(studyDir, `back\slash.txt`), []byte("x"), 0o644)
	_, err := packDir(context.Background(), studyDir, filepath.Join(t.TempDir(), "c"), capsule.PackOptions{})
	if !errors.Is(err, capsule.ErrNotPackable) || !strings.Contains(err.Error(), "backslash") {
		t.Fatalf("error %v", err)
	}
}

func TestPackOut(t *testing.T) {
	ctx := context.Background()
	studyDir := t.TempDir()
	writePackStudy(t, studyDir, 10)

	// An existing out is left alone unless Replace.
	out := filepath.Join(t.TempDir(), "c.tar")
	os.WriteFile(out, []byte("keep"), 0o644)
	if _, err := packDir(ctx, studyDir, out, capsule.PackOptions{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("existing out: %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "keep" {
		t.Fatal("out was replaced")
	}
	mustPack(t, studyDir, out, capsule.PackOptions{Replace: true})
	mustOpen(t, out, capsule.OpenOptions{})

	dir := filepath.Join(t.TempDir(), "c")
	os.MkdirAll(dir, 0o755) // an empty directory is filled
	mustPack(t, studyDir, dir, capsule.PackOptions{})
	if _, err := packDir(ctx, studyDir, dir, capsule.PackOptions{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("existing layout: %v", err)
	}
	mustPack(t, studyDir, dir, capsule.PackOptions{Replace: true})
	mustOpen(t, dir, capsule.OpenOptions{})

	// A capsule packed into its own study does not contain itself, and
	// packing it again gives the same capsule.
	inside := filepath.Join(studyDir, "capsule.tar")
	r1 := mustPack(t, studyDir, inside, capsule.PackOptions{})
	r2 := mustPack(t, studyDir, inside, capsule.PackOptions{Replace: true})
	if r1.Manifest.Digest != r2.Manifest.Digest {
		t.Errorf("packing into the study changed the capsule: %s, %s", r1.Manifest.Digest, r2.Manifest.Digest)
	}

	// Cancelled: nothing written.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	gone := filepath.Join(t.TempDir(), "c")
	if _, err := packDir(cctx, studyDir, gone, capsule.PackOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(gone)); len(entries) != 0 {
		t.Errorf("left: %v", entries)
	}
}

// TestPackRemovesLeftovers: what a killed pack leaves beside out (".OUT.tmp-N":
// the layout being built, the tar being written, a replaced capsule on its
// way out), no process holding its lock, is removed by the next pack to
// out; a concurrent pack's (locked) and other names are left alone, and a
// pack leaves nothing of its own.
func TestPackRemovesLeftovers(t *testing.T) {
	studyDir := t.TempDir()
	writePackStudy(t, studyDir, 10)
	for _, name := range []string{"c.tar", "c"} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, name)
			prefix := "." + name + ".tmp-"
			staleDir := filepath.Join(parent, prefix+"31415926")
			if err := os.MkdirAll(filepath.Join(staleDir, "blobs", "sha256"), 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(staleDir, "blobs", "sha256", "partial"), make([]byte, 1<<20), 0o644)
			staleFile := filepath.Join(parent, prefix+"27182818")
			os.WriteFile(staleFile, make([]byte, 1<<20), 0o644)
			live, release, err := layout.MkdirTemp(parent, prefix)
			if err != nil {
				t.Fatal(err)
			}
			defer release()

			mustPack(t, studyDir, out, capsule.PackOptions{})
			mustPack(t, studyDir, out, capsule.PackOptions{Replace: true})
			entries, _ := os.ReadDir(parent)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if want := []string{filepath.Base(live), name}; !slices.Equal(names, want) {
				t.Errorf("beside out: %v, expected %v", names, want)
			}
			release()
			mustPack(t, studyDir, out, capsule.PackOptions{Replace: true})
			if _, err := os.Stat(live); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("an unlocked leftover is still there (%v)", err)
			}
		})
	}
}

// TestPackFormatGolden packs the fixed study under testdata/format/study
// and compares its manifest with the golden one: a change of the digest is
// a change of the format (or of the files that go into it), to be made on
// purpose with -update.
func TestPackFormatGolden(t *testing.T) {
	studyDir := filepath.Join("testdata", "format", "study")
	out := filepath.Join(t.TempDir(), "c")
	// Packed without tables: the format's digest does not depend on the
	// re-scorer's and the attribution's numbers.
	res := mustPackTables(t, studyDir, out, capsule.PackOptions{PackerVersion: "golden"}, nil, nil)
	b, err := os.ReadFile(filepath.Join(out, "blobs", "sha256", res.Manifest.Digest.Encoded()))
	if err != nil {
		t.Fatal(err)
	}
	var pretty bytes.Buffer
	json.Indent(&pretty, b, "", "  ")
	got := fmt.Sprintf("%s\n%s\n", res.Manifest.Digest, pretty.Bytes())
	golden := filepath.Join("testdata", "format", "manifest.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Error(err)
	}
	if got != string(want) {
		t.Errorf("manifest differs from %s (run with -update if the change is meant):\n%s", golden, lineDiff(string(want), got))
		t.Logf("the manifest now:\n%s", got)
	}
}

// lineDiff shows the lines of want and got that differ, in order.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// A study packed into a tar and opened again (SIMULATED runs): the files
// it holds and their media types.
func ExamplePack() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "capsule-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	studyDir := filepath.Join(dir, "study")
	if err := makePackStudy(studyDir, 20); err != nil {
		log.Fatal(err)
	}

	s, err := study.Load(studyDir)
	if err != nil {
		log.Fatal(err)
	}
	res, err := capsule.Pack(ctx, s, filepath.Join(dir, "tiny.tar"), capsule.PackOptions{})
	if err != nil {
		log.Fatal(err)
	}
	c, err := capsule.Open(ctx, filepath.Join(dir, "tiny.tar"), capsule.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.Descriptor.Digest == res.Manifest.Digest, c.Config.Study, "simulated:", c.Config.Simulated)
	for _, f := range c.Files() {
		fmt.Println(f.Path, f.MediaType)
	}
	// Output:
	// true tiny simulated: true
	// LICENSE application/octet-stream
	// analysis.ipynb application/x-ipynb+json
	// labels/gsm8k.csv text/plain
	// notes.json application/json
	// plots/effect.png image/png
	// plots/effect.svg image/svg+xml
	// report.html text/html
	// report.md text/markdown
	// runs/baseline/job.log text/plain
	// runs/baseline/lm-eval.log text/plain
	// runs/baseline/nvidia-smi.csv text/plain
	// runs/baseline/nvidia-smi.xml application/xml
	// runs/baseline/output/simulated__model-1b/results_2025-01-01T00-00-00.000000.json application/vnd.evalcapsule.results.v1+json
	// runs/baseline/output/simulated__model-1b/samples_gsm8k_2025-01-01T00-00-00.000000.jsonl application/vnd.evalcapsule.samples.v1+jsonl+zstd
	// runs/baseline/pip-freeze.txt text/plain
	// runs/baseline/run.json application/vnd.evalcapsule.run.v1+json
	// runs/baseline/slurm-42.out text/plain
	// study.yaml application/vnd.evalcapsule.study.v1+yaml
}

// BenchmarkPack packs a full-size simulated run (gsm8k and MMLU, about
// 180 MB) into a tar; MB/s counts the study's bytes. The tables are left
// out: this measures the packing, not the re-scoring.
func BenchmarkPack(b *testing.B) {
	studyDir := fullSizeStudy(b)
	s, err := study.Load(studyDir)
	if err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	var res capsule.PackResult
	for i := 0; b.Loop(); i++ {
		var err error
		res, err = capsule.PackTables(context.Background(), s, filepath.Join(out, fmt.Sprintf("c%d.tar", i)), capsule.PackOptions{}, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(res.Bytes)
		os.Remove(filepath.Join(out, fmt.Sprintf("c%d.tar", i)))
	}
	b.ReportMetric(float64(res.Stored)/float64(res.Bytes), "stored/bytes")
}

// fullSizeStudy writes the test study with a default simulated run
// (gsm8k and MMLU at full size) in place of the small one.
func fullSizeStudy(b *testing.B) string {
	studyDir := b.TempDir()
	writePackStudy(b, studyDir, 10)
	out := filepath.Join(studyDir, "runs", "baseline", harness.OutputDir)
	os.RemoveAll(out)
	if _, err := simulate.Generate(out, simulate.Options{}); err != nil {
		b.Fatal(err)
	}
	return studyDir
}

// A credential a run recorded is never packed, nor repeated in the error.
func TestPackRefusesSecrets(t *testing.T) {
	studyDir := t.TempDir()
	writePackStudy(t, studyDir, 10)
	dir := filepath.Join(studyDir, "runs", "baseline")
	rec, err := harness.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	token := "hf_" + strings.Repeat("s3cr", 9)
	rec.Spec.ModelArgs = rec.Spec.ModelArgs.Set("token", token)
	if err := harness.WriteRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "c")
	_, err = packDir(context.Background(), studyDir, out, capsule.PackOptions{})
	if !errors.Is(err, capsule.ErrNotPackable) || !strings.Contains(err.Error(), "model_args.token: a Hugging Face token") || strings.Contains(err.Error(), token) {
		t.Errorf("pack of a record holding a token: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("something was written at %s", out)
	}
}
