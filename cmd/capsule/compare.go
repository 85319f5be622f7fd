package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
)

type compareOptions struct {
	json      bool
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

A run is a run directory (run.json and output/), an lm-eval output
directory, or a results file.

` + exitCodes(code{exitUsage, "usage or input error, or runs that cannot be paired (other documents, no common task)"}, codeInterrupted),
		Example: `  capsule compare runs/baseline runs/chat-template
  capsule compare --json a/results_2025-08-07T11-42-40.066002.json b/`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd.Context(), opts, args[0], args[1], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the comparisons as JSON")
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
	sc, err := analysis.Load(ctx, run, analysis.RescoreOptions{})
	if err != nil {
		return nil, err
	}
	for _, c := range sc.Report.Checks {
		if c.Status == analysis.StatusDiffers {
			fmt.Fprintf(io.err, "capsule: warning: %s: %s %s,%s does not re-score to what lm-eval reported (see capsule rescore)\n", path, c.Task, c.Metric, c.Filter)
		}
	}
	return sc, nil
}

func runCompare(ctx context.Context, opts compareOptions, pathA, pathB string, io streams) error {
	a, err := loadScores(ctx, pathA, io)
	if err != nil {
		return err
	}
	b, err := loadScores(ctx, pathB, io)
	if err != nil {
		return err
	}
	diffs := opts.diffs
	if diffs == 0 {
		diffs = -1
	}
	cs, err := analysis.Compare(a, b, analysis.CompareOptions{Resamples: opts.resamples, Seed: opts.seed, Intersect: opts.intersect, PromptDiffs: diffs, Groups: true})
	if err != nil {
		return &usageError{err}
	}
	if opts.json {
		return writeJSON(io.out, cs)
	}
	writeComparisons(io, cs, pathA, pathB)
	return nil
}

func pts(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.2f", 100*x)
}

func writeComparisons(io streams, cs *analysis.Comparisons, pathA, pathB string) {
	fmt.Fprintf(io.out, "A: %s\nB: %s\n(scores in points; Δ = B − A; CIs at 95 %%)\n\n", pathA, pathB)
	tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tMETRIC\tFILTER\tN\tA\tB\tΔ\tPAIRED CI\tUNPAIRED CI\tMCNEMAR P\tA ONLY\tB ONLY\tMDE\tPROMPTS CHANGED")
	for _, c := range cs.Comparisons {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%+.2f\t[%s, %s]\t[%s, %s]\t%.3g\t%d\t%d\t%s\t%d\n",
			c.Task, c.Metric, c.Filter, c.N, pts(c.A), pts(c.B), 100*c.Delta, pts(c.CILow), pts(c.CIHigh),
			pts(c.UnpairedCILow), pts(c.UnpairedCIHigh), c.McNemarP, c.AOnly, c.BOnly, pts(c.MDE), c.PromptsChanged)
	}
	tw.Flush()
	shown := map[string]bool{} // the filters of a task share its prompts
	for _, c := range cs.Comparisons {
		for _, d := range c.PromptDiffs {
			key := fmt.Sprintf("%s\x00%d", c.Task, d.DocID)
			if shown[key] {
				continue
			}
			shown[key] = true
			fmt.Fprintf(io.out, "\n%s doc_id %d: prompt A → B\n%s", c.Task, d.DocID, indent(d.Diff))
		}
	}
	if len(cs.Skipped) > 0 {
		fmt.Fprintf(io.out, "\nnot compared: %s\n", strings.Join(cs.Skipped, "; "))
	}
}

func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "")
}
