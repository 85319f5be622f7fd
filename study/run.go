package study

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/evalcapsule/evalcapsule/harness"
)

// SweepOptions configures Run. Runner is required.
type SweepOptions struct {
	Runner harness.Runner
	// RunnerKind is recorded in run.json ("local", "container", "slurm",
	// "simulated").
	RunnerKind string
	// Simulated says the runs use the simulated backend (whatever runs
	// them): run.json and every output say so.
	Simulated bool
	// Parallel is how many runs execute at once; 0 means 1, or GOMAXPROCS
	// for the in-process simulated runner.
	Parallel int
	// Only restricts the sweep to these run names.
	Only []string
	// Events, when set, receives every change of a run's state and
	// progress (from several goroutines; calls are serialised).
	Events func(RunEvent)
	// Command is how lm-eval is started, recorded before its arguments in
	// run.json's argv (default "lm_eval"; "python3 -m lm_eval" works too).
	// A run whose harness names a Python interpreter is started with it
	// (PYTHON -m lm_eval) by the local and Slurm runners.
	Command []string
	// KeepStale refuses to run again a done run whose record is not what
	// the study plans now (its identity changed) instead of re-running it.
	KeepStale bool
}

// RunEvent is a change in one run of a sweep.
type RunEvent struct {
	Run      PlannedRun
	Status   string // planned, running, done, failed, interrupted, skipped
	Progress harness.Progress
	Err      error
}

// RunOutcome is how one run of a sweep ended.
type RunOutcome struct {
	Run PlannedRun
	// Stale says why a done run was run again: what changed in the study
	// since it was done ("" for a run that was not done).
	Stale    string
	Status   string // done, failed, interrupted, skipped (done before)
	Duration time.Duration
	Err      error
}

// SweepResult is the outcome of Run.
type SweepResult struct {
	Runs []RunOutcome
	// Duration is the wall time of the whole sweep.
	Duration time.Duration
}

// Counts returns how many runs ended in each status.
func (s *SweepResult) Counts() map[string]int {
	c := map[string]int{}
	for _, r := range s.Runs {
		c[r.Status]++
	}
	return c
}

// preflighter is a runner that can check, before any run starts, that what
// the runs need is there (harness.LocalRunner: lm-eval).
type preflighter interface {
	Preflight(ctx context.Context, recs []*harness.RunRecord) error
}

