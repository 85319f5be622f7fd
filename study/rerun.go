package study

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
)

// RerunComparison compares one re-executed run with its packed original:
// score by score, document by document, and the machine each ran on.
type RerunComparison struct {
	Run    string      `json:"run"`             // the run's name in the study's plan
	Status string      `json:"status"`          // of the rerun
	Image  string      `json:"image,omitempty"` // the container image the packed run's record names; left out for a run outside a container
	Tasks  []RerunTask `json:"tasks"`           // one per task, metric and filter both runs have; null when the rerun failed or could not be compared
	// Documents compares the runs document by document, one entry per
	// task: every response, filtered response and per-document value.
	Documents []RerunDocuments `json:"documents,omitempty"`
	// Unpaired names the task, metric and filter rows only one of the two
	// runs has.
	Unpaired []string `json:"unpaired,omitempty"`
	// Environment lists every difference between the environment the
	// packed run recorded and the rerun's; a field one side could not
	// read is listed as unknown. It does not decide OK.
	Environment []EnvDiff `json:"environment,omitempty"`
	// Tolerated counts the documents whose differences the rerun let pass
	// (RerunOptions.TolerateGenerations).
	Tolerated int    `json:"tolerated,omitempty"`
	Error     string `json:"error,omitempty"` // why the rerun failed or could not be compared with the packed run; left out when it was
	// OK is true when every score is within its CI and the log-likelihoods
	// within the tolerance, no document differs (but for tolerated
	// differences) and no row is unpaired.
	OK bool `json:"ok"`
}

// RerunTask compares one task, metric and filter of a rerun with the
// packed run: the score with the paired CI of the difference, and how many
// documents are identical under the filter.
type RerunTask struct {
	Task   string  `json:"task"`    // the task, or a group whose members' documents are joined
	Metric string  `json:"metric"`  // the lm-eval metric
	Filter string  `json:"filter"`  // the lm-eval filter
	N      int     `json:"n"`       // the documents both runs logged, on which the scores are compared
	Packed float64 `json:"packed"`  // the packed run's score on those documents, lm-eval's fraction for a [0, 1] metric
	Rerun  float64 `json:"rerun"`   // the rerun's score on those documents, lm-eval's fraction for a [0, 1] metric
	Delta  float64 `json:"delta"`   // Rerun − Packed
	CILow  float64 `json:"ci_low"`  // the lower end of Delta's paired bootstrap CI (null from one document)
	CIHigh float64 `json:"ci_high"` // the upper end of Delta's paired bootstrap CI (null from one document)
	// WithinCI is true when the paired CI of the difference holds 0.
	WithinCI bool `json:"within_ci"`
	// GenerationsIdentical counts the documents of the task that are
	// identical in both runs under the filter (responses, filtered
	// responses, values), GenerationsDiffer those that are not or that one
	// run lacks (RerunDocuments has each difference); MaxLLDiff is the
	// largest log-likelihood difference of the task, LLWithinTolerance
	// whether it is under the tolerance.
	GenerationsIdentical int     `json:"generations_identical"`
	GenerationsDiffer    int     `json:"generations_differ"`  // the task's documents that differ under the filter or that one run lacks
	MaxLLDiff            float64 `json:"max_ll_diff"`         // the largest absolute log-likelihood difference of the task's documents, in nats (0 for a generative task)
	LLWithinTolerance    bool    `json:"ll_within_tolerance"` // whether MaxLLDiff is at most the tolerance (1e-4 by default)
}

// RerunDocuments compares one task's documents in the packed run and the
// rerun.
type RerunDocuments struct {
	Task string `json:"task"` // the task whose samples are compared
	// Documents counts the doc_ids either run has; Identical those the two
	// runs logged identically, Differ the others.
	Documents int `json:"documents"`
	Identical int `json:"identical"` // the doc_ids the two runs logged identically
	Differ    int `json:"differ"`    // the doc_ids that differ in some way or that one run lacks
	// Kinds counts the differing documents by kind of difference
	// (DiffMissing, ...); a document can count under several.
	Kinds map[string]int `json:"kinds,omitempty"`
	// MaxLLDiff is the largest log-likelihood difference of the task,
	// within the tolerance or not.
	MaxLLDiff float64 `json:"max_ll_diff"`
	// Diffs is every difference, by doc_id, filter and field.
	Diffs []DocDiff `json:"diffs,omitempty"`
}

