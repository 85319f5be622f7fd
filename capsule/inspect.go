package capsule

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/evalcapsule/evalcapsule/internal/quote"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Inspection is what a capsule holds, read from its manifest and config
// without unpacking it: `capsule inspect --json`.
type Inspection struct {
	Capsule       string         `json:"capsule"`           // the reference inspected, as given (layout folder, .tar or registry reference)
	Digest        string         `json:"digest"`            // the capsule manifest's digest, sha256:...
	Size          int64          `json:"size"`              // the manifest's size in bytes
	Study         string         `json:"study"`             // the study's name
	FormatVersion string         `json:"format_version"`    // the capsule format's major.minor version it was packed in ("1.0")
	Packer        Packer         `json:"packer"`            // the program that packed the capsule, and its version
	Created       string         `json:"created,omitempty"` // the manifest's org.opencontainers.image.created annotation (RFC 3339); left out when it has none
	Simulated     bool           `json:"simulated"`         // whether any run comes from the simulated backend (no model was run for it)
	Runs          []RunSummary   `json:"runs"`              // every packed run, in the config's order; empty, never null, without runs
	Claims        []ClaimSummary `json:"claims"`            // every claim of the packed attribution; empty, never null, when the capsule has no tables
	Tables        bool           `json:"tables"`            // whether the capsule holds the re-scoring and attribution tables (false: an incomplete study, packed with --allow-incomplete)
	// Unsupported names the packed checks whose samples did not give the
	// number lm-eval reported, or whose setting lm-eval recorded otherwise
	// than run.json (a capsule packed with --allow-differs).
	Unsupported []string `json:"unsupported,omitempty"`
	// Reports are the replay reports attached to the capsule, each with
	// its verdict.
	Reports []ReportSummary `json:"reports"`
	Files   int             `json:"files"`  // the number of files packed (the manifest's layers)
	Bytes   int64           `json:"bytes"`  // the files' total size in bytes before compression
	Stored  int64           `json:"stored"` // the total size in bytes of their blobs as stored
	// FileList is every file, when InspectOptions.Files asks for it.
	FileList []FileSummary `json:"file_list,omitempty"`
}

// RunSummary is one run of an inspected capsule: its provenance as its
// record holds it.
type RunSummary struct {
	Name   string `json:"name"`            // the run's name in the study's plan ("baseline", "step-1-...", "variant-1-...")
	Label  string `json:"label,omitempty"` // the run's name for people, as its record has it (the step's or variant's name); left out when none
	Status string `json:"status"`          // the record's status ("planned", "running", "done", "failed", "interrupted"), or "missing" when the capsule has no record of the run
	Model  string `json:"model"`           // the model's id as the record has it (a Hub id or a path)
	// Revision is the model's resolved revision, else the one asked for;
	// ResolvedRevision only the resolved commit ("" when none was).
	Revision         string `json:"revision,omitempty"`
	ResolvedRevision string `json:"resolved_revision,omitempty"` // the commit the model's revision resolved to; left out when none was resolved
	LMEvalVersion    string `json:"lm_eval_version"`             // the lm-eval version the record pins
	LMEvalCommit     string `json:"lm_eval_commit,omitempty"`    // the commit of lm-eval the record pins; left out when it has none
	// LMEvalDirty is whether lm-eval's checkout had changes not committed;
	// nil when the record has no commit (the flag was not looked at).
	LMEvalDirty  *bool  `json:"lm_eval_dirty,omitempty"`
	LMEvalSource string `json:"lm_eval_source,omitempty"` // where lm-eval came from: "checkout", "installed", "image" or "simulated"; left out when not recorded
	Image        string `json:"image,omitempty"`          // the container image's reference, with its platform digest in parentheses when the record has no index digest; left out for a run outside a container
	// ImageDigest is the digest of the image manifest the run ran (the
	// platform's, else the index's).
	ImageDigest string   `json:"image_digest,omitempty"`
	Runner      string   `json:"runner"`              // the kind of runner the record names: "local", "container", "slurm" or "simulated"
	GPUs        []string `json:"gpus,omitempty"`      // the name of each GPU the record's environment lists; left out when it lists none
	Driver      string   `json:"driver,omitempty"`    // the NVIDIA driver version nvidia-smi reported; left out when not recorded
	CUDA        string   `json:"cuda,omitempty"`      // the CUDA version nvidia-smi reported; left out when not recorded
	Python      string   `json:"python,omitempty"`    // the version of the Python that ran lm-eval; left out when not recorded
	Seeds       []int    `json:"seeds,omitempty"`     // --seed's four values (python random, numpy, torch, fewshot); left out when the run sets none
	Simulated   bool     `json:"simulated,omitempty"` // whether the simulated backend wrote the run's output; left out when false
	Argv        []string `json:"argv"`                // the exact lm-eval command line as packed, program name first
}

