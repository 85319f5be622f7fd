package study_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/study"
)

// timedRunner runs simulated runs in process and adds up the time spent
// inside the simulated backend itself: the "runs themselves".
type timedRunner struct{ inside *atomic.Int64 }

type timedExecutor struct {
	simulate.Executor
	inside *atomic.Int64
}

func (e timedExecutor) Execute(ctx context.Context, rec *harness.RunRecord, out string, p func(harness.Progress)) error {
	t0 := time.Now()
	err := e.Executor.Execute(ctx, rec, out, p)
	e.inside.Add(int64(time.Since(t0)))
	return err
}

func (r timedRunner) Run(ctx context.Context, dir string, p func(harness.Progress)) error {
	return harness.RunJob(ctx, dir, timedExecutor{simulate.Executor{Effects: simulate.DefaultEffects()}, r.inside}, harness.JobOptions{Progress: p})
}

// RunRecord is what simulate.Runner does in process, timed.
func (r timedRunner) RunRecord(ctx context.Context, dir string, rec *harness.RunRecord, p func(harness.Progress)) error {
	return harness.RunJob(ctx, dir, timedExecutor{simulate.Executor{Effects: simulate.DefaultEffects()}, r.inside}, harness.JobOptions{Progress: p, Record: rec})
}

// BenchmarkSweepOverhead plans and supervises a 50-run simulated sweep (one
// run at a time, each a full GSM8K run of 1,319 documents) and reports the
// share of the wall time spent outside the runs themselves: planning, argv,
// run.json writes, progress, resume checks.
func BenchmarkSweepOverhead(b *testing.B) {
	var yamlText strings.Builder
	yamlText.WriteString(`study: overhead
model: {id: simulated/model-1b}
card:
  claims:
    - {task: gsm8k, metric: exact_match, filter: strict-match, value: 0.4}
harness: {version: 0.4.9.1}
runner: {kind: simulated}
baseline: {model: hf, tasks: [gsm8k], log_samples: true}
variants:
`)
	for i := 1; i < 50; i++ {
		fmt.Fprintf(&yamlText, "  - {seed: [%d, 1234, 1234, 1234]}\n", i)
	}
	var overhead float64
	for b.Loop() {
		dir := b.TempDir()
		os.WriteFile(filepath.Join(dir, "study.yaml"), []byte(yamlText.String()), 0o644)
		s, err := study.Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		var inside atomic.Int64
		sweep, err := study.Sweep(context.Background(), s, study.SweepOptions{Runner: timedRunner{&inside}, RunnerKind: "simulated", Simulated: true, Parallel: 1})
		if err != nil {
			b.Fatal(err)
		}
		if c := sweep.Counts(); c["done"] != 50 {
			b.Fatalf("%v", c)
		}
		overhead = 1 - float64(inside.Load())/float64(sweep.Duration)
	}
	b.ReportMetric(100*overhead, "overhead-%")
}
