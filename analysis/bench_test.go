package analysis_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

var (
	fullOnce  sync.Once
	fullDir   string
	fullBytes int64
	fullErr   error
)

// fullStudy generates the full-size simulated study once per test binary:
// MMLU 14,042 × 4 choices with 5-shot prompts and GSM8K 1,319 × 2 filters.
func fullStudy(b *testing.B) (string, int64) {
	fullOnce.Do(func() {
		fullDir, fullErr = os.MkdirTemp("", "evalcapsule-bench-")
		if fullErr != nil {
			return
		}
		var out simulate.Output
		out, fullErr = simulate.Generate(filepath.Join(fullDir, "study"), simulate.Options{Seed: 1})
		fullBytes = out.Bytes
	})
	if fullErr != nil {
		b.Fatal(fullErr)
	}
	return filepath.Join(fullDir, "study"), fullBytes
}

// BenchmarkRescoreFull re-scores the full-size study: every samples line
// parsed, filtered, scored and aggregated, every group recomputed.
func BenchmarkRescoreFull(b *testing.B) {
	dir, size := fullStudy(b)
	b.SetBytes(size)
	for b.Loop() {
		outs, err := harness.Find(dir)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, differs, nr := rep.Counts(); differs+nr > 0 {
			b.Fatalf("%d checks differ, %d not recomputable", differs, nr)
		}
	}
}

func TestMain(m *testing.M) {
	code := testenv.Main(m)
	if fullDir != "" {
		os.RemoveAll(fullDir)
	}
	os.Exit(code)
}