// The kinds of DocDiff.
const (
	// DiffMissing: one run has the document (or the document under a
	// filter), the other not.
	DiffMissing = "missing"
	// DiffInput: the document, prompt or target hash differs: the runs
	// did not ask the same question.
	DiffInput = "input"
	// DiffResponse: a response's text differs (a generation, or a
	// log-likelihood's is_greedy flag).
	DiffResponse = "response"
	// DiffLoglikelihood: a log-likelihood differs by more than the
	// tolerance.
	DiffLoglikelihood = "loglikelihood"
	// DiffFiltered: a filtered response (the extracted answer) differs.
	DiffFiltered = "filtered"
	// DiffValue: a per-document metric value differs.
	DiffValue = "value"
)

// DocDiff is one difference of one document between the packed run and the
// rerun.
type DocDiff struct {
	DocID  int    `json:"doc_id"`           // the document's doc_id
	Filter string `json:"filter,omitempty"` // "" for the responses, which every filter shares
	Kind   string `json:"kind"`             // the kind of difference: "missing", "input", "response", "loglikelihood", "filtered" or "value"
	// Field names what differs: "resps[0][0]", "filtered_resps[0]", a
	// metric, "prompt_hash", "document".
	Field string `json:"field"`
	// Packed and Rerun are the two values; for text, the part around the
	// first difference, which begins at byte Offset of the whole text
	// (cut with "…").
	Packed string `json:"packed"`
	Rerun  string `json:"rerun"`            // the rerun's value, shown as Packed is
	Offset int    `json:"offset,omitempty"` // the byte offset in the whole text at which the shown part begins; left out when 0
	// Tolerated is true when RerunOptions.TolerateGenerations let it pass.
	Tolerated bool `json:"tolerated,omitempty"`
}

// Tolerable reports whether a difference of this kind follows from a
// generation that is not bit-reproducible (vLLM, sampled decoding): the
// response text, what the filters extract from it, and its values.
// Missing documents, other inputs and log-likelihoods past the tolerance
// never are.
func (d DocDiff) Tolerable() bool {
	return d.Kind == DiffResponse || d.Kind == DiffFiltered || d.Kind == DiffValue
}

// RerunOptions configures Rerun. Runner is required.
type RerunOptions struct {
	Runner     harness.Runner
	RunnerKind string
	// Command is how the runner starts lm-eval (default DefaultCommand,
	// lm_eval on the PATH of the machine or image that runs it). The
	// command a packed record holds is never run: each run's command line
	// is rebuilt from the study.
	Command []string
	// Confirm, when set, is shown every command line before anything runs;
	// an error from it stops the rerun before it starts and is returned.
	Confirm func([]RerunCommand) error
	// Tolerance for log-likelihoods (default 1e-4: GPU kernels and batch
	// sizes move them in the last digits).
	Tolerance float64
	// TolerateGenerations lets documents whose responses, filtered
	// responses or values differ pass, leaving the verdict to the scores
	// (their CIs) and the log-likelihoods (the tolerance): vLLM and
	// sampled decoding are not bit-reproducible. The differences are still
	// listed, marked tolerated. By default any difference fails the run.
	TolerateGenerations bool
	// Seed of the paired bootstraps.
	Seed   uint64
	Events func(RunEvent)
}

// RerunCommand is one run a rerun executes: the run, and the lm-eval
// command line rebuilt from the study's settings for the pinned version.
type RerunCommand struct {
	Run  string
	Argv []string
}

