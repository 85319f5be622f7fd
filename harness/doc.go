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
// # What is read
//
// The readers take what lm-eval writes and refuse the rest, by name:
//
//   - A file named as lm-eval names results files (results.json,
//     results_<timestamp>.json, <prefix>_<timestamp>.json) must be one:
//     invalid JSON, a top level that is not lm-eval's object, or a file that
//     cannot be read is an error. Other JSON files met in a folder are
//     parsed to decide; those that are not results are passed over.
//   - Symbolic links are followed while their targets stay inside the
//     folder searched; a link leading out of it (or nowhere) is an error
//     naming the link (ErrOutsideRoot). A file given by name may be a link.
//   - Only regular files are opened: a FIFO, device or socket is refused
//     before it is read (ErrNotRegular), so that a reader neither blocks
//     nor reads an endless device such as /dev/zero.
//   - Files must be UTF-8, as lm-eval writes them (json.dump with
//     ensure_ascii=False); an invalid byte is an ErrSyntax naming the file,
//     line, column and byte offset.
//   - Samples of a task the results have no entry for are an ErrMismatch.
//   - A path that holds no lm-eval output is an ErrNoOutput.
//
// # Limits
//
// Two package variables bound what a file may cost (ErrTooLarge beyond):
//
//   - MaxResultsSize, 256 MiB: the largest results file read. lm-eval's are
//     a few hundred KB to a few MB (the largest among the real outputs in
//     the test fixtures, a full MMLU run, is 116 KB).
//   - MaxSampleLine, 64 MiB: the longest samples line (or element of the
//     JSON-array samples of v0.4.0-v0.4.2). The longest line among the real
//     outputs in the test fixtures is 8,268 bytes (mmlu_pro_plus, 5-shot,
//     chat template); a long-context task logs a few MB. A longer line is
//     read through without being kept and reported with its file and line.
//     Reading holds the line being read once in its buffer (at most twice
//     its length, while the buffer grows) and its decoded fields: the
//     benchmark BenchmarkSampleLineLimit measures a peak of about 2.5 times
//     the longest line.
//
// Programs may change them before reading (not while files are read).
//
// Errors name the file and the line, column or field, and wrap the
// sentinels of errors.go (ErrNotLMEval, ErrSyntax, ErrTruncated, ...).
package harness
