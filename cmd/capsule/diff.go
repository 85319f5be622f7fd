package main

import (
	"context"
	"fmt"

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
version, the scores lm-eval reported, the packed attribution tables, and
each run's prompt set: the hashes lm-eval recorded of what the prompts were
made from (task_hashes per task, chat_template_sha, system_instruction_sha),
shown as "prompt set changed" when they differ. Runs are matched by name.

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
	d, err := capsule.DiffCapsules(ctx, a, b)
	if err != nil {
		return err
	}
	d.A, d.B = a.Ref, b.Ref
	d.DigestA, d.DigestB = a.Descriptor.Digest.String(), b.Descriptor.Digest.String()
	if opts.json {
		err = writeJSON(io.out, map[string]any{"a": refA, "b": refB, "digest_a": d.DigestA, "digest_b": d.DigestB, "diff": d})
	} else {
		_, err = fmt.Fprint(io.out, d.String())
	}
	if err == nil && opts.exitCode && !d.Same {
		return errChecksFailed
	}
	return err
}
