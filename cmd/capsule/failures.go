package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
)

type failuresOptions struct {
	json   bool
	task   string
	class  string
	filter string
	metric string
	n      int
	seed   uint64

	executeCode bool
}

func newFailuresCmd(io streams) *cobra.Command {
	var opts failuresOptions
	cmd := &cobra.Command{
		Use:   "failures RUN --task TASK",
		Short: "Classify the misses of a task and sample some to read",
		Long: `Classify every miss of a task under one filter, and print a seeded sample of
them: for a generated answer the target, the final answer, each filter's
extraction, the class and the end of the output; for a multiple-choice
answer the gold and the chosen choice with their log-likelihoods.

The classes of a generated answer read its final answer: the output cut at
the first stop sequence and the first "Question:", then its last \boxed{},
else the number after its first "####", else what follows its last "answer
is" or "answer:", else the result of its last "=" when the last sentence
restates it, else the last number of its last sentence. Tried in this order:
  truncation  the output hit the length limit: at least 2 bytes per allowed
              token (max_gen_toks, default 256), no stated answer (boxed,
              ####, "answer is"), not ending where a sentence ends
  format      the right answer in the wrong format: another filter of the
              task (flexible-extract) scores it right
  extraction  the final answer is the reference answer, but the filter took
              something else or found nothing ([invalid]); a reference that
              is only an operand or an intermediate result is not
  reasoning   none of the above: the final answer is wrong

The classes of a multiple-choice answer (acc, acc_norm, acc_bytes) read the
scores the metric ranks by (log-likelihood, or over the choice's length);
p is their softmax over the choices. Tried in this order:
  norm-flip        acc and acc_norm disagree: the other ranking picks the gold
  confident-wrong  p(chosen) − p(gold) is at least 0.5
  near-miss        the gold is ranked second
  wrong            none of the above

A group (mmlu_llama) is read over its member tasks: the sample is drawn from
all their misses, each named with its task.

Hand labels in RUN/labels/<task>.csv (doc_id,class) or .json
({"<doc_id>": "<class>"}) are compared with the automatic classes (for a
task, not a group).

A code task's misses (humaneval, mbpp: documents whose pass@k is below 1)
are read by executing its completions in the bubblewrap sandbox, with
--execute-code: syntax-error, assertion-failed, exception, timeout, or
killed-by-limit (memory, file size, CPU time), from its first failing
completion (docs/code-tasks.md).

` + exitCodes(codeUsage, code{exitExternal, "--execute-code and no sandbox here (install bubblewrap)"}, codeInterrupted),
		Example: `  capsule failures runs/baseline --task gsm8k -n 50 --seed 1
  capsule failures humaneval-run/ --task humaneval --execute-code
  capsule failures runs/baseline --task gsm8k --filter flexible-extract --json
  capsule failures runs/baseline --task gsm8k --class extraction -n 10`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.task == "" {
				return &usageError{fmt.Errorf("--task is required")}
			}
			if opts.class != "" && !slices.Contains(analysis.FailureClasses, analysis.FailureClass(opts.class)) &&
				!slices.Contains(analysis.ChoiceFailureClasses, analysis.FailureClass(opts.class)) &&
				!slices.Contains(analysis.CodeFailureClasses, analysis.FailureClass(opts.class)) {
				return &usageError{fmt.Errorf("--class %q: expected one of %s", opts.class, classNames())}
			}
			if opts.n < 1 {
				return &usageError{fmt.Errorf("-n %d: expected the number of misses to sample, at least 1", opts.n)}
			}
			return runFailures(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the classes and the sample as JSON")
	f.StringVar(&opts.task, "task", "", "the task to read (required)")
	f.StringVar(&opts.filter, "filter", "", "the filter whose misses to read (default the task's first)")
	f.StringVar(&opts.class, "class", "", "sample only the misses of this class (e.g. extraction, near-miss); the counts stay over all misses")
	f.StringVar(&opts.metric, "metric", "", "the metric that decides a miss (default the task's first)")
	f.IntVarP(&opts.n, "n", "n", 50, "how many misses to sample (at least 1)")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the sample")
	f.BoolVar(&opts.executeCode, "execute-code", false, "a code task (humaneval, mbpp): execute its completions in the bubblewrap sandbox to classify its misses")
	return cmd
}

func runFailures(ctx context.Context, opts failuresOptions, path string, io streams) error {
	sc, err := loadScores(ctx, path, io)
	if err != nil {
		return err
	}
	labels, err := analysis.ReadLabels(sc.Run.Dir, opts.task)
	if err != nil {
		return err
	}
	rep, err := analysis.Failures(sc, opts.task, analysis.FailureOptions{Metric: opts.metric, Filter: opts.filter, N: opts.n, Seed: opts.seed, Labels: labels,
		Class: analysis.FailureClass(opts.class), Code: analysis.CodeOptions{Execute: opts.executeCode, Context: ctx}})
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(io.out, rep)
	}
	fmt.Fprint(io.out, rep.String())
	return nil
}

// classNames lists every class of a miss, generated and multiple choice.
func classNames() string {
	var names []string
	for _, c := range slices.Concat(analysis.FailureClasses, analysis.ChoiceFailureClasses, analysis.CodeFailureClasses) {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}
