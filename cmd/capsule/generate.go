package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

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
	line       int
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

With --line N it writes a simulated model line instead: N checkpoints
(DIR/step-01000, DIR/step-02000, ...) of one simulated model on gsm8k,
gsm8k_cot_llama, gsm8k_llama and mmlu (400 GSM8K documents, 8 questions
per MMLU subject unless --gsm8k-docs or --mmlu-docs say otherwise), each
checkpoint a little better than the one before, except one planted
regression: checkpoint 5 (step-06000) loses 10 points of accuracy on
gsm8k_cot_llama, about 3.5 points under strict-match. 'capsule gate' against
step-01000 is meant to fail on that and nothing else (docs/gate.md).

` + exitCodes(codeUsage),
		Example: `  capsule generate --seed 1 example/
  capsule rescore example/
  capsule generate --gsm8k-docs 50 --mmlu-docs 5 small/
  capsule generate --line 8 line/`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.line != 0 {
				// The line plants its own model: these would be ignored.
				for _, f := range []string{"seed", "data-seed", "tasks", "python", "num-fewshot"} {
					if cmd.Flags().Changed(f) {
						return &usageError{fmt.Errorf("--%s does not apply to --line: the line's checkpoints, tasks and seeds are planted (docs/gate.md)", f)}
					}
				}
			}
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
	f.IntVar(&opts.line, "line", 0, "write a simulated model line of this many checkpoints (with one planted regression) instead of one run")
	return cmd
}

func runGenerate(ctx context.Context, opts generateOptions, dir string, io streams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if opts.gsm8kDocs < 0 || opts.mmluDocs < 0 {
		return &usageError{fmt.Errorf("--gsm8k-docs and --mmlu-docs must not be negative")}
	}
	if opts.line != 0 {
		return runGenerateLine(opts, dir, io)
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

func runGenerateLine(opts generateOptions, dir string, io streams) error {
	if opts.line < 2 || opts.line > 100 {
		return &usageError{fmt.Errorf("--line %d: a line has 2 to 100 checkpoints", opts.line)}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	cps, outs, err := simulate.WriteLine(dir, simulate.LineOptions{Checkpoints: opts.line, GSM8KDocs: opts.gsm8kDocs, MMLUDocsPerSubject: opts.mmluDocs})
	if err != nil {
		return err
	}
	if opts.json {
		var list []map[string]any
		for i, c := range cps {
			list = append(list, map[string]any{"name": c.Name, "dir": outs[i].Dir, "results": outs[i].ResultsPath, "planted_regression": c.Regression})
		}
		enc := json.NewEncoder(io.out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"simulated": true, "checkpoints": list, "regression_task": simulate.LineRegressionTask})
	}
	fmt.Fprintf(io.out, "wrote a SIMULATED model line (no model was run): %d checkpoints\n", len(cps))
	for i, c := range cps {
		mark := ""
		if c.Regression {
			mark = "  (planted regression: " + simulate.LineRegressionTask + ")"
		}
		fmt.Fprintf(io.out, "  %s%s\n", outs[i].Dir, mark)
	}
	fmt.Fprintf(io.out, "next: capsule gate --baseline %s --candidate %s --policy gate.yaml\n", filepath.Join(dir, cps[0].Name), filepath.Join(dir, cps[len(cps)-1].Name))
	return nil
}
