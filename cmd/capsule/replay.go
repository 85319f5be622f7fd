package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
)

type replayOptions struct {
	json      bool
	ref       refOptions
	rerun     bool
	runner    runnerFlags
	tolerance float64
	workdir   string
	out       string
	attach    bool
}

func newReplayCmd(io streams) *cobra.Command {
	var opts replayOptions
	cmd := &cobra.Command{
		Use:   "replay REF [--rerun --runner KIND]",
		Short: "Re-derive every number of a capsule from its samples, or re-execute its runs",
		Long: `Replay a capsule. Its study is unpacked (every file checked against its
digest) into a temporary folder, or --workdir.

Rescore level (the default): the re-scorer and the attribution run again on
the unpacked samples, with the options recorded at pack time, and every
number of the packed tables (each check of each run, each step, CI, p-value
and residual of each claim) is compared bit for bit. Each difference is
named by its table, run or claim, step, task and metric. Takes seconds.

Rerun level (--rerun): each run is also executed again with the runner
(--runner local, container, slurm or simulated, as for 'capsule run'),
from its packed settings and exact lm-eval command line, in the pinned
image (the container runner takes the packed image digest), into
WORKDIR/rerun/runs/<name>. Each is compared with the packed run document
by document: generations identical or not, log-likelihoods within
--tolerance, and every score's paired 95% CI of the difference must hold 0.

The replay report (JSON, schema evalcapsule.replay/v1) is printed with
--json, written to -o, and attached to the capsule as an artifact of its
own whose subject is the capsule: in the layout directory, or in the
registry it was pulled from (which needs push rights; --attach=false to
skip). 'capsule inspect' lists attached reports. Exit code 1 when any
number or rerun differs.

` + refHelp + `

` + exitCodes(code{exitFailed, "a number or a rerun differs from the packed capsule, or the capsule is not valid"}, codeUsage, code{exitExternal, "a registry or the rerun's runner failed"}, codeInterrupted),
		Example: `  capsule replay review/
  capsule replay registry.example.com/team/llama-study@sha256:3b1f… --attach=false
  capsule replay review/ --rerun --runner container --gpus 1
  capsule replay review/ --rerun --runner slurm --partition gpu`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the replay report as JSON")
	addRefFlags(f, &opts.ref)
	f.BoolVar(&opts.rerun, "rerun", false, "re-execute every run with the runner and compare it with the packed one")
	addRunnerFlags(f, &opts.runner)
	f.Float64Var(&opts.tolerance, "tolerance", 1e-4, "largest log-likelihood difference a rerun may show")
	f.StringVar(&opts.workdir, "workdir", "", "unpack into this new folder and keep it (default: a temporary folder, removed)")
	f.StringVarP(&opts.out, "output", "o", "", "also write the replay report to this file")
	f.BoolVar(&opts.attach, "attach", true, "attach the replay report to the capsule (its layout or registry)")
	return cmd
}

func runReplay(ctx context.Context, opts replayOptions, ref string, io streams) error {
	bar := newTransferBar(io, opts.json)
	defer bar.stop()
	c, err := capsule.OpenRef(ctx, ref, opts.ref.openOptions(bar))
	if err != nil {
		return err
	}
	defer c.Close()
	ro := capsule.ReplayOptions{Workdir: opts.workdir, Tolerance: opts.tolerance}
	var reruns *bars
	if opts.rerun {
		packed, err := c.Config.ParseStudy()
		if err != nil {
			return err
		}
		ro.Runner, ro.RunnerKind, _, err = opts.runner.newRunner(packed, c.Config.Image())
		if err != nil {
			return err
		}
		reruns = newBars(io, opts.json)
		ro.Events = reruns.event
	}
	rep, err := capsule.Replay(ctx, c, ro)
	reruns.stop()
	bar.stop()
	if err != nil {
		return err
	}
	b, err := analysis.MarshalJSON(rep)
	if err != nil {
		return err
	}
	if opts.out != "" {
		if err := harness.WriteFileAtomic(opts.out, append(b, '\n')); err != nil {
			return err
		}
	}
	attachErr := attachReport(ctx, opts, c, b)
	if opts.json {
		if err := writeJSON(io.out, rep); err != nil {
			return err
		}
	} else {
		fmt.Fprint(io.out, rep)
		if opts.out != "" {
			fmt.Fprintf(io.out, "report written to %s\n", opts.out)
		}
		if opts.workdir != "" {
			fmt.Fprintf(io.out, "unpacked study kept in %s\n", opts.workdir)
		}
	}
	if attachErr != nil {
		return fmt.Errorf("the replay report could not be attached (use -o to keep it, --attach=false to skip): %w", attachErr)
	}
	if !rep.OK {
		return errChecksFailed
	}
	return nil
}

// attachReport attaches the replay report where the capsule came from; a
// capsule read from a .tar is not changed in place (-o keeps the report).
func attachReport(ctx context.Context, opts replayOptions, c *capsule.Capsule, report []byte) error {
	if !opts.attach || !c.Attachable() {
		return nil
	}
	_, err := c.AttachReport(ctx, report)
	return err
}
