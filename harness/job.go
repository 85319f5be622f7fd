package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
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
	// packages, lm-eval version) before the run, with these options. An
	// empty Python there means the Python that runs the record's command
	// line (argv[0] when it is a Python, else the interpreter that the
	// #! line of the script argv[0], such as lm_eval, names), falling back
	// to python3 with a line in Environment.Errors when that cannot be
	// told; for simulated runs, python3.
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
	// IncludeDir is where a run keeps its frozen copy of the study's
	// include_path (custom task YAMLs), beside its output.
	IncludeDir = "include"
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
		var oe *outputError
		if errors.As(runErr, &oe) {
			code := 0 // lm-eval exited 0 without writing its output
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
		co := *opts.Capture
		note := ""
		if co.Python == "" && !rec.Simulated {
			// The packages and versions recorded are those of the Python
			// that runs lm-eval, not of the first python3 on PATH.
			if py, err := lmEvalPython(rec.Argv); err != nil {
				note = fmt.Sprintf("lm-eval's Python: %v; %s's packages are recorded instead", err, pythonOf(co))
			} else {
				co.Python = py
			}
		}
		env, err := CaptureEnvironment(ctx, dir, co)
		if ctx.Err() != nil {
			return finish(StatusInterrupted, fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx)))
		}
		if err != nil {
			return finish(StatusFailed, fmt.Errorf("capturing the environment: %w", err))
		}
		if note != "" {
			env.Errors = append(env.Errors, note)
		}
		rec.Env = env
		if !rec.Simulated {
			if err := pinHarness(ctx, rec, co); err != nil {
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
	if rev := ResolveRevision(rec, out); rev != "" {
		rec.Model.ResolvedRevision = rev
	}
	if res := resultsIn(out); res != nil {
		rec.Datasets = res.Datasets()
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

// Execute runs lm-eval and follows its progress bars. lm-eval exiting 0
// is not enough: it catches its own failures to save results and samples
// (a full disk, a path it cannot write), logs a warning and exits 0 all
// the same. So its output must then hold a results file and, when the run
// logs samples, the samples of every task the results have a config for;
// otherwise the error (matching ErrNoOutput) says what is missing.
func (l LMEval) Execute(ctx context.Context, rec *RunRecord, outDir string, progress func(Progress)) error {
	argv := withFlag(withOutputPath(rec.Argv, outDir), "--include_path", filepath.Join(filepath.Dir(outDir), IncludeDir))
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
	if err != nil {
		return err
	}
	return checkOutput(rec, outDir)
}

// outputError says that lm-eval exited 0 without writing what a finished
// run has.
type outputError struct{ why string }

func (e *outputError) Error() string {
	return "lm-eval exited 0 but " + e.why + "; it exits 0 even when saving its output fails (see lm-eval.log)"
}

func (e *outputError) Unwrap() error { return ErrNoOutput }

// checkOutput checks that dir holds lm-eval's results file and, when the
// run logs samples, a samples file for every task of its "configs" (the
// tasks lm-eval writes samples of).
func checkOutput(rec *RunRecord, dir string) error {
	outs, err := Find(dir)
	if errors.Is(err, ErrNoOutput) {
		return &outputError{"wrote no results file"}
	}
	if err != nil {
		return &outputError{fmt.Sprintf("its output cannot be read: %v", err)}
	}
	var res *Output
	for _, o := range outs {
		if o.Results != nil {
			res = o
			break
		}
	}
	if res == nil {
		return &outputError{"wrote samples and no results file"}
	}
	if !rec.Spec.LogSamples {
		return nil
	}
	var missing []string
	for task := range res.Results.Configs {
		if _, ok := res.SamplesOf(task); !ok {
			missing = append(missing, task)
		}
	}
	switch {
	case len(missing) > 0:
		sort.Strings(missing)
		return &outputError{fmt.Sprintf("wrote no samples of %s, which the run logs", strings.Join(missing, ", "))}
	case len(res.Samples) == 0:
		return &outputError{"wrote no samples, which the run logs"}
	}
	return nil
}

// withOutputPath returns argv with its --output_path value replaced (or
// one appended).
// withFlag points flag, when argv has it, at value: the run's own copy of
// what the recorded, study-relative path names.
func withFlag(argv []string, flag, value string) []string {
	for i := 1; i < len(argv); i++ {
		switch {
		case argv[i] == flag && i+1 < len(argv):
			args := append([]string(nil), argv...)
			args[i+1] = value
			return args
		case strings.HasPrefix(argv[i], flag+"="):
			args := append([]string(nil), argv...)
			args[i] = flag + "=" + value
			return args
		}
	}
	return argv
}

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
// pins, and records its commit: that of its checkout when lm-eval runs from
// one, or the one pip installed it from (pip freeze's "lm_eval @
// git+...@<commit>").
func pinHarness(ctx context.Context, rec *RunRecord, co CaptureOptions) error {
	got := rec.Env.LMEvalVersion
	if got == "" {
		return fmt.Errorf("lm-eval is not installed for %s (the run pins lm-eval %s)", pythonOf(co), rec.Harness.Version)
	}
	commit, dirty, err := LMEvalCheckout(ctx, pythonOf(co))
	source := "checkout"
	switch {
	case err == nil:
	case errors.Is(err, ErrNotCheckout):
		commit, dirty, source = freezeCommit(rec.Env.Packages), false, "installed"
	default:
		commit, dirty, source = "", false, ""
	}
	if err := checkHarnessVersion(rec.Harness.Version, got, commit); err != nil {
		return err
	}
	if commit != "" && rec.Harness.Commit != "" && !strings.HasPrefix(commit, rec.Harness.Commit) {
		if source == "checkout" {
			return fmt.Errorf("the lm-eval checkout is at %s but the run pins commit %s", commit, rec.Harness.Commit)
		}
		return fmt.Errorf("lm-eval was installed from commit %s but the run pins commit %s", commit, rec.Harness.Commit)
	}
	if commit != "" {
		rec.Harness.Commit, rec.Harness.Dirty = commit, dirty
	}
	if source == "checkout" || (source != "" && rec.Harness.Source == "") {
		rec.Harness.Source = source
	}
	return nil
}

// tagQuirks are the lm-eval release tags whose package metadata names
// another version: installed from the tag, importlib.metadata says
// metadata. Only at the tag's own commit does that version mean the tag.
var tagQuirks = []struct {
	tag, metadata Version
	commit        string
}{
	{Version{0, 4, 0}, Version{1, 0, 0}, "c9bbec6e7de418b9082379da82797522eb173054"},
	{Version{0, 4, 6}, Version{0, 4, 5}, "9d36354e6422db94c374dc476c093b1495370983"},
}

// checkHarnessVersion compares the pinned lm-eval version want with the
// installed distribution's version got, at commit (the installed commit,
// "" when unknown). A version that does not parse is not compared.
func checkHarnessVersion(want, got, commit string) error {
	w, err1 := ParseVersion(want)
	h, err2 := ParseVersion(got)
	if err1 != nil || err2 != nil {
		return nil
	}
	for _, q := range tagQuirks {
		if commit == q.commit && h == q.metadata {
			if w == q.tag {
				return nil
			}
			return fmt.Errorf("lm-eval %s is installed (commit %s, the v%s tag, whose package says %s) but the run pins %s", q.tag, commit, q.tag, got, want)
		}
	}
	if w == h {
		return nil
	}
	for _, q := range tagQuirks {
		if w == q.tag && h == q.metadata {
			at := "the installed lm-eval's commit is not known (it is neither a checkout nor installed from git)"
			if commit != "" {
				at = "it is at " + commit
			}
			return fmt.Errorf("lm-eval %s is installed but the run pins %s: the v%s tag's own package says %s too, which is accepted at that tag's commit %s, but %s", got, want, q.tag, got, q.commit, at)
		}
	}
	return fmt.Errorf("lm-eval %s is installed but the run pins %s (a virtual environment for it: python3 -m venv ~/venvs/lm-eval-%s && ~/venvs/lm-eval-%s/bin/pip install lm-eval==%s, then harness: {python: ~/venvs/lm-eval-%s/bin/python} in the study's step or variant)",
		got, want, want, want, want, want)
}

// freezeCommit is the commit pip installed lm_eval from ("lm_eval @
// git+https://...@<commit>" in pip freeze), or "".
func freezeCommit(pkgs []Package) string {
	for _, p := range pkgs {
		if normPackageName(p.Name) != "lm-eval" || !strings.HasPrefix(p.Source, "git+") {
			continue
		}
		src, _, _ := strings.Cut(p.Source, "#")
		if i := strings.LastIndex(src, "@"); i >= 0 && isCommit(src[i+1:]) {
			return strings.ToLower(src[i+1:])
		}
	}
	return ""
}

func isCommit(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

func pythonOf(co CaptureOptions) string {
	if co.Python != "" {
		return co.Python
	}
	return "python3"
}

// pythonNameRE matches the names of a Python interpreter: python, python3,
// python3.11.
var pythonNameRE = regexp.MustCompile(`^python[0-9.]*$`)

// lmEvalPython returns the Python interpreter that the command line argv
// runs lm-eval under: argv[0] itself when it is a Python ("python3 -m
// lm_eval"); otherwise the interpreter that the script argv[0] names (the
// lm_eval entry point, found on PATH when named without a slash, or
// another Python launcher such as accelerate). The script's "#!" line
// names it, directly, through env ("#!/usr/bin/env python3", looked up on
// PATH), or through the sh launcher pip writes when the interpreter's path
// is too long for "#!" or holds spaces.
func lmEvalPython(argv []string) (string, error) {
	if len(argv) == 0 || argv[0] == "" {
		return "", errors.New("no command line")
	}
	if pythonNameRE.MatchString(filepath.Base(argv[0])) {
		return argv[0], nil
	}
	script, err := exec.LookPath(argv[0])
	if err != nil {
		return "", err
	}
	return scriptInterpreter(script)
}

// scriptInterpreter reads the interpreter a Python entry-point script names.
func scriptInterpreter(script string) (string, error) {
	f, err := os.Open(script)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	lines := strings.SplitN(string(head[:n]), "\n", 3)
	first, ok := strings.CutPrefix(lines[0], "#!")
	fields := strings.Fields(first)
	if !ok || len(fields) == 0 {
		return "", fmt.Errorf("%s is not a script with a #! line", script)
	}
	interp, args := fields[0], fields[1:]
	switch filepath.Base(interp) {
	case "env":
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case a == "-u" || a == "--unset" || a == "-C" || a == "--chdir":
				i++ // an option with a value
			case strings.HasPrefix(a, "-") || strings.Contains(a, "="):
				// -S, -i, NAME=value
			default:
				p, err := exec.LookPath(a)
				if err != nil {
					return "", fmt.Errorf("%s: its #! line runs %s: %w", script, a, err)
				}
				return p, nil
			}
		}
		return "", fmt.Errorf("%s: its #! line names no program after env", script)
	case "sh", "bash", "dash":
		// pip's (distlib's) launcher:
		//	#!/bin/sh
		//	'''exec' "/path with spaces/bin/python" "$0" "$@"
		//	' '''
		if len(lines) > 1 {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(lines[1]), "'''exec' "); ok {
				if p := firstShellWord(rest); p != "" {
					return p, nil
				}
			}
		}
		return "", fmt.Errorf("%s is a shell script, not a Python entry point", script)
	}
	return interp, nil
}

// firstShellWord is the first word of s: quoted ("..." or '...') or up to
// the first blank.
func firstShellWord(s string) string {
	if s == "" {
		return ""
	}
	if q := s[0]; q == '"' || q == '\'' {
		if end := strings.IndexByte(s[1:], q); end >= 0 {
			return s[1 : 1+end]
		}
		return ""
	}
	word, _, _ := strings.Cut(s, " ")
	return word
}
