package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Executor produces one run's lm-eval output in outDir: real lm-eval, or
// the simulated backend.
type Executor interface {
	Execute(ctx context.Context, rec *RunRecord, outDir string, progress func(Progress)) error
}

// JobOptions configures RunJob. The zero value works.
type JobOptions struct {
	// Capture, when set, records the machine's environment (GPUs, Python
	// packages, lm-eval version) before the run, with these options.
	Capture *CaptureOptions
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// Progress, when set, also receives every progress update (an
	// in-process runner passes it on to the driver).
	Progress func(Progress)
	// Record, when set, is the planned record, given in memory by an
	// in-process runner instead of read from run.json; with it, no
	// progress.json is written either (the driver gets Progress calls).
	// Each file written costs about a millisecond on an ext4 disk, which a
	// sweep of short simulated runs would notice.
	Record *RunRecord
}

// Partial is the name of the directory a job writes lm-eval's output into;
// it becomes OutputDir only when the run succeeded, so a run killed half-way
// never leaves an output that looks complete.
const (
	Partial   = "output.partial"
	OutputDir = "output"
)

// RunJob runs one planned run on the machine it is called on: it marks the
// run running, captures the environment, executes it, and marks it done,
// failed or (when ctx is cancelled, e.g. by SIGTERM from scancel)
// interrupted. A run already done is left alone.
func RunJob(ctx context.Context, dir string, ex Executor, opts JobOptions) (err error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	rec := opts.Record
	if rec == nil {
		if rec, err = ReadRecord(dir); err != nil {
			return err
		}
	}
	if rec.Status == StatusDone {
		return nil
	}
	progressFile := opts.Record == nil
	start := now().UTC()
	rec.Status, rec.Start, rec.End, rec.ExitCode, rec.Error = StatusRunning, &start, nil, nil, ""
	if host, err := os.Hostname(); err == nil {
		rec.Runner.Host = host
	}
	if id := os.Getenv("SLURM_JOB_ID"); id != "" {
		rec.Runner.JobID = id
	}
	if err := WriteRecord(dir, rec); err != nil {
		return err
	}
	finish := func(status string, runErr error) error {
		end := now().UTC()
		rec.Status, rec.End = status, &end
		if runErr != nil {
			rec.Error = runErr.Error()
			var ee *exec.ExitError
			if errors.As(runErr, &ee) {
				code := ee.ExitCode()
				rec.ExitCode = &code
			}
		} else {
			code := 0
			rec.ExitCode = &code
		}
		if err := WriteRecord(dir, rec); err != nil {
			return err
		}
		if progressFile {
			WriteProgress(dir, Progress{Phase: status})
		}
		return runErr
	}
	if opts.Capture != nil {
		env, err := CaptureEnvironment(ctx, dir, *opts.Capture)
		if ctx.Err() != nil {
			return finish(StatusInterrupted, fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx)))
		}
		if err != nil {
			return finish(StatusFailed, fmt.Errorf("capturing the environment: %w", err))
		}
		rec.Env = env
		if !rec.Simulated {
			if err := pinHarness(ctx, rec, *opts.Capture); err != nil {
				return finish(StatusFailed, err)
			}
		}
	}
	partial := filepath.Join(dir, Partial)
	if err := os.RemoveAll(partial); err != nil {
		return finish(StatusFailed, err)
	}
	if err := os.MkdirAll(partial, 0o755); err != nil {
		return finish(StatusFailed, err)
	}
	last := time.Time{}
	report := func(p Progress) {
		if opts.Progress != nil {
			opts.Progress(p)
		}
		// A few writes a second are enough for a progress bar.
		if t := now(); progressFile && (p.Done == p.Total || t.Sub(last) > 200*time.Millisecond) {
			last = t
			WriteProgress(dir, p)
		}
	}
	runErr := ex.Execute(ctx, rec, partial, report)
	if ctx.Err() != nil {
		return finish(StatusInterrupted, fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx)))
	}
	if runErr != nil {
		return finish(StatusFailed, runErr)
	}
	out := filepath.Join(dir, OutputDir)
	if err := os.RemoveAll(out); err != nil {
		return finish(StatusFailed, err)
	}
	if err := os.Rename(partial, out); err != nil {
		return finish(StatusFailed, err)
	}
	return finish(StatusDone, nil)
}

