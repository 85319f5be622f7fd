package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

type demoOptions struct {
	json  bool
	small bool
	seed  int64
}

func newDemoCmd(io streams) *cobra.Command {
	var opts demoOptions
	cmd := &cobra.Command{
		Use:   "demo [DIR]",
		Short: "Run the workflow end to end on a SIMULATED lm-eval run, into a new folder",
		Long: `Create a new folder (default ./capsule-demo) with a simulated lm-eval run of
GSM8K and MMLU at full size (no model is run; every file says so), then
re-score every number in it bit for bit and print the checks.

` + exitCodesHelp,
		Example: `  capsule demo
  capsule demo --small /tmp/demo`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "capsule-demo"
			if len(args) == 1 {
				dir = args[0]
			}
			return runDemo(cmd.Context(), opts, dir, io)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the checks as JSON")
	cmd.Flags().BoolVar(&opts.small, "small", false, "a small run (50 GSM8K docs, 5 questions per MMLU subject)")
	cmd.Flags().Int64Var(&opts.seed, "seed", 1, "seed of the simulated run")
	return cmd
}

func runDemo(ctx context.Context, opts demoOptions, dir string, io streams) error {
	if _, err := os.Stat(dir); err == nil {
		return &usageError{fmt.Errorf("%s already exists: the demo writes into a new folder", dir)}
	}
	sopts := simulate.Options{Seed: opts.seed}
	if opts.small {
		sopts.GSM8KDocs, sopts.MMLUDocsPerSubject = 50, 5
	}
	start := time.Now()
	out, err := simulate.Generate(filepath.Join(dir, "runs", "baseline", "output"), sopts)
	if err != nil {
		return err
	}
	genTime := time.Since(start)
	start = time.Now()
	outs, err := harness.Find(out.Dir)
	if err != nil {
		return err
	}
	rep, err := analysis.Rescore(ctx, outs, analysis.RescoreOptions{})
	if err != nil {
		return err
	}
	rescoreTime := time.Since(start)
	if opts.json {
		return writeJSON(io.out, rep)
	}
	exact, differs, nr := rep.Counts()
	fmt.Fprintf(io.out, "SIMULATED study (no model was run) in %s\n", dir)
	fmt.Fprintf(io.out, "  1. generated an lm-eval 0.4.9.1 run: %d samples lines, %.0f MB, in %.2f s\n", out.Lines, float64(out.Bytes)/1e6, genTime.Seconds())
	fmt.Fprintf(io.out, "  2. re-scored every number from the samples in %.2f s: %d exact, %d differ, %d not recomputable\n\n", rescoreTime.Seconds(), exact, differs, nr)
	fmt.Fprintf(io.out, "Open first: %s\n", out.ResultsPath)
	fmt.Fprintf(io.out, "Check it yourself: capsule rescore %s\n", out.Dir)
	if differs > 0 {
		rep.WriteText(io.out, analysis.TextOptions{DocDiffs: 3})
		return errChecksFailed
	}
	return nil
}
