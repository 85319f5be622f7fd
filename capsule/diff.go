package capsule

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
)

// Differences is what changed between two capsules: the study file, each
// run's settings and environment, and the scores.
type Differences struct {
	// A and B name the two capsules in the text view (what was opened) and
	// DigestA, DigestB are their manifests' digests. Diff compares configs
	// and leaves them empty; its caller knows what it opened.
	A, B             string `json:"-"`
	DigestA, DigestB string `json:"-"`

	StudyYAML string       `json:"study_yaml,omitempty"` // a unified diff
	Runs      []RunDiff    `json:"runs"`                 // the runs added, removed or changed, by run name; empty, never null, when none
	Scores    []ScoreDiff  `json:"scores"`               // the scores lm-eval reported (value or stderr) that differ in the packed re-scoring tables; empty, never null, when none
	Tables    []ReplayDiff `json:"tables"`               // attribution numbers that differ
	// Prompts lists, per run, the hashes lm-eval recorded of what the
	// prompts were made from that differ: "prompt set changed" (task_hashes
	// per task, chat_template_sha, system_instruction_sha). Only
	// DiffCapsules, which reads the results files, fills it in.
	Prompts []PromptChange `json:"prompt_set_changed"`
	Same    bool           `json:"same"` // whether nothing differs: study file, runs, scores, attribution numbers and prompt sets
}

// PromptChange is a prompt set that changed in one run: the run's
// results files in the two capsules record different hashes of what its
// prompts were made from.
type PromptChange struct {
	Run string `json:"run"` // the run's name
	harness.PromptSetChange
}

// RunDiff lists the changes of one run.
type RunDiff struct {
	Run     string   `json:"run"`               // the run's name
	Status  string   `json:"status"`            // "added", "removed", "changed"
	Changes []Change `json:"changes,omitempty"` // the fields of its record that differ, for a changed run
}

// Change is one field that differs.
type Change struct {
	Field string `json:"field"` // the record's field, dotted ("argv", "harness.commit", "environment.cuda_version"), or "package NAME" for an installed package's version
	A     string `json:"a"`     // its value in capsule A, as text ("" when absent)
	B     string `json:"b"`     // its value in capsule B, as text ("" when absent)
}

// ScoreDiff is one reported score that differs.
type ScoreDiff struct {
	Run    string `json:"run"`    // the run's name
	Task   string `json:"task"`   // the task (or group) of the score
	Metric string `json:"metric"` // the lm-eval metric
	Filter string `json:"filter"` // the lm-eval filter
	A      string `json:"a"`      // capsule A's score as lm-eval reported it, "VALUE ± STDERR" ("-" for one not there, "N/A" as lm-eval wrote it)
	B      string `json:"b"`      // capsule B's score, written as A
}

// Diff compares two capsules' configs.
func Diff(a, b *Config) *Differences {
	d := &Differences{Runs: []RunDiff{}, Scores: []ScoreDiff{}, Tables: []ReplayDiff{}, Prompts: []PromptChange{}}
	if a.StudyYAML != b.StudyYAML {
		d.StudyYAML = string(diff.Diff("a/study.yaml", []byte(a.StudyYAML), "b/study.yaml", []byte(b.StudyYAML)))
	}
	ra, rb := runsByName(a), runsByName(b)
	for _, name := range unionKeys(ra, rb) {
		x, inA := ra[name]
		y, inB := rb[name]
		switch {
		case !inB:
			d.Runs = append(d.Runs, RunDiff{Run: name, Status: "removed"})
		case !inA:
			d.Runs = append(d.Runs, RunDiff{Run: name, Status: "added"})
		default:
			if ch := recordChanges(x, y); len(ch) > 0 {
				d.Runs = append(d.Runs, RunDiff{Run: name, Status: "changed", Changes: ch})
			}
		}
	}
	sa, sb := scoresOf(a.Rescore), scoresOf(b.Rescore)
	for _, k := range unionKeys(sa, sb) {
		x, y := sa[k], sb[k]
		if x.Reported.Equal(y.Reported) && x.ReportedStderr.Equal(y.ReportedStderr) {
			continue
		}
		parts := strings.Split(k, "\x00")
		d.Scores = append(d.Scores, ScoreDiff{Run: parts[0], Task: parts[1], Metric: parts[2], Filter: parts[3],
			A: x.Reported.String() + " ± " + x.ReportedStderr.String(), B: y.Reported.String() + " ± " + y.ReportedStderr.String()})
	}
	if a.Attribution != nil && b.Attribution != nil {
		if _, diffs, err := compareJSON(a.Attribution, b.Attribution, "attribution"); err == nil {
			d.Tables = append(d.Tables, diffs...)
		}
	}
	d.Same = d.StudyYAML == "" && len(d.Runs) == 0 && len(d.Scores) == 0 && len(d.Tables) == 0
	return d
}

