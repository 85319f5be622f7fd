package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/quote"
	"github.com/evalcapsule/evalcapsule/study"
)

func newSuiteCmd(io streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "suite",
		Short: "Benchmark suites: tasks and settings run against every checkpoint",
		Long: `A suite is a study file with kind: suite: the tasks with their settings and
the lm-eval that runs them, pinned once; no card, no steps, no variants.
capsule run SUITE --model PATH_OR_ID runs it against each checkpoint and
packs one capsule per checkpoint; capsule gate compares a checkpoint with a
baseline (docs/gate.md).`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newSuiteInitCmd(io))
	return cmd
}

type suiteInitOptions struct{ json bool }

func newSuiteInitCmd(io streams) *cobra.Command {
	var opts suiteInitOptions
	cmd := &cobra.Command{
		Use:   "init FILE",
		Short: "Write a commented suite file to edit",
		Long: `Write a commented suite file (kind: suite) at FILE: the tasks and settings
every checkpoint is evaluated with, and the pinned lm-eval. An existing FILE
is never replaced.

` + exitCodes(code{exitUsage, "usage error, or FILE exists"}),
		Example: `  capsule suite init suites/release.yaml
  capsule run suites/release.yaml --model ckpt/step-12000`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSuiteInit(opts, args[0], io)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, `print {"suite": FILE} as JSON`)
	return cmd
}

func runSuiteInit(opts suiteInitOptions, path string, io streams) error {
	if _, err := os.Lstat(path); err == nil {
		return &usageError{fmt.Errorf("%s exists: it is not replaced", quote.Text(path))}
	}
	if err := harness.WriteFileAtomic(path, []byte(study.SuiteTemplate)); err != nil {
		return err
	}
	if opts.json {
		return writeJSON(io.out, map[string]any{"suite": path})
	}
	fmt.Fprintf(io.out, "wrote %s: edit its tasks and settings, then: capsule run %s --model PATH_OR_ID\n", quote.Text(path), quote.Text(path))
	return nil
}

// suiteCheckpoint is one checkpoint of a suite run.
type suiteCheckpoint struct {
	Name     string `json:"name"`               // the checkpoint's folder name under runs/ (study.CheckpointName)
	Model    string `json:"model"`              // the --model as pinned: a hub id, or a local checkpoint's absolute path
	Revision string `json:"revision,omitempty"` // the hub revision given as ID@REVISION; omitted when none was given
	Digest   string `json:"digest,omitempty"`   // sha256 digest of a local checkpoint's files; omitted for a hub id
	Dir      string `json:"dir"`                // the checkpoint's study folder, runs/<name>
	Status   string `json:"status"`             // "failed" when Error is set, "packed" otherwise
	Capsule  string `json:"capsule,omitempty"`  // path of the packed capsule (dir + ".capsule"); omitted when it was not packed
	// CapsuleDigest is the packed capsule's manifest digest.
	CapsuleDigest string  `json:"capsule_digest,omitempty"`
	Seconds       float64 `json:"seconds"`         // wall-clock seconds of the checkpoint's runs and packing
	Error         string  `json:"error,omitempty"` // why the checkpoint's runs or packing failed; omitted when they did not

	st *study.Study
}

// runSuite runs a suite against every --model, each in its own study
// folder runs/<checkpoint>/, and packs each result.
func runSuite(ctx context.Context, opts runOptions, suite *study.Study, io streams) error {
	if len(opts.models) == 0 {
		return &usageError{fmt.Errorf("%s is a suite: give the checkpoints to run it against with --model PATH_OR_ID (repeatable)", quote.Text(suite.Path))}
	}
	if len(opts.only) > 0 {
		return &usageError{fmt.Errorf("--only is for a study's runs; a suite runs each --model")}
	}
	runs := filepath.Join(suite.Dir, "runs")
	var cps []*suiteCheckpoint
	seen := map[string]string{}
	for _, arg := range opts.models {
		m, err := study.SuiteModel(arg)
		if err != nil {
			return err
		}
		name := study.CheckpointName(m)
		if prev, ok := seen[name]; ok {
			return &usageError{fmt.Errorf("--model %s and --model %s would share runs/%s", quote.Text(prev), quote.Text(arg), name)}
		}
		seen[name] = arg
		b, err := study.CheckpointFile(suite, m)
		if err != nil {
			return err
		}
		dir := filepath.Join(runs, name)
		cs, err := study.Parse(filepath.Join(dir, study.FileName), b)
		if err != nil {
			return err
		}
		cs.Dir = dir
		if !opts.dryRun {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := harness.WriteFileAtomic(cs.Path, b); err != nil {
				return err
			}
		}
		cps = append(cps, &suiteCheckpoint{Name: name, Model: m.ID, Revision: m.Revision, Digest: m.Digest, Dir: dir, st: cs})
		for _, w := range cs.Warnings() {
			fmt.Fprintf(io.err, "capsule: warning: %s: %s\n", name, quote.Text(w))
		}
	}
	if opts.dryRun {
		for _, c := range cps {
			if err := dryRun(c.st, opts, io); err != nil {
				return err
			}
		}
		return nil
	}
	runner, kind, simulated, err := opts.runner.newRunner(suite, "")
	if err != nil {
		return err
	}
	parallel := 1
	if kind == "slurm" {
		parallel = len(cps) // one job per checkpoint, all submitted at once
	}
	bars := newBars(io, opts.json)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range cps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			ro := study.SweepOptions{Runner: runner, RunnerKind: kind, Simulated: simulated, Parallel: 1,
				Command: strings.Fields(opts.command), KeepStale: opts.keep,
				Events: func(ev study.RunEvent) {
					mu.Lock()
					defer mu.Unlock()
					ev.Run.Name = c.Name
					bars.event(ev)
				}}
			sw, err := study.Sweep(ctx, c.st, ro)
			c.Seconds = time.Since(start).Seconds()
			if err == nil {
				counts := sw.Counts()
				if counts["failed"] > 0 || counts["interrupted"] > 0 {
					err = fmt.Errorf("%w: the run failed (see %s)", harness.ErrRunner, filepath.Join(c.Dir, "runs", c.Name, "run.json"))
				}
			}
			if err == nil && ctx.Err() == nil {
				out := c.Dir + ".capsule"
				var res capsule.PackResult
				res, err = capsule.Pack(ctx, c.st, out, capsule.PackOptions{Replace: true})
				if err == nil {
					c.Capsule, c.CapsuleDigest = out, res.Manifest.Digest.String()
				}
			}
			c.Status = "packed"
			if err != nil {
				c.Status, c.Error = "failed", err.Error()
			}
		}()
	}
	wg.Wait()
	bars.stop()
	if opts.json {
		if err := writeJSON(io.out, map[string]any{"suite": suite.Name, "checkpoints": cps}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(io.out, "\n%s: %d checkpoints\n", quote.Text(suite.Name), len(cps))
		for _, c := range cps {
			line := fmt.Sprintf("  %-7s %-30s %s", c.Status, quote.Text(c.Name), quote.Text(c.Capsule))
			if c.Error != "" {
				line += "  " + quote.Text(c.Error)
			}
			fmt.Fprintln(io.out, line)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	failed := 0
	for _, c := range cps {
		if c.Error != "" {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d checkpoints failed", harness.ErrRunner, failed, len(cps))
	}
	return nil
}