// ClaimSummary is one claim of an inspected capsule, with its packed
// attribution.
type ClaimSummary struct {
	Task        string  `json:"task"`        // the claim's task as the study file names it
	Metric      string  `json:"metric"`      // the claim's lm-eval metric
	Filter      string  `json:"filter"`      // the claim's lm-eval filter
	Card        float64 `json:"card"`        // the number the model card claims, lm-eval's fraction for a [0, 1] metric
	Final       float64 `json:"final"`       // the score after the attribution's last step, lm-eval's fraction for a [0, 1] metric
	Unexplained float64 `json:"unexplained"` // Card − Final
}

// FileSummary is one file of an inspected capsule.
type FileSummary struct {
	Path      string `json:"path"`       // the file's slash-separated path in the study (its layer's title)
	MediaType string `json:"media_type"` // its layer's media type
	Size      int64  `json:"size"`       // the file's size in bytes before compression
	Stored    int64  `json:"stored"`     // the size in bytes of its blob as stored
	Digest    string `json:"digest"`     // its blob's digest, sha256:...
}

// InspectOptions configures Inspect. The zero value leaves the file list
// out.
type InspectOptions struct {
	// Files lists every file with its size and digest.
	Files bool
}

// Inspect describes the capsule from its manifest and config, and lists
// the replay reports attached to it.
func Inspect(ctx context.Context, c *Capsule, opts InspectOptions) (*Inspection, error) {
	cfg := c.Config
	in := &Inspection{Capsule: c.Ref, Digest: c.Descriptor.Digest.String(), Size: c.Descriptor.Size, Study: cfg.Study,
		FormatVersion: cfg.FormatVersion, Packer: cfg.Packer, Created: c.Manifest.Annotations[ocispec.AnnotationCreated],
		Simulated: cfg.Simulated, Runs: []RunSummary{}, Claims: []ClaimSummary{}, Reports: []ReportSummary{},
		Tables: cfg.Attribution != nil && cfg.Rescore != nil}
	in.Unsupported = differing(cfg.Rescore)
	for _, r := range cfg.Runs {
		in.Runs = append(in.Runs, summarizeRun(r))
	}
	if cfg.Attribution != nil {
		for _, cl := range cfg.Attribution.Claims {
			in.Claims = append(in.Claims, ClaimSummary{Task: cl.Task, Metric: cl.Metric, Filter: cl.Filter, Card: cl.Card, Final: cl.Final, Unexplained: cl.Unexplained})
		}
	}
	for _, f := range c.Files() {
		in.Files++
		in.Bytes += f.Size
		in.Stored += f.Descriptor.Size
		if opts.Files {
			in.FileList = append(in.FileList, FileSummary{Path: f.Path, MediaType: f.MediaType, Size: f.Size, Stored: f.Descriptor.Size, Digest: f.Descriptor.Digest.String()})
		}
	}
	// A layout whose referrers cannot be listed still describes its
	// capsule: the list is empty then.
	if descs, err := Reports(ctx, c.Path, PullOptions{Tag: c.Descriptor.Digest.String()}); err == nil {
		for _, d := range descs {
			in.Reports = append(in.Reports, summarizeReport(ctx, c.Path, c.Descriptor.Digest.String(), d))
		}
	}
	return in, nil
}

