package main

import (
	"context"
	"fmt"

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
sensitivity table. Every p is shown beside its Holm-adjusted p, adjusted
over all the claim's step and variant tests together.

Every score is the claim's aggregate (aggregate: micro or macro in the
study file; for a group such as mmlu, macro is the mean of the subject
means, what MMLU cards usually report). A group claim that states none is
attributed as lm-eval's micro mean, and the statement says so.

A settings table sets each setting the card states for the claim beside
the baseline's and the final run's; a setting the final run does not match
is named in the statement.

When the runs form a full factorial over up to four steps (the study's
factorial: [step names] plans the missing combinations), the Shapley
attribution and the interaction are shown too, each value with a paired
bootstrap CI.

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
		return err
	}
	if opts.json {
		return writeJSON(io.out, att)
	}
	fmt.Fprint(io.out, att.String())
	return nil
}
