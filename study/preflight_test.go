package study_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/study"
)

// Without lm-eval, the local runner fails the sweep once, before any run
// starts, saying how to install the pinned version; no run is started.
func TestSweepWithoutLMEval(t *testing.T) {
	dir := t.TempDir()
	s := writeStudy(t, dir, strings.Replace(harnessStudy, "runner: {kind: container}", "runner: {kind: local}", 1))
	bin := t.TempDir()
	// A Python without lm_eval: the version script exits as Python's
	// sys.exit(message) does.
	py := filepath.Join(bin, "python3")
	if err := os.WriteFile(py, []byte("#!/bin/sh\necho 'lm_eval is not installed' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(bin, "started")
	job := filepath.Join(bin, "job")
	if err := os.WriteFile(job, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := study.Sweep(context.Background(), s, study.SweepOptions{
		Runner: harness.LocalRunner{Job: []string{job}}, RunnerKind: "local", Command: []string{py, "-m", "lm_eval"}})
	if !errors.Is(err, harness.ErrRunner) {
		t.Fatalf("sweep without lm-eval: %v, want ErrRunner", err)
	}
	for _, want := range []string{"lm-eval is not installed for " + py, "lm_eval is not installed", "pip install lm-eval==0.4.9.1", "harness: {python: ~/venvs/lm-eval-0.4.9.1/bin/python}"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a run was started")
	}
	// The same sweep simulated needs no lm-eval.
	if _, err := study.Sweep(context.Background(), s, study.SweepOptions{
		Runner: harness.LocalRunner{Job: []string{job}}, RunnerKind: "local", Simulated: true, Command: []string{py, "-m", "lm_eval"}}); errors.Is(err, harness.ErrRunner) {
		t.Errorf("simulated sweep: %v", err)
	}
}