// ReportSummary is one attached replay report and what it found.
type ReportSummary struct {
	Digest   string `json:"digest"`   // the report artifact's manifest digest, sha256:...
	Level    string `json:"level"`    // "rescore" or "rerun"
	Replayer Packer `json:"replayer"` // the program that replayed the capsule, and its version
	Compared int    `json:"compared"` // the numbers the replay compared
	Diffs    int    `json:"diffs"`    // the numbers it did not reproduce
	OK       bool   `json:"ok"`       // the report's verdict: true when nothing differed and every rerun agreed; false when unreadable
	// Error says why the report could not be read; OK is false then.
	Error string `json:"error,omitempty"`
}

// Verdict is the report's outcome in a word or two: "ok", "differs", or
// "unreadable".
func (r ReportSummary) Verdict() string {
	switch {
	case r.Error != "":
		return "unreadable"
	case r.OK:
		return "ok"
	}
	return "differs"
}

// summarizeReport fetches the report desc names, checked, and summarizes
// it; a report that cannot be fetched or read says why, never ok.
func summarizeReport(ctx context.Context, path, digest string, desc ocispec.Descriptor) ReportSummary {
	s := ReportSummary{Digest: desc.Digest.String()}
	b, err := FetchReport(ctx, path, desc, PullOptions{Tag: digest})
	var rep ReplayReport
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Level, s.Replayer, s.Compared, s.Diffs, s.OK = rep.Level, rep.Replayer, rep.Compared, len(rep.Diffs), rep.OK
	return s
}

func summarizeRun(r ConfigRun) RunSummary {
	rec := r.Record
	rs := RunSummary{Name: r.Name}
	if rec == nil {
		rs.Status = "missing"
		return rs
	}
	rs.Label, rs.Status, rs.Simulated = rec.Label, rec.Status, rec.Simulated
	rs.Model, rs.Revision = rec.Model.ID, cmp.Or(rec.Model.ResolvedRevision, rec.Model.Revision)
	rs.ResolvedRevision = rec.Model.ResolvedRevision
	rs.LMEvalVersion, rs.LMEvalCommit, rs.LMEvalSource = rec.Harness.Version, rec.Harness.Commit, rec.Harness.Source
	if rec.Harness.Commit != "" {
		dirty := rec.Harness.Dirty
		rs.LMEvalDirty = &dirty
	}
	rs.Runner = rec.Runner.Kind
	rs.Seeds = rec.Seeds
	if rec.Image != nil {
		rs.Image = rec.Image.Ref
		if rec.Image.IndexDigest == "" && rec.Image.PlatformDigest != "" {
			rs.Image += " (" + rec.Image.PlatformDigest + ")"
		}
		rs.ImageDigest = cmp.Or(rec.Image.PlatformDigest, rec.Image.IndexDigest)
	}
	if env := rec.Env; env != nil {
		for _, g := range env.GPUs {
			rs.GPUs = append(rs.GPUs, g.Name)
		}
		rs.Driver, rs.CUDA, rs.Python = env.DriverVersion, env.CUDAVersion, env.PythonVersion
	}
	rs.Argv = rec.Argv
	return rs
}

