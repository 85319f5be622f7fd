package analysis

import "errors"

// UnsupportedError says why a task's filters or metric cannot be recomputed
// from its configuration: the field of the results file and what is wrong
// with it or missing from the re-implementation.
type UnsupportedError struct {
	Field string // e.g. configs["gsm8k"].filter_list[0].filter[1]
	What  string
}

func (e *UnsupportedError) Error() string { return e.Field + ": " + e.What }

var (
	// ErrNotPaired means two runs cannot be compared document by document: they
	// share no task, or their documents differ.
	ErrNotPaired = errors.New("runs cannot be paired")
	// ErrLabels means a hand-label file cannot be read.
	ErrLabels = errors.New("invalid hand labels")
)
