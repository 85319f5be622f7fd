package history

import "errors"

var (
	// ErrIndex means the index cannot be used as it is: another schema
	// version, a database that does not pass SQLite's check, a row that
	// does not decode. Open and Update rebuild such an index; the error
	// reaches a caller only when the rebuild fails too.
	ErrIndex = errors.New("index unusable")
	// ErrNoCheckpoints means the sources named no capsule to draw.
	ErrNoCheckpoints = errors.New("no checkpoints")
	// ErrBaseline means the baseline named is none of the checkpoints.
	ErrBaseline = errors.New("baseline not found")
)