// LMEval executes the real lm-eval: the record's Argv (how to start
// lm-eval, e.g. "lm_eval" or "python3 -m lm_eval", then its arguments), with
// --output_path pointed at the partial output directory.
type LMEval struct {
	// Log receives lm-eval's output (default: dir/lm-eval.log).
	Log io.Writer
	// Grace is how long lm-eval gets to stop after SIGTERM (default 30 s).
	Grace time.Duration
}

// Execute runs lm-eval and follows its progress bars.
func (l LMEval) Execute(ctx context.Context, rec *RunRecord, outDir string, progress func(Progress)) error {
	argv := withOutputPath(rec.Argv, outDir)
	if len(argv) == 0 {
		return errors.New("run.json has no argv")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	log := l.Log
	if log == nil {
		f, err := os.Create(filepath.Join(filepath.Dir(outDir), "lm-eval.log"))
		if err != nil {
			return err
		}
		defer f.Close()
		log = f
	}
	cmd.Stdout = log
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	// A group of its own: lm-eval forks data loaders, and stopping it stops
	// them too.
	g, err := startGroup(cmd, func() { ScanProgress(stderr, log, progress) })
	if err != nil {
		return fmt.Errorf("starting lm-eval (%s): %w", argv[0], err)
	}
	grace := l.Grace
	if grace == 0 {
		grace = 30 * time.Second
	}
	// SIGTERM, as scancel and podman stop send it: ending is Python's
	// default for it, where SIGINT raises KeyboardInterrupt in whatever
	// lm-eval is doing.
	stopped, err := g.wait(ctx, syscall.SIGTERM, grace)
	if stopped {
		return ctx.Err()
	}
	return err
}

// withOutputPath returns argv with its --output_path value replaced (or
// one appended).
func withOutputPath(argv []string, out string) []string {
	args := append([]string(nil), argv...)
	for i := 1; i < len(args); i++ {
		if args[i] == "--output_path" && i+1 < len(args) {
			args[i+1] = out
			return args
		}
		if strings.HasPrefix(args[i], "--output_path=") {
			args[i] = "--output_path=" + out
			return args
		}
	}
	return append(args, "--output_path", out)
}

// pinHarness checks that the lm-eval this machine has is the one the run
// pins, and records its commit when it is a git checkout.
func pinHarness(ctx context.Context, rec *RunRecord, co CaptureOptions) error {
	got := rec.Env.LMEvalVersion
	if got == "" {
		return fmt.Errorf("lm-eval is not installed for %s (the run pins lm-eval %s)", pythonOf(co), rec.Harness.Version)
	}
	want, err1 := ParseVersion(rec.Harness.Version)
	have, err2 := ParseVersion(got)
	if err1 == nil && err2 == nil && want != have {
		return fmt.Errorf("lm-eval %s is installed but the run pins %s", got, rec.Harness.Version)
	}
	commit, dirty, err := LMEvalCheckout(ctx, pythonOf(co))
	switch {
	case err == nil:
		if rec.Harness.Commit != "" && !strings.HasPrefix(commit, rec.Harness.Commit) {
			return fmt.Errorf("the lm-eval checkout is at %s but the run pins commit %s", commit, rec.Harness.Commit)
		}
		rec.Harness.Commit, rec.Harness.Dirty, rec.Harness.Source = commit, dirty, "checkout"
	case errors.Is(err, ErrNotCheckout):
		if rec.Harness.Source == "" {
			rec.Harness.Source = "installed"
		}
	}
	return nil
}

func pythonOf(co CaptureOptions) string {
	if co.Python != "" {
		return co.Python
	}
	return "python3"
}
