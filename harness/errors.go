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
