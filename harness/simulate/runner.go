package simulate

import (
	"context"
	"hash/fnv"

	"github.com/evalcapsule/evalcapsule/harness"
)

// Executor is the simulated backend as a harness.Executor: it writes, for a
// run's settings, the output lm-eval would write, with the planted Effects.
// Every run of one model gets the same seed, so runs of a study pair up;
// the output is a function of the settings alone, byte for byte.
type Executor struct {
	Effects Effects
}

// Execute writes the simulated output into outDir.
func (e Executor) Execute(ctx context.Context, rec *harness.RunRecord, outDir string, progress func(harness.Progress)) error {
	o, err := OptionsFor(rec.Spec, ModelSeed(rec.Model.ID), e.Effects)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	progress(harness.Progress{Phase: "simulating", Done: 0, Total: 1})
	if _, err := Generate(outDir, o); err != nil {
		return err
	}
	progress(harness.Progress{Phase: "simulating", Done: 1, Total: 1})
	return ctx.Err()
}

// ModelSeed is the seed of a simulated model, derived from its id.
func ModelSeed(modelID string) int64 {
	h := fnv.New64a()
	h.Write([]byte(modelID))
	return int64(h.Sum64() >> 1)
}

// Runner runs simulated runs in this process: no GPU, no lm-eval, no child
// process, so a sweep of fifty runs costs little more than writing them.
type Runner struct {
	Effects Effects
}

// Run executes the planned run in dir with the simulated backend.
func (r Runner) Run(ctx context.Context, dir string, progress func(harness.Progress)) error {
	return harness.RunJob(ctx, dir, Executor{Effects: r.Effects}, harness.JobOptions{Progress: progress})
}
