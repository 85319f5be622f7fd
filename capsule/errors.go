package capsule

import "errors"

var (
	// ErrFormat means a capsule is not valid: a digest or size that does not
	// match, a path outside the capsule, an unknown media type or major
	// version, a blob over the size limit.
	ErrFormat = errors.New("invalid capsule")
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
	// ErrDiffers means a number lm-eval reported is not what its samples
	// give: a study that is not packed (unless asked), a capsule that does
	// not replay.
	ErrDiffers = errors.New("numbers differ from their samples")
)
