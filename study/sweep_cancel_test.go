package study_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/evalcapsule/evalcapsule/examples"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/study"
)

// TestSweepCancel cancels a simulated sweep of the demo study once its
// first runs are under way: Sweep returns with every run not done, those
// under way marked interrupted in run.json (none left running), and the
// next Sweep runs them all to done.
func TestSweepCancel(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, study.FileName), examples.DemoStudy, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan := s.Plan()
	if len(plan) < 4 {
		t.Fatalf("the demo study plans %d runs", len(plan))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	opts := study.SweepOptions{
		// A pace no run finishes in before the cancel.
		Runner:     simulate.Runner{Effects: simulate.DefaultEffects(), Pace: 10 * time.Minute},
		RunnerKind: "simulated", Simulated: true, Parallel: 2,
		Events: func(ev study.RunEvent) {
			if ev.Status == harness.StatusRunning && ev.Progress.Total > 0 {
				once.Do(cancel)
			}
		},
	}
	sw, err := study.Sweep(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := sw.Counts(); c[harness.StatusInterrupted] != len(plan) {
		t.Errorf("cancelled sweep: %v, want all %d interrupted", c, len(plan))
	}
	interrupted := 0
	for _, pr := range plan {
		rec, err := harness.ReadRecord(s.RunDir(pr))
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue // never started
		case err != nil:
			t.Fatal(err)
		case rec.Status == harness.StatusInterrupted:
			interrupted++
		case rec.Status != harness.StatusPlanned:
			t.Errorf("run %s is %s after the cancel", pr.Name, rec.Status)
		}
	}
	if interrupted == 0 {
		t.Error("no run.json says interrupted")
	}

	opts.Runner, opts.Events = simulate.Runner{Effects: simulate.DefaultEffects()}, nil
	sw, err = study.Sweep(context.Background(), s, opts)
	if err != nil || sw.Counts()[harness.StatusDone] != len(plan) {
		t.Fatalf("resumed sweep: %v %v, want all %d done", err, sw.Counts(), len(plan))
	}
	for _, pr := range plan {
		if rec, err := harness.ReadRecord(s.RunDir(pr)); err != nil || rec.Status != harness.StatusDone {
			t.Errorf("run %s after the resumed sweep: %v %v", pr.Name, rec, err)
		}
	}
}
