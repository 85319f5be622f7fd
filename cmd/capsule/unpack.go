package main

import (
	"context"
	"fmt"
	"os"

	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/spf13/cobra"
)

type unpackOptions struct {
	json bool
	out  string
	ref  refOptions
}

func newUnpackCmd(io streams) *cobra.Command {
	var opts unpackOptions
	cmd := &cobra.Command{
		Use:   "unpack REF -o DIR",
		Short: "Write a capsule's study directory back out, every file checked",
		Long: `Write the study a capsule holds into DIR (new, or an empty directory): the
study file, every run's run.json and lm-eval output with the samples
decompressed, the notebooks and the report, byte for byte what was packed.
Every file is checked against its digest as it is written; nothing is
written outside DIR, and on any error DIR is left as it was.

The unpacked study works with every study command (attribute, report,
compare, run).

--json prints {"capsule": REF, "digest", "study": its name, "dir": DIR,
"files": how many}, the names pack --json uses.

` + refHelp + `

` + exitCodes(codeInvalid, codeUsage, codeRegistry, codeInterrupted),
		Example: `  capsule unpack review/ -o study/
  capsule unpack registry.example.com/team/llama-study:v1 -o study/`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.out == "" {
				return &usageError{fmt.Errorf("-o is required: the directory to write the study into")}
			}
			return runUnpack(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print what was written as JSON")
	f.StringVarP(&opts.out, "output", "o", "", "the directory to write the study into (required)")
	addRefFlags(f, &opts.ref)
	return cmd
}

func runUnpack(ctx context.Context, opts unpackOptions, ref string, io streams) error {
	if _, err := os.Lstat(opts.out); err == nil && !emptyDir(opts.out) {
		return existsError(opts.out, "and is not empty: give -o a new or empty directory")
	}
	bar := newTransferBar(io, opts.json)
	defer bar.stop()
	c, err := capsule.OpenRef(ctx, ref, opts.ref.openOptions(bar))
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Unpack(ctx, opts.out); err != nil {
		return err
	}
	bar.stop()
	if opts.json {
		return writeJSON(io.out, map[string]any{"capsule": ref, "digest": c.Descriptor.Digest.String(), "study": c.Config.Study, "dir": opts.out, "files": len(c.Files())})
	}
	fmt.Fprintf(io.out, "unpacked %s (%s) into %s: %d files\n", ref, c.Descriptor.Digest, opts.out, len(c.Files()))
	return nil
}
