package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/internal/quote"
	"github.com/evalcapsule/evalcapsule/study"
)

type runOptions struct {
	json     bool
	runner   runnerFlags
	parallel int
	only     []string
	command  string
	dryRun   bool
	keep     bool
	models   []string
}

// runnerFlags choose and configure the runner of `run` and `replay --rerun`.
type runnerFlags struct {
	kind      string
	simulate  bool
	partition string
	gpus      int
	slurmTime string
	engine    string
	image     string
	allowTag  bool
	cache     string
}

func addRunnerFlags(f *pflag.FlagSet, o *runnerFlags) {
	f.StringVar(&o.kind, "runner", "", "local, container, slurm or simulated (default: the study's runner.kind)")
	f.BoolVar(&o.simulate, "simulate", false, "use the simulated backend (no GPU, no lm-eval) through the chosen runner")
	f.StringVar(&o.partition, "partition", "", "Slurm partition")
	f.IntVar(&o.gpus, "gpus", 1, "GPUs per run (Slurm --gres=gpu:N; containers get all GPUs when > 0)")
	f.StringVar(&o.slurmTime, "time", "", "Slurm time limit per run")
	f.StringVar(&o.engine, "engine", "podman", "container engine: podman, docker or apptainer")
	f.StringVar(&o.image, "image", "", "container image, name@sha256:<digest> (default: the study's harness.image)")
	f.BoolVar(&o.allowTag, "allow-tag", false, "accept an image given by tag (its digest is still recorded)")
	f.StringVar(&o.cache, "cache", "", "host directory mounted as the Hugging Face cache in containers")
}

// containerPassEnv are the variables the container runner passes into
// the container by name.
var containerPassEnv = []string{"HF_TOKEN"}

// resolve returns the runner kind the flags choose for the study and
// whether runs use the simulated backend, without building the runner.
func (o runnerFlags) resolve(st *study.Study) (kind string, simulated bool, err error) {
	kind = firstNonEmpty(o.kind, st.Runner.Kind)
	switch kind {
	case "simulated", "local", "slurm", "container":
	default:
		return "", false, &usageError{fmt.Errorf("unknown runner %q (local, container, slurm or simulated)", kind)}
	}
	return kind, o.simulate || kind == "simulated", nil
}

// newRunner builds the runner the flags choose for the study: kind is the
// runner's name, simulated whether runs use the simulated backend, and
// image the container image when none is given by flag.
func (o runnerFlags) newRunner(st *study.Study, image string) (r harness.Runner, kind string, simulated bool, err error) {
	kind, simulated, err = o.resolve(st)
	if err != nil {
		return nil, "", false, err
	}
	self, err := selfPath()
	if err != nil {
		return nil, "", false, err
	}
	job := []string{self, "job"}
	switch kind {
	case "simulated":
		pace, err := simulatePace()
		if err != nil {
			return nil, "", false, err
		}
		r = simulate.Runner{Effects: simulate.DefaultEffects(), Pace: pace}
	case "local":
		r = harness.LocalRunner{Job: job}
	case "slurm":
		sr := harness.SlurmRunner{Job: job, Partition: firstNonEmpty(o.partition, st.Runner.Options["partition"]), GPUs: o.gpus, Time: o.slurmTime}
		if err := sr.Check(); err != nil {
			return nil, "", false, err
		}
		r = sr
	case "container":
		cr := harness.ContainerRunner{Engine: o.engine, Image: firstNonEmpty(o.image, image, st.Harness.Image), Fixed: o.image != "", AllowTag: o.allowTag,
			GPUs: o.gpus > 0 && !simulated, Cache: o.cache, PassEnv: containerPassEnv}
		if err := cr.Check(); err != nil {
			return nil, "", false, err
		}
		r = cr
	}
	return r, kind, simulated, nil
}

