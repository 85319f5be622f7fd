package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/capsule"
)

type pushOptions struct {
	json        bool
	tag         string
	plainHTTP   bool
	withReports bool
}

func newPushCmd(io streams) *cobra.Command {
	var opts pushOptions
	cmd := &cobra.Command{
		Use:   "push CAPSULE TARGET",
		Short: "Push a capsule to an OCI registry",
		Long: `Push a capsule (a layout directory or .tar, as 'capsule pack' writes it) to
an OCI registry: TARGET is host[:port]/repository[:tag]; without a tag the
capsule's tag in the layout is used. Blobs the registry already has are not
sent again, so an interrupted push resumes when run again. Replay reports
attached to the capsule in the layout travel with it (--with-reports=false
to leave them).

Any registry that stores OCI artifacts works (distribution, Harbor, Zot,
GHCR, ECR, ...). Loopback registries get plain HTTP, others HTTPS unless
--plain-http. Credentials come from the Docker config
(~/.docker/config.json, $DOCKER_CONFIG) and its credential helpers: log in
with 'docker login', 'podman login --authfile ~/.docker/config.json' or
'oras login'.

` + exitCodes(codeInvalid, codeUsage, codeRegistry, codeInterrupted),
		Example: `  capsule push llama.capsule registry.example.com/team/llama-study:v1
  capsule push llama.tar 127.0.0.1:5000/llama-study:v1`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPush(cmd.Context(), opts, args[0], args[1], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the pushed digest as JSON")
	f.StringVar(&opts.tag, "tag", "", "the capsule's tag inside the layout (default \"latest\")")
	f.BoolVar(&opts.plainHTTP, "plain-http", false, "plain HTTP to a registry that is not on loopback")
	f.BoolVar(&opts.withReports, "with-reports", true, "push the replay reports attached to the capsule too")
	return cmd
}

func runPush(ctx context.Context, opts pushOptions, src, target string, io streams) error {
	bar := newTransferBar(io, opts.json)
	desc, err := capsule.Push(ctx, src, target, capsule.PushOptions{Tag: opts.tag, PlainHTTP: opts.plainHTTP, WithReferrers: opts.withReports, Progress: bar.update})
	bar.stop()
	if err != nil {
		return err
	}
	pinned := repositoryOf(target) + "@" + desc.Digest.String()
	if opts.json {
		return writeJSON(io.out, map[string]any{"target": target, "digest": desc.Digest.String(), "reference": pinned})
	}
	fmt.Fprintf(io.out, "pushed %s to %s\n  digest  %s\nA reviewer pulls exactly this capsule with:\n  capsule pull %s -o review/\n", src, target, desc.Digest, pinned)
	return nil
}

// repositoryOf strips the tag or digest from host[:port]/repository[:tag|@digest].
func repositoryOf(ref string) string {
	if i := strings.LastIndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	slash := strings.LastIndexByte(ref, '/')
	if i := strings.LastIndexByte(ref, ':'); i > slash {
		ref = ref[:i]
	}
	return ref
}
