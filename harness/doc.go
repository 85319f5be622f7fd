// Package harness treats EleutherAI's lm-evaluation-harness (lm-eval) as an
// external program: it reads the files lm-eval writes, of every release from
// v0.4.0 to v0.4.13, and tells which release wrote them.
//
// Find locates runs under a path and pairs results with samples by the
// timestamp in their names; ReadResults parses a results file keeping the
// key order lm-eval wrote (which carries meaning); OpenSamples streams a
// samples file one line at a time, decoding the small fields and keeping the
// long prompts as raw bytes; DetectVersion narrows the lm-eval release from
// the keys each release added.
//
// Errors name the file and the line, column or field, and wrap the
// sentinels of errors.go (ErrNotLMEval, ErrSyntax, ErrTruncated, ...).
package harness
