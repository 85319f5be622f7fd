package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
)

type compareOptions struct {
	json      bool
	tasks     []string
	resamples int
	seed      uint64
	intersect bool
	diffs     int
}

func newCompareCmd(io streams) *cobra.Command {
	var opts compareOptions
	cmd := &cobra.Command{
		Use:   "compare RUN_A RUN_B",
		Short: "Compare two runs question by question, with paired confidence intervals",
		Long: `Compare run B with run A on the documents both scored, for every task, metric
and filter they share. Documents are paired by doc_id and must be the same
document (doc_hash); runs of different documents are refused.

For each metric it shows A, B, Δ = B − A with the paired stderr and a paired
bootstrap CI, the exact McNemar p on the documents that changed, the flip
table (right in A only, in B only), the unpaired CI for contrast, and the
minimum detectable effect at 80 % power for this n and correlation. A group
both results files have (mmlu and its categories) is compared too, over its
members' documents joined, when its score is the mean of those documents
(weight_by_size); otherwise the group is listed as not compared. It counts
the documents whose prompt changed (prompt_hash) and diffs the first few,
with trailing whitespace (·) and line ends (⏎) made visible.

Each row is in its metric's unit: points (×100) for metrics bounded in
[0, 1] (acc, exact_match), the metric's own unit otherwise (bleu_max on
0-100, perplexity), as the unit column says; intervals are clipped to the
range of a difference. A statistic that cannot be computed says why
("n/a: not 0/1", "n/a: 1 document"). n is the documents both runs logged;
a run whose samples log fewer documents than lm-eval scored (n-samples)
is named in a warning.

A run is a run directory (run.json and output/), an lm-eval output
directory, or a results file. A score the samples do not have (a results
file without samples, a task not logged) is compared unpaired, from the two
results files' values and stderrs: "from results file, no samples: no
paired statistics".

compare reports differences and does not judge them: it exits 0 once the
comparison is made, however large Δ is, also when a run does not re-score
to its own numbers (warned on stderr, see capsule rescore).

` + exitCodes(code{exitFailed, "an internal error only (a bug); never a difference between the runs"},
			code{exitUsage, "usage or input error, or runs that cannot be paired (other documents, no common task)"}, codeInterrupted),
		Example: `  capsule compare runs/baseline runs/chat-template
  capsule compare --json a/results_2025-08-07T11-42-40.066002.json b/
  capsule compare runs/baseline runs/chat-template --task gsm8k`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd.Context(), opts, args[0], args[1], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the comparisons as JSON")
	f.StringSliceVar(&opts.tasks, "task", nil, "compare only these tasks or groups (comma separated, or the flag repeated)")
	f.IntVar(&opts.resamples, "resamples", 10000, "paired bootstrap resamples")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the bootstrap")
	f.BoolVar(&opts.intersect, "intersect", false, "compare the documents both runs scored when their sets differ (a --limit run)")
	f.IntVar(&opts.diffs, "prompt-diffs", 2, "show up to this many changed prompts per task")
	return cmd
}

// loadScores reads a run for analysis and reports, on stderr, a re-scoring
// that did not reproduce the run's own numbers.
func loadScores(ctx context.Context, path string, io streams) (*analysis.Scores, error) {
	run, err := harness.Read(path)
	if err != nil {
		return nil, err
	}
	warnNoSamples(run.Output, path, io)
	sc, err := analysis.Load(ctx, run, analysis.RescoreOptions{})
	if err != nil {
		return nil, err
	}
	warnRescore(sc, path, io)
	return sc, nil
}

// loadReported is loadScores for showing a run: a results file without
// samples is read from the file alone (analysis.LoadReported).
func loadReported(ctx context.Context, path string, io streams) (*analysis.Scores, error) {
	run, err := harness.Read(path)
	if err != nil {
		return nil, err
	}
	warnNoSamples(run.Output, path, io)
	sc, err := analysis.LoadReported(ctx, run, analysis.RescoreOptions{})
	if err != nil {
		return nil, err
	}
	warnRescore(sc, path, io)
	return sc, nil
}

// warnNoSamples says, on stderr, that a run has results but no samples: it
// was made without lm-eval's --log_samples, so nothing can be re-derived or
// paired, only lm-eval's own numbers shown.
func warnNoSamples(o *harness.Output, path string, io streams) {
	if o == nil || o.Results == nil || len(o.Samples) > 0 {
		return
	}
	fmt.Fprintf(io.err, "capsule: warning: %s: the results file has no samples beside it: the run was made without lm-eval's --log_samples, so no number can be re-derived or paired (run lm-eval with --log_samples)\n", path)
}

// warnRescore reports, on stderr, a re-scoring that did not reproduce the
// run's own numbers.
func warnRescore(sc *analysis.Scores, path string, io streams) {
	for _, c := range sc.Report.Checks {
		switch {
		case c.Status != analysis.StatusDiffers:
		case c.Level == analysis.LevelRecord:
			fmt.Fprintf(io.err, "capsule: warning: %s: %s (see capsule rescore)\n", path, c.Reason)
		default:
			fmt.Fprintf(io.err, "capsule: warning: %s: %s %s,%s does not re-score to what lm-eval reported (see capsule rescore)\n", path, c.Task, c.Metric, c.Filter)
		}
	}
}

func runCompare(ctx context.Context, opts compareOptions, pathA, pathB string, io streams) error {
	a, err := loadReported(ctx, pathA, io)
	if err != nil {
		return err
	}
	b, err := loadReported(ctx, pathB, io)
	if err != nil {
		return err
	}
	diffs := opts.diffs
	if diffs == 0 {
		diffs = -1
	}
	cs, err := analysis.Compare(a, b, analysis.CompareOptions{Resamples: opts.resamples, Seed: opts.seed, Intersect: opts.intersect, PromptDiffs: diffs, Groups: true, Unpaired: true})
	if err != nil {
		return err
	}
	tf := taskFilter(opts.tasks)
	var present []string
	for _, c := range cs.Comparisons {
		present = append(present, c.Task)
	}
	if err := tf.check(pathA+" and "+pathB, append(present, cs.Skipped...)); err != nil {
		return err
	}
	cs.Comparisons = filter(tf, cs.Comparisons, func(c analysis.Comparison) string { return c.Task })
	cs.Trimmed = filter(tf, cs.Trimmed, func(t analysis.Trimmed) string { return t.Task })
	cs.Skipped = filter(tf, cs.Skipped, func(t string) string { return t })
	if opts.json {
		return writeJSON(io.out, cs)
	}
	// The text names the runs as they were given on the command line.
	cs.A, cs.B = pathA, pathB
	fmt.Fprint(io.out, cs.String())
	return nil
}
