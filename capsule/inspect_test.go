package capsule_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
)

// Inspect shows each run's provenance as its record holds it: lm-eval's
// commit with its dirty flag, Python, seeds, the resolved revision, the
// image digest, GPUs, driver and CUDA, in text and JSON; a record without
// a commit says the commit is unknown rather than clean.
func TestInspectProvenance(t *testing.T) {
	studyDir := t.TempDir()
	writePackStudy(t, studyDir, 20)
	runDir := filepath.Join(studyDir, "runs", "baseline")
	rec, err := harness.ReadRecord(runDir)
	if err != nil {
		t.Fatal(err)
	}
	rec.Harness.Commit, rec.Harness.Dirty, rec.Harness.Source = "3b1f0c2d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c", true, "checkout"
	rec.Model.Revision, rec.Model.ResolvedRevision = "main", "0123456789abcdef0123456789abcdef01234567"
	rec.Image = &harness.ImageInfo{Ref: "ghcr.io/x/lm-eval@sha256:aaaa", PlatformDigest: "sha256:bbbb"}
	rec.Env = &harness.Environment{PythonVersion: "3.11.9", DriverVersion: "590.48.01", CUDAVersion: "13.0",
		GPUs: []harness.GPU{{Name: "NVIDIA H200"}}}
	if err := harness.WriteRecord(runDir, rec); err != nil {
		t.Fatal(err)
	}
	layout := filepath.Join(t.TempDir(), "c")
	mustPack(t, studyDir, layout, capsule.PackOptions{})
	c := mustOpen(t, layout, capsule.OpenOptions{})
	in, err := capsule.Inspect(context.Background(), c, capsule.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	text := in.String()
	for _, want := range []string{"0.4.9.1 (3b1f0c2d9e…, DIRTY: uncommitted changes)", "3.11.9", "0,1234,1234,1234",
		"simulated/model-1b@0123456789ab", "(sha256:bbbb)"} {
		if !strings.Contains(text, want) {
			t.Errorf("inspect does not say %q:\n%s", want, text)
		}
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	r := back.Runs[0]
	for k, want := range map[string]any{"lm_eval_dirty": true, "lm_eval_commit": rec.Harness.Commit, "python": "3.11.9",
		"resolved_revision": rec.Model.ResolvedRevision, "image_digest": "sha256:bbbb", "driver": "590.48.01", "cuda": "13.0"} {
		if r[k] != want {
			t.Errorf("JSON %s: %v, want %v", k, r[k], want)
		}
	}

	// The same record without a commit: the dirty flag was never looked at.
	rec.Harness.Commit, rec.Harness.Dirty = "", false
	in.Runs[0].LMEvalCommit, in.Runs[0].LMEvalDirty = "", nil
	if text := in.String(); !strings.Contains(text, "0.4.9.1 (commit unknown)") || strings.Contains(text, "clean") {
		t.Errorf("no commit:\n%s", text)
	}
}
