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
	// ErrNoSeries means a run has no per-document values for the task,
	// metric and filter asked for.
	ErrNoSeries = errors.New("no such scores")
	// ErrGroupNotJoinable means a group's score is not the mean over its
	// members' documents, so its documents cannot stand for it.
	ErrGroupNotJoinable = errors.New("group score is not a mean over documents")
	// ErrNotRecomputable means a number asked for cannot be computed from
	// the run's samples: a metric the re-scorer does not re-implement, a
	// line it cannot read, a multiple-choice task where generations are
	// needed.
	ErrNotRecomputable = errors.New("cannot be recomputed from the samples")
)