// Rerun re-executes every run of an unpacked capsule into workspace (a new
// directory: workspace/runs/<name>) and compares each with the packed run.
// Each run's command line is rebuilt from study.yaml's settings for the
// pinned lm-eval, never taken from the packed record: a record that does
// not match what the study plans (CheckRecord) stops the rerun before
// anything runs, with an error wrapping ErrMismatch.
func Rerun(ctx context.Context, s *Study, workspace string, opts RerunOptions) ([]RerunComparison, error) {
	if opts.Runner == nil {
		return nil, fmt.Errorf("no runner")
	}
	tol := opts.Tolerance
	if tol == 0 {
		tol = 1e-4
	}
	type rerun struct {
		pr   PlannedRun
		orig *harness.RunRecord
		dir  string
		argv []string
	}
	var plan []rerun
	var cmds []RerunCommand
	for _, pr := range s.Plan() {
		orig, err := harness.ReadRecord(s.RunDir(pr))
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", pr.Name, err)
		}
		if diffs := s.CheckRecord(pr, orig); len(diffs) > 0 {
			return nil, fmt.Errorf("%w: run %s: %s", ErrMismatch, pr.Name, strings.Join(diffs, "; "))
		}
		dir := filepath.Join(workspace, "runs", pr.Name)
		argv, err := s.Argv(pr, opts.Command, dir+"/"+harness.OutputDir)
		if err != nil {
			return nil, err
		}
		plan = append(plan, rerun{pr, orig, dir, argv})
		cmds = append(cmds, RerunCommand{Run: pr.Name, Argv: argv})
	}
	if opts.Confirm != nil {
		if err := opts.Confirm(cmds); err != nil {
			return nil, err
		}
	}
	var out []RerunComparison
	for _, r := range plan {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		pr, orig, dir := r.pr, r.orig, r.dir
		packedDir := s.RunDir(pr)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return out, err
		}
		if pr.Spec.IncludePath != "" {
			// The tasks the packed run used, frozen beside its output.
			if err := freezeIncludes(filepath.Join(packedDir, harness.IncludeDir), orig.Includes, dir); err != nil {
				return out, fmt.Errorf("run %s: its frozen include_path: %w", pr.Name, err)
			}
		}
		rec := &harness.RunRecord{Name: pr.Name, Label: pr.Label, Status: harness.StatusPlanned, Spec: pr.Spec, Argv: r.argv, Includes: orig.Includes,
			Harness: harness.HarnessInfo{Version: s.Harness.Version, Commit: s.Harness.Commit}, Model: orig.Model, Seeds: pr.Spec.Seed,
			Runner: harness.RunnerInfo{Kind: opts.RunnerKind}, Simulated: orig.Simulated}
		if err := harness.WriteRecord(dir, rec); err != nil {
			return out, err
		}
		if opts.Events != nil {
			opts.Events(RunEvent{Run: pr, Status: harness.StatusRunning})
		}
		rc := RerunComparison{Run: pr.Name}
		if orig.Image != nil {
			rc.Image = orig.Image.Ref
		}
		runErr := opts.Runner.Run(ctx, dir, func(p harness.Progress) {
			if opts.Events != nil {
				opts.Events(RunEvent{Run: pr, Status: harness.StatusRunning, Progress: p})
			}
		})
		after, err := harness.ReadRecord(dir)
		if err == nil {
			rc.Status = after.Status
		}
		if runErr != nil || rc.Status != harness.StatusDone {
			rc.Error = fmt.Sprint(runErr)
			if after != nil && after.Error != "" {
				rc.Error = after.Error
			}
			out = append(out, rc)
			if err := ctx.Err(); err != nil {
				return out, err // interrupted: no rerun to compare
			}
			continue
		}
		rc.Environment = DiffEnvironments(orig, after)
		if err := compareRuns(ctx, &rc, packedDir, dir, tol, opts); err != nil {
			rc.Error = err.Error()
			rc.OK = false
		}
		if opts.Events != nil {
			opts.Events(RunEvent{Run: pr, Status: rc.Status})
		}
		out = append(out, rc)
	}
	return out, nil
}

