package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/study"
)

type packOptions struct {
	json            bool
	out             string
	tag             string
	allowIncomplete bool
	allowDiffers    bool
	force           bool
	seed            uint64
}

func newPackCmd(io streams) *cobra.Command {
	var opts packOptions
	cmd := &cobra.Command{
		Use:   "pack STUDY_DIR -o OUT",
		Short: "Freeze a study into a capsule: an OCI image layout directory or .tar",
		Long: `Freeze a study into a capsule, an OCI artifact: study.yaml, every run's
run.json and lm-eval output (samples zstd-compressed), the notebooks and the
report, one layer per file; and a config that holds the study, every run
record, and the re-scoring and attribution tables computed now from the
samples, which 'capsule replay' re-derives and diffs number by number.

OUT is a directory (an OCI image layout) or, when it ends in .tar, a tar of
one. Packing is reproducible: the same study gives the same manifest digest,
on any machine. Nothing appears at OUT unless everything succeeded.

A study whose planned runs are missing or not done is refused: run it first
(capsule run), or pack it anyway with --allow-incomplete (without tables).
So is a study a run of which does not match study.yaml (other settings, or
a command line that is not the one they give the pinned lm-eval), and one
whose samples do not give every number lm-eval reported (see capsule
rescore): --allow-differs packs that one marked UNSUPPORTED, and it says so
wherever it is shown, never verifies and never replays.

Then: capsule verify OUT; capsule push OUT REGISTRY/REPO:TAG.

` + exitCodes(code{exitFailed, "a run does not match study.yaml, or a number differs from what its samples give"}, code{exitUsage, "usage or input error, a study whose runs are not done, or OUT exists"}, codeInterrupted),
		Example: `  capsule pack studies/llama-3.2-1b-instruct -o llama.capsule
  capsule pack studies/llama-3.2-1b-instruct -o llama.tar --tag v1`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.out == "" {
				return &usageError{fmt.Errorf("-o is required: the capsule to write (a directory, or a .tar)")}
			}
			return runPack(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print what was packed as JSON")
	f.StringVarP(&opts.out, "output", "o", "", "the capsule to write: a directory, or a file ending in .tar (required)")
	f.StringVar(&opts.tag, "tag", capsule.DefaultTag, "the capsule's tag inside the layout")
	f.BoolVar(&opts.allowIncomplete, "allow-incomplete", false, "pack a study whose runs are missing or not done (no tables)")
	f.BoolVar(&opts.allowDiffers, "allow-differs", false, "pack a study some of whose numbers its samples do not give, marked UNSUPPORTED (it will not verify or replay)")
	f.BoolVar(&opts.force, "force", false, "replace OUT if it exists")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the attribution's bootstraps (recorded, so that a replay uses it)")
	return cmd
}

func runPack(ctx context.Context, opts packOptions, dir string, io streams) error {
	st, err := study.Load(dir)
	if err != nil {
		return err
	}
	bar := newTransferBar(io, opts.json)
	res, err := capsule.Pack(ctx, st, opts.out, capsule.PackOptions{Tag: opts.tag, AllowIncomplete: opts.allowIncomplete,
		AllowDiffers: opts.allowDiffers, Replace: opts.force, Attribution: analysis.AttributionOptions{Seed: opts.seed}, Progress: bar.update})
	bar.stop()
	if errors.Is(err, fs.ErrExist) {
		return existsError(opts.out, "use --force to replace it")
	}
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(io.out, res)
	}
	fmt.Fprint(io.out, res)
	fmt.Fprintf(io.out, "Next: capsule verify %s; capsule push %s REGISTRY/REPOSITORY:TAG\n", opts.out, opts.out)
	return nil
}

// emptyDir reports whether path is a directory with nothing in it.
func emptyDir(path string) bool {
	entries, err := os.ReadDir(path)
	return err == nil && len(entries) == 0
}
