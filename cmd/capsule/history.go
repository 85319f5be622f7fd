package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/gate"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/history"
	"github.com/evalcapsule/evalcapsule/internal/quote"
)

type historyOptions struct {
	json      bool
	out       string
	baseline  string
	policy    string
	index     string
	order     string
	plainHTTP bool
}

func newHistoryCmd(io streams) *cobra.Command {
	var opts historyOptions
	cmd := &cobra.Command{
		Use:   "history REPOSITORY_OR_CAPSULE... [-o history.html]",
		Short: "Draw a model line's checkpoints over time, gated against a baseline",
		Long: `Read every capsule of a registry repository (host[:port]/repository: every
tag) or the capsules named (layout folders, .tar files, tagged registry
references) into the local index, then draw the line: per task, metric and
filter the score with its 95 % CI at every checkpoint, in order, the
baseline as a dashed line, the gate's verdict on every checkpoint against
the baseline, and the documents that flipped between consecutive
checkpoints (right→wrong, wrong→right, with the first doc ids).

The index (--index, default the user's cache folder, evalcapsule/history.db)
is an SQLite database and only a cache: a capsule whose manifest digest it
holds is not pulled again; an index of another schema version, or one that
fails SQLite's integrity check or a row that does not decode, is deleted and
filled again from the capsules, and the command says so.

Order (--order): "step" when every tag, folder or model name carries a
training step (step-12000, ckpt_500, checkpoint-3, iter-800), else "created"
(the capsule's creation time) when every capsule has one, else "given" (the
order of the arguments; a repository's tags in the registry's order). The
page says which was used and why.

The gate (capsule gate's policy, --policy FILE; the default policy without
one: no-significant-drop, margin 1 point, alpha 0.05, Holm) runs on the
per-document values the index holds; the baseline is --baseline (a tag or
folder name, a reference or a digest), else the first checkpoint.

history reports the whole line and judges its newest checkpoint: it exits
1 when the last checkpoint in order regressed or could not be gated
(refused), after writing everything; earlier regressions are drawn and
listed, and do not change the exit code.

` + exitCodes(code{exitFailed, "the newest checkpoint regressed or was refused by the gate, or a capsule is not valid"},
			codeUsage, codeRegistry, codeInterrupted),
		Example: `  capsule history registry.example.com/team/llama -o history.html
  capsule history runs/step-*.capsule --baseline step-0 --policy gate.yaml --json
  capsule history registry.example.com/team/llama --index .cache/history.db --order created`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHistory(cmd.Context(), opts, args, io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the history as JSON")
	f.StringVarP(&opts.out, "output", "o", "", "write the HTML page to this file")
	f.StringVar(&opts.baseline, "baseline", "", "the baseline checkpoint: a tag or folder name, a reference or a digest (default: the first in order)")
	f.StringVar(&opts.policy, "policy", "", "the gate policy file (capsule gate's; default: the default policy)")
	f.StringVar(&opts.index, "index", "", "the index file (default: the user's cache folder, evalcapsule/history.db)")
	f.StringVar(&opts.order, "order", "", "order the checkpoints by step, created or given (default: step, else created, else given)")
	f.BoolVar(&opts.plainHTTP, "plain-http", false, "plain HTTP to a registry that is not on loopback")
	return cmd
}

func runHistory(ctx context.Context, opts historyOptions, sources []string, io streams) error {
	switch opts.order {
	case history.OrderAuto, history.OrderStep, history.OrderCreated, history.OrderGiven:
	default:
		return &usageError{fmt.Errorf("--order %s: expected step, created or given", quote.Arg(opts.order))}
	}
	var policy *gate.Policy
	if opts.policy != "" {
		p, err := gate.LoadPolicy(opts.policy)
		if err != nil {
			return err
		}
		policy = p
	}
	path := opts.index
	if path == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return &usageError{fmt.Errorf("no cache folder for the index (%w): give --index PATH", err)}
		}
		path = filepath.Join(dir, "evalcapsule", history.DefaultIndexName)
	}
	x, err := history.OpenIndex(ctx, path)
	if err != nil {
		return err
	}
	defer x.Close()
	if x.Rebuilt != "" {
		fmt.Fprintf(io.err, "capsule: the index was rebuilt from the capsules: %s\n", quote.Text(x.Rebuilt))
	}
	cps, u, err := history.Collect(ctx, x, sources, history.UpdateOptions{Open: capsule.OpenOptions{PlainHTTP: opts.plainHTTP},
		Progress: func(ref string, read bool) {
			if read && !opts.json {
				fmt.Fprintf(io.err, "indexed %s\n", quote.Text(ref))
			}
		}})
	if err != nil {
		return err
	}
	if u.Rebuilt != "" {
		fmt.Fprintf(io.err, "capsule: the index was rebuilt from the capsules: %s\n", quote.Text(u.Rebuilt))
	}
	for _, nc := range u.NotCapsules {
		fmt.Fprintf(io.err, "capsule: %s is not a capsule, left out: %s\n", quote.Text(nc.Ref), quote.Text(nc.Reason))
	}
	h, err := history.Build(cps, history.Options{Order: opts.order, Baseline: opts.baseline,
		Gate: history.GateWith(policy, nil), Policy: history.DescribePolicy(policy, opts.policy)})
	if err != nil {
		return err
	}
	if opts.out != "" {
		if err := harness.WriteFileAtomic(opts.out, []byte(h.HTML())); err != nil {
			return err
		}
	}
	if opts.json {
		if err := writeJSON(io.out, historyJSON{History: h, Index: x.Path(), Updated: u}); err != nil {
			return err
		}
	} else {
		fmt.Fprint(io.out, h.Text())
		fmt.Fprintf(io.out, "index %s: %d read, %d already indexed\n", quote.Text(x.Path()), u.Read, u.Skipped)
		if opts.out != "" {
			fmt.Fprintf(io.out, "wrote %s\n", quote.Text(opts.out))
		}
	}
	if n := len(h.Verdicts); n > 0 {
		last := h.Verdicts[n-1]
		if last.Verdict == gate.Regression || last.Verdict == gate.Refused {
			if !opts.json {
				fmt.Fprintf(io.out, "FAILED: the newest checkpoint, %s, %s against %s\n", quote.Text(h.Checkpoints[n-1].Name),
					map[string]string{gate.Regression: "regressed", gate.Refused: "was refused by the gate"}[last.Verdict], quote.Text(h.Baseline))
			}
			return errChecksFailed
		}
	}
	return nil
}

// historyJSON is `capsule history --json`: the history, the index it came
// from and what the update did.
type historyJSON struct {
	*history.History
	Index   string           `json:"index"`   // path of the index database (--index, or the user cache folder's default)
	Updated *history.Updated `json:"updated"` // what bringing the index up to date with the sources did
}