// compareRuns pairs the packed and the re-executed run score by score and
// document by document, and sets rc's tasks, documents and verdict.
func compareRuns(ctx context.Context, rc *RerunComparison, packedDir, rerunDir string, tol float64, opts RerunOptions) error {
	load := func(dir string) (*analysis.Scores, error) {
		run, err := harness.Read(dir)
		if err != nil {
			return nil, err
		}
		return analysis.Load(ctx, run, analysis.RescoreOptions{})
	}
	a, err := load(packedDir)
	if err != nil {
		return err
	}
	b, err := load(rerunDir)
	if err != nil {
		return err
	}
	// Every task's documents first: a document one run lacks is named
	// there, and the scores are compared on those both have.
	docs, err := compareDocuments(a.Run.Output, b.Run.Output, tol)
	if err != nil {
		return err
	}
	byTask := map[string]*RerunDocuments{}
	for i := range docs {
		d := &docs[i]
		byTask[d.Task] = d
		if opts.TolerateGenerations {
			for j := range d.Diffs {
				d.Diffs[j].Tolerated = d.Diffs[j].Tolerable()
			}
		}
	}
	rc.Documents = docs
	cs, err := analysis.Compare(a, b, analysis.CompareOptions{Seed: opts.Seed, PromptDiffs: -1, Intersect: true})
	if err != nil {
		return err
	}
	rc.Unpaired = cs.Skipped
	for _, c := range cs.Comparisons {
		t := RerunTask{Task: c.Task, Metric: c.Metric, Filter: c.Filter, N: c.N, Packed: c.A, Rerun: c.B, Delta: c.Delta, CILow: c.CILow, CIHigh: c.CIHigh}
		t.WithinCI = (c.CILow <= 0 && 0 <= c.CIHigh) || c.Delta == 0
		if d := byTask[c.Task]; d != nil {
			t.GenerationsIdentical, t.GenerationsDiffer = d.countUnder(c.Filter)
			t.MaxLLDiff = d.MaxLLDiff
		}
		t.LLWithinTolerance = t.MaxLLDiff <= tol
		rc.Tasks = append(rc.Tasks, t)
	}
	rc.OK = len(rc.Tasks) > 0 && len(rc.Unpaired) == 0
	for _, t := range rc.Tasks {
		rc.OK = rc.OK && t.WithinCI && t.LLWithinTolerance
	}
	for _, d := range docs {
		tolerated := map[int]bool{}
		for _, x := range d.Diffs {
			if !x.Tolerated {
				rc.OK = false
				tolerated[x.DocID] = false
			} else if _, seen := tolerated[x.DocID]; !seen {
				tolerated[x.DocID] = true
			}
		}
		for _, ok := range tolerated {
			if ok {
				rc.Tolerated++
			}
		}
	}
	return nil
}

// countUnder counts the documents identical and differing under one filter:
// a difference of the responses (which every filter shares) counts under
// each.
func (d *RerunDocuments) countUnder(filter string) (same, differ int) {
	ids := map[int]bool{}
	for _, x := range d.Diffs {
		if x.Filter == "" || x.Filter == filter {
			ids[x.DocID] = true
		}
	}
	return d.Documents - len(ids), len(ids)
}

// docLine is what a samples file logged for one document, under each filter.
type docLine struct {
	resps    harness.Value
	hashes   [3]string // doc, prompt, target
	filtered map[string]harness.Value
	values   map[string][]harness.Field
}

var hashFields = [3]string{"doc_hash", "prompt_hash", "target_hash"}

// readDocs reads a samples file into its documents by doc_id.
func readDocs(f harness.SampleFile) (map[int]*docLine, error) {
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := map[int]*docLine{}
	for {
		s, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		d := out[s.DocID]
		if d == nil {
			d = &docLine{resps: s.Resps, hashes: [3]string{s.DocHash, s.PromptHash, s.TargetHash},
				filtered: map[string]harness.Value{}, values: map[string][]harness.Field{}}
			out[s.DocID] = d
		}
		if _, dup := d.filtered[s.Filter]; !dup {
			d.filtered[s.Filter] = s.Filtered
			d.values[s.Filter] = append([]harness.Field(nil), s.Values...)
		}
	}
}

// compareDocuments compares every task's samples in two outputs, document
// by document; a task only one output has samples for is all missing in
// the other.
func compareDocuments(a, b *harness.Output, tol float64) ([]RerunDocuments, error) {
	files := func(o *harness.Output) map[string]harness.SampleFile {
		m := map[string]harness.SampleFile{}
		for _, f := range o.Samples {
			m[f.Task] = f
		}
		return m
	}
	fa, fb := files(a), files(b)
	var tasks []string
	for t := range fa {
		tasks = append(tasks, t)
	}
	for t := range fb {
		if _, ok := fa[t]; !ok {
			tasks = append(tasks, t)
		}
	}
	sort.Strings(tasks)
	var out []RerunDocuments
	for _, task := range tasks {
		da, db := map[int]*docLine{}, map[int]*docLine{}
		var err error
		if f, ok := fa[task]; ok {
			if da, err = readDocs(f); err != nil {
				return nil, err
			}
		}
		if f, ok := fb[task]; ok {
			if db, err = readDocs(f); err != nil {
				return nil, err
			}
		}
		ll := loglikelihoodTask(a.Results, task) || loglikelihoodTask(b.Results, task)
		out = append(out, compareTaskDocs(task, da, db, ll, tol))
	}
	return out, nil
}

