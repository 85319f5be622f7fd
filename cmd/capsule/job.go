package main

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

type jobOptions struct {
	lmEval string
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
the environment (nvidia-smi, CUDA_VISIBLE_DEVICES, pip freeze, Python and
lm-eval versions) into RUN_DIR, run lm-eval (or the simulated backend when
run.json says simulated), and mark it done, failed, or interrupted on
SIGINT/SIGTERM.

` + exitCodesHelp,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runJob(cmd.Context(), opts, args[0])
		},
	}
	cmd.Flags().StringVar(&opts.lmEval, "lm-eval", "lm_eval", "the lm-eval command")
	cmd.Flags().StringVar(&opts.python, "python", "python3", "the Python whose packages are recorded")
	return cmd
}

func runJob(ctx context.Context, opts jobOptions, dir string) error {
	rec, err := harness.ReadRecord(dir)
	if err != nil {
		return err
	}
	var ex harness.Executor
	jo := harness.JobOptions{}
	if rec.Simulated {
		ex = simulate.Executor{Effects: simulate.DefaultEffects()}
	} else {
		ex = harness.LMEval{Command: strings.Fields(opts.lmEval)}
		jo.Capture = &harness.CaptureOptions{Python: opts.python}
	}
	err = harness.RunJob(ctx, dir, ex, jo)
	if errors.Is(err, harness.ErrInterrupted) {
		return context.Canceled
	}
	return err
}
