package study_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/study"
)

// TestExamplesSimulated runs every shipped example study on the simulated
// backend (SIMULATED: no model is run), as `capsule run DIR --runner
// simulated` does, at --limit 20 so that the sweep stays small: every
// planned run is done and every number of every run re-derives exactly from
// its samples. An example whose tasks or filters the simulator lacks fails
// here.
func TestExamplesSimulated(t *testing.T) {
	files, _ := filepath.Glob("../examples/*/study.yaml")
	if len(files) < 4 {
		t.Fatalf("found %d example studies", len(files))
	}
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f))
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			if !strings.Contains(text, "\nbaseline:\n  ") || strings.Contains(text, "limit:") {
				t.Fatalf("%s: no block baseline to add limit: 20 to", f)
			}
			text = strings.Replace(text, "\nbaseline:\n", "\nbaseline:\n  limit: 20\n", 1)
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, study.FileName), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := study.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			sw, err := study.Sweep(context.Background(), s, study.SweepOptions{Runner: simulate.Runner{Effects: simulate.DefaultEffects()}, RunnerKind: "simulated", Simulated: true})
			if err != nil {
				t.Fatalf("sweep: %v", err)
			}
			plan := s.Plan()
			if n := sw.Counts()["done"]; n != len(plan) || len(plan) < 3 {
				t.Fatalf("%d of %d planned runs done: %v", n, len(plan), sw.Counts())
			}
			for _, pr := range plan {
				outs, err := harness.Find(s.RunDir(pr))
				if err != nil {
					t.Fatalf("run %s: %v", pr.Name, err)
				}
				rep, err := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{})
				if err != nil {
					t.Fatalf("run %s: %v", pr.Name, err)
				}
				exact, differs, nr := rep.Counts()
				if exact == 0 || differs+nr != 0 {
					t.Errorf("run %s: %d exact, %d differ, %d not recomputable:\n%s", pr.Name, exact, differs, nr, rep)
				}
				for _, task := range pr.Spec.Tasks {
					found := false
					for _, c := range rep.Runs[0].Checks {
						found = found || c.Task == task
					}
					if !found {
						t.Errorf("run %s: no check of task %s", pr.Name, task)
					}
				}
			}
		})
	}
}
