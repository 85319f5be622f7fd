// Package simulate writes simulated lm-evaluation-harness output: the
// results JSON and per-task samples JSONL that lm-eval writes for
// `lm_eval --tasks gsm8k,mmlu --num_fewshot 5 --output_path DIR
// --log_samples`, at full size (GSM8K 1,319 documents × 2 filters, MMLU
// 14,042 questions × 4 choices, about 170 MB), from a seed, in the file
// format of one lm-eval release: 0.4.9.1 by default, any of v0.4.3 to
// v0.4.11 on request (Options.LMEvalVersion, or the release a run record
// pins). What differs between them is listed in versions.go; the rest of
// the run (questions, answers, scores) does not depend on the release.
//
// It stands in for lm-eval plus a model on machines that have neither: the
// demo, benchmarks, and tests that check the statistics recover planted
// effects all run on it. The planted model is a handful of knobs in Options
// (GSM8K accuracy, share of answers that miss the "#### N" format, share of
// truncated generations, MMLU accuracy); everything else follows from the
// seed.
//
// The files are meant to be indistinguishable in format from real ones, so
// that the re-scorer can be checked against them: same file names, key sets
// and key order, Python json.dumps byte format, float repr, stringified
// responses, doc/prompt/target hashes, task hashes, and metric values
// computed from the samples the way lm-eval computes them (filters,
// exact_match, argmax accuracy, means and standard errors with CPython's
// summation, size-weighted group means and pooled standard errors over the
// leaves, or over each group's direct members for v0.4.3). Their content
// is not: the questions are synthetic, and the run
// is marked as simulated wherever lm-eval records the model — the model name
// (default "simulated/model-1b"), config.model ("simulated"), model_args
// ("pretrained=<model>,simulated=True", which lm-eval also copies into every
// task's metadata) and model_source.
package simulate
