// Package analysis re-implements lm-eval's scoring exactly: its filters
// (regex with Python re semantics, take_first, majority_vote, ...), its
// per-document metrics (exact_match, acc, acc_norm, ...), its aggregations
// and standard errors, to the last bit, including CPython's summation rules,
// the C library's pow and exp, and the bootstrap's Mersenne Twister.
//
// Rescore takes the outputs harness.Find locates and returns a Report with
// one Check per task, metric and filter, and per group: what lm-eval
// reported, what the samples give, at which level it was recomputed, and
// whether the two are identical.
//
// The exported API has no generic functions or types, so that notebook
// cells interpreted by yaegi can call it.
package analysis
