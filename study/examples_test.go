package study_test

import (
	"path/filepath"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/study"
)

// TestExamples loads every study under examples/ and builds every planned
// run's lm-eval command line for its pinned version.
func TestExamples(t *testing.T) {
	files, _ := filepath.Glob("../examples/*/study.yaml")
	if len(files) < 4 {
		t.Fatalf("found %d example studies", len(files))
	}
	for _, f := range files {
		s, err := study.Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		v, err := harness.ParseVersion(s.Harness.Version)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		plan := s.Plan()
		if len(plan) < 3 || len(s.Card.Claims) == 0 {
			t.Errorf("%s: %d runs, %d claims", f, len(plan), len(s.Card.Claims))
		}
		for _, pr := range plan {
			if _, err := harness.Argv(pr.Spec, v, "out"); err != nil {
				t.Errorf("%s: run %s: %v", f, pr.Name, err)
			}
		}
	}
}

// TestDemoStudy runs the simulated demo study end to end (SIMULATED: no
// model is run): every run done, the attribution computed.
func TestDemoStudy(t *testing.T) {
	s, err := study.Load("../examples/demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Steps) < 3 || len(s.Variants) < 2 {
		t.Fatalf("the demo study has %d steps and %d variants", len(s.Steps), len(s.Variants))
	}
	if s.Runner.Kind != "simulated" {
		t.Fatalf("the demo study runs on %s", s.Runner.Kind)
	}
}
