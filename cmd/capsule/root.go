package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/evalcapsule/evalcapsule/internal/buildinfo"
	"github.com/evalcapsule/evalcapsule/internal/quote"
	"github.com/spf13/cobra"
)

// streams is the command's standard input and output.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// Main runs the capsule command line and returns the exit code.
//
// What it prints comes in part from strangers (a capsule's names, a
// results file's tasks, a model's outputs): standard output, and the error
// messages on standard error, go through quote.Writer, so that a terminal
// shows control characters instead of obeying them.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := quote.NewWriter(stdout)
	defer out.Flush()
	io := streams{in: stdin, out: out, err: stderr}
	root := newRootCmd(io)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(out)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	f := classify(err)
	if !errors.Is(err, errChecksFailed) { // its output says what failed
		msg := quote.NewWriter(stderr)
		report(err, f, jsonRequested(args), cmd.CommandPath(), msg)
		msg.Flush()
	}
	return f.code
}

func newRootCmd(io streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "capsule",
		Short: "Re-score, compare and freeze lm-evaluation-harness studies",
		Long: `capsule works with the output of EleutherAI's lm-evaluation-harness (lm-eval).

It re-derives every number lm-eval reported from the logged samples, bit for
bit, so that a reproduction can be trusted before it is compared, attributed
or shared.

Exit codes:
  0    success
  1    the check ran and failed: a number, a generation or a digest differs
       (an internal error exits 1 too, and says so)
  2    usage or input error (bad flag, unreadable or malformed file)
  3    an external component failed (runner, container engine, registry)
  130  interrupted (Ctrl-C or SIGTERM); finished work is kept

Each command's help lists the codes it returns.`,
		Version:       buildinfo.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("capsule {{.Version}}\n")
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return &usageError{fmt.Errorf("unknown command %q", args[0])}
		}
		return nil
	}
	root.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.AddCommand(newRescoreCmd(io))
	root.AddCommand(newGenerateCmd(io))
	root.AddCommand(newDemoCmd(io))
	root.AddCommand(newCompareCmd(io))
	root.AddCommand(newGateCmd(io))
	root.AddCommand(newSuiteCmd(io))
	root.AddCommand(newFailuresCmd(io))
	root.AddCommand(newShowCmd(io))
	root.AddCommand(newAttributeCmd(io))
	root.AddCommand(newReportCmd(io))
	root.AddCommand(newScoresCmd(io))
	root.AddCommand(newRunCmd(io))
	root.AddCommand(newPackCmd(io))
	root.AddCommand(newInspectCmd(io))
	root.AddCommand(newVerifyCmd(io))
	root.AddCommand(newReplayCmd(io))
	root.AddCommand(newPushCmd(io))
	root.AddCommand(newPullCmd(io))
	root.AddCommand(newHistoryCmd(io))
	root.AddCommand(newDiffCmd(io))
	root.AddCommand(newUnpackCmd(io))
	root.AddCommand(newJobCmd(io))
	root.AddCommand(newKernelCmd(io))
	return root
}

func jsonRequested(args []string) bool {
	for _, a := range args {
		if a == "--json" || a == "--json=true" {
			return true
		}
		if a == "--" {
			break
		}
	}
	return false
}

// usageArgs wraps a cobra argument validator so that its errors are usage
// errors (exit code 2).
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return &usageError{err}
		}
		return nil
	}
}
