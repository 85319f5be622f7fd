package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
)

type rescoreOptions struct {
	json     bool
	diffs    int
	progress bool
	coverage bool

	// Code tasks: execute their logged completions in the sandbox.
	executeCode bool
	python      string

	// The counterfactual: --task with --regex.
	task        string
	regex       string
	groupSelect int
	filterName  string
	resamples   int
	seed        uint64
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
                metric (exact_match, acc, acc_norm, ..., sacrebleu bleu/chrf/ter,
                truthfulqa's BLEU/ROUGE and mc2; docs/rescoring.md lists
                them), then aggregated
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

Every check is printed, then the exit code says the worst: 2 when a file
cannot be read, 1 when a number differs.

With --task and --regex, rescore answers a counterfactual instead: what the
task of the one run at PATH would score with that regex applied to its
logged responses (lm-eval's regex filter: re.findall, the match picked by
--group-select, "[invalid]" when nothing matches, then take_first), scored
by the task's metric, against the logged filter (--filter-name; by default
the task's only filter, or strict-match). It prints both scores, the
paired difference with its bootstrap CI, and the documents that flip each
way. Only generative (generate_until) tasks have responses to extract from.

Code tasks (humaneval, mbpp and their variants) log programs. Their pass@k
is only re-aggregated unless --execute-code is given: then every logged
completion is built into the program lm-eval ran (prompt + completion + the
task's test) and executed, one process each, in a bubblewrap sandbox (no
network, no host files but a read-only /usr, a private tmpfs, rlimits on
CPU, memory, processes and file size, code_eval's 3 s timeout), in parallel
up to the cores; pass@k is recomputed with code_eval's estimator and each
document compared with its logged value. Without bubblewrap this is an
error (exit 3), never an unsandboxed run. See docs/code-tasks.md.

With --coverage, rescore reads no samples: it maps the task configurations
of the results files under PATH onto the re-scorer's own code paths and
prints, per task and metric, how many entries would be re-scored from the
raw responses, and what stops the others (a per-doc function or an
aggregation not re-implemented); scripts/rescore-coverage runs it.

` + exitCodes(code{exitFailed, "some recomputed number differs from what lm-eval reported, or lm-eval recorded a setting otherwise than run.json"}, codeUsage,
			code{exitExternal, "--execute-code and no sandbox here (install bubblewrap: apt-get install bubblewrap)"}, codeInterrupted),
		Example: `  capsule rescore results/meta-llama__Llama-3.2-1B-Instruct/
  capsule rescore --json results/ > checks.json
  capsule rescore out/results_2025-08-07T11-42-40.066002.json
  capsule rescore --execute-code humaneval-run/
  capsule rescore --coverage results/
  capsule rescore out/ --task gsm8k --regex 'The answer is (\-?[0-9\.\,]+)'
  capsule rescore out/ --task gsm8k --regex '(-?[$0-9.,]{2,})|(-?[0-9]+)' --group-select -1 --filter-name strict-match`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			switch {
			case opts.regex == "" && f.Changed("regex"):
				return &usageError{errors.New("--regex: the pattern is empty")}
			case opts.regex != "" && opts.task == "":
				return &usageError{errors.New("--regex needs --task: the task whose logged responses it extracts from")}
			case opts.regex == "" && (opts.task != "" || f.Changed("group-select") || f.Changed("filter-name")):
				return &usageError{errors.New("--task, --group-select and --filter-name ask a counterfactual: give --regex too")}
			case opts.regex != "" && len(args) != 1:
				return &usageError{fmt.Errorf("a counterfactual is asked of one run: got %d paths", len(args))}
			case opts.regex != "" && opts.coverage:
				return &usageError{errors.New("--coverage maps configurations; it does not take --regex")}
			case opts.regex != "":
				return runCounterfactual(cmd.Context(), opts, args[0], io)
			case opts.coverage:
				return runRescoreCoverage(opts, args, io)
			}
			opts.progress = !opts.json && isTerminal(io.err)
			return runRescore(cmd.Context(), opts, args, io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the checks (or the counterfactual) as JSON (shape in docs/cli.md)")
	f.BoolVar(&opts.coverage, "coverage", false, "map the task configs of the results files onto the re-scorer's code paths and print the share re-scorable from raw responses (reads no samples)")
	f.IntVar(&opts.diffs, "diffs", 3, "show up to this many differing documents per check (flipped documents of a counterfactual)")
	f.BoolVar(&opts.executeCode, "execute-code", false, "execute the logged completions of code tasks (humaneval, mbpp) in the bubblewrap sandbox and re-score pass@k")
	f.StringVar(&opts.python, "python", "", "with --execute-code: the interpreter inside the sandbox, under /usr (default /usr/bin/python3)")
	f.StringVar(&opts.task, "task", "", "counterfactual: the generative task to re-score")
	f.StringVar(&opts.regex, "regex", "", "counterfactual: the regex (Python re syntax) applied to the task's logged responses")
	f.IntVar(&opts.groupSelect, "group-select", 0, "counterfactual: which match to take, as lm-eval's group_select (0 first, -1 last)")
	f.StringVar(&opts.filterName, "filter-name", "", "counterfactual: the logged filter to compare with (default: the task's only one, or strict-match)")
	f.IntVar(&opts.resamples, "resamples", analysis.DefaultResamples, "counterfactual: paired bootstrap resamples")
	f.Uint64Var(&opts.seed, "seed", 1, "counterfactual: seed of the bootstrap")
	return cmd
}

// runCounterfactual re-scores one task of the run at path under a regex
// of one's own and compares it with the logged filter.
func runCounterfactual(ctx context.Context, opts rescoreOptions, path string, io streams) error {
	if opts.resamples < 1 {
		return &usageError{fmt.Errorf("--resamples %d: expected at least 1", opts.resamples)}
	}
	run, err := harness.Read(path)
	if err != nil {
		return err
	}
	warnNoSamples(run.Output, path, io)
	sc, err := analysis.Load(ctx, run, analysis.RescoreOptions{})
	if err != nil {
		return err
	}
	rep, err := analysis.CounterfactualScore(sc, analysis.CounterfactualOptions{
		Task: opts.task, Regex: opts.regex, GroupSelect: opts.groupSelect, Filter: opts.filterName,
		Compare:  analysis.CompareOptions{Resamples: opts.resamples, Seed: opts.seed},
		MaxFlips: max(opts.diffs, 1),
	})
	var re *analysis.RegexError
	if errors.As(err, &re) {
		return &usageError{fmt.Errorf("--regex: %w", err)}
	}
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(io.out, rep)
	}
	return writeCounterfactual(io.out, rep, opts.diffs)
}

// writeCounterfactual prints a counterfactual for people.
func writeCounterfactual(w io.Writer, r *analysis.CounterfactualReport, flips int) error {
	var b strings.Builder
	num := func(f float64) string { return harness.FormatFloat(f, false) }
	fmt.Fprintf(&b, "%s\n  task %s, metric %s: regex '%s' (group_select %d, fallback \"[invalid]\", then take_first)\n  against the logged filter %s\n\n",
		r.Path, r.Task, r.Metric, r.Regex, r.GroupSelect, r.Filter)
	c := r.Comparison
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  documents\t%d\n", c.N)
	reported := ""
	if r.Reported.Set {
		reported = fmt.Sprintf("  (the results file reports %s)", r.Reported)
	}
	fmt.Fprintf(tw, "  logged %s\t%s%s\n", r.Filter, num(r.Logged), reported)
	fmt.Fprintf(tw, "  with the regex\t%s\n", num(r.Counterfactual))
	fmt.Fprintf(tw, "  difference\t%+.4g  CI [%.4g, %.4g] (paired bootstrap, %.0f%%), paired stderr %.4g\n",
		c.Delta, c.CILow, c.CIHigh, 100*analysis.DefaultLevel, c.PairedStderr)
	fmt.Fprintf(tw, "  flips\t%d gained (better with the regex), %d lost (worse)\n", r.Gained, r.Lost)
	tw.Flush()
	shown := 0
	for _, f := range r.Flips {
		if shown == 0 {
			b.WriteString("\n")
		}
		if shown >= flips {
			break
		}
		shown++
		way := "lost"
		if f.Gained {
			way = "gained"
		}
		fmt.Fprintf(&b, "  %s doc_id %d (line %d): logged %q → regex %q (%s → %s)\n", way, f.DocID, f.Line, f.Logged, f.Regex, num(f.From), num(f.To))
	}
	_, err := io.WriteString(w, b.String())
	return err
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
	if opts.python != "" && !opts.executeCode {
		return &usageError{errors.New("--python is the interpreter of --execute-code: give --execute-code too")}
	}
	ropts.Code = analysis.CodeOptions{Execute: opts.executeCode, Python: opts.python}
	if opts.progress && opts.executeCode {
		ropts.Code.Progress = func(done, _ int) {
			fmt.Fprintf(io.err, "\rexecuting programs in the sandbox: %d", done)
		}
	}
	for _, o := range outs {
		warnNoSamples(o, o.Path(), io)
	}
	rep, err := analysis.Rescore(ctx, outs, ropts)
	if opts.progress && opts.executeCode {
		fmt.Fprint(io.err, "\r\033[K")
	}
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