func newRunCmd(io streams) *cobra.Command {
	var opts runOptions
	cmd := &cobra.Command{
		Use:   "run STUDY_DIR | SUITE_FILE --model PATH_OR_ID...",
		Short: "Execute the study's planned lm-eval runs; resumes where it stopped",
		Long: `Execute the study's runs: the baseline, each step that sets something (steps
apply cumulatively), and each variant. Every run's lm-eval command line is
computed first for the pinned lm-eval version: a setting that version does
not support stops everything before anything runs. Runs already done are
skipped, so an interrupted sweep (Ctrl-C) resumes when run again; a run
stopped half-way is marked interrupted, never done.

A done run whose identity changed (its settings, its lm-eval version,
commit or image, the model or its revision: what run.json's identity
hashes) is stale: it is run again, its old output kept until the new one is
done, and the output says what changed; --keep-stale refuses instead. A
step or variant may pin another lm-eval (harness: {version, image, python}):
its runs get that version's command line, the container runner its image,
the local and Slurm runners its Python (a virtual environment with that
version: python3 -m venv ~/venvs/lm-eval-0.4.3 &&
~/venvs/lm-eval-0.4.3/bin/pip install lm-eval==0.4.3).

Each run gets runs/<name>/ with run.json (settings, exact argv, harness,
image digests, GPUs, driver and CUDA versions, Python packages, timings,
exit status, captured on the machine that ran it) and output/ (what lm-eval
wrote).

Runners (--runner, default the study's runner.kind):
  local      lm_eval on this machine, one run at a time
  container  the study's harness.image (by digest) under podman, docker or
             apptainer, with the GPUs passed through
  slurm      one sbatch job per run (--partition, --gpus), followed with
             squeue/scontrol and cancelled with scancel on Ctrl-C
  simulated  the simulated backend in this process: no GPU, no lm-eval;
             every output says simulated
--simulate uses the simulated backend through any runner (to try a Slurm
cluster or a container without a GPU).

A suite (a study file with kind: suite, see capsule suite init) is run
against each --model: a local checkpoint path (the sha256 digest of its
files is recorded) or a hub id (ID@REVISION pins the revision). Each
checkpoint gets runs/<checkpoint>/ beside the suite file, a study folder
whose study.yaml is the suite with the model pinned, and its result is
packed as runs/<checkpoint>.capsule (replaced), ready for capsule push and
capsule gate. With the Slurm runner every checkpoint's job is submitted at
once, one job per checkpoint.

` + exitCodes(codeUsage, code{exitExternal, "a run failed, or the runner (lm-eval, container engine, Slurm) did"}, code{exitInterrupted, "interrupted (Ctrl-C or SIGTERM): finished runs are kept, the same command resumes"}),
		Example: `  capsule run studies/llama-3.2-1b-instruct/
  capsule run studies/llama-3.2-1b-instruct/ --runner slurm --partition gpu --gpus 1
  capsule run examples/demo/ --runner simulated
  capsule run --dry-run studies/llama-3.2-1b-instruct/
  capsule run suites/release.yaml --model ckpt/step-12000 --model ckpt/step-13000 --runner slurm`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the outcome of every run as JSON (with --dry-run: each run's argv, environment and runner)")
	addRunnerFlags(f, &opts.runner)
	f.IntVar(&opts.parallel, "parallel", 0, "runs at once (default 1; all cores for simulated; every run for slurm)")
	f.StringSliceVar(&opts.only, "only", nil, "run only these planned runs (by name)")
	f.StringVar(&opts.command, "lm-eval", "lm_eval", "how lm-eval is started, recorded in run.json's argv (e.g. \"python3 -m lm_eval\")")
	f.BoolVar(&opts.dryRun, "dry-run", false, "print the plan and every run's lm-eval command line as a shell script, run nothing (needs no runner)")
	f.StringArrayVar(&opts.models, "model", nil, "a suite's checkpoint: a local path (its files' sha256 digest is recorded) or a hub id, ID@REVISION to pin it; repeat for several")
	f.BoolVar(&opts.keep, "keep-stale", false, "refuse to run again a done run that the study now plans otherwise (default: run it again, keeping its output until the new one is done)")
	return cmd
}

func runRun(ctx context.Context, opts runOptions, dir string, io streams) error {
	st, err := study.Load(dir)
	if err != nil {
		return err
	}
	if st.IsSuite() {
		return runSuite(ctx, opts, st, io)
	}
	if len(opts.models) > 0 {
		return &usageError{fmt.Errorf("--model is for a suite (kind: suite); %s is a study, whose model is its model: key", quote.Text(st.Path))}
	}
	for _, w := range st.Warnings() {
		fmt.Fprintf(io.err, "capsule: warning: %s\n", quote.Text(w))
	}
	if opts.dryRun {
		return dryRun(st, opts, io)
	}
	runner, kind, simulated, err := opts.runner.newRunner(st, "")
	if err != nil {
		return err
	}
	ro := study.SweepOptions{Runner: runner, RunnerKind: kind, Simulated: simulated, Parallel: opts.parallel, Only: opts.only, Command: strings.Fields(opts.command), KeepStale: opts.keep}
	if kind == "slurm" && ro.Parallel == 0 {
		ro.Parallel = len(st.Plan())
	}
	bars := newBars(io, opts.json)
	ro.Events = bars.event
	sweep, err := study.Sweep(ctx, st, ro)
	bars.stop()
	if err != nil {
		return err
	}
	if opts.json {
		type outcome struct {
			Name    string  `json:"name"`
			Label   string  `json:"label"`
			Status  string  `json:"status"`
			Seconds float64 `json:"seconds"`
			Error   string  `json:"error,omitempty"`
			Stale   string  `json:"stale,omitempty"`
		}
		var outs []outcome
		for _, r := range sweep.Runs {
			o := outcome{Name: r.Run.Name, Label: r.Run.Label, Status: r.Status, Seconds: r.Duration.Seconds(), Stale: r.Stale}
			if r.Err != nil {
				o.Error = r.Err.Error()
			}
			outs = append(outs, o)
		}
		if err := writeJSON(io.out, map[string]any{"study": st.Name, "runs": outs}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(io.out, "\n%s: %d runs in %s\n", st.Name, len(sweep.Runs), sweep.Duration.Round(time.Millisecond))
		for _, r := range sweep.Runs {
			line := fmt.Sprintf("  %-12s %-40s %s", r.Status, r.Run.Name, r.Duration.Round(time.Millisecond))
			if r.Err != nil && r.Status != "done" {
				line += "  " + r.Err.Error()
			}
			if r.Stale != "" {
				line += "  (run again: " + r.Stale + ")"
			}
			fmt.Fprintln(io.out, line)
		}
	}
	counts := sweep.Counts()
	if ctx.Err() != nil {
		fmt.Fprintf(io.err, "capsule: interrupted: %d runs done, %d interrupted; run the same command again to resume\n", counts["done"]+counts["skipped"], counts["interrupted"])
		return ctx.Err()
	}
	if counts["failed"] > 0 || counts["interrupted"] > 0 {
		return fmt.Errorf("%w: %d runs failed, %d interrupted (see runs/<name>/run.json and job.log)", harness.ErrRunner, counts["failed"], counts["interrupted"])
	}
	return nil
}

// simulatePace reads $EVALCAPSULE_SIMULATE_PACE: how long a simulated run
// takes (so that it can be watched or interrupted); 0 when unset.
func simulatePace() (time.Duration, error) {
	pace := os.Getenv("EVALCAPSULE_SIMULATE_PACE")
	if pace == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(pace)
	if err != nil {
		return 0, &usageError{fmt.Errorf("EVALCAPSULE_SIMULATE_PACE: %v", err)}
	}
	return d, nil
}

// selfPath is how runners start this program again for a job: the path it
// was started by (a PATH lookup of its name), so that a Slurm node or a
// wrapper sees the same command; os.Executable when that fails.
func selfPath() (string, error) {
	if p, err := exec.LookPath(os.Args[0]); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs, nil
		}
	}
	return os.Executable()
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// dryRunPlan is what `capsule run --dry-run --json` prints.
type dryRunPlan struct {
	Study     string      `json:"study"`           // the study's name
	Dir       string      `json:"dir"`             // the study folder, from which the command lines run
	Runner    string      `json:"runner"`          // the runner the runs would use: "local", "container", "slurm" or "simulated"
	Simulated bool        `json:"simulated"`       // whether the runs would use the simulated backend (no lm-eval runs)
	Image     string      `json:"image,omitempty"` // the container image (--image, else the study's); left out for another runner
	Runs      []dryRunRun `json:"runs"`            // the planned runs (those --only names, when given), in plan order; empty, never null
}

type dryRunRun struct {
	Name   string `json:"name"`   // the run's name in the plan ("baseline", "step-1-...")
	Label  string `json:"label"`  // the run's name for people: "baseline", the step's or variant's name, "factorial: ..."
	Dir    string `json:"dir"`    // the run's folder, STUDY/runs/NAME
	Runner string `json:"runner"` // the runner it would use, as the plan's
	// Argv is the command line run.json records: its --output_path is
	// relative to the study directory.
	Argv []string    `json:"argv"`
	Env  []dryRunEnv `json:"env"` // the environment variables the job sets (HF_TOKEN, passed, under the container runner); empty, never null, otherwise
}

// dryRunEnv is an environment variable the job sets: to Value, or, when
// Passed, to its value in the environment capsule run starts in, which is
// never printed.
type dryRunEnv struct {
	Name   string `json:"name"`             // the variable's name
	Value  string `json:"value,omitempty"`  // the value the job sets it to; left out when Passed
	Passed bool   `json:"passed,omitempty"` // whether the job passes its value from capsule run's environment (not printed); left out when false
}

// dryRun prints every planned run's lm-eval command line without building
// the runner: a dry run needs no sbatch, podman or lm-eval.
func dryRun(st *study.Study, opts runOptions, io streams) error {
	kind, simulated, err := opts.runner.resolve(st)
	if err != nil {
		return err
	}
	plan, err := selectRuns(st.Plan(), opts.only)
	if err != nil {
		return err
	}
	var env []dryRunEnv
	image := ""
	if kind == "container" {
		image = firstNonEmpty(opts.runner.image, st.Harness.Image)
		for _, name := range containerPassEnv {
			env = append(env, dryRunEnv{Name: name, Passed: true})
		}
	}
	out := dryRunPlan{Study: st.Name, Dir: st.Dir, Runner: kind, Simulated: simulated, Image: image, Runs: []dryRunRun{}}
	for _, pr := range plan {
		argv, err := st.SweepArgv(pr, strings.Fields(opts.command), kind)
		if err != nil {
			return err
		}
		out.Runs = append(out.Runs, dryRunRun{Name: pr.Name, Label: pr.Label, Dir: st.RunDir(pr), Runner: kind, Argv: argv, Env: append([]dryRunEnv{}, env...)})
	}
	if opts.json {
		return writeJSON(io.out, out)
	}
	// A shell script: the command lines, each argument quoted for a POSIX
	// shell, run from the study directory; everything else is a comment.
	how := "the " + kind + " runner"
	if simulated {
		how += ", simulated (these command lines are what run.json records; no lm-eval runs)"
	}
	fmt.Fprintf(io.out, "# %s: %d runs on %s\n", quote.Text(st.Name), len(out.Runs), how)
	for _, e := range env {
		fmt.Fprintf(io.out, "# the job passes %s from this environment\n", e.Name)
	}
	fmt.Fprintf(io.out, "cd %s\n", shellQuote(st.Dir))
	for _, r := range out.Runs {
		fmt.Fprintf(io.out, "# %s (%s)\n%s\n", quote.Text(r.Name), quote.Text(r.Label), shellJoin(r.Argv))
	}
	return nil
}

// selectRuns is plan restricted to the runs named in only (all when none).
func selectRuns(plan []study.PlannedRun, only []string) ([]study.PlannedRun, error) {
	if len(only) == 0 {
		return plan, nil
	}
	var sel []study.PlannedRun
	for _, name := range only {
		i := slices.IndexFunc(plan, func(pr study.PlannedRun) bool { return pr.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%w: no planned run named %q", study.ErrStudy, name)
		}
		sel = append(sel, plan[i])
	}
	return sel, nil
}

// shellJoin is argv as a POSIX shell command line.
func shellJoin(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = shellQuote(a)
		if i == 0 && strings.Contains(a, "=") && words[i] == a {
			words[i] = "'" + a + "'" // not an assignment
		}
	}
	return strings.Join(words, " ")
}

// shellQuote is s as one word of a POSIX shell command line: as it is when
// no shell treats any of its characters specially, otherwise in single
// quotes (a single quote in s closes them, is written escaped, \', and
// opens them again). Characters a terminal would obey rather than show
// (ESC, bidirectional overrides, invalid UTF-8) are not printed: they are
// written as "$(printf '\ooo')", which the shell turns back into the same
// bytes. Line breaks and tabs stay inside the quotes.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if strings.IndexFunc(s, func(r rune) bool { return !shellPlain(r) }) < 0 {
		return s
	}
	var b strings.Builder
	open := false
	for len(s) > 0 {
		_, size := utf8.DecodeRuneInString(s)
		c := s[:size]
		if c != "\n" && c != "\t" && quote.Text(c) != c {
			if open {
				b.WriteByte('\'')
				open = false
			}
			b.WriteString(`"$(printf '`)
			for i := 0; i < len(c); i++ {
				fmt.Fprintf(&b, `\%03o`, c[i])
			}
			b.WriteString(`')"`)
		} else {
			if !open {
				b.WriteByte('\'')
				open = true
			}
			if c == "'" {
				c = `'\''`
			}
			b.WriteString(c)
		}
		s = s[size:]
	}
	if open {
		b.WriteByte('\'')
	}
	return b.String()
}

