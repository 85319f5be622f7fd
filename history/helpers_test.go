package history_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/study"
)

// lineStudyYAML is a SIMULATED study of one checkpoint of a model line.
const lineStudyYAML = `# SIMULATED: the runs come from the simulated backend; no model is run.
study: line-step-%[1]d
model: {id: simulated/line-step-%[1]d}
card:
  source: "simulated: a made-up claim for the history tests"
  claims:
    - {task: gsm8k, metric: exact_match, filter: strict-match, value: 0.45}
harness: {version: 0.4.9.1}
runner: {kind: simulated}
baseline: {model: hf, tasks: [gsm8k, mmlu], num_fewshot: 5, batch_size: 8, seed: [0, 1234, 1234, 1234], log_samples: true}
`

// lineStudy is a SIMULATED study of one checkpoint of simulate's model
// line, on its suite.
const lineStudy = `# SIMULATED: the runs come from the simulated backend; no model is run.
study: %[1]s
model: {id: %[2]s}
card:
  source: "simulated: a made-up claim for the history tests"
  claims:
    - {task: gsm8k, metric: exact_match, filter: strict-match, value: 0.45}
harness: {version: 0.4.9.1}
runner: {kind: simulated}
baseline: {model: hf, tasks: [%[3]s], num_fewshot: 5, batch_size: 8, seed: [0, 1234, 1234, 1234], log_samples: true}
`

// packLineCheckpoint packs checkpoint c of simulate's model line into a
// layout folder under dir named after it, returned.
func packLineCheckpoint(t testing.TB, dir string, c simulate.Checkpoint) string {
	t.Helper()
	return packStudy(t, dir, c.Name, fmt.Sprintf(lineStudy, c.Name, c.Options.Model, strings.Join(c.Options.Tasks, ", ")), c.Options, c.Index)
}

// ckpt is one simulated checkpoint of a line: its step and accuracies.
type ckpt struct {
	step      int
	gsm8k     float64
	mmlu      float64
	gsm8kDocs int
}

// packCheckpoint writes a simulated study of c and packs it into a layout
// folder under dir named step-N, returned.
func packCheckpoint(t testing.TB, dir string, c ckpt) string {
	t.Helper()
	docs := c.gsm8kDocs
	if docs == 0 {
		docs = 60
	}
	return packStudy(t, dir, fmt.Sprintf("step-%d", c.step), fmt.Sprintf(lineStudyYAML, c.step), simulate.Options{
		Seed: 7, Model: fmt.Sprintf("simulated/line-step-%d", c.step), Tasks: []string{"gsm8k", "mmlu"}, GSM8KDocs: docs, MMLUDocsPerSubject: 2,
		GSM8KAccuracy: c.gsm8k, MMLUAccuracy: c.mmlu,
	}, c.step)
}

// packStudy writes a study of one simulated run and packs it into the
// layout folder dir/name, returned; minutes sets the run's end time.
func packStudy(t testing.TB, dir, name, yaml string, o simulate.Options, minutes int) string {
	t.Helper()
	studyDir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(studyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(studyDir, study.FileName), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(studyDir)
	if err != nil {
		t.Fatal(err)
	}
	pr := s.Plan()[0]
	run := s.RunDir(pr)
	if _, err := simulate.Generate(filepath.Join(run, harness.OutputDir), o); err != nil {
		t.Fatal(err)
	}
	v, _ := harness.ParseVersion(s.Harness.Version)
	args, err := harness.Argv(pr.Spec, v, "runs/baseline/output")
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(minutes) * time.Minute)
	start, zero := end.Add(-5*time.Minute), 0
	rec := &harness.RunRecord{
		Name: pr.Name, Label: pr.Label, Status: harness.StatusDone, Spec: pr.Spec,
		Argv:    append([]string{"lm_eval"}, args...),
		Harness: harness.HarnessInfo{Version: s.Harness.Version, Source: "simulated"},
		Model:   harness.ModelInfo{ID: s.Model.ID}, Seeds: pr.Spec.Seed,
		Runner: harness.RunnerInfo{Kind: "simulated"}, Start: &start, End: &end, ExitCode: &zero, Simulated: true,
	}
	if err := harness.WriteRecord(run, rec); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	if _, err := capsule.Pack(context.Background(), s, out, capsule.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	return out
}
