package gate

import "errors"

var (
	// ErrPolicy means a policy file cannot be read or says something the
	// gate cannot do; the message names the field and its line.
	ErrPolicy = errors.New("invalid gate policy")
	// ErrSide means a side cannot be gated at all: it has no task with
	// per-document values.
	ErrSide = errors.New("side cannot be gated")
)