// shellPlain reports whether r means itself anywhere in a shell word.
func shellPlain(r rune) bool {
	return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r))
}

// bars draws one progress line per run on a terminal, and a log line per
// state change elsewhere.
type bars struct {
	io     streams
	tty    bool
	quiet  bool
	mu     sync.Mutex
	board  study.RunBoard
	drawn  int
	ticker *time.Ticker
	done   chan struct{}
}

func newBars(io streams, quiet bool) *bars {
	b := &bars{io: io, tty: isTerminal(io.err), quiet: quiet, done: make(chan struct{})}
	if b.tty && !quiet {
		b.ticker = time.NewTicker(200 * time.Millisecond)
		go func() {
			for {
				select {
				case <-b.ticker.C:
					b.draw()
				case <-b.done:
					return
				}
			}
		}()
	}
	return b
}

func (b *bars) event(ev study.RunEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.board.Record(ev) && !b.tty && !b.quiet {
		fmt.Fprintf(b.io.err, "%s %s: %s\n", time.Now().Format("15:04:05"), ev.Run.Name, ev.Status)
	}
}

func (b *bars) draw() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn > 0 {
		fmt.Fprintf(b.io.err, "\033[%dA", b.drawn)
	}
	runs := b.board.Runs()
	for _, ev := range runs {
		frac := ev.Fraction()
		w := 24
		fill := int(frac * float64(w))
		bar := strings.Repeat("█", fill) + strings.Repeat("░", w-fill)
		fmt.Fprintf(b.io.err, "\033[K%-36s %s %3.0f%% %s\n", truncateName(ev.Run.Name, 36), bar, 100*frac, ev.Detail())
	}
	b.drawn = len(runs)
}

func truncateName(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func (b *bars) stop() {
	if b == nil {
		return
	}
	if b.ticker != nil {
		b.ticker.Stop()
		close(b.done)
		b.draw()
	}
}
