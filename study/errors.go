package study

import "errors"

var (
	// ErrStudy means a study file is not valid.
	ErrStudy = errors.New("invalid study file")
	// ErrRunMissing means a planned run has no output yet.
	ErrRunMissing = errors.New("run has no output")
	// ErrIncomplete means a planned run of the study is missing or not done,
	// so what is built from it (tables, a capsule) would not hold what the
	// study claims.
	ErrIncomplete = errors.New("study is incomplete")
	// ErrRunExists means a run directory holds a finished run made with other
	// settings than the study now plans: it is never overwritten.
	ErrRunExists = errors.New("run exists with other settings")
	// ErrMismatch means a run's record is not what the study plans for it:
	// other settings, or a command line that is not the one those settings
	// give the pinned lm-eval.
	ErrMismatch = errors.New("run record does not match the study")
	// ErrBusy means another sweep holds the study: its runs are in flight.
	ErrBusy = errors.New("study is being run")
)
