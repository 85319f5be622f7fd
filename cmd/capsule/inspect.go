package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/capsule"
)

type inspectOptions struct {
	json  bool
	files bool
	ref   refOptions
}

func newInspectCmd(io streams) *cobra.Command {
	var opts inspectOptions
	cmd := &cobra.Command{
		Use:   "inspect REF",
		Short: "Show what a capsule holds: study, runs, settings, environment, claims, files",
		Long: `Show what a capsule holds without unpacking it: its digest, the study, who
packed it and when, every run (status, model and revision, lm-eval version
and commit, image digest, runner, GPUs, driver and CUDA), the claims with
their packed attribution, the replay reports attached to it, and (with
--files) every file with its size and digest.

The manifest and config are checked as they are read; use 'capsule verify'
to check every file.

` + refHelp + `

` + exitCodesHelp,
		Example: `  capsule inspect llama.capsule
  capsule inspect --files --json llama.tar
  capsule inspect registry.example.com/team/llama-study:v1`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInspect(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the capsule's description as JSON")
	f.BoolVar(&opts.files, "files", false, "list every file")
	addRefFlags(f, &opts.ref)
	return cmd
}

// inspection is `capsule inspect --json`.
type inspection struct {
	Capsule       string           `json:"capsule"`
	Digest        string           `json:"digest"`
	Size          int64            `json:"size"`
	Study         string           `json:"study"`
	FormatVersion string           `json:"format_version"`
	Packer        capsule.Packer   `json:"packer"`
	Created       string           `json:"created,omitempty"`
	Simulated     bool             `json:"simulated"`
	Runs          []inspectedRun   `json:"runs"`
	Claims        []inspectedClaim `json:"claims"`
	Tables        bool             `json:"tables"`
	Reports       []string         `json:"reports"`
	Files         int              `json:"files"`
	Bytes         int64            `json:"bytes"`
	Stored        int64            `json:"stored"`
	FileList      []inspectedFile  `json:"file_list,omitempty"`
}

type inspectedRun struct {
	Name          string   `json:"name"`
	Label         string   `json:"label,omitempty"`
	Status        string   `json:"status"`
	Model         string   `json:"model"`
	Revision      string   `json:"revision,omitempty"`
	LMEvalVersion string   `json:"lm_eval_version"`
	LMEvalCommit  string   `json:"lm_eval_commit,omitempty"`
	Image         string   `json:"image,omitempty"`
	Runner        string   `json:"runner"`
	GPUs          []string `json:"gpus,omitempty"`
	Driver        string   `json:"driver,omitempty"`
	CUDA          string   `json:"cuda,omitempty"`
	Simulated     bool     `json:"simulated,omitempty"`
	Argv          []string `json:"argv"`
}

type inspectedClaim struct {
	Task        string  `json:"task"`
	Metric      string  `json:"metric"`
	Filter      string  `json:"filter"`
	Card        float64 `json:"card"`
	Final       float64 `json:"final"`
	Unexplained float64 `json:"unexplained"`
}

type inspectedFile struct {
	Path      string `json:"path"`
	MediaType string `json:"media_type"`
	Size      int64  `json:"size"`
	Stored    int64  `json:"stored"`
	Digest    string `json:"digest"`
}

func runInspect(ctx context.Context, opts inspectOptions, ref string, io streams) error {
	c, err := openRef(ctx, ref, opts.ref, opts.json, io)
	if err != nil {
		return err
	}
	defer c.Close()
	in := describe(c)
	if descs, err := capsule.Reports(ctx, c.Path, capsule.PullOptions{Tag: c.Descriptor.Digest.String()}); err == nil {
		for _, d := range descs {
			in.Reports = append(in.Reports, d.Digest.String())
		}
	}
	if !opts.files {
		in.FileList = nil
	}
	if opts.json {
		return writeJSON(io.out, in)
	}
	writeInspection(io, in)
	return nil
}

// describe gathers what inspect shows from the opened capsule.
func describe(c *openedRef) *inspection {
	cfg := c.Config
	in := &inspection{Capsule: c.Ref, Digest: c.Descriptor.Digest.String(), Size: c.Descriptor.Size, Study: cfg.Study,
		FormatVersion: cfg.FormatVersion, Packer: cfg.Packer, Created: c.Manifest.Annotations[ocispec.AnnotationCreated],
		Simulated: cfg.Simulated, Runs: []inspectedRun{}, Claims: []inspectedClaim{}, Reports: []string{},
		Tables: cfg.Attribution != nil && cfg.Rescore != nil}
	for _, r := range cfg.Runs {
		in.Runs = append(in.Runs, describeRun(r))
	}
	if cfg.Attribution != nil {
		for _, cl := range cfg.Attribution.Claims {
			in.Claims = append(in.Claims, inspectedClaim{Task: cl.Task, Metric: cl.Metric, Filter: cl.Filter, Card: cl.Card, Final: cl.Final, Unexplained: cl.Unexplained})
		}
	}
	for _, f := range c.Files() {
		in.Files++
		in.Bytes += f.Size
		in.Stored += f.Descriptor.Size
		in.FileList = append(in.FileList, inspectedFile{Path: f.Path, MediaType: f.MediaType, Size: f.Size, Stored: f.Descriptor.Size, Digest: f.Descriptor.Digest.String()})
	}
	return in
}

func describeRun(r capsule.ConfigRun) inspectedRun {
	rec := r.Record
	ir := inspectedRun{Name: r.Name}
	if rec == nil {
		ir.Status = "missing"
		return ir
	}
	ir.Label, ir.Status, ir.Simulated = rec.Label, rec.Status, rec.Simulated
	ir.Model, ir.Revision = rec.Model.ID, firstNonEmpty(rec.Model.ResolvedRevision, rec.Model.Revision)
	ir.LMEvalVersion, ir.LMEvalCommit = rec.Harness.Version, rec.Harness.Commit
	ir.Runner = rec.Runner.Kind
	if rec.Image != nil {
		ir.Image = rec.Image.Ref
		if rec.Image.IndexDigest == "" && rec.Image.PlatformDigest != "" {
			ir.Image += " (" + rec.Image.PlatformDigest + ")"
		}
	}
	if env := rec.Env; env != nil {
		for _, g := range env.GPUs {
			ir.GPUs = append(ir.GPUs, g.Name)
		}
		ir.Driver, ir.CUDA = env.DriverVersion, env.CUDAVersion
	}
	ir.Argv = rec.Argv
	return ir
}

func writeInspection(io streams, in *inspection) {
	w := io.out
	fmt.Fprintf(w, "capsule %s\n", in.Digest)
	if in.Simulated {
		fmt.Fprintln(w, "  SIMULATED: some runs come from the simulated backend; no model was run for them")
	}
	fmt.Fprintf(w, "  study    %s\n", in.Study)
	fmt.Fprintf(w, "  format   %s, packed by %s %s", in.FormatVersion, in.Packer.Name, in.Packer.Version)
	if in.Created != "" {
		fmt.Fprintf(w, ", created %s", in.Created)
	}
	fmt.Fprintf(w, "\n  files    %d (%s; %s stored)\n", in.Files, humanBytes(in.Bytes), humanBytes(in.Stored))
	if !in.Tables {
		fmt.Fprintln(w, "  tables   none: packed incomplete, a replay can check files but not numbers")
	}
	fmt.Fprintf(w, "\nRuns (%d)\n", len(in.Runs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tSTATUS\tMODEL\tLM-EVAL\tRUNNER\tIMAGE\tGPU")
	for _, r := range in.Runs {
		model := r.Model
		if r.Revision != "" {
			model += "@" + short(r.Revision, 12)
		}
		lmEval := r.LMEvalVersion
		if r.LMEvalCommit != "" {
			lmEval += " (" + short(r.LMEvalCommit, 10) + ")"
		}
		gpu := strings.Join(r.GPUs, ",")
		if r.Driver != "" {
			gpu += " driver " + r.Driver
		}
		if r.CUDA != "" {
			gpu += " CUDA " + r.CUDA
		}
		if r.Simulated {
			gpu = "simulated"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Status, model, lmEval, r.Runner, dash(short(r.Image, 60)), dash(strings.TrimSpace(gpu)))
	}
	tw.Flush()
	if len(in.Claims) > 0 {
		fmt.Fprintf(w, "\nClaims (packed attribution)\n")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  TASK\tMETRIC\tFILTER\tCARD\tFINAL\tUNEXPLAINED")
		for _, cl := range in.Claims {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%.4f\t%.4f\t%+.4f\n", cl.Task, cl.Metric, dash(cl.Filter), cl.Card, cl.Final, cl.Unexplained)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nReplay reports: %d\n", len(in.Reports))
	for _, r := range in.Reports {
		fmt.Fprintf(w, "  %s\n", r)
	}
	if len(in.FileList) > 0 {
		fmt.Fprintf(w, "\nFiles\n")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		for _, f := range in.FileList {
			fmt.Fprintf(tw, "  %s\t%s\t  %s\t%s\t\n", humanBytes(f.Size), humanBytes(f.Stored), short(f.Digest, 19), f.Path)
		}
		tw.Flush()
	}
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
