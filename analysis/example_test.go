package analysis_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

// Re-score a (simulated) lm-eval run: every number is recomputed from the
// samples and compared with the results file.
func ExampleRescore() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	simulate.Generate(filepath.Join(dir, "run"), simulate.Options{Seed: 1, Tasks: []string{"gsm8k"}, GSM8KDocs: 25})

	outs, _ := harness.Find(dir)
	rep, _ := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{})
	for _, c := range rep.Runs[0].Checks {
		fmt.Println(c.Task, c.Metric, c.Filter, c.N, c.Level, c.Status, c.Reported.Equal(c.Recomputed))
	}
	// Output:
	// gsm8k exact_match strict-match 25 rescored exact true
	// gsm8k exact_match flexible-extract 25 rescored exact true
}

// lm-eval's mean_stderr under the summation of the CPython that ran it.
func ExampleMeanStderr() {
	acc := []float64{1, 0, 0, 1, 1, 0, 1, 1, 0, 1}
	fmt.Println(analysis.Mean(acc, analysis.PyFloat, analysis.Naive))
	fmt.Println(analysis.MeanStderr(acc, analysis.PyFloat, analysis.SummationFor(3, 10)))
	// Output:
	// 0.6
	// 0.16329931618554522
}
