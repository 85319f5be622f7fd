package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

type jobOptions struct {
	python string
}

// newJobCmd is the command a runner starts on the machine that executes a
// run (a Slurm node, a container): it is not meant to be typed.
func newJobCmd(io streams) *cobra.Command {
	var opts jobOptions
	cmd := &cobra.Command{
		Use:    "job RUN_DIR",
		Short:  "Execute one planned run here (started by the runners of capsule run)",
		Hidden: true,
		Long: `Execute the planned run in RUN_DIR on this machine: mark it running, capture
the environment into RUN_DIR (nvidia-smi, CUDA_VISIBLE_DEVICES, and the
Python version, pip freeze and lm-eval version of the Python that runs
lm-eval), run lm-eval (or the simulated backend when run.json says
simulated), and mark it done, failed, or interrupted on SIGINT/SIGTERM.
lm-eval exiting 0 without writing its results (or, when the run logs
samples, its samples) makes a failed run. A simulated run takes about
$EVALCAPSULE_SIMULATE_PACE (a duration such as 5s; default: as fast as it
can be written), so that it can be watched or cancelled half-way.

` + exitCodes(codeUsage, code{exitExternal, "lm-eval failed or could not start"}, code{exitInterrupted, "interrupted: run.json says interrupted"}),
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runJob(cmd.Context(), opts, args[0])
		},
	}
	cmd.Flags().StringVar(&opts.python, "python", "", "the Python whose version and packages are recorded (default: the one that runs lm-eval: the run's python -m lm_eval, or the interpreter the lm_eval script's #! line names)")
	return cmd
}

func runJob(ctx context.Context, opts jobOptions, dir string) error {
	rec, err := harness.ReadRecord(dir)
	if err != nil {
		return err
	}
	var ex harness.Executor
	// The environment is captured for simulated runs too: it is a true
	// record of the machine the job ran on (a Slurm node, a container).
	jo := harness.JobOptions{Capture: &harness.CaptureOptions{Python: opts.python}}
	if rec.Simulated {
		pace, err := simulatePace()
		if err != nil {
			return err
		}
		ex = simulate.Executor{Effects: simulate.DefaultEffects(), Pace: pace}
	} else {
		ex = harness.LMEval{}
	}
	err = harness.RunJob(ctx, dir, ex, jo)
	if errors.Is(err, harness.ErrInterrupted) {
		return context.Canceled
	}
	return err
}
