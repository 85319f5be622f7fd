package analysis_test

import (
	"os"
	"path/filepath"
	"testing"
)

// writeRun writes a constructed lm-eval output into dir: its results file
// and the samples file of task, both with the timestamp ts, as lm-eval
// names them.
func writeRun(t *testing.T, dir, ts, task, results, samples string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "results_"+ts+".json"), []byte(results), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "samples_"+task+"_"+ts+".jsonl"), []byte(samples), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