// String is the inspection for people: the capsule, its runs, claims,
// attached reports and (when listed) files.
func (in *Inspection) String() string {
	var w strings.Builder
	fmt.Fprintf(&w, "capsule %s\n", in.Digest)
	if in.Simulated {
		fmt.Fprintln(&w, "  SIMULATED: some runs come from the simulated backend; no model was run for them")
	}
	if len(in.Unsupported) > 0 {
		fmt.Fprintf(&w, "  UNSUPPORTED: %s (packed with --allow-differs):\n", unsupported(in.Unsupported))
		for _, d := range in.Unsupported {
			fmt.Fprintf(&w, "    %s\n", d)
		}
	}
	fmt.Fprintf(&w, "  study    %s\n", in.Study)
	fmt.Fprintf(&w, "  format   %s, packed by %s %s", in.FormatVersion, in.Packer.Name, in.Packer.Version)
	if in.Created != "" {
		fmt.Fprintf(&w, ", created %s", in.Created)
	}
	fmt.Fprintf(&w, "\n  files    %d (%s; %s stored)\n", in.Files, FormatBytes(in.Bytes), FormatBytes(in.Stored))
	if !in.Tables {
		fmt.Fprintln(&w, "  tables   none: packed incomplete, a replay can check files but not numbers")
	}
	fmt.Fprintf(&w, "\nRuns (%d)\n", len(in.Runs))
	tw := tabwriter.NewWriter(&w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tSTATUS\tMODEL\tLM-EVAL\tPYTHON\tSEEDS\tRUNNER\tIMAGE\tGPU")
	for _, r := range in.Runs {
		model := r.Model
		if r.Revision != "" {
			model += "@" + short(r.Revision, 12)
			if r.ResolvedRevision == "" {
				model += " (not resolved)"
			}
		}
		lmEval := r.LMEvalVersion
		switch {
		case r.LMEvalDirty != nil && *r.LMEvalDirty:
			lmEval += " (" + short(r.LMEvalCommit, 10) + ", DIRTY: uncommitted changes)"
		case r.LMEvalDirty != nil:
			lmEval += " (" + short(r.LMEvalCommit, 10) + ", clean)"
		default:
			lmEval += " (commit unknown)"
		}
		seeds := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(r.Seeds)), ","), "[]")
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
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", quote.Text(r.Name), quote.Text(r.Status), quote.Text(model), quote.Text(lmEval), dash(quote.Text(r.Python)), dash(seeds),
			quote.Text(r.Runner), dash(quote.Text(short(r.Image, 60))), dash(quote.Text(strings.TrimSpace(gpu))))
	}
	tw.Flush()
	fmt.Fprintf(&w, "\nCommand lines, as packed (a rerun rebuilds them from study.yaml and refuses one that differs)\n")
	for _, r := range in.Runs {
		fmt.Fprintf(&w, "  %s: %s\n", quote.Text(r.Name), quote.Argv(r.Argv))
	}
	if len(in.Claims) > 0 {
		fmt.Fprintf(&w, "\nClaims (packed attribution)\n")
		tw = tabwriter.NewWriter(&w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  TASK\tMETRIC\tFILTER\tCARD\tFINAL\tUNEXPLAINED")
		for _, cl := range in.Claims {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%.4f\t%.4f\t%+.4f\n", cl.Task, cl.Metric, dash(cl.Filter), cl.Card, cl.Final, cl.Unexplained)
		}
		tw.Flush()
	}
	fmt.Fprintf(&w, "\nReplay reports: %d\n", len(in.Reports))
	for _, r := range in.Reports {
		if r.Error != "" {
			fmt.Fprintf(&w, "  %s  unreadable: %s\n", r.Digest, r.Error)
			continue
		}
		fmt.Fprintf(&w, "  %s  %s by %s %s: %d numbers compared, %d differ: %s\n", r.Digest, r.Level, r.Replayer.Name, r.Replayer.Version, r.Compared, r.Diffs, r.Verdict())
	}
	if len(in.FileList) > 0 {
		fmt.Fprintf(&w, "\nFiles\n")
		tw = tabwriter.NewWriter(&w, 0, 0, 2, ' ', tabwriter.AlignRight)
		for _, f := range in.FileList {
			fmt.Fprintf(tw, "  %s\t%s\t  %s\t%s\t\n", FormatBytes(f.Size), FormatBytes(f.Stored), short(f.Digest, 19), f.Path)
		}
		tw.Flush()
	}
	return w.String()
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
