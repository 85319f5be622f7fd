package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/capsule"
)

type verifyOptions struct {
	json bool
	ref  refOptions
}

func newVerifyCmd(io streams) *cobra.Command {
	var opts verifyOptions
	cmd := &cobra.Command{
		Use:   "verify REF",
		Short: "Check a capsule: every blob's digest and size, the config's schema, every file its runs name",
		Long: `Check a capsule through, reading every byte: the layout, the manifest, the
config and every layer against their digests and sizes (compressed samples
are decompressed and checked against the digest of the original file too),
the config against its JSON Schema (docs/capsule-config.schema.json), and
that every file the run records name is there (each run's run.json, results
and samples, and study.yaml).

A capsule is untrusted input: titles with "..", absolute paths or links,
unknown media types or major versions, sizes over the limits and zstd bombs
are reported, never followed. Every problem names the blob (and the file).
Exit code 1 when there is any.

'capsule replay' goes further: it re-derives every number from the samples.

` + refHelp + `

` + exitCodes(code{exitFailed, "the capsule does not verify: a problem is listed"}, codeUsage, codeRegistry, codeInterrupted),
		Example: `  capsule verify llama.capsule
  capsule verify --json review/`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the verification as JSON")
	addRefFlags(f, &opts.ref)
	return cmd
}

func runVerify(ctx context.Context, opts verifyOptions, ref string, io streams) error {
	bar := newTransferBar(io, opts.json)
	defer bar.stop()
	c, err := capsule.OpenRef(ctx, ref, opts.ref.openOptions(bar))
	if err != nil {
		var p *capsule.Problem
		if errors.As(err, &p) {
			// What keeps the capsule from opening is a verification
			// failure like any other: say it the same way.
			v := &capsule.Verification{Problems: []capsule.Problem{*p}}
			return reportVerification(io, opts.json, ref, v)
		}
		return err
	}
	defer c.Close()
	v, err := capsule.Verify(ctx, c)
	bar.stop()
	if err != nil {
		return err
	}
	return reportVerification(io, opts.json, ref, v)
}

func reportVerification(io streams, asJSON bool, ref string, v *capsule.Verification) error {
	if asJSON {
		if err := writeJSON(io.out, map[string]any{"capsule": ref, "verification": v}); err != nil {
			return err
		}
	} else if v.Capsule.Digest == "" {
		fmt.Fprintf(io.out, "%s: cannot be opened:\n", ref)
		for _, p := range v.Problems {
			fmt.Fprintf(io.out, "  %s\n", p.Error())
		}
	} else {
		fmt.Fprintf(io.out, "%s: %s", ref, v.String())
	}
	if !v.OK {
		return errChecksFailed
	}
	return nil
}
