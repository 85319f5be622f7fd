package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/capsule"
)

type inspectOptions struct {
	json  bool
	files bool
	ref   refOptions
}

func newInspectCmd(io streams) *cobra.Command {
	var opts inspectOptions
	cmd := &cobra.Command{
		Use:   "inspect REF",
		Short: "Show what a capsule holds: study, runs, settings, environment, claims, files",
		Long: `Show what a capsule holds without unpacking it: its digest, the study, who
packed it and when, every run (status, model and resolved revision, lm-eval
version, commit and dirty flag (uncommitted changes in its checkout; "commit
unknown" when none was recorded), Python, seeds, image digest, runner, GPUs,
driver and CUDA), the claims with
their packed attribution, the replay reports attached to it, and (with
--files) every file with its size and digest.

The manifest and config are checked as they are read; use 'capsule verify'
to check every file.

` + refHelp + `

` + exitCodes(codeInvalid, codeUsage, codeRegistry, codeInterrupted),
		Example: `  capsule inspect llama.capsule
  capsule inspect --files --json llama.tar
  capsule inspect registry.example.com/team/llama-study:v1`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInspect(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the capsule's description as JSON")
	f.BoolVar(&opts.files, "files", false, "list every file")
	addRefFlags(f, &opts.ref)
	return cmd
}

func runInspect(ctx context.Context, opts inspectOptions, ref string, io streams) error {
	bar := newTransferBar(io, opts.json)
	c, err := capsule.OpenRef(ctx, ref, opts.ref.openOptions(bar))
	bar.stop()
	if err != nil {
		return err
	}
	defer c.Close()
	in, err := capsule.Inspect(ctx, c, capsule.InspectOptions{Files: opts.files})
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(io.out, in)
	}
	fmt.Fprint(io.out, in)
	return nil
}
