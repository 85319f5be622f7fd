package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/examples"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/kernel"
	"github.com/evalcapsule/evalcapsule/notebooks"
	"github.com/evalcapsule/evalcapsule/study"
)

type demoOptions struct {
	json bool
	seed uint64
}

func newDemoCmd(io streams) *cobra.Command {
	var opts demoOptions
	cmd := &cobra.Command{
		Use:   "demo [DIR]",
		Short: "The whole workflow end to end on a SIMULATED study, into a new folder",
		Long: `Run the whole workflow on a SIMULATED study (no GPU, no lm-eval, no model:
the simulated backend's planted effects stand in for a model's, and every
file says so), into a new folder (default ./capsule-demo):

  1. write the study: a made-up model card claim for GSM8K and the settings
     that may explain the gap (examples/demo/study.yaml)
  2. run its sweep with the simulated runner: the baseline, each step, each
     variant, every run with its run.json and lm-eval 0.4.9.1 output
  3. re-score every number of every run from its samples, bit for bit
  4. attribute the gap between the card and the reproduction to each step
  5. write the report (HTML and Markdown) and the executed notebook
  6. pack the study into a capsule (an OCI image layout), verify it, and
     replay it: every number re-derived from the packed samples

It prints where everything is and what to open first. About ten seconds on
two cores.

` + exitCodes(code{exitFailed, "a number differs, or the capsule does not verify or replay"}, codeUsage, codeInterrupted),
		Example: `  capsule demo
  capsule demo /tmp/demo`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "capsule-demo"
			if len(args) == 1 {
				dir = args[0]
			}
			return runDemo(cmd.Context(), opts, dir, io)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print what was made as JSON")
	cmd.Flags().Uint64Var(&opts.seed, "seed", 1, "seed of the bootstraps and the failure sample")
	return cmd
}

// demoResult is `capsule demo --json`.
type demoResult struct {
	Dir       string             `json:"dir"`                // the new folder the demo wrote into (capsule-demo unless given)
	Study     string             `json:"study"`              // the demo study's name
	Simulated bool               `json:"simulated"`          // always true: the simulated backend wrote every run, no model was run
	Runs      int                `json:"runs"`               // the runs the simulated sweep ran
	Checks    demoChecks         `json:"checks"`             // how the packed re-scoring checks of every run ended
	Claims    []demoClaim        `json:"claims"`             // the packed attribution of each of the card's claims
	Report    string             `json:"report"`             // the HTML report written (DIR/study/report.html)
	Markdown  string             `json:"markdown"`           // the Markdown report written beside it
	Notebook  string             `json:"notebook,omitempty"` // the executed quickstart notebook written (DIR/study/notebooks/quickstart.ipynb)
	Capsule   string             `json:"capsule"`            // the capsule written, an OCI image layout folder (DIR/demo.capsule)
	Digest    string             `json:"digest"`             // the capsule manifest's digest, sha256:...
	Verified  bool               `json:"verified"`           // whether verifying the capsule found no problem
	Replayed  int                `json:"replayed"`           // the numbers the replay re-derived from the packed samples and compared
	ReplayOK  bool               `json:"replay_ok"`          // whether the replay reproduced every number
	Seconds   map[string]float64 `json:"seconds"`            // the wall-clock seconds of each stage: "sweep", "report", "notebook", "pack", "verify", "replay"
}

type demoChecks struct {
	Exact           int `json:"exact"`            // checks whose samples give lm-eval's number exactly
	Differ          int `json:"differ"`           // checks whose samples give another number than lm-eval's
	NotRecomputable int `json:"not_recomputable"` // checks whose number cannot be re-derived from the samples
}

type demoClaim struct {
	Task        string  `json:"task"`        // the claim's task
	Metric      string  `json:"metric"`      // the claim's lm-eval metric
	Filter      string  `json:"filter"`      // the claim's lm-eval filter
	Card        float64 `json:"card"`        // the number the card claims, lm-eval's fraction for a [0, 1] metric
	Baseline    float64 `json:"baseline"`    // the baseline run's score, lm-eval's fraction for a [0, 1] metric
	Final       float64 `json:"final"`       // the score after the last step, lm-eval's fraction for a [0, 1] metric
	Unexplained float64 `json:"unexplained"` // Card − Final
	Statement   string  `json:"statement"`   // the attribution's finding in one sentence
}

func runDemo(ctx context.Context, opts demoOptions, dir string, io streams) error {
	if _, err := os.Lstat(dir); err == nil {
		return &usageError{fmt.Errorf("%s already exists: the demo writes into a new folder (give another: capsule demo DIR)", dir)}
	}
	res := &demoResult{Dir: dir, Simulated: true, Seconds: map[string]float64{}}
	step := func(name string, start time.Time) { res.Seconds[name] = time.Since(start).Seconds() }
	say := func(format string, args ...any) {
		if !opts.json {
			fmt.Fprintf(io.out, format, args...)
		}
	}
	studyDir := filepath.Join(dir, "study")
	if err := os.MkdirAll(studyDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(studyDir, "study.yaml"), examples.DemoStudy, 0o644); err != nil {
		return err
	}
	st, err := study.Load(studyDir)
	if err != nil {
		return err
	}
	res.Study = st.Name
	say("SIMULATED study in %s: no model is run; the numbers show the workflow, not a model.\n\n", dir)

	start := time.Now()
	bars := newBars(io, true)
	sweep, err := study.Sweep(ctx, st, study.SweepOptions{Runner: simulate.Runner{Effects: simulate.DefaultEffects()}, RunnerKind: "simulated", Simulated: true, Events: bars.event})
	bars.stop()
	if err != nil {
		return err
	}
	if c := sweep.Counts(); c["failed"]+c["interrupted"] > 0 {
		return fmt.Errorf("the simulated sweep did not finish: %d failed, %d interrupted", c["failed"], c["interrupted"])
	}
	res.Runs = len(sweep.Runs)
	step("sweep", start)
	say("  1. sweep        %d runs with the simulated runner, in %.1f s: %s/runs/\n", res.Runs, res.Seconds["sweep"], studyDir)

	start = time.Now()
	topts := analysis.AttributionOptions{Seed: opts.seed}
	rep, err := study.BuildReport(ctx, st, study.ReportOptions{Attribution: topts})
	if err != nil {
		return err
	}
	res.Report = filepath.Join(studyDir, "report.html")
	if res.Markdown, err = rep.WriteFiles(res.Report); err != nil {
		return err
	}
	step("report", start)
	say("  2. report       %s (and %s)\n", res.Report, filepath.Base(res.Markdown))

	start = time.Now()
	nb, err := writeDemoNotebook(ctx, studyDir)
	if err != nil {
		return err
	}
	res.Notebook = nb
	step("notebook", start)
	if nb != "" {
		say("  3. notebook     %s (executed)\n", nb)
	}

	start = time.Now()
	res.Capsule = filepath.Join(dir, "demo.capsule")
	packed, err := capsule.Pack(ctx, st, res.Capsule, capsule.PackOptions{Attribution: topts})
	if err != nil {
		return err
	}
	res.Digest = packed.Manifest.Digest.String()
	step("pack", start)
	say("  4. capsule      %s: %d files, %s (%s stored), %s\n", res.Capsule, packed.Files, capsule.FormatBytes(packed.Bytes), capsule.FormatBytes(packed.Stored), res.Digest)
	exact, differ, nr := packed.Tables.Rescore.Counts()
	res.Checks = demoChecks{exact, differ, nr}
	say("  5. rescore      every number of every run re-derived from its samples: %d exact, %d differ, %d not recomputable\n", exact, differ, nr)
	for _, cl := range packed.Tables.Attribution.Claims {
		res.Claims = append(res.Claims, demoClaim{Task: cl.Task, Metric: cl.Metric, Filter: cl.Filter, Card: cl.Card, Baseline: cl.Baseline, Final: cl.Final, Unexplained: cl.Unexplained, Statement: cl.Statement})
		filter := cl.Filter
		if cl.FinalFilter != "" {
			filter += "; the final score under " + cl.FinalFilter
		}
		// In the unit of every other table: points for a [0, 1] metric.
		sc := analysis.ScaleOf(cl.Metric, cl.Card, cl.Baseline, cl.Final)
		unit := ""
		if sc.Points() {
			unit = " (points)"
		}
		say("  6. attribution  %s %s (%s)%s: card %s, baseline %s, after %d steps %s, unexplained %s %s\n",
			cl.Task, cl.Metric, filter, unit, sc.Format(cl.Card), sc.Format(cl.Baseline), len(cl.Steps), sc.Format(cl.Final),
			sc.Diff().FormatDelta(cl.Unexplained), sc.Diff().FormatCI(cl.UnexplainedCILow, cl.UnexplainedCIHigh, true))
		for _, n := range cl.Notes {
			say("                 note: %s\n", n)
		}
	}

	start = time.Now()
	c, err := capsule.Open(ctx, res.Capsule, capsule.OpenOptions{})
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := capsule.Verify(ctx, c)
	if err != nil {
		return err
	}
	res.Verified = v.OK
	step("verify", start)
	say("  7. verify       %d blobs, every digest and size, the config's schema: %s\n", v.Blobs, okWord(v.OK))

	start = time.Now()
	rr, err := capsule.Replay(ctx, c, capsule.ReplayOptions{})
	if err != nil {
		return err
	}
	res.Replayed, res.ReplayOK = rr.Compared, rr.OK
	step("replay", start)
	say("  8. replay       %d numbers re-derived from the packed samples: %s\n", rr.Compared, map[bool]string{true: "all identical", false: fmt.Sprintf("%d DIFFER", len(rr.Diffs))}[rr.OK])

	if opts.json {
		if err := writeJSON(io.out, res); err != nil {
			return err
		}
	} else {
		say("\nOpen first: %s\n", res.Report)
		if nb != "" {
			say("Then the notebook: capsule kernel install --user; jupyter notebook %s\n", nb)
		}
		say("Review it as a reviewer would: capsule replay %s   (or push it: capsule push %s REGISTRY/REPO:TAG)\n", res.Capsule, res.Capsule)
	}
	if differ > 0 || !v.OK || !rr.OK {
		return errChecksFailed
	}
	return nil
}

func okWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAILED"
}

// writeDemoNotebook executes the quickstart notebook on the study in this
// process (no Jupyter needed) and writes it, with its outputs, into the
// study's notebooks/ folder.
func writeDemoNotebook(ctx context.Context, studyDir string) (string, error) {
	nb, err := notebooks.FS.ReadFile("quickstart.ipynb")
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(studyDir)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(abs, "notebooks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	res, err := kernel.ExecuteNotebook(ctx, nb, kernel.NotebookOptions{Dir: dir, Env: []string{"CAPSULE_DEMO_STUDY=" + abs}, Timeout: 2 * time.Minute})
	if err != nil {
		return "", fmt.Errorf("executing the quickstart notebook: %w", err)
	}
	out := filepath.Join(studyDir, "notebooks", "quickstart.ipynb")
	return out, harness.WriteFileAtomic(out, res.Notebook)
}