// DiffCapsules compares two capsules as Diff compares their configs, and
// their runs' prompt sets from the results files they hold: a run whose
// task_hashes (per task), chat_template_sha or system_instruction_sha
// differ asked its model other prompts. A results file that cannot be read
// is left out (verify says why); the error is a cancelled ctx.
func DiffCapsules(ctx context.Context, a, b *Capsule) (*Differences, error) {
	d := Diff(a.Config, b.Config)
	ra, rb := runResultsOf(ctx, a), runResultsOf(ctx, b)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, name := range unionKeys(ra, rb) {
		x, y := ra[name], rb[name]
		if x == nil || y == nil {
			continue
		}
		for _, ch := range harness.PromptSetChanges(x, y) {
			d.Prompts = append(d.Prompts, PromptChange{Run: name, PromptSetChange: ch})
		}
	}
	d.Same = d.Same && len(d.Prompts) == 0
	return d, nil
}

// runResultsOf is the results file of each run of a capsule (the first by
// path when a run holds several).
func runResultsOf(ctx context.Context, c *Capsule) map[string]*harness.Results {
	files, _ := c.readResults(ctx)
	sort.SliceStable(files, func(i, j int) bool { return files[i].file.Path < files[j].file.Path })
	m := map[string]*harness.Results{}
	for _, rf := range files {
		if rf.run != "" && m[rf.run] == nil {
			m[rf.run] = rf.res
		}
	}
	return m
}

// String renders the differences as text: the two capsules, then the
// study file's diff, each run's changed fields, the scores lm-eval reported
// and the attribution numbers that differ.
func (d *Differences) String() string {
	var b strings.Builder
	name := func(side, ref, digest string) {
		switch {
		case ref != "" && digest != "":
			fmt.Fprintf(&b, "%s: %s (%s)\n", side, ref, digest)
		case ref != "" || digest != "":
			fmt.Fprintf(&b, "%s: %s\n", side, ref+digest)
		}
	}
	name("a", d.A, d.DigestA)
	name("b", d.B, d.DigestB)
	if d.Same {
		if d.DigestA != "" && d.DigestA == d.DigestB {
			b.WriteString("the same capsule\n")
		} else {
			b.WriteString("no differences in the study, the runs' settings and environment, or the scores\n")
		}
		return b.String()
	}
	if d.StudyYAML != "" {
		b.WriteString("\nstudy.yaml\n" + d.StudyYAML)
	}
	if len(d.Runs) > 0 {
		b.WriteString("\nRuns\n")
		for _, r := range d.Runs {
			fmt.Fprintf(&b, "  %s: %s\n", r.Run, r.Status)
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			for _, c := range r.Changes {
				fmt.Fprintf(tw, "    %s\t%s\t→ %s\n", c.Field, orDash(c.A), orDash(c.B))
			}
			tw.Flush()
		}
	}
	if len(d.Scores) > 0 {
		b.WriteString("\nScores lm-eval reported\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  RUN\tTASK\tMETRIC\tFILTER\tA\tB")
		for _, s := range d.Scores {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", s.Run, s.Task, s.Metric, orDash(s.Filter), s.A, s.B)
		}
		tw.Flush()
	}
	if len(d.Prompts) > 0 {
		b.WriteString("\nPrompt set changed (the hashes lm-eval recorded of what the prompts were made from)\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  RUN\tTASK\tHASH\tA\tB")
		for _, p := range d.Prompts {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", p.Run, orDash(p.Task), p.Field, shortHash(p.A), shortHash(p.B))
		}
		tw.Flush()
	}
	if len(d.Tables) > 0 {
		b.WriteString("\nAttribution\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, t := range d.Tables {
			fmt.Fprintf(tw, "  %s\t%s\t→ %s\n", t.Where, t.Packed, t.Replayed)
		}
		tw.Flush()
	}
	return b.String()
}

