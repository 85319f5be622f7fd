package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The commit a run evaluated: lm-eval's model_sha first, then the Hub
// cache's ref of the revision asked for, then a pinned full commit.
func TestResolveRevision(t *testing.T) {
	hub := t.TempDir()
	t.Setenv("HF_HUB_CACHE", hub)
	main := strings.Repeat("a", 40)
	refs := filepath.Join(hub, "models--org--model", "refs")
	os.MkdirAll(refs, 0o755)
	os.WriteFile(filepath.Join(refs, "main"), []byte(main+"\n"), 0o644)
	rec := &RunRecord{Model: ModelInfo{ID: "org/model"}, Spec: RunSpec{ModelArgs: KVs{{Key: "pretrained", Value: "org/model"}}}}
	if got := ResolveRevision(rec, t.TempDir()); got != main {
		t.Errorf("from the cache's main ref: %q", got)
	}
	pinned := strings.Repeat("b", 40)
	rec.Model.Revision = pinned
	if got := ResolveRevision(rec, t.TempDir()); got != pinned {
		t.Errorf("a pinned commit: %q", got)
	}
	rec.Model.Revision = "v1.0"
	if got := ResolveRevision(rec, t.TempDir()); got != "" {
		t.Errorf("a tag the cache does not know: %q", got)
	}
	// lm-eval's own record wins.
	out := t.TempDir()
	os.MkdirAll(filepath.Join(out, "org__model"), 0o755)
	os.WriteFile(filepath.Join(out, "org__model", "results_2025-01-01T00-00-00.000000.json"),
		[]byte(`{"results": {}, "configs": {}, "config": {"model": "hf", "model_sha": "cccc"}}`), 0o644)
	if got := ResolveRevision(rec, out); got != "cccc" {
		t.Errorf("lm-eval's model_sha: %q", got)
	}
	// A local path is not a Hub id.
	if got := cachedRevision("/models/x", ""); got != "" {
		t.Errorf("a local path: %q", got)
	}
}

// The datasets a run loaded, from a real results file: gsm8k's path and
// configuration.
func TestDatasets(t *testing.T) {
	r, err := ReadResults(filepath.Join(fixtures(t), "gemma3-12b-gsm8k-pyfade", "results_2025-09-09T13-31-53.431753.json"))
	if err != nil {
		t.Fatal(err)
	}
	ds := r.Datasets()
	if len(ds) == 0 || ds[0].Task != "gsm8k" || ds[0].Path != "gsm8k" || ds[0].Name != "main" {
		t.Errorf("datasets %+v", ds)
	}
}
