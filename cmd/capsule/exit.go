package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/gate"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/history"
	"github.com/evalcapsule/evalcapsule/kernel"
	"github.com/evalcapsule/evalcapsule/study"
	"oras.land/oras-go/v2/errdef"
)

// Exit codes (docs/cli.md, "Exit codes").
const (
	exitOK          = 0   // success
	exitFailed      = 1   // the check ran and failed (numbers differ, a capsule does not verify); also an internal error
	exitUsage       = 2   // usage or input error
	exitExternal    = 3   // an external component failed (runner, registry)
	exitInterrupted = 130 // interrupted by SIGINT or SIGTERM (128 + SIGINT, as shells report it)
)

// errChecksFailed reports a check that ran and found differences; the output
// has already been written.
var errChecksFailed = errors.New("checks failed")

// usageError marks errors in how the command was called: flags, arguments,
// output paths taken.
type usageError struct{ error }

// failure is what an error means for the process: its exit code and the
// kind of failure, which the message names.
type failure struct {
	code int
	kind string // "usage", "input", "failed", "external", "interrupted", "bug"
}

// classify maps an error to its exit code: the one place where that is
// decided. Library errors are classified by their sentinels and types; an
// error that none matches is a bug (exit 1, said so).
func classify(err error) failure {
	var (
		ue  *usageError
		fe  *harness.FileError
		se  *study.Error
		ce  *kernel.CellError
		une *analysis.UnsupportedError
		pe  *fs.PathError
		je  *json.SyntaxError
	)
	switch {
	case err == nil:
		return failure{exitOK, ""}
	case errors.As(err, &ue):
		return failure{exitUsage, "usage"}
	case errors.Is(err, context.Canceled), errors.Is(err, harness.ErrInterrupted):
		return failure{exitInterrupted, "interrupted"}
	case errors.Is(err, errChecksFailed), errors.Is(err, capsule.ErrFormat), errors.Is(err, study.ErrMismatch), errors.Is(err, capsule.ErrDiffers), errors.Is(err, history.ErrIndex), errors.As(err, &ce):
		return failure{exitFailed, "failed"}
	case errors.Is(err, errdef.ErrNotFound): // a tag or repository a registry answered it does not have
		return failure{exitUsage, "input"}
	case errors.Is(err, capsule.ErrRegistry), errors.Is(err, harness.ErrRunner), errors.Is(err, harness.ErrNvidiaSmiOutput),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, analysis.ErrNoSandbox):
		return failure{exitExternal, "external"}
	case errors.As(err, &fe), errors.As(err, &se), errors.As(err, &une), errors.As(err, &pe), errors.As(err, &je),
		// lm-eval's output files
		errors.Is(err, harness.ErrNotLMEval), errors.Is(err, harness.ErrNoOutput), errors.Is(err, harness.ErrAmbiguous),
		errors.Is(err, harness.ErrSyntax), errors.Is(err, harness.ErrTruncated), errors.Is(err, harness.ErrRecord),
		errors.Is(err, harness.ErrTooLarge), errors.Is(err, harness.ErrNotRegular), errors.Is(err, harness.ErrOutsideRoot),
		errors.Is(err, harness.ErrStraySamples),
		// settings and runners
		errors.Is(err, harness.ErrImageTag), errors.Is(err, harness.ErrUnsupportedSetting),
		errors.Is(err, harness.ErrInvalidSetting), errors.Is(err, harness.ErrInvalidRunner),
		// studies and their runs
		errors.Is(err, study.ErrStudy), errors.Is(err, study.ErrRunMissing), errors.Is(err, study.ErrRunExists),
		errors.Is(err, study.ErrIncomplete), errors.Is(err, study.ErrBusy),
		// analyses asked of runs that cannot give them
		errors.Is(err, analysis.ErrNotPaired), errors.Is(err, analysis.ErrLabels), errors.Is(err, analysis.ErrNoSeries),
		errors.Is(err, analysis.ErrGroupNotJoinable), errors.Is(err, analysis.ErrNotRecomputable),
		// gate policies and sides
		errors.Is(err, gate.ErrPolicy), errors.Is(err, gate.ErrSide),
		// capsules and references
		errors.Is(err, capsule.ErrReference), errors.Is(err, capsule.ErrNotPackable),
		// histories
		errors.Is(err, history.ErrNoCheckpoints), errors.Is(err, history.ErrBaseline),
		// notebooks and kernels
		errors.Is(err, kernel.ErrNotebook), errors.Is(err, kernel.ErrConnection), errors.Is(err, kernel.ErrTemporaryBuild),
		// files named on the command line
		errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission), errors.Is(err, fs.ErrExist):
		return failure{exitUsage, "input"}
	}
	return failure{exitFailed, "bug"}
}

// report writes err on stderr as the command line contract says: one line
// (a JSON object with --json), with a request to report an internal error,
// and for a usage error (a wrong flag or argument) a pointer to the help of
// the command that was called, cmdPath ("capsule compare"). An input error
// (a file that is missing or malformed) gets no such hint: the help would
// not fix it.
func report(err error, f failure, asJSON bool, cmdPath string, stderr interface{ Write([]byte) (int, error) }) {
	msg := err.Error()
	if f.kind == "bug" {
		msg = "internal error (a bug: please report it with the command line): " + msg
	}
	if asJSON {
		b, _ := json.Marshal(map[string]any{"error": msg, "kind": f.kind, "exit_code": f.code})
		fmt.Fprintln(stderr, string(b))
		return
	}
	fmt.Fprintln(stderr, "capsule:", msg)
	if f.kind == "usage" {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmdPath)
	}
}

// code is one exit code a command can return and what it means there; an
// empty why takes the code's usual meaning.
type code struct {
	code int
	why  string
}

var usualWhy = map[int]string{
	exitOK:          "success",
	exitFailed:      "the check ran and failed",
	exitUsage:       "usage or input error (bad flag, unreadable or malformed file)",
	exitExternal:    "an external component failed",
	exitInterrupted: "interrupted (Ctrl-C or SIGTERM)",
}

// exitCodes is a command's "Exit codes:" section: 0, and the codes it can
// return.
func exitCodes(codes ...code) string {
	var b strings.Builder
	b.WriteString("Exit codes:\n  0    success")
	for _, c := range codes {
		why := c.why
		if why == "" {
			why = usualWhy[c.code]
		}
		fmt.Fprintf(&b, "\n  %-3d  %s", c.code, why)
	}
	return b.String()
}

// The codes most commands share.
var (
	codeUsage       = code{exitUsage, ""}
	codeInterrupted = code{exitInterrupted, ""}
	codeRegistry    = code{exitExternal, "a registry failed (network, authentication, an error answer)"}
	codeInvalid     = code{exitFailed, "the capsule is not valid (a digest, size or format that does not match)"}
)
