package simulate_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

// A small simulated gsm8k run: the files lm-eval would write, and the
// scores its results file reports.
func ExampleGenerate() {
	dir, err := os.MkdirTemp("", "simulate-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	out, err := simulate.Generate(dir, simulate.Options{
		Seed:      42,
		Tasks:     []string{"gsm8k"},
		GSM8KDocs: 100,
	})
	if err != nil {
		log.Fatal(err)
	}
	rel, _ := filepath.Rel(dir, out.ResultsPath)
	fmt.Println(filepath.ToSlash(rel))
	for _, p := range out.SamplesPaths {
		fmt.Println(filepath.Base(p))
	}
	fmt.Println(out.Lines, "sample lines")
	for _, s := range out.Scores {
		fmt.Printf("%s %s,%s = %.2f ± %.3f\n", s.Task, s.Metric, s.Filter, s.Value, s.Stderr)
	}
	// Output:
	// simulated__model-1b/results_2025-01-01T00-00-42.000000.json
	// samples_gsm8k_2025-01-01T00-00-42.000000.jsonl
	// 200 sample lines
	// gsm8k exact_match,strict-match = 0.26 ± 0.044
	// gsm8k exact_match,flexible-extract = 0.29 ± 0.046
}
