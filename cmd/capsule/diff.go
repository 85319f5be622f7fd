package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/capsule"
)

type diffOptions struct {
	json     bool
	exitCode bool
	ref      refOptions
}

func newDiffCmd(io streams) *cobra.Command {
	var opts diffOptions
	cmd := &cobra.Command{
		Use:   "diff REF_A REF_B",
		Short: "What changed between two capsules: study, settings, environment, scores",
		Long: `Compare two capsules' configs: the study file (a unified diff), each run's
settings and exact lm-eval command line, harness version and commit, image
digests, model revision, GPUs, driver, CUDA, Python and every package
version, the scores lm-eval reported, and the packed attribution tables.
Runs are matched by name.

Exit code 0 whether or not they differ, unless --exit-code: then 1 when
they differ, like 'git diff --exit-code'.

` + refHelp + `

` + exitCodes(code{exitFailed, "the capsules differ (with --exit-code), or one is not valid"}, codeUsage, codeRegistry, codeInterrupted),
		Example: `  capsule diff old.capsule new.capsule
  capsule diff --json registry.example.com/team/study:v1 registry.example.com/team/study:v2`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd.Context(), opts, args[0], args[1], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the differences as JSON")
	f.BoolVar(&opts.exitCode, "exit-code", false, "exit with 1 when the capsules differ")
	addRefFlags(f, &opts.ref)
	return cmd
}

func runDiff(ctx context.Context, opts diffOptions, refA, refB string, io streams) error {
	bar := newTransferBar(io, opts.json)
	a, err := capsule.OpenRef(ctx, refA, opts.ref.openOptions(bar))
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := capsule.OpenRef(ctx, refB, opts.ref.openOptions(bar))
	bar.stop()
	if err != nil {
		return err
	}
	defer b.Close()
	d := capsule.Diff(a.Config, b.Config)
	if opts.json {
		err = writeJSON(io.out, map[string]any{"a": refA, "b": refB, "digest_a": a.Descriptor.Digest.String(), "digest_b": b.Descriptor.Digest.String(), "diff": d})
	} else {
		writeDiff(io, a, b, d)
	}
	if err == nil && opts.exitCode && !d.Same {
		return errChecksFailed
	}
	return err
}

func writeDiff(io streams, a, b *capsule.Capsule, d *capsule.Differences) {
	w := io.out
	fmt.Fprintf(w, "a: %s (%s)\nb: %s (%s)\n", a.Ref, a.Descriptor.Digest, b.Ref, b.Descriptor.Digest)
	if d.Same {
		if a.Descriptor.Digest == b.Descriptor.Digest {
			fmt.Fprintln(w, "the same capsule")
		} else {
			fmt.Fprintln(w, "no differences in the study, the runs' settings and environment, or the scores")
		}
		return
	}
	if d.StudyYAML != "" {
		fmt.Fprintf(w, "\nstudy.yaml\n%s", d.StudyYAML)
	}
	if len(d.Runs) > 0 {
		fmt.Fprintln(w, "\nRuns")
		for _, r := range d.Runs {
			fmt.Fprintf(w, "  %s: %s\n", r.Run, r.Status)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			for _, c := range r.Changes {
				fmt.Fprintf(tw, "    %s\t%s\t→ %s\n", c.Field, dash(c.A), dash(c.B))
			}
			tw.Flush()
		}
	}
	if len(d.Scores) > 0 {
		fmt.Fprintln(w, "\nScores lm-eval reported")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  RUN\tTASK\tMETRIC\tFILTER\tA\tB")
		for _, s := range d.Scores {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", s.Run, s.Task, s.Metric, dash(s.Filter), s.A, s.B)
		}
		tw.Flush()
	}
	if len(d.Tables) > 0 {
		fmt.Fprintln(w, "\nAttribution")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range d.Tables {
			fmt.Fprintf(tw, "  %s\t%s\t→ %s\n", t.Where, t.Packed, t.Replayed)
		}
		tw.Flush()
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
