package capsule

import "errors"

var (
	// ErrRunMissing means a planned run has no output yet.
	ErrRunMissing = errors.New("run has no output")
	// ErrFormat means a capsule is not valid: a digest or size that does not
	// match, a path outside the capsule, an unknown media type or major
	// version, a blob over the size limit.
	ErrFormat = errors.New("invalid capsule")
	// ErrIncomplete means a planned run of the study is missing or not done,
	// so the capsule would not hold what the study claims.
	ErrIncomplete = errors.New("study is incomplete")
	// ErrNotPackable means a file of the study cannot go into a capsule: a
	// symbolic link, or a name a reader would refuse.
	ErrNotPackable = errors.New("file cannot be packed")
	// ErrRegistry wraps every failure that comes from a registry: the
	// network, authentication, a 4xx or 5xx answer. The CLI maps it to exit
	// code 3 (an external component failed).
	ErrRegistry = errors.New("registry error")
	// ErrReference means a registry reference, a path standing for a
	// capsule, or the tag or digest either names, is not usable. The CLI
	// maps it to exit code 2 (usage).
	ErrReference = errors.New("invalid reference")
	// ErrRunExists means a run directory holds a finished run made with other
	// settings than the study now plans: it is never overwritten.
	ErrRunExists = errors.New("run exists with other settings")
	// ErrStudy means a study file is not valid.
	ErrStudy = errors.New("invalid study file")
)
