package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/buildinfo"
	"github.com/evalcapsule/evalcapsule/study"
	"github.com/spf13/cobra"
	"oras.land/oras-go/v2/errdef"
)

// Exit codes, documented in every command's help.
const (
	exitOK       = 0 // success
	exitFailed   = 1 // the check ran and failed: numbers differ
	exitInput    = 2 // usage or input error
	exitExternal = 3 // an external component failed (runner, registry)
)

const exitCodesHelp = `Exit codes:
  0  success: every recomputed number is identical
  1  the check ran and failed: some number differs
  2  usage or input error (bad flag, unreadable or malformed file)
  3  an external component failed (runner, registry)`

// errChecksFailed reports a check that ran and found differences; the output
// has already been written.
var errChecksFailed = errors.New("checks failed")

// usageError marks errors in how the command was called.
type usageError struct{ error }

// exitCode maps an error to the process exit code, in one place.
func exitCode(err error) int {
	var fe *harness.FileError
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errChecksFailed):
		return exitFailed
	case errors.As(err, &ue), errors.As(err, &fe),
		errors.Is(err, harness.ErrNotLMEval), errors.Is(err, harness.ErrNoOutput),
		errors.Is(err, harness.ErrSyntax), errors.Is(err, harness.ErrTruncated),
		errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission),
		errors.Is(err, fs.ErrExist):
		return exitInput
	case errors.Is(err, study.ErrStudy), errors.Is(err, study.ErrRunMissing),
		errors.Is(err, analysis.ErrNotPaired), errors.Is(err, analysis.ErrLabels),
		errors.Is(err, harness.ErrImageTag), errors.Is(err, harness.ErrUnsupportedSetting),
		errors.Is(err, harness.ErrInvalidSetting), errors.Is(err, harness.ErrInvalidRunner),
		errors.Is(err, study.ErrRunExists), errors.Is(err, harness.ErrRecord):
		return exitInput
	case errors.Is(err, capsule.ErrReference), errors.Is(err, study.ErrIncomplete), errors.Is(err, capsule.ErrNotPackable),
		errors.Is(err, errdef.ErrNotFound): // a tag or repository the registry does not have
		return exitInput
	case errors.Is(err, capsule.ErrFormat):
		// The capsule was read and found invalid: a verification that
		// failed.
		return exitFailed
	case errors.Is(err, capsule.ErrRegistry):
		return exitExternal
	case errors.Is(err, context.Canceled):
		return exitInput
	}
	return exitExternal
}

// streams is the command's standard input and output.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// Main runs the capsule command line and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	io := streams{in: stdin, out: stdout, err: stderr}
	root := newRootCmd(io)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errChecksFailed) {
		return exitFailed
	}
	var ue *usageError
	code := exitCode(err)
	if jsonRequested(args) {
		b, _ := json.Marshal(map[string]any{"error": err.Error(), "exit_code": code})
		fmt.Fprintln(stderr, string(b))
	} else {
		fmt.Fprintln(stderr, "capsule:", err)
		if errors.As(err, &ue) {
			fmt.Fprintln(stderr, "Run 'capsule --help' for usage.")
		}
	}
	return code
}

func newRootCmd(io streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "capsule",
		Short: "Re-score, compare and freeze lm-evaluation-harness studies",
		Long: `capsule works with the output of EleutherAI's lm-evaluation-harness (lm-eval).

It re-derives every number lm-eval reported from the logged samples, bit for
bit, so that a reproduction can be trusted before it is compared, attributed
or shared.

` + exitCodesHelp,
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
	root.AddCommand(newFailuresCmd(io))
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
