package simulate

import (
	"context"
	"hash/fnv"
	"time"

	"github.com/evalcapsule/evalcapsule/harness"
)

// Executor is the simulated backend as a harness.Executor: it writes, for a
// run's settings, the output lm-eval would write, with the planted Effects,
// in the file format of the lm-eval release the run pins
// (rec.Harness.Version; 0.4.9.1 when it pins none).
// Every run of one model gets the same seed, so runs of a study pair up;
// the output is a function of the settings alone, byte for byte. A
// checkpoint of the simulated model line (LineCheckpoint) is run with the
// line's planted accuracies.
type Executor struct {
	Effects Effects
	// Pace, when set, makes the run take about this long, reporting
	// progress as it goes: a simulated run is otherwise over in a fraction
	// of a second, too soon to watch or to cancel half-way in a test of a
	// Slurm cluster or a container.
	Pace time.Duration
}

// Execute writes the simulated output into outDir.
func (e Executor) Execute(ctx context.Context, rec *harness.RunRecord, outDir string, progress func(harness.Progress)) error {
	o, err := optionsForRecord(rec, ModelSeed(rec.Model.ID), e.Effects)
	if err != nil {
		return err
	}
	if c, ok := LineCheckpoint(rec.Model.ID); ok {
		o = onLine(o, c)
	}
	if _, err := o.resolve(); err != nil {
		return err // an lm-eval release the simulator does not write, say
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	const steps = 20
	progress(harness.Progress{Phase: "simulating", Done: 0, Total: steps})
	for i := 1; i < steps && e.Pace > 0; i++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(e.Pace / steps):
		}
		progress(harness.Progress{Phase: "simulating", Done: i, Total: steps})
	}
	if _, err := Generate(outDir, o); err != nil {
		return err
	}
	progress(harness.Progress{Phase: "simulating", Done: steps, Total: steps})
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
	Pace    time.Duration // see Executor
}

// Run executes the planned run in dir with the simulated backend.
func (r Runner) Run(ctx context.Context, dir string, progress func(harness.Progress)) error {
	return harness.RunJob(ctx, dir, Executor{Effects: r.Effects, Pace: r.Pace}, harness.JobOptions{Progress: progress})
}

// RunRecord executes the planned run rec in dir without reading or writing
// the planned record first.
func (r Runner) RunRecord(ctx context.Context, dir string, rec *harness.RunRecord, progress func(harness.Progress)) error {
	return harness.RunJob(ctx, dir, Executor{Effects: r.Effects, Pace: r.Pace}, harness.JobOptions{Progress: progress, Record: rec})
}