// shortHash shows a hash by its first 12 digits, none as "-".
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return orDash(h)
}

// orDash shows an empty value as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runsByName(c *Config) map[string]*harness.RunRecord {
	m := map[string]*harness.RunRecord{}
	for _, r := range c.Runs {
		m[r.Name] = r.Record
	}
	return m
}

func unionKeys[V any](a, b map[string]V) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// scoresOf keys a re-scoring's reported numbers by run, task, metric, filter.
func scoresOf(r *analysis.RescoreReport) map[string]analysis.Check {
	m := map[string]analysis.Check{}
	if r == nil {
		return m
	}
	for _, run := range r.Runs {
		name := runName(run.Path)
		for _, c := range run.Checks {
			if c.Level == analysis.LevelRecord {
				continue // a setting lm-eval recorded, not a score
			}
			m[name+"\x00"+c.Task+"\x00"+c.Metric+"\x00"+c.Filter] = c
		}
	}
	return m
}

// runName is the run directory's name in a study-relative path
// (runs/<name>/output/...).
func runName(p string) string {
	parts := strings.Split(p, "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "runs" {
			return parts[i+1]
		}
	}
	return p
}

// recordChanges lists what differs between two run records: settings,
// argv, harness, image, model, seeds, environment.
func recordChanges(a, b *harness.RunRecord) []Change {
	var out []Change
	add := func(field, x, y string) {
		if x != y {
			out = append(out, Change{Field: field, A: x, B: y})
		}
	}
	add("status", a.Status, b.Status)
	add("argv", strings.Join(a.Argv, " "), strings.Join(b.Argv, " "))
	add("harness.version", a.Harness.Version, b.Harness.Version)
	add("harness.commit", a.Harness.Commit, b.Harness.Commit)
	add("harness.dirty", fmt.Sprint(a.Harness.Dirty), fmt.Sprint(b.Harness.Dirty))
	img := func(r *harness.RunRecord) (string, string) {
		if r.Image == nil {
			return "", ""
		}
		return r.Image.IndexDigest, r.Image.PlatformDigest
	}
	ia, pa := img(a)
	ib, pb := img(b)
	add("image.index_digest", ia, ib)
	add("image.platform_digest", pa, pb)
	add("model.revision", a.Model.Revision, b.Model.Revision)
	add("model.resolved_revision", a.Model.ResolvedRevision, b.Model.ResolvedRevision)
	add("simulated", fmt.Sprint(a.Simulated), fmt.Sprint(b.Simulated))
	env := func(r *harness.RunRecord) *harness.Environment {
		if r.Env == nil {
			return &harness.Environment{}
		}
		return r.Env
	}
	ea, eb := env(a), env(b)
	add("environment.driver_version", ea.DriverVersion, eb.DriverVersion)
	add("environment.cuda_version", ea.CUDAVersion, eb.CUDAVersion)
	add("environment.python_version", ea.PythonVersion, eb.PythonVersion)
	add("environment.lm_eval_version", ea.LMEvalVersion, eb.LMEvalVersion)
	gpus := func(e *harness.Environment) string {
		var names []string
		for _, g := range e.GPUs {
			names = append(names, g.Name)
		}
		return strings.Join(names, ", ")
	}
	add("environment.gpus", gpus(ea), gpus(eb))
	pkgs := func(e *harness.Environment) map[string]string {
		m := map[string]string{}
		for _, p := range e.Packages {
			m[p.Name] = p.Version
		}
		return m
	}
	pa2, pb2 := pkgs(ea), pkgs(eb)
	for _, name := range unionKeys(pa2, pb2) {
		add("package "+name, pa2[name], pb2[name])
	}
	return out
}
