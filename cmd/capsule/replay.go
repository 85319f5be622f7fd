package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/quote"
	"github.com/evalcapsule/evalcapsule/study"
)

type replayOptions struct {
	json bool
	// executeCode runs the code tasks' completions in the sandbox.
	executeCode bool
	ref         refOptions
	rerun       bool
	runner      runnerFlags
	tolerance   float64
	tolerate    []string
	workdir     string
	out         string
	attach      bool
	yes         bool
	command     string
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

Before anything is re-derived the capsule is checked as 'capsule verify'
checks it; a capsule that does not verify, or whose samples do not give
every number lm-eval reported, never replays OK.

Rerun level (--rerun): each run is also executed again with the runner
(--runner container, the default, or local, slurm, simulated as for
'capsule run'; a simulated capsule defaults to simulated), in the pinned
image (the container runner takes the packed image digest), into
WORKDIR/rerun/runs/<name>. The capsule's own command lines are never run:
each run's lm-eval command line is rebuilt from the packed study.yaml for
the pinned lm-eval, and a packed record whose command line differs from it
fails the replay before anything runs. The commands are shown and must be
confirmed (--yes in scripts): a local rerun runs them on this machine, as
you. Each rerun is compared with the packed run document by document:
every response (generated text, log-likelihoods within --tolerance), every
filtered response under each filter and every per-document metric value
must be the same, no document may be missing on either side, and every
score's paired 95% CI of the difference must hold 0. Each document that
differs is named: the text shows per task the counts and the first few
doc_ids with the packed and rerun values around the first difference; the
JSON report lists every one.

--tolerate generations is for runs that are not bit-reproducible: vLLM
(its batching and kernels change generations between runs) and sampled
decoding (do_sample, temperature > 0). The verdict then rests on the
scores (their CIs) and the log-likelihoods only; documents whose
generations, extracted answers or values differ are still listed, marked
tolerated, and the verdict says how many. Missing documents and other
prompts are never tolerated. Without it, a document that differs fails
the replay.

The environment each rerun ran in is set beside the packed run's: GPU
model and count, driver, CUDA, image digest, lm-eval version, commit and
dirty flag, Python and every package of pip freeze (added, removed, other
version). Each difference is listed; a field one side did not record is
said to be unknown. An environment difference alone does not fail the
replay.

The replay report (JSON, schema evalcapsule.replay/v1) is printed with
--json, written to -o, and attached to the capsule as an artifact of its
own whose subject is the capsule: in the layout directory, or in the
registry it was pulled from (which needs push rights; --attach=false to
skip). 'capsule inspect' lists attached reports. Exit code 1 when any
number, a rerun's score or any rerun's document differs (but for
differences --tolerate lets pass).

A capsule's code tasks (humaneval, mbpp) hold programs written by a model:
they are executed only with --execute-code, each in a bubblewrap sandbox
(no network, no host files but a read-only /usr, rlimits, code_eval's 3 s
timeout), with Debian's /usr/bin/python3; each document's pass@k is
compared with its logged value and a difference fails the replay. Without
bubblewrap --execute-code is an error (exit 3), never an unsandboxed run.

` + refHelp + `

` + exitCodes(code{exitFailed, "a number, a rerun's score or one of its documents differs from the packed capsule, or the capsule is not valid"}, codeUsage, code{exitExternal, "a registry or the rerun's runner failed, or --execute-code without a sandbox"}, codeInterrupted),
		Example: `  capsule replay review/
  capsule replay registry.example.com/team/llama-study@sha256:3b1f… --attach=false
  capsule replay review/ --rerun --gpus 1
  capsule replay review/ --rerun --tolerate generations --json -o replay.json
  capsule replay review/ --rerun --runner slurm --partition gpu --yes`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the replay report as JSON")
	f.BoolVar(&opts.executeCode, "execute-code", false, "execute the logged completions of code tasks (humaneval, mbpp) in the bubblewrap sandbox and re-score their pass@k (never without a sandbox)")
	addRefFlags(f, &opts.ref)
	f.BoolVar(&opts.rerun, "rerun", false, "re-execute every run with the runner and compare it with the packed one")
	addRunnerFlags(f, &opts.runner)
	f.Float64Var(&opts.tolerance, "tolerance", 1e-4, "largest log-likelihood difference a rerun may show")
	f.StringSliceVar(&opts.tolerate, "tolerate", nil, "differences a rerun may show: generations (for vLLM and sampled decoding, which are not bit-reproducible; the verdict rests on the scores)")
	f.StringVar(&opts.workdir, "workdir", "", "unpack into this new folder and keep it (default: a temporary folder, removed)")
	f.StringVarP(&opts.out, "output", "o", "", "also write the replay report to this file")
	f.BoolVar(&opts.attach, "attach", true, "attach the replay report to the capsule (its layout or registry)")
	f.BoolVarP(&opts.yes, "yes", "y", false, "run the rerun's commands without asking (they are still shown)")
	f.StringVar(&opts.command, "lm-eval", "lm_eval", "how a rerun starts lm-eval where it runs (e.g. \"python3 -m lm_eval\")")
	return cmd
}

func runReplay(ctx context.Context, opts replayOptions, ref string, io streams) error {
	tolerateGenerations := false
	for _, t := range opts.tolerate {
		switch t {
		case "generations":
			tolerateGenerations = true
		default:
			return &usageError{fmt.Errorf("--tolerate %q: the only difference a rerun may be told to tolerate is generations", t)}
		}
	}
	if tolerateGenerations && !opts.rerun {
		return &usageError{errors.New("--tolerate generations applies to a rerun: add --rerun")}
	}
	if opts.out != "" {
		if err := checkOutputDir("-o", opts.out); err != nil {
			return err
		}
	}
	bar := newTransferBar(io, opts.json)
	defer bar.stop()
	c, err := capsule.OpenRef(ctx, ref, opts.ref.openOptions(bar))
	if err != nil {
		return err
	}
	defer c.Close()
	ro := capsule.ReplayOptions{Workdir: opts.workdir, Tolerance: opts.tolerance, Command: strings.Fields(opts.command),
		TolerateGenerations: tolerateGenerations, ExecuteCode: opts.executeCode}
	var reruns *bars
	if opts.rerun {
		packed, err := c.Config.ParseStudy()
		if err != nil {
			return err
		}
		rf := opts.runner
		if rf.kind == "" {
			rf.kind = "container"
			if c.Config.Simulated {
				rf.kind = "simulated"
			}
		}
		ro.Runner, ro.RunnerKind, _, err = rf.newRunner(packed, c.Config.Image())
		if err != nil {
			return err
		}
		if ro.RunnerKind != "simulated" {
			ro.Confirm = func(cmds []study.RerunCommand) error {
				return confirmRerun(io, opts.yes, ro.Runner, ro.RunnerKind, cmds)
			}
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

// confirmRerun shows the commands a rerun runs, where, and asks before
// they run: a capsule is a stranger's, and a local rerun runs them as the
// reviewer, with the reviewer's files and network.
func confirmRerun(io streams, yes bool, r harness.Runner, kind string, cmds []study.RerunCommand) error {
	w := io.err
	fmt.Fprintf(w, "The rerun runs %d lm-eval command(s), rebuilt from the capsule's study.yaml (its own command lines are never run):\n", len(cmds))
	for _, c := range cmds {
		fmt.Fprintf(w, "  %s: %s\n", c.Run, quote.Argv(c.Argv))
	}
	switch rr := r.(type) {
	case harness.ContainerRunner:
		fmt.Fprintf(w, "in the image %s, with %s.\n", quote.Arg(rr.Image), rr.Engine)
	case harness.LocalRunner:
		fmt.Fprintln(w, "on THIS machine, as you, with your files, credentials and network (the local runner; --runner container runs them in the pinned image).")
	default:
		fmt.Fprintf(w, "with the %s runner.\n", kind)
	}
	if yes {
		return nil
	}
	f, ok := io.in.(*os.File)
	if !ok || !isTerminal(f) {
		return &usageError{errors.New("the rerun's commands need a confirmation: run it again with --yes to run them")}
	}
	fmt.Fprint(w, "Run them? [y/N] ")
	line, _ := bufio.NewReader(io.in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return &usageError{errors.New("the rerun was not confirmed; nothing ran")}
	}
	return nil
}