// loglikelihoodTask reports whether a task's responses are log-likelihoods
// (its output_type in the results file's configs is not generate_until).
// Without a configuration, the shape of the responses decides
// (compareTaskDocs).
func loglikelihoodTask(r *harness.Results, task string) bool {
	if r == nil {
		return false
	}
	cfgs, _ := r.Doc.Get("configs")
	cfg, _ := cfgs.Get(task)
	ot, ok := cfg.Get("output_type")
	return ok && ot.Kind == harness.String && ot.Str != "generate_until"
}

// llShaped reports whether responses have the shape of log-likelihood
// requests (requests × repeats × [ll, is_greedy]), as lm-eval logs them.
func llShaped(v harness.Value) bool {
	return v.Kind == harness.List && len(v.List) > 0 && v.List[0].Kind == harness.List &&
		len(v.List[0].List) > 0 && v.List[0].List[0].Kind == harness.List
}

func compareTaskDocs(task string, da, db map[int]*docLine, ll bool, tol float64) RerunDocuments {
	rd := RerunDocuments{Task: task, Kinds: map[string]int{}}
	ids := map[int]bool{}
	for id := range da {
		ids[id] = true
	}
	for id := range db {
		ids[id] = true
	}
	sorted := make([]int, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Ints(sorted)
	for _, id := range sorted {
		c := docComparer{id: id, tol: tol}
		x, y := da[id], db[id]
		switch {
		case x == nil:
			c.add("", DiffMissing, "document", "absent", "present", 0)
		case y == nil:
			c.add("", DiffMissing, "document", "present", "absent", 0)
		default:
			c.ll = ll || llShaped(x.resps) || llShaped(y.resps)
			c.compare(x, y)
		}
		rd.Documents++
		rd.MaxLLDiff = math.Max(rd.MaxLLDiff, c.maxLL)
		if len(c.diffs) == 0 {
			rd.Identical++
			continue
		}
		rd.Differ++
		kinds := map[string]bool{}
		for _, d := range c.diffs {
			kinds[d.Kind] = true
		}
		for k := range kinds {
			rd.Kinds[k]++
		}
		rd.Diffs = append(rd.Diffs, c.diffs...)
	}
	if len(rd.Kinds) == 0 {
		rd.Kinds = nil
	}
	return rd
}

// docComparer compares one document of two runs.
type docComparer struct {
	id    int
	ll    bool // numeric leaves are log-likelihoods, compared within tol
	tol   float64
	maxLL float64
	diffs []DocDiff
}

func (c *docComparer) add(filter, kind, field, packed, rerun string, offset int) {
	c.diffs = append(c.diffs, DocDiff{DocID: c.id, Filter: filter, Kind: kind, Field: field, Packed: packed, Rerun: rerun, Offset: offset})
}

func (c *docComparer) compare(x, y *docLine) {
	for i, f := range hashFields {
		if x.hashes[i] != y.hashes[i] {
			c.add("", DiffInput, f, x.hashes[i], y.hashes[i], 0)
		}
	}
	c.value("", DiffResponse, "resps", x.resps, y.resps)
	for _, f := range unionKeys(x.filtered, y.filtered) {
		fx, okX := x.filtered[f]
		fy, okY := y.filtered[f]
		if !okX || !okY {
			c.add(f, DiffMissing, "filter "+f, presence(okX), presence(okY), 0)
			continue
		}
		c.value(f, DiffFiltered, "filtered_resps", fx, fy)
		c.fields(f, x.values[f], y.values[f])
	}
}

// fields compares the per-document values logged under one filter.
func (c *docComparer) fields(filter string, x, y []harness.Field) {
	find := func(fs []harness.Field, name string) (harness.Value, bool) {
		for _, f := range fs {
			if f.Name == name {
				return f.Value, true
			}
		}
		return harness.Value{}, false
	}
	seen := map[string]bool{}
	var names []string
	for _, fs := range [][]harness.Field{x, y} {
		for _, f := range fs {
			if !seen[f.Name] {
				seen[f.Name] = true
				names = append(names, f.Name)
			}
		}
	}
	for _, name := range names {
		vx, okX := find(x, name)
		vy, okY := find(y, name)
		if !okX || !okY {
			c.add(filter, DiffValue, name, presence(okX), presence(okY), 0)
			continue
		}
		c.value(filter, DiffValue, name, vx, vy)
	}
}

// value compares two values leaf by leaf and records the first difference
// (a whole value is one field of the document: the rest of it would only
// repeat that it differs).
func (c *docComparer) value(filter, kind, field string, x, y harness.Value) {
	lx, ly := leafPaths(x, field), leafPaths(y, field)
	if len(lx) != len(ly) {
		c.add(filter, kind, field, clip(x.String()), clip(y.String()), 0)
		return
	}
	recorded := false
	for i := range lx {
		if lx[i].path != ly[i].path {
			if !recorded {
				c.add(filter, kind, field, clip(x.String()), clip(y.String()), 0)
				recorded = true
			}
			continue
		}
		a, b := lx[i].text, ly[i].text
		if c.ll && lx[i].kind != harness.Bool && ly[i].kind != harness.Bool {
			p, errA := parseLL(a)
			q, errB := parseLL(b)
			if errA == nil && errB == nil {
				d := math.Abs(p - q)
				if math.IsNaN(p) && math.IsNaN(q) {
					d = 0
				} else if math.IsNaN(d) {
					d = math.Inf(1)
				}
				c.maxLL = math.Max(c.maxLL, d)
				if d > c.tol && !recorded {
					k := kind
					if kind == DiffResponse || kind == DiffFiltered {
						k = DiffLoglikelihood
					}
					c.add(filter, k, lx[i].path, a, b, 0)
					recorded = true
				}
				continue
			}
		}
		if (a != b || lx[i].kind != ly[i].kind) && !recorded {
			// A string "1.0" and a number 1.0 are not the same value.
			pa, pb, off := excerpt(a, b)
			c.add(filter, kind, lx[i].path, pa, pb, off)
			recorded = true
		}
	}
}

type leaf struct {
	path, text string
	kind       harness.Kind
}

// leafPaths flattens a value to its leaves, each named by its path
// ("resps[0][0]"); a leaf's text is as lm-eval stringifies it, a number's
// its repr.
func leafPaths(v harness.Value, path string) []leaf {
	switch v.Kind {
	case harness.List:
		var out []leaf
		for i, e := range v.List {
			out = append(out, leafPaths(e, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case harness.Object:
		var out []leaf
		for i, k := range v.Keys {
			out = append(out, leafPaths(v.Vals[i], path+"."+k)...)
		}
		return out
	case harness.Null:
		return []leaf{{path, "null", v.Kind}}
	}
	t, _ := v.Text()
	return []leaf{{path, t, v.Kind}}
}

func presence(ok bool) string {
	if ok {
		return "present"
	}
	return "absent"
}

func unionKeys(a, b map[string]harness.Value) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// excerptBefore and excerptAfter bound the text kept around a difference.
const (
	excerptBefore = 40
	excerptAfter  = 160
)

// excerpt cuts two texts to the part around their first difference, and
// returns where in the texts it begins.
func excerpt(a, b string) (string, string, int) {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	// Back to the start of the character the difference falls in.
	for i > 0 && i < len(a) && !utf8.RuneStart(a[i]) {
		i--
	}
	start := max(0, i-excerptBefore)
	for start > 0 && !utf8.RuneStart(a[start]) {
		start--
	}
	cut := func(s string) string {
		end := min(len(s), i+excerptAfter)
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out := s[start:end]
		if start > 0 {
			out = "…" + out
		}
		if end < len(s) {
			out += "…"
		}
		return out
	}
	return cut(a), cut(b), i
}

// clip cuts a long value for a difference that is not one of text.
func clip(s string) string {
	if len(s) <= excerptBefore+excerptAfter {
		return s
	}
	end := excerptBefore + excerptAfter
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	return s[:end] + "…"
}

// parseLL reads a log-likelihood leaf (a float's repr); generated text and
// booleans are not numbers.
func parseLL(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
