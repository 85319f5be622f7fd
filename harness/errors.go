package harness

import (
	"errors"
	"fmt"
)

var (
	// ErrNotLMEval means a file is valid JSON but not something lm-eval wrote.
	ErrNotLMEval = errors.New("not an lm-eval output file")
	// ErrSyntax means a file is not valid JSON (or JSON Lines).
	ErrSyntax = errors.New("invalid JSON")
	// ErrTruncated means a file ends in the middle of a value or line.
	ErrTruncated = errors.New("file is truncated")
	// ErrNoOutput means a path holds no lm-eval results or samples.
	ErrNoOutput = errors.New("no lm-eval output found")
	// ErrAmbiguous means a path holds several runs where one was expected.
	ErrAmbiguous = errors.New("several lm-eval runs found")
	// ErrTooLarge means a results file is larger than MaxResultsSize, or a
	// samples line (or JSON-array element) longer than MaxSampleLine.
	ErrTooLarge = errors.New("over the size limit")
	// ErrNotRegular means a path that should be an lm-eval output file is a
	// FIFO, a device, a socket or another non-regular file, which the
	// readers refuse before opening rather than block on or read forever.
	ErrNotRegular = errors.New("not a regular file")
	// ErrOutsideRoot means a symbolic link under a searched folder leads out
	// of that folder (or nowhere).
	ErrOutsideRoot = errors.New("symbolic link leads outside the folder searched")
	// ErrStraySamples means samples and the results they were paired with do not
	// belong together: samples of a task the results have no entry for.
	ErrStraySamples = errors.New("samples do not match the results")
)

// FileError locates a problem in an input file: the file, the line (and
// column, when known) or the field, and what was expected.
type FileError struct {
	Path  string
	Line  int    // 1-based; 0 when not known
	Col   int    // 1-based; 0 when not known
	Field string // e.g. `results["gsm8k"]["exact_match,strict-match"]`; "" when not known
	Err   error
}

func (e *FileError) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc += fmt.Sprintf(":%d", e.Line)
		if e.Col > 0 {
			loc += fmt.Sprintf(":%d", e.Col)
		}
	}
	if e.Field != "" {
		loc += ": " + e.Field
	}
	return loc + ": " + e.Err.Error()
}

func (e *FileError) Unwrap() error { return e.Err }

var (
	// ErrUnsupportedSetting is matched (errors.Is) by every *UnsupportedSettingError.
	ErrUnsupportedSetting = errors.New("setting not supported by this lm-eval version")
	// ErrInvalidSetting is matched (errors.Is) by Argv's errors about settings
	// that no lm-eval release could take as given.
	ErrInvalidSetting = errors.New("invalid run setting")
	// ErrNotCheckout means lm-eval was not run from a git checkout.
	ErrNotCheckout = errors.New("not a git checkout")
	// ErrImageTag means a container image was named by tag only: a tag can move,
	// so runs pin images by digest unless explicitly allowed.
	ErrImageTag = errors.New("image not pinned by digest")
	// ErrNvidiaSmiOutput means nvidia-smi printed something the parsers do not
	// understand. Parse errors wrap it inside a *FileError whose Path names the
	// command, so callers learn the line and field as well.
	ErrNvidiaSmiOutput = errors.New("unrecognised nvidia-smi output")
	// ErrInterrupted means a run was stopped before it finished (a signal, a
	// cancelled job): run.json says "interrupted".
	ErrInterrupted = errors.New("run interrupted")
	// ErrRecord means a run.json cannot be read.
	ErrRecord = errors.New("invalid run record")
	// ErrRunner means an external component a runner needs failed or is
	// missing (a runner binary, the Slurm controller, the container engine).
	ErrRunner = errors.New("runner failed")
	// ErrInvalidRunner means a runner was configured wrong (an unknown engine).
	ErrInvalidRunner = errors.New("invalid runner settings")
)
