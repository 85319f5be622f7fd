package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
)

type rescoreOptions struct {
	json     bool
	diffs    int
	progress bool
}

func newRescoreCmd(io streams) *cobra.Command {
	var opts rescoreOptions
	cmd := &cobra.Command{
		Use:   "rescore PATH...",
		Short: "Recompute every number lm-eval reported from its logged samples",
		Long: `Recompute every metric, stderr and group aggregate that lm-eval reported, and
compare them bit for bit with the results file.

PATH is an lm-eval output directory (searched recursively), a results JSON
file, or a samples file; give several to check several runs. Results and
samples are paired by the timestamp in their names. Any lm-eval version from
v0.4.0 to v0.4.13 is read.

Each check has a level:
  rescored      per-doc values recomputed from the raw responses through the
                task's filters (regex, take_first, majority_vote, ...) and
                metric (exact_match, acc, acc_norm, ...), then aggregated
  reaggregated  value and stderr recomputed from the logged per-doc values
                (metrics whose per-doc function is not re-implemented)
  group         a group's value and pooled stderr from its members' values
  none          nothing could be recomputed; the reason says why
  record        a setting lm-eval recorded in the results file (seeds,
                n-shot, model, model_args, lm-eval version, batch size,
                limit, chat template, ...) that the run's run.json gives
                otherwise: reported is what lm-eval wrote, recomputed what
                run.json says (only for a run directory capsule made, with
                run.json beside output/; only fields that differ are shown)
  input         a file that cannot be read as lm-eval wrote it (a samples
                line split over several lines, a field missing, a results
                file that does not parse): the reason names the file, the
                line and the problem; the other files are still checked
and a status: exact (identical to the last bit), differs, not-recomputable,
or error (input). Samples without a results file are still checked per
document; their aggregates are shown as recomputed only. A samples file
given as PATH checks its own run: the results file of its timestamp and
that run's samples.

` + exitCodes(code{exitFailed, "some recomputed number differs from what lm-eval reported, or lm-eval recorded a setting otherwise than run.json"}, codeUsage, codeInterrupted),
		Example: `  capsule rescore results/meta-llama__Llama-3.2-1B-Instruct/
  capsule rescore --json results/ > checks.json
  capsule rescore out/results_2025-08-07T11-42-40.066002.json`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.progress = !opts.json && isTerminal(io.err)
			return runRescore(cmd.Context(), opts, args, io)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the checks as JSON (schema in DESIGN.md section 4)")
	cmd.Flags().IntVar(&opts.diffs, "diffs", 3, "show up to this many differing documents per check")
	return cmd
}

func runRescore(ctx context.Context, opts rescoreOptions, paths []string, io streams) error {
	outs, err := harness.FindAll(paths...)
	if err != nil {
		return err
	}
	ropts := analysis.RescoreOptions{MaxDocDiffs: max(opts.diffs, 1)}
	if opts.progress {
		ropts.Progress = func(done, total int) {
			fmt.Fprintf(io.err, "\rreading samples: %d/%d files", done, total)
			if done == total {
				fmt.Fprint(io.err, "\r\033[K")
			}
		}
	}
	rep, err := analysis.Rescore(ctx, outs, ropts)
	if err != nil {
		return err
	}
	// A run that gives nothing to check is not a success.
	checks := 0
	for _, r := range rep.Runs {
		checks += len(r.Checks)
	}
	if checks == 0 {
		return fmt.Errorf("%s: %w: nothing to check (the results have no scores and the samples no per-document values)", strings.Join(paths, ", "), harness.ErrNoOutput)
	}
	if opts.json {
		if err := writeJSON(io.out, rep); err != nil {
			return err
		}
	} else {
		if err := rep.WriteText(io.out, analysis.TextOptions{DocDiffs: opts.diffs}); err != nil {
			return err
		}
	}
	for _, r := range rep.Runs {
		if len(r.Checks) == 0 {
			fmt.Fprintf(io.err, "capsule: warning: %s: nothing to check (no scores, no per-document values)\n", r.Path)
		}
		for _, w := range r.Warnings {
			fmt.Fprintf(io.err, "capsule: warning: %s: %s\n", r.Path, w)
		}
	}
	// A file that cannot be read is an input error, said once every
	// other check is printed.
	if errs := rep.Errors(); len(errs) > 0 {
		more := ""
		if len(errs) > 1 {
			more = fmt.Sprintf(" (and %d more files that cannot be read, listed above)", len(errs)-1)
		}
		return fmt.Errorf("%w%s", errs[0].Err, more)
	}
	if _, differs, _ := rep.Counts(); differs > 0 {
		return errChecksFailed
	}
	return nil
}

// writeJSON writes v as indented JSON.
// NaN and infinities are written as null.
func writeJSON(w io.Writer, v any) error {
	b, err := analysis.MarshalJSON(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