// Sweep executes the study's planned runs that are not done yet: it computes
// every run's lm-eval command line first (a setting the pinned lm-eval does
// not support stops everything before anything runs), writes each run's
// run.json as planned, and hands the runs to the runner, Parallel at a time.
// Cancelling ctx interrupts the runs in flight; finished runs are kept, and
// running the study again resumes where it stopped.
func Sweep(ctx context.Context, s *Study, opts SweepOptions) (*SweepResult, error) {
	if opts.Runner == nil {
		return nil, errors.New("no runner")
	}
	l, err := lockStudy(s.Dir)
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	plan := s.Plan()
	if len(opts.Only) > 0 {
		var sel []PlannedRun
		for _, name := range opts.Only {
			found := false
			for _, pr := range plan {
				if pr.Name == name {
					sel, found = append(sel, pr), true
				}
			}
			if !found {
				return nil, fmt.Errorf("%w: no planned run named %q", ErrStudy, name)
			}
		}
		plan = sel
	}
	// Everything that can be checked is checked before anything runs.
	type job struct {
		pr    PlannedRun
		dir   string
		rec   *harness.RunRecord
		skip  bool
		stale string
	}
	var jobs []job
	var kept []string
	for _, pr := range plan {
		dir := s.RunDir(pr)
		argv, err := s.SweepArgv(pr, opts.Command, opts.RunnerKind)
		if err != nil {
			return nil, err
		}
		rec := &harness.RunRecord{
			Name: pr.Name, Label: pr.Label, Status: harness.StatusPlanned, Spec: pr.Spec,
			Identity:  s.Identity(pr, opts.Simulated),
			Argv:      argv,
			Harness:   harness.HarnessInfo{Version: pr.Harness.Version, Commit: pr.Harness.Commit},
			Model:     harness.ModelInfo{ID: s.Model.ID, Revision: s.Model.Revision},
			Seeds:     pr.Spec.Seed,
			Runner:    harness.RunnerInfo{Kind: opts.RunnerKind},
			Simulated: opts.Simulated,
		}
		if opts.Simulated {
			rec.Harness.Source = "simulated"
		}
		if rec.Includes, err = s.Includes(pr); err != nil {
			return nil, fmt.Errorf("run %s (%s): %w", pr.Name, pr.Label, err)
		}
		if pr.Harness.Image != "" && opts.RunnerKind == "container" {
			// The image this run's lm-eval is in: the container runner
			// takes it over its own default.
			rec.Image = &harness.ImageInfo{Ref: pr.Harness.Image}
		}
		old, err := harness.ReadRecord(dir)
		switch {
		case err == nil && old.Status == harness.StatusDone:
			why := s.staleness(pr, old, opts.Simulated)
			if why == "" {
				jobs = append(jobs, job{pr: pr, dir: dir, rec: old, skip: true})
				continue
			}
			if opts.KeepStale {
				kept = append(kept, fmt.Sprintf("%s (%s)", pr.Name, why))
				continue
			}
			// Run again; the old output stays until the new one is done.
			jobs = append(jobs, job{pr: pr, dir: dir, rec: rec, stale: why})
			continue
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return nil, err
		}
		jobs = append(jobs, job{pr: pr, dir: dir, rec: rec})
	}
	if len(kept) > 0 {
		return nil, fmt.Errorf("%w: done with other settings than the study plans now, and KeepStale: %s; run without it to run them again",
			ErrRunExists, strings.Join(kept, "; "))
	}
	if pf, ok := opts.Runner.(preflighter); ok && !opts.Simulated {
		var recs []*harness.RunRecord
		for _, j := range jobs {
			if !j.skip {
				recs = append(recs, j.rec)
			}
		}
		if err := pf.Preflight(ctx, recs); err != nil {
			return nil, err
		}
	}
	var mu sync.Mutex
	emit := func(ev RunEvent) {
		if opts.Events != nil {
			mu.Lock()
			opts.Events(ev)
			mu.Unlock()
		}
	}
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = 1
		if opts.RunnerKind == "simulated" {
			parallel = runtime.GOMAXPROCS(0)
		}
	}
	start := time.Now()
	sweep := &SweepResult{Runs: make([]RunOutcome, len(jobs))}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				out := RunOutcome{Run: j.pr, Stale: j.stale}
				if ctx.Err() != nil {
					out.Status = harness.StatusInterrupted
					out.Err = ctx.Err()
					sweep.Runs[i] = out
					continue
				}
				if j.stale != "" {
					emit(RunEvent{Run: j.pr, Status: "stale", Err: errors.New(j.stale)})
				}
				t0 := time.Now()
				if err := os.MkdirAll(j.dir, 0o755); err != nil {
					out.Status, out.Err = harness.StatusFailed, err
					sweep.Runs[i] = out
					continue
				}
				if j.pr.Spec.IncludePath != "" {
					if err := freezeIncludes(filepath.Join(s.Dir, j.pr.Spec.IncludePath), j.rec.Includes, j.dir); err != nil {
						out.Status, out.Err = harness.StatusFailed, fmt.Errorf("freezing include_path: %w", err)
						sweep.Runs[i] = out
						continue
					}
				}
				progress := func(p harness.Progress) {
					emit(RunEvent{Run: j.pr, Status: harness.StatusRunning, Progress: p})
				}
				var err error
				if rr, ok := opts.Runner.(harness.RecordRunner); ok {
					emit(RunEvent{Run: j.pr, Status: harness.StatusRunning})
					err = rr.RunRecord(ctx, j.dir, j.rec, progress)
				} else {
					if err := harness.WriteRecord(j.dir, j.rec); err != nil {
						out.Status, out.Err = harness.StatusFailed, err
						sweep.Runs[i] = out
						continue
					}
					emit(RunEvent{Run: j.pr, Status: harness.StatusRunning})
					err = opts.Runner.Run(ctx, j.dir, progress)
				}
				out.Duration = time.Since(t0)
				rec, rerr := j.rec, error(nil)
				if _, ok := opts.Runner.(harness.RecordRunner); !ok {
					rec, rerr = harness.ReadRecord(j.dir)
				}
				switch {
				case rerr != nil:
					out.Status, out.Err = harness.StatusFailed, rerr
				case rec.Status == harness.StatusDone:
					out.Status = harness.StatusDone
				default:
					out.Status = rec.Status
					if rec.Status == harness.StatusRunning || rec.Status == harness.StatusPlanned {
						out.Status = harness.StatusFailed
					}
					out.Err = err
					if out.Err == nil && rec.Error != "" {
						out.Err = errors.New(rec.Error)
					}
				}
				emit(RunEvent{Run: j.pr, Status: out.Status, Err: out.Err})
				sweep.Runs[i] = out
			}
		}()
	}
	for i, j := range jobs {
		if j.skip {
			sweep.Runs[i] = RunOutcome{Run: j.pr, Status: "skipped"}
			emit(RunEvent{Run: j.pr, Status: "skipped"})
			continue
		}
		next <- i
	}
	close(next)
	wg.Wait()
	sweep.Duration = time.Since(start)
	return sweep, nil
}
