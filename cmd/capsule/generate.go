package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

type generateOptions struct {
	json       bool
	seed       int64
	dataSeed   int64
	gsm8kDocs  int
	mmluDocs   int
	tasks      []string
	python     string
	numFewshot int
}

func newGenerateCmd(io streams) *cobra.Command {
	var opts generateOptions
	cmd := &cobra.Command{
		Use:   "generate DIR",
		Short: "Write a SIMULATED lm-eval output (no model is run) to try the tools on",
		Long: `Write a simulated lm-eval run into DIR, in lm-eval 0.4.9.1's exact file format:
a results JSON and one samples JSONL per task, with valid hashes, as
"lm_eval --tasks gsm8k,mmlu --num_fewshot 5 --log_samples" would.

No model and no lm-eval are run: the responses come from a small seeded
model of planted behaviour (some answers miss the "#### N" format, some are
truncated, MMLU is somewhat above chance). Every file says so: the model is
"simulated/...", model_args carry "simulated=True". Use it to try
"capsule rescore", for tests and for benchmarks, never as a real result.

At full size (the default) it writes GSM8K 1,319 docs × 2 filters and MMLU
14,042 questions × 4 choices with 5-shot prompts: about 170 MB. Use
--gsm8k-docs and --mmlu-docs for a small run. The same seed gives the same
bytes. Files are written atomically; an existing run is never overwritten.

` + exitCodes(codeUsage),
		Example: `  capsule generate --seed 1 example/
  capsule rescore example/
  capsule generate --gsm8k-docs 50 --mmlu-docs 5 small/`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGenerate(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print what was written as JSON")
	f.Int64Var(&opts.seed, "seed", 0, "seed of the simulated model's answers")
	f.Int64Var(&opts.dataSeed, "data-seed", 0, "seed of the simulated dataset (runs to be compared share it)")
	f.IntVar(&opts.gsm8kDocs, "gsm8k-docs", 0, "GSM8K documents (default the full 1319)")
	f.IntVar(&opts.mmluDocs, "mmlu-docs", 0, "cap on MMLU questions per subject (default the full test sizes, 14042 in all)")
	f.StringSliceVar(&opts.tasks, "tasks", nil, "tasks to simulate: gsm8k, mmlu (default both)")
	f.StringVar(&opts.python, "python", "", `Python version written into the run's environment, which decides how lm-eval summed (default "`+simulate.DefaultPythonVersion+`")`)
	f.IntVar(&opts.numFewshot, "num-fewshot", 0, "few-shot examples per prompt (default 5; -1 for zero-shot)")
	return cmd
}

func runGenerate(ctx context.Context, opts generateOptions, dir string, io streams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if opts.gsm8kDocs < 0 || opts.mmluDocs < 0 {
		return &usageError{fmt.Errorf("--gsm8k-docs and --mmlu-docs must not be negative")}
	}
	out, err := simulate.Generate(dir, simulate.Options{
		Seed:               opts.seed,
		DataSeed:           opts.dataSeed,
		Tasks:              opts.tasks,
		GSM8KDocs:          opts.gsm8kDocs,
		MMLUDocsPerSubject: opts.mmluDocs,
		PythonVersion:      opts.python,
		NumFewshot:         opts.numFewshot,
	})
	if err != nil {
		return err
	}
	if opts.json {
		enc := json.NewEncoder(io.out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{
			"simulated": true, "dir": out.Dir, "results": out.ResultsPath,
			"samples": out.SamplesPaths, "bytes": out.Bytes, "lines": out.Lines,
		})
	}
	fmt.Fprintf(io.out, "wrote a SIMULATED lm-eval run (no model was run): %d files, %d lines, %.1f MB\n",
		len(out.SamplesPaths)+1, out.Lines, float64(out.Bytes)/1e6)
	fmt.Fprintf(io.out, "  results: %s\n", out.ResultsPath)
	fmt.Fprintf(io.out, "next: capsule rescore %s\n", dir)
	return nil
}
