package study

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSuiteTemplateParses(t *testing.T) {
	s, err := Parse("suite.yaml", []byte(SuiteTemplate))
	if err != nil {
		t.Fatal(err)
	}
	if !s.IsSuite() || s.Name != "release-suite" || len(s.Baseline.Tasks) != 5 || s.Harness.Version != "0.4.9.1" {
		t.Errorf("template read as %+v", s)
	}
	plan := s.Plan()
	if len(plan) != 1 || plan[0].Name != SuiteRun {
		t.Errorf("plan %+v, want the one suite run", plan)
	}
}

func TestSuiteRefusesAStudysKeys(t *testing.T) {
	for text, want := range map[string]string{
		"kind: suite\nstudy: s\nharness: {version: 0.4.9.1}\nsettings: {tasks: [gsm8k]}\ncard: {claims: []}\n": "suite.yaml:5: card: a suite has no card",
		"kind: suite\nstudy: s\nharness: {version: 0.4.9.1}\nsettings: {num_fewshot: 5}\n":                     "settings.tasks: a suite must name at least one task",
		"kind: suite\nstudy: s\nsettings: {tasks: [gsm8k]}\n":                                                  `missing required key "harness"`,
		"kind: bundle\n": "suite.yaml:1: kind: expected study or suite",
	} {
		_, err := Parse("suite.yaml", []byte(text))
		if !errors.Is(err, ErrStudy) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

func TestCheckpointFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(path, []byte(SuiteTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(dir, "ckpt", "step-12000")
	os.MkdirAll(ckpt, 0o755)
	os.WriteFile(filepath.Join(ckpt, "model.safetensors"), []byte("weights"), 0o644)
	m, err := SuiteModel(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Digest, "sha256:") || m.Revision != "" || CheckpointName(m) != "step-12000" {
		t.Errorf("local checkpoint: %+v named %s", m, CheckpointName(m))
	}
	b, err := CheckpointFile(s, m)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse("c.yaml", b)
	if err != nil || c.Model != m {
		t.Fatalf("checkpoint file: %v %+v", err, c)
	}
	// Other weights, another digest, another run identity.
	os.WriteFile(filepath.Join(ckpt, "model.safetensors"), []byte("weightz"), 0o644)
	m2, _ := SuiteModel(ckpt)
	c2, _ := Parse("c.yaml", must(CheckpointFile(s, m2)))
	if m2.Digest == m.Digest || c.Identity(c.Plan()[0], false) == c2.Identity(c2.Plan()[0], false) {
		t.Error("changed weights keep the digest or the identity")
	}
	hub, _ := SuiteModel("meta-llama/Llama-3.2-1B@4e20de362430cd3b72f300e6b0f18e50e7166e08")
	if hub.Revision != "4e20de362430cd3b72f300e6b0f18e50e7166e08" || CheckpointName(hub) != "Llama-3.2-1B-at-4e20de362430" {
		t.Errorf("hub id: %+v named %s", hub, CheckpointName(hub))
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestDocumentedSuiteIsTheTemplate: docs/gate.md shows the template
// capsule suite init writes, less its header comment.
func TestDocumentedSuiteIsTheTemplate(t *testing.T) {
	b, err := os.ReadFile("../docs/gate.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(b), "## Suites")
	_, block, _ := strings.Cut(after, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	_, tmpl, _ := strings.Cut(SuiteTemplate, "kind: suite\n")
	if block != "kind: suite\n"+tmpl {
		t.Errorf("docs/gate.md's suite:\n%s\nthe template:\n%s", block, "kind: suite\n"+tmpl)
	}
}

// TestCheckpointRunIsNamedAfterIt: a checkpoint's run (and its Slurm job)
// is named after the checkpoint, not "suite" for all of them.
func TestCheckpointRunIsNamedAfterIt(t *testing.T) {
	s, err := Parse("suite.yaml", []byte(SuiteTemplate+"model: {id: org/step-12000, revision: abc}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Plan()[0].Name; got != "step-12000-at-abc" {
		t.Errorf("run named %q", got)
	}
}
