package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/capsule"
)

type pullOptions struct {
	json        bool
	out         string
	tag         string
	plainHTTP   bool
	withReports bool
}

func newPullCmd(io streams) *cobra.Command {
	var opts pullOptions
	cmd := &cobra.Command{
		Use:   "pull TARGET -o DIR",
		Short: "Pull a capsule from an OCI registry into a layout directory",
		Long: `Pull the capsule at TARGET (host[:port]/repository[:tag|@sha256:…], tag
"latest" when none is given) into DIR, an OCI image layout, created if
missing. The manifest is checked before anything is fetched: an artifact
that is not a capsule is refused and DIR is not touched. Every blob is
checked against its digest as it arrives and once more at the end; blobs
already in DIR are not fetched again, so an interrupted pull resumes, and a
damaged one is fetched again. Replay reports attached to the capsule come
with it (--with-reports=false to leave them).

Pull by digest (@sha256:…) to be sure of what you review: a tag can move.
Then: capsule verify DIR; capsule replay DIR.

Loopback registries get plain HTTP, others HTTPS unless --plain-http;
credentials come from the Docker config and its credential helpers.

` + exitCodes(codeInvalid, codeUsage, codeRegistry, codeInterrupted),
		Example: `  capsule pull registry.example.com/team/llama-study:v1 -o review/
  capsule pull registry.example.com/team/llama-study@sha256:3b1f… -o review/`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.out == "" {
				return &usageError{fmt.Errorf("-o is required: the directory to pull into")}
			}
			return runPull(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the pulled digest as JSON")
	f.StringVarP(&opts.out, "output", "o", "", "the layout directory to pull into (required)")
	f.StringVar(&opts.tag, "tag", capsule.DefaultTag, "the tag the capsule gets in the layout")
	f.BoolVar(&opts.plainHTTP, "plain-http", false, "plain HTTP to a registry that is not on loopback")
	f.BoolVar(&opts.withReports, "with-reports", true, "pull the replay reports attached to the capsule too")
	return cmd
}

func runPull(ctx context.Context, opts pullOptions, ref string, io streams) error {
	bar := newTransferBar(io, opts.json)
	desc, err := capsule.Pull(ctx, ref, opts.out, capsule.PullOptions{Tag: opts.tag, PlainHTTP: opts.plainHTTP, WithReferrers: opts.withReports, Progress: bar.update})
	bar.stop()
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(io.out, map[string]any{"reference": ref, "digest": desc.Digest.String(), "layout": opts.out, "tag": opts.tag})
	}
	fmt.Fprintf(io.out, "pulled %s into %s\n  digest  %s\nNext: capsule verify %s; capsule replay %s\n", ref, opts.out, desc.Digest, opts.out, opts.out)
	return nil
}
