package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/study"
)

type attributeOptions struct {
	json      bool
	resamples int
	seed      uint64
	intersect bool
}

func newAttributeCmd(io streams) *cobra.Command {
	var opts attributeOptions
	cmd := &cobra.Command{
		Use:   "attribute STUDY_DIR",
		Short: "Attribute the gap between the model card and the reproduction to settings",
		Long: `For every claim of the study's card, walk from the baseline run through each
cumulative step (a new run, or a re-scoring of the previous run's samples)
to the final number, with each step's Δ, paired CI and McNemar p, and state
what remains between the card and the final number, with its CI and whether
it is significant. Variants (one change each from the baseline) give the
sensitivity table; when the runs form a full factorial over up to four
steps, the Shapley attribution and the interaction are shown too.

STUDY_DIR holds study.yaml and runs/<name>/ for every planned run (see
capsule run).

` + exitCodes(code{exitUsage, "usage or input error, or a study whose runs are missing"}, codeInterrupted),
		Example: `  capsule attribute studies/llama-3.2-1b-instruct/
  capsule attribute --json studies/llama-3.2-1b-instruct/ > attribution.json`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAttribute(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the attribution as JSON")
	f.IntVar(&opts.resamples, "resamples", 10000, "paired bootstrap resamples per step")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the bootstraps")
	f.BoolVar(&opts.intersect, "intersect", false, "pair runs on their common documents when their sets differ")
	return cmd
}

func runAttribute(ctx context.Context, opts attributeOptions, dir string, io streams) error {
	st, err := study.Load(dir)
	if err != nil {
		return err
	}
	att, err := study.Attribute(ctx, st, analysis.AttributionOptions{Resamples: opts.resamples, Seed: opts.seed, Intersect: opts.intersect})
	if err != nil {
		return &usageError{err}
	}
	if opts.json {
		return writeJSON(io.out, att)
	}
	writeAttribution(io, att)
	return nil
}

func writeAttribution(io streams, att *analysis.Attribution) {
	if att.Simulated {
		fmt.Fprintln(io.out, "SIMULATED: some runs come from the simulated backend; no model was run for them.")
	}
	fmt.Fprintf(io.out, "study %s (scores in points, CIs at 95 %%)\n", att.Study)
	for _, c := range att.Claims {
		fmt.Fprintf(io.out, "\n%s %s (%s)\n", c.Task, c.Metric, c.Filter)
		tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  STEP\tKIND\tSCORE\tΔ\tCI\tP")
		fmt.Fprintf(tw, "  model card\t\t%s\t\t\t\n", pts(c.Card))
		fmt.Fprintf(tw, "  baseline\trun\t%s\t\t\t\n", pts(c.Baseline))
		for _, s := range c.Steps {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%+.2f\t[%s, %s]\t%.3g\n", s.Name, s.Kind, pts(s.Value), 100*s.Delta, pts(s.CILow), pts(s.CIHigh), s.P)
		}
		fmt.Fprintf(tw, "  final\t\t%s\t\t\t\n", pts(c.Final))
		fmt.Fprintf(tw, "  unexplained (card − final)\t\t%s\t\t[%s, %s]\t\n", pts(c.Unexplained), pts(c.UnexplainedCILow), pts(c.UnexplainedCIHigh))
		tw.Flush()
		if len(c.Sensitivity) > 0 {
			fmt.Fprintln(io.out, "  sensitivity (one change from the baseline):")
			tw = tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
			for _, s := range c.Sensitivity {
				fmt.Fprintf(tw, "    %s\t%s\t%+.2f\t[%s, %s]\tp %.3g\n", s.Change, pts(s.Value), 100*s.Delta, pts(s.CILow), pts(s.CIHigh), s.P)
			}
			tw.Flush()
		}
		if c.Shapley != nil {
			fmt.Fprintln(io.out, "  Shapley attribution (order-independent, full factorial):")
			for _, s := range c.Shapley {
				fmt.Fprintf(io.out, "    %s: %+.2f\n", s.Setting, 100*s.Value)
			}
			fmt.Fprintf(io.out, "    interaction (not carried by any single setting): %+.2f\n", 100**c.Interaction)
		}
		fmt.Fprintf(io.out, "  %s\n", c.Statement)
	}
}
