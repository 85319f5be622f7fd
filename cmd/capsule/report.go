package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/study"
)

type reportOptions struct {
	json   bool
	out    string
	seed   uint64
	failed int
	ref    refOptions
}

func newReportCmd(io streams) *cobra.Command {
	var opts reportOptions
	cmd := &cobra.Command{
		Use:   "report STUDY_DIR|REF -o report.html",
		Short: "Write the study report: one self-contained HTML file and its Markdown twin",
		Long: `Write the study report: the attribution table and waterfall plot of every
claim, the sensitivity table, the baseline → final comparison, a sample of
the final run's misses, and the provenance of every run. The HTML embeds its
plots and needs no network; a Markdown file with the same tables is written
beside it (report.md for -o report.html). When any run comes from the
simulated backend, both say so at the top.

The argument is a study directory or a capsule (REF, below): a capsule's
study is unpacked into a temporary folder, every file checked, and the
report is built from it.

` + refHelp + `

` + exitCodes(codeInvalid, codeUsage, codeRegistry, codeInterrupted),
		Example: `  capsule report studies/llama-3.2-1b-instruct/ -o report.html
  capsule report review/ -o report.html`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.out == "" {
				return &usageError{fmt.Errorf("-o is required: the HTML file to write")}
			}
			if opts.failed < 1 {
				return &usageError{fmt.Errorf("--failure-samples %d: expected the number of misses to show per claim, at least 1", opts.failed)}
			}
			return runReport(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the paths written as JSON")
	f.StringVarP(&opts.out, "output", "o", "", "the HTML file to write (required)")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the bootstraps and the failure sample")
	f.IntVar(&opts.failed, "failure-samples", 10, "misses to show per claim (at least 1; the classes are counted over all misses)")
	addRefFlags(f, &opts.ref)
	return cmd
}

func runReport(ctx context.Context, opts reportOptions, dir string, io streams) error {
	if err := checkOutputDir("-o", opts.out); err != nil {
		return err
	}
	var st *study.Study
	var err error
	if capsule.IsRef(dir) {
		var cleanup func()
		st, cleanup, err = unpackedStudy(ctx, dir, opts.ref, opts.json, io)
		defer cleanup()
	} else {
		st, err = study.Load(dir)
	}
	if err != nil {
		return err
	}
	rep, err := study.BuildReport(ctx, st, study.ReportOptions{Attribution: analysis.AttributionOptions{Seed: opts.seed}, FailureSamples: opts.failed})
	if err != nil {
		return err
	}
	md, err := rep.WriteFiles(opts.out)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(io.out, map[string]any{"html": opts.out, "markdown": md, "simulated": rep.Simulated})
	}
	fmt.Fprintf(io.out, "wrote %s and %s\n", opts.out, md)
	return nil
}

// unpackedStudy opens the capsule ref names and unpacks its study into a
// temporary folder, which cleanup removes.
func unpackedStudy(ctx context.Context, ref string, o refOptions, quiet bool, io streams) (st *study.Study, cleanup func(), err error) {
	cleanup = func() {}
	bar := newTransferBar(io, quiet)
	defer bar.stop()
	c, err := capsule.OpenRef(ctx, ref, o.openOptions(bar))
	if err != nil {
		return nil, cleanup, err
	}
	defer c.Close()
	tmp, err := os.MkdirTemp("", "capsule-report-")
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	st, err = c.UnpackStudy(ctx, filepath.Join(tmp, "study"))
	return st, cleanup, err
}
