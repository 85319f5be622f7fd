package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/study"
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

` + exitCodesHelp,
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
	if opts.workdir != "" {
		if _, err := os.Lstat(opts.workdir); err == nil && !emptyDir(opts.workdir) {
			return &usageError{fmt.Errorf("--workdir %s already exists: give a new folder", opts.workdir)}
		}
	}
	c, err := openRef(ctx, ref, opts.ref, opts.json, io)
	if err != nil {
		return err
	}
	defer c.Close()
	if c.Config.Attribution == nil || c.Config.Rescore == nil {
		return fmt.Errorf("%w: %s was packed without tables (an incomplete study): verify it with capsule verify; there are no numbers to replay", capsule.ErrFormat, ref)
	}
	studyDir := ""
	if opts.workdir != "" {
		studyDir = filepath.Join(opts.workdir, "study")
	}
	studyDir, cleanup, err := unpackRef(ctx, c, studyDir)
	if err != nil {
		return err
	}
	if opts.workdir == "" {
		defer cleanup()
	}
	st, err := study.Load(studyDir)
	if err != nil {
		return err
	}
	topts := c.Config.TableOptions.AttributionOptions()
	rep, _, err := capsule.ReplayTables(ctx, st, c.Config, topts)
	if err != nil {
		return err
	}
	rep.Capsule = c.Descriptor.Digest.String()
	rep.Replayer = capsule.Packer{Name: "capsule", Version: version()}
	if opts.rerun {
		if err := rerun(ctx, opts, c, st, filepath.Dir(studyDir), rep, io); err != nil {
			return err
		}
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
		writeReplay(io, c, rep, opts)
	}
	if attachErr != nil {
		return fmt.Errorf("the replay report could not be attached (use -o to keep it, --attach=false to skip): %w", attachErr)
	}
	if !rep.OK {
		return errChecksFailed
	}
	return nil
}

// rerun re-executes the capsule's runs into workspace/rerun and records
// the comparisons in rep.
func rerun(ctx context.Context, opts replayOptions, c *openedRef, st *study.Study, workspace string, rep *capsule.ReplayReport, io streams) error {
	runner, kind, _, err := opts.runner.newRunner(st, packedImage(c.Config))
	if err != nil {
		return err
	}
	bars := newBars(io, opts.json)
	cmps, err := study.Rerun(ctx, st, filepath.Join(workspace, "rerun"), study.RerunOptions{
		Runner: runner, RunnerKind: kind, Tolerance: opts.tolerance, Seed: c.Config.TableOptions.AttributionOptions().Seed, Events: bars.event,
	})
	bars.stop()
	if err != nil {
		return err
	}
	rep.Level = "rerun"
	rep.Reruns = cmps
	for _, rc := range cmps {
		rep.OK = rep.OK && rc.OK
	}
	return nil
}

// packedImage is the image every packed run used, by digest; "" when they
// used none or different ones.
func packedImage(cfg *capsule.Config) string {
	image := ""
	for _, r := range cfg.Runs {
		if r.Record == nil || r.Record.Image == nil || r.Record.Image.IndexDigest == "" {
			return ""
		}
		name, _, _ := strings.Cut(r.Record.Image.Ref, "@")
		ref := name + "@" + r.Record.Image.IndexDigest
		if image != "" && ref != image {
			return ""
		}
		image = ref
	}
	return image
}

// attachReport attaches the replay report where the capsule came from.
func attachReport(ctx context.Context, opts replayOptions, c *openedRef, report []byte) error {
	if !opts.attach {
		return nil
	}
	target := c.Path
	switch {
	case c.Registry:
		target = c.Ref
	case !isDir(c.Path):
		return nil // a .tar is not changed in place; -o keeps the report
	}
	_, err := capsule.Attach(ctx, target, c.Descriptor, report, capsule.PushOptions{PlainHTTP: opts.ref.plainHTTP})
	return err
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

func writeReplay(io streams, c *openedRef, rep *capsule.ReplayReport, opts replayOptions) {
	w := io.out
	fmt.Fprintf(w, "replay of %s (%s), study %s\n", c.Ref, rep.Capsule, rep.Study)
	if rep.Simulated {
		fmt.Fprintln(w, "  SIMULATED: the capsule's runs come from the simulated backend")
	}
	if len(rep.Diffs) == 0 {
		fmt.Fprintf(w, "  rescore: %d numbers re-derived from the samples, all identical to the packed tables\n", rep.Compared)
	} else {
		fmt.Fprintf(w, "  rescore: %d numbers re-derived, %d DIFFER from the packed tables:\n", rep.Compared, len(rep.Diffs))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "    WHERE\tPACKED\tREPLAYED")
		for _, d := range rep.Diffs {
			fmt.Fprintf(tw, "    %s\t%s\t%s\n", d.Where, d.Packed, d.Replayed)
		}
		tw.Flush()
	}
	if rep.Level == "rerun" {
		fmt.Fprintf(w, "  rerun: %d runs re-executed\n", len(rep.Reruns))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "    RUN\tTASK\tMETRIC\tFILTER\tPACKED\tRERUN\tΔ [95% CI]\tGENERATIONS SAME/DIFF\tMAX |ΔLL|\tOK")
		for _, rc := range rep.Reruns {
			if rc.Error != "" {
				fmt.Fprintf(tw, "    %s\t%s\t\t\t\t\t\t\t\tFAILED\n", rc.Run, rc.Error)
				continue
			}
			for _, t := range rc.Tasks {
				ok := "yes"
				if !t.WithinCI || !t.LLWithinTolerance {
					ok = "NO"
				}
				fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%.4f\t%.4f\t%+.4f [%+.4f, %+.4f]\t%d/%d\t%.2g\t%s\n", rc.Run, t.Task, t.Metric, dash(t.Filter),
					t.Packed, t.Rerun, t.Delta, t.CILow, t.CIHigh, t.GenerationsIdentical, t.GenerationsDiffer, t.MaxLLDiff, ok)
			}
		}
		tw.Flush()
	}
	if opts.out != "" {
		fmt.Fprintf(w, "  report written to %s\n", opts.out)
	}
	if opts.workdir != "" {
		fmt.Fprintf(w, "  unpacked study kept in %s\n", opts.workdir)
	}
	if rep.OK {
		fmt.Fprintln(w, "OK: the capsule's numbers are reproduced")
	} else {
		fmt.Fprintln(w, "FAILED: the capsule's numbers are not reproduced (see above)")
	}
}
