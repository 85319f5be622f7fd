// Package history keeps the evaluated checkpoints of a model line in a
// local index and draws their history: per task the score with its
// confidence interval at every checkpoint, in order, the baseline, the
// gate's verdict per checkpoint and the documents that flipped between
// consecutive checkpoints.
//
// The index is an SQLite database (modernc.org/sqlite, pure Go) that is a
// cache of the capsules: every row is derived from a capsule, found again
// by its manifest digest, so that an index that is lost, stale (another
// schema version) or corrupt is deleted and rebuilt from the capsules,
// never trusted. Per-document values are stored as one blob per task,
// metric and filter, so that the gate and the flips run from the index
// without reopening a capsule.
//
// Capsules are untrusted input: they are read through capsule.OpenRef and
// its limits, and their strings are escaped (internal/quote, html) when
// they are printed or drawn.
package history
