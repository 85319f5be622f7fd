package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
)

type scoresOptions struct {
	json  bool
	tasks []string
	level float64
	seed  uint64
}

func newScoresCmd(io streams) *cobra.Command {
	var opts scoresOptions
	cmd := &cobra.Command{
		Use:   "scores RUN",
		Short: "Every score of a run with its uncertainty: CLT, Wilson and bootstrap intervals side by side",
		Long: `Show every score of a run with its confidence intervals side by side: the CLT
interval (lm-eval's stderr), the Wilson score interval (0/1 scores), and a
percentile bootstrap (binomial resampling of the count for 0/1 scores). For
each group (e.g. mmlu) it also shows the micro average (over all questions,
what lm-eval reports) beside the macro average (the mean of the subjects,
what model cards usually report), and the standard error clustered by
subject (Miller 2024) with and without the finite-cluster correction.

Each row is in its metric's unit, named in the unit column: points (×100)
for metrics bounded in [0, 1] (acc, exact_match), the metric's own unit
otherwise (bleu_max on 0-100, mcc in [-1, 1], perplexity); an unknown metric
is shown as logged. Intervals are clipped to the metric's range. An interval
that cannot be computed says why ("n/a: 1 document", "n/a: not 0/1"). A
task whose samples log fewer documents than lm-eval scored (n-samples) is
named in a warning. A score the samples do not have (a results file without
samples) is shown from the results file with lm-eval's own stderr.

--json prints {"run", "level", "scores": [{"task", "metric", "filter", "n",
"value", "scale", "source", "intervals": [{"method", "value", "stderr",
"ci_low", "ci_high", "n"}], "unavailable": [{"method", "why"}], "group"}],
"trimmed_samples"}: the names compare --json gives the same things; values
are fractions, as lm-eval writes them, and scale says the unit a view shows.

` + exitCodes(codeUsage, codeInterrupted),
		Example: `  capsule scores runs/baseline
  capsule scores --json --level 0.9 runs/baseline
  capsule scores runs/baseline --task gsm8k,mmlu`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.level <= 0 || opts.level >= 1 {
				return &usageError{fmt.Errorf("--level must be in (0, 1)")}
			}
			return runScores(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the intervals as JSON")
	f.StringSliceVar(&opts.tasks, "task", nil, "show only these tasks or groups (comma separated, or the flag repeated)")
	f.Float64Var(&opts.level, "level", 0.95, "confidence level of the intervals")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the bootstrap")
	return cmd
}

func runScores(ctx context.Context, opts scoresOptions, path string, io streams) error {
	sc, err := loadReported(ctx, path, io)
	if err != nil {
		return err
	}
	u := analysis.Uncertainty(sc, opts.level, opts.seed)
	tf := taskFilter(opts.tasks)
	var present []string
	for _, s := range u.Scores {
		present = append(present, s.Task)
	}
	if err := tf.check(path, present); err != nil {
		return err
	}
	u.Scores = filter(tf, u.Scores, func(s analysis.ScoreUncertainty) string { return s.Task })
	u.Trimmed = filter(tf, u.Trimmed, func(t analysis.Trimmed) string { return t.Task })
	if opts.json {
		return writeJSON(io.out, u)
	}
	_, err = fmt.Fprint(io.out, u)
	return err
}
