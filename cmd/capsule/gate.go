package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/gate"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/quote"
)

type gateOptions struct {
	json      bool
	baseline  string
	candidate string
	policy    string
	junit     string
	summary   string
	run       string
	ref       refOptions
}

func newGateCmd(io streams) *cobra.Command {
	var opts gateOptions
	cmd := &cobra.Command{
		Use:   "gate --baseline REF --candidate REF --policy gate.yaml",
		Short: "Decide in CI whether a checkpoint regressed against a baseline",
		Long: `Gate a candidate checkpoint against a baseline: for every gated task and
metric, the paired difference candidate − baseline over the documents both
scored (in points for metrics in [0, 1]), its paired bootstrap interval, the
p of the policy's test, Holm-corrected across the gated metrics, and a
verdict against the task's margin:

  non-inferiority      fails unless the interval's lower bound is above −margin
                       (and the Holm-adjusted p of "worse by the margin" is at
                       most alpha)
  no-significant-drop  fails only when the interval's upper bound is below 0,
                       the drop is larger than the margin, and the
                       Holm-adjusted p (McNemar's exact test on 0/1 scores) is
                       at most alpha

The metric whose p ranks k-th smallest of m gated ones gets its interval at
level 1 − alpha/(m − k), Holm's threshold for that rank.

Before any number is compared, the gate checks that both sides asked the
same questions the same way: lm-eval's task_hashes, chat template and system
instruction hashes, harness version and commit. A change the policy does not
list under allow_changed refuses the metrics it touches and says which
setting changed; so does a task, metric or document present on one side
only (the documents are counted and the first named). A refusal never
passes: it exits 1 like a regression.

REF is a run folder (runs/NAME with run.json and output/, or an lm-eval
output directory) or a capsule. A capsule holding several runs needs --run.
` + refHelp + `

The policy file (YAML) is described in docs/gate.md; an empty file gates
every metric of every task of the baseline with no-significant-drop, alpha
0.05 and a margin of 1 point.

--summary appends a Markdown summary to a file (what GitHub Actions'
$GITHUB_STEP_SUMMARY expects); --junit writes JUnit XML, one test case per
metric: a regression is a failure with the numbers, a refusal an error, a
metric the policy does not gate a skipped case. With --json, stdout holds
{"baseline", "candidate", "verdict", "test", "alpha", "changes": [...],
"refusals": [...], "metrics": [{"task", "metric", "filter", "verdict",
"reason", "delta", "ci_low", "ci_high", "p", "p_holm", "margin", "n", ...}],
"tasks_not_gated": [...]}.

` + exitCodes(code{exitFailed, "a gated metric regressed, or the gate refused (a setting changed, something missing on one side)"},
			code{exitUsage, "usage or input error: a missing flag, a policy file that is malformed (its line named), a REF that is not a run or capsule"},
			codeRegistry, codeInterrupted),
		Example: `  capsule gate --baseline runs/step-1000 --candidate runs/step-6000 --policy gate.yaml
  capsule gate --baseline registry.example.com/team/llama:release \
      --candidate runs/step-12000 --policy gate.yaml \
      --junit report.xml --summary "$GITHUB_STEP_SUMMARY"
  capsule gate --baseline release.capsule --candidate step-12000.capsule --policy gate.yaml --json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, f := range []struct{ name, v string }{{"baseline", opts.baseline}, {"candidate", opts.candidate}, {"policy", opts.policy}} {
				if f.v == "" {
					return &usageError{fmt.Errorf("--%s is required", f.name)}
				}
			}
			return runGate(cmd.Context(), opts, io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the gate's result as JSON")
	f.StringVar(&opts.baseline, "baseline", "", "the baseline: a run folder or a capsule REF")
	f.StringVar(&opts.candidate, "candidate", "", "the candidate: a run folder or a capsule REF")
	f.StringVar(&opts.policy, "policy", "", "the gate policy file (YAML, see docs/gate.md)")
	f.StringVar(&opts.junit, "junit", "", "write JUnit XML to this file (replaced)")
	f.StringVar(&opts.summary, "summary", "", "append a Markdown summary to this file (e.g. \"$GITHUB_STEP_SUMMARY\")")
	f.StringVar(&opts.run, "run", "", "the run to gate in a capsule that holds several (runs/NAME)")
	addRefFlags(f, &opts.ref)
	return cmd
}

func runGate(ctx context.Context, opts gateOptions, io streams) error {
	for _, out := range []string{opts.junit, opts.summary} {
		if out == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(out)); err != nil || !st.IsDir() {
			return &usageError{fmt.Errorf("%s: its folder does not exist", quote.Text(out))}
		}
	}
	p, err := gate.LoadPolicy(opts.policy)
	if err != nil {
		return err
	}
	base, err := gateSide(ctx, opts.baseline, opts, io)
	if err != nil {
		return err
	}
	cand, err := gateSide(ctx, opts.candidate, opts, io)
	if err != nil {
		return err
	}
	r, err := gate.Evaluate(base, cand, p)
	if err != nil {
		return err
	}
	if opts.junit != "" {
		var b bytes.Buffer
		if err := r.WriteJUnit(&b); err != nil {
			return err
		}
		if err := harness.WriteFileAtomic(opts.junit, b.Bytes()); err != nil {
			return err
		}
	}
	if opts.summary != "" {
		var b bytes.Buffer
		if err := r.WriteMarkdown(&b); err != nil {
			return err
		}
		f, err := os.OpenFile(opts.summary, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		_, werr := f.Write(b.Bytes()) // one write: the summary is there whole or not at all
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return werr
		}
	}
	if opts.json {
		err = writeJSON(io.out, r)
	} else {
		err = r.WriteText(io.out)
	}
	if err != nil {
		return err
	}
	if !r.Passed() {
		return errChecksFailed
	}
	return nil
}

// gateSide reads one side of the gate: a run folder, or the run of a
// capsule unpacked into a temporary folder.
func gateSide(ctx context.Context, ref string, opts gateOptions, io streams) (*gate.Side, error) {
	if !isCapsuleRef(ref) {
		run, err := harness.Read(ref)
		if err != nil {
			return nil, err
		}
		warnNoSamples(run.Output, ref, io)
		return gate.SideFromRun(ctx, run, ref)
	}
	st, cleanup, err := unpackedStudy(ctx, ref, opts.ref, opts.json, io)
	defer cleanup()
	if err != nil {
		return nil, err
	}
	runs, err := filepath.Glob(filepath.Join(st.Dir, "runs", "*", "run.json"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range runs {
		names = append(names, filepath.Base(filepath.Dir(r)))
	}
	sort.Strings(names)
	name := opts.run
	switch {
	case name != "":
		if !slices.Contains(names, name) {
			return nil, fmt.Errorf("%w: %s has no run %s (it has: %s)", capsule.ErrReference, quote.Text(ref), quote.Text(name), quote.Text(strings.Join(names, ", ")))
		}
	case len(names) == 1:
		name = names[0]
	case len(names) == 0:
		return nil, fmt.Errorf("%w: %s holds no run", capsule.ErrReference, quote.Text(ref))
	default:
		return nil, fmt.Errorf("%w: %s holds %d runs (%s): name the one to gate with --run", capsule.ErrReference, quote.Text(ref), len(names), quote.Text(strings.Join(names, ", ")))
	}
	run, err := harness.Read(filepath.Join(st.Dir, "runs", name))
	if err != nil {
		return nil, err
	}
	return gate.SideFromRun(ctx, run, ref)
}

// isCapsuleRef reports whether ref names a capsule rather than a run: a
// layout directory, a .tar, or a registry reference; a results or samples
// file is a run.
func isCapsuleRef(ref string) bool {
	if strings.HasSuffix(ref, ".json") || strings.HasSuffix(ref, ".jsonl") {
		return false
	}
	return capsule.IsRef(ref)
}
