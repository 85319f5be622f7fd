package analysis

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/evalcapsule/evalcapsule/harness"
)

// CompareOptions configures Compare. The zero value works.
type CompareOptions struct {
	// Resamples of the paired bootstrap; 0 means 10,000.
	Resamples int
	// Level of the confidence intervals; 0 means 0.95.
	Level float64
	// Seed of the bootstrap.
	Seed uint64
	// Intersect compares the documents both runs scored when their sets
	// differ (a --limit run against a full one) instead of refusing.
	Intersect bool
	// PromptDiffs is how many changed prompts to show per task; 0 means 3,
	// negative none.
	PromptDiffs int
	// Groups also compares each group both results files have (mmlu, its
	// categories) over its members' documents joined, as Lookup joins them.
	Groups bool
	// Unpaired also compares, from the two results files, every score that
	// is not compared document by document because one run has no samples
	// of it (a results-only folder): value against value with lm-eval's
	// stderrs, no paired statistics (Comparison.Unpaired says so).
	Unpaired bool
}

func (o CompareOptions) resamples() int {
	if o.Resamples > 0 {
		return o.Resamples
	}
	return DefaultResamples
}

// DefaultLevel is the level of confidence intervals when none is given.
const DefaultLevel = 0.95

func (o CompareOptions) level() float64 {
	if o.Level > 0 {
		return o.Level
	}
	return DefaultLevel
}

// Comparison is the paired, question-by-question comparison of one task,
// metric and filter between run A and run B.
type Comparison struct {
	// Task is the task compared, or the group whose members' documents are
	// joined (Groups).
	Task string `json:"task"`
	// Metric is the lm-eval metric compared ("exact_match", "acc").
	Metric string `json:"metric"`
	// Filter is the lm-eval filter of the metric ("strict-match", "none").
	Filter string `json:"filter"`
	// N is the documents compared: those both runs logged (doc_id and
	// doc_hash equal); 0 for an unpaired comparison.
	N int `json:"n"`
	// NA and NB are the documents each run's score is over: the logged ones
	// (paired), or n-samples of the results file (unpaired; 0 unknown).
	NA int     `json:"n_a"`
	NB int     `json:"n_b"` // run B's documents, as NA is run A's
	A  float64 `json:"a"`   // run A's score: the mean over the N paired documents, or the results file's value when unpaired (lm-eval's fraction for a [0, 1] metric)
	B  float64 `json:"b"`   // run B's score, as A is run A's
	// Scale is the metric's range and unit (ScaleOf); the intervals of
	// Delta are clipped to the range of a difference (Scale.Diff),
	// PairedStderr is not. The zero Scale means MetricScale(Metric).
	Scale Scale `json:"scale"`
	// Unpaired is why the comparison is not document by document ("from
	// results file, no samples: no paired statistics"); empty when paired.
	Unpaired string `json:"unpaired,omitempty"`
	// Unavailable names the statistics that could not be computed (null in
	// JSON) and why: mcnemar_p "not 0/1", paired_stderr "1 document", ...
	Unavailable []Unavailable `json:"unavailable,omitempty"`
	// Delta is B − A; PairedStderr the sample std of the per-doc
	// differences over √n; CILow/CIHigh the paired bootstrap CI of Delta.
	Delta        float64 `json:"delta"`
	PairedStderr float64 `json:"paired_stderr"` // the sample std of the per-document differences over √n (null when unpaired or from one document)
	CILow        float64 `json:"ci_low"`        // the lower end of Delta's paired bootstrap CI (null when unpaired or from one document)
	CIHigh       float64 `json:"ci_high"`       // the upper end of Delta's paired bootstrap CI (null when unpaired or from one document)
	// McNemarP is the exact two-sided binomial test on the discordant
	// documents (0/1 metrics only; NaN otherwise, named in Unavailable).
	McNemarP float64 `json:"mcnemar_p"`
	// AOnly counts documents right in A only, BOnly in B only.
	AOnly   int `json:"a_only"`
	BOnly   int `json:"b_only"`  // documents right (score above 0) in B only; 0 when unpaired
	Both    int `json:"both"`    // documents right (score above 0) in both runs; 0 when unpaired
	Neither int `json:"neither"` // documents right in neither run (score 0 or below in both); 0 when unpaired
	// The unpaired CI, for contrast: what the same delta looks like when
	// the pairing is ignored.
	UnpairedCILow  float64 `json:"unpaired_ci_low"`
	UnpairedCIHigh float64 `json:"unpaired_ci_high"` // the upper end of that unpaired CI, as UnpairedCILow is the lower (null when a stderr is unknown or from one document)
	// MDE is the minimum detectable effect at 80 % power for this n and
	// correlation.
	MDE float64 `json:"mde"`
	// PromptsChanged counts documents whose prompt_hash differs.
	PromptsChanged int `json:"prompts_changed"`

	// PromptDiffs shows the first changed prompts.
	PromptDiffs []PromptDiff `json:"-"`
}

// PromptDiff is a readable diff of one document's prompt between runs.
type PromptDiff struct {
	DocID int
	Diff  string
}

// Comparisons is the result of Compare.
type Comparisons struct {
	A, B        string       `json:"-"`           // the runs' names
	Comparisons []Comparison `json:"comparisons"` // one per task, metric and filter both runs have: paired ones first, then groups, then unpaired
	// PromptSets are the hashes lm-eval recorded of what each run's
	// prompts were made from that differ between the runs ("prompt set
	// changed"): task_hashes per task, chat_template_sha,
	// system_instruction_sha. Never nil.
	PromptSets []harness.PromptSetChange `json:"prompt_set_changed"`
	// Skipped names the tasks only one run has.
	Skipped []string `json:"-"`
	// Trimmed names the series of either run whose samples log fewer
	// documents than lm-eval scored: their comparison is over the logged
	// documents only. Never nil.
	Trimmed []Trimmed `json:"trimmed_samples"`
}

// scale is the comparison's scale, the metric's by name when unset.
func (c Comparison) scale() Scale {
	if c.Scale.set() {
		return c.Scale
	}
	return MetricScale(c.Metric)
}

// unavailable is why a statistic is missing, "" when it is there.
func (c Comparison) unavailable(stat string) string {
	for _, u := range c.Unavailable {
		if u.Method == stat {
			return u.Why
		}
	}
	return ""
}

// The statistics of a comparison that Unavailable names.
const (
	statPairedCI     = "paired_ci"
	statPairedStderr = "paired_stderr"
	statUnpairedCI   = "unpaired_ci"
	statMcNemar      = "mcnemar_p"
	statFlips        = "flips"
	statMDE          = "mde"
)

// whyUnpaired is what an unpaired comparison says of itself.
const whyUnpaired = "from results file, no samples: no paired statistics"

// Compare pairs the documents of two runs, task by task, and compares every
// metric and filter they share. Documents are paired by doc_id and must have
// the same doc_hash; runs whose documents differ are refused (or compared on
// their common documents with Intersect).
func Compare(a, b *Scores, opts CompareOptions) (*Comparisons, error) {
	out := &Comparisons{A: a.Run.Name, B: b.Run.Name,
		PromptSets: harness.PromptSetChanges(a.Run.Output.Results, b.Run.Output.Results),
		Trimmed:    append(append([]Trimmed{}, a.Trimmed...), b.Trimmed...)}
	done := map[[3]string]bool{}
	for _, sa := range a.Series {
		sb, ok := b.Find(sa.Task, sa.Metric, sa.Filter)
		if !ok {
			continue
		}
		c, err := CompareSeries(sa, sb, opts)
		if err != nil {
			return nil, err
		}
		done[[3]string{sa.Task, sa.Metric, sa.Filter}] = true
		out.Comparisons = append(out.Comparisons, c)
	}
	var skipped []skip
	if opts.Groups {
		var err error
		if skipped, err = compareGroups(a, b, opts, out, done); err != nil {
			return nil, err
		}
	}
	if opts.Unpaired {
		compareReported(a, b, opts, out, done)
	}
	for _, s := range skipped {
		if !done[s.key] {
			out.Skipped = append(out.Skipped, s.why)
		}
	}
	only := func(x, y *Scores) {
		for _, s := range x.Series {
			if k := [3]string{s.Task, s.Metric, s.Filter}; !done[k] {
				if _, ok := y.Find(s.Task, s.Metric, s.Filter); !ok {
					out.Skipped = append(out.Skipped, fmt.Sprintf("%s %s,%s (only in %s)", s.Task, s.Metric, s.Filter, x.Run.Name))
				}
			}
		}
	}
	only(a, b)
	only(b, a)
	if len(out.Comparisons) == 0 {
		return nil, fmt.Errorf("%w: %s and %s share no task, metric and filter", ErrNotPaired, a.Run.Output.Path(), b.Run.Output.Path())
	}
	return out, nil
}

// skip is a comparison not made, and why.
type skip struct {
	key [3]string
	why string
}

// compareReported appends the unpaired comparison of every score both
// runs have that was not compared document by document.
func compareReported(a, b *Scores, opts CompareOptions, out *Comparisons, done map[[3]string]bool) {
	for _, ra := range reportedOrSeries(a) {
		k := [3]string{ra.Task, ra.Metric, ra.Filter}
		if done[k] {
			continue
		}
		rb, ok := findReported(b, ra.Task, ra.Metric, ra.Filter)
		if !ok {
			continue
		}
		done[k] = true
		out.Comparisons = append(out.Comparisons, compareUnpaired(ra, rb, opts.level()))
	}
}

// reportedOrSeries is a run's results-file scores, or, without a results
// file, the means of its series.
func reportedOrSeries(sc *Scores) []Reported {
	if sc.Reported != nil {
		return sc.Reported
	}
	var out []Reported
	for _, s := range sc.Series {
		r, _ := findReported(sc, s.Task, s.Metric, s.Filter)
		out = append(out, r)
	}
	return out
}

// findReported is a score as the results file has it, else the mean of
// the series with its CLT stderr.
func findReported(sc *Scores, task, metric, filter string) (Reported, bool) {
	if r, ok := sc.FindReported(task, metric, filter); ok {
		return r, true
	}
	if s, ok := sc.Find(task, metric, filter); ok {
		return Reported{Task: task, Metric: metric, Filter: filter, Value: mean(s.Values), Stderr: cltStderr(s.Values), N: len(s.Values)}, true
	}
	return Reported{}, false
}

// compareUnpaired compares two aggregated scores: Delta with the CLT
// interval of the two stderrs, nothing that needs the documents.
func compareUnpaired(ra, rb Reported, level float64) Comparison {
	nan := math.NaN()
	c := Comparison{Task: ra.Task, Metric: ra.Metric, Filter: ra.Filter, NA: ra.N, NB: rb.N, A: ra.Value, B: rb.Value,
		Delta: rb.Value - ra.Value, Scale: ScaleOf(ra.Metric, ra.Value, rb.Value), Unpaired: whyUnpaired,
		PairedStderr: nan, CILow: nan, CIHigh: nan, McNemarP: nan, MDE: nan}
	for _, st := range []string{statPairedCI, statPairedStderr, statMcNemar, statFlips, statMDE} {
		c.Unavailable = append(c.Unavailable, Unavailable{st, whyNoSamples})
	}
	if math.IsNaN(ra.Stderr) || math.IsNaN(rb.Stderr) {
		c.UnpairedCILow, c.UnpairedCIHigh = nan, nan
		c.Unavailable = append(c.Unavailable, Unavailable{statUnpairedCI, whyNoStderr})
		return c
	}
	half := twoSidedZ(level) * math.Sqrt(square(ra.Stderr)+square(rb.Stderr))
	c.UnpairedCILow, c.UnpairedCIHigh = c.Scale.Diff().Clip(c.Delta-half, c.Delta+half)
	return c
}

// compareGroups appends the comparison of every group both runs' results
// files have, for each metric and filter of its first leaf. A group whose
// score is not the mean of its documents is named in Skipped.
func compareGroups(a, b *Scores, opts CompareOptions, out *Comparisons, done map[[3]string]bool) ([]skip, error) {
	ra, rb := a.Run.Output.Results, b.Run.Output.Results
	if ra == nil || rb == nil {
		return nil, nil
	}
	var skipped []skip
	for _, st := range ra.Subtasks {
		leaves := ra.Leaves(st.Group)
		if !rb.IsGroup(st.Group) || len(leaves) == 0 {
			continue
		}
		for _, s := range a.Series {
			if s.Task != leaves[0] {
				continue
			}
			ga, errA := a.joinGroup(st.Group, s.Metric, s.Filter)
			gb, errB := b.joinGroup(st.Group, s.Metric, s.Filter)
			k := [3]string{st.Group, s.Metric, s.Filter}
			if errA != nil || errB != nil {
				skipped = append(skipped, skip{k, fmt.Sprintf("group %s %s,%s (%v)", st.Group, s.Metric, s.Filter, errors.Join(errA, errB))})
				continue
			}
			c, err := CompareSeries(ga, gb, opts)
			if err != nil {
				return nil, err
			}
			done[k] = true
			out.Comparisons = append(out.Comparisons, c)
		}
	}
	return skipped, nil
}

// CompareSeries compares two series of one task, metric and filter (or of
// the same documents under two names: a task and its variant, a group's
// joined members) document by document.
func CompareSeries(sa, sb *Series, opts CompareOptions) (Comparison, error) {
	c := Comparison{Task: sa.Task, Metric: sa.Metric, Filter: sa.Filter}
	av, bv, changed, err := pairSeries(sa, sb, opts.Intersect)
	if err != nil {
		return c, err
	}
	p, err := PairedStats(av, bv, opts.resamples(), opts.level(), opts.Seed)
	if err != nil {
		return c, err
	}
	c.N, c.A, c.B, c.Delta = p.N, p.A, p.B, p.Delta
	c.PairedStderr, c.CILow, c.CIHigh, c.McNemarP = p.PairedStderr, p.CILow, p.CIHigh, p.McNemarP
	c.AOnly, c.BOnly, c.Both, c.Neither = p.AOnly, p.BOnly, p.Both, p.Neither
	c.UnpairedCILow, c.UnpairedCIHigh, c.MDE = p.UnpairedCILow, p.UnpairedCIHigh, p.MDE
	c.NA, c.NB = len(sa.Values), len(sb.Values)
	c.Scale = ScaleOf(c.Metric, append(append([]float64{}, sa.Values...), sb.Values...)...)
	diff := c.Scale.Diff()
	c.CILow, c.CIHigh = diff.Clip(c.CILow, c.CIHigh)
	c.UnpairedCILow, c.UnpairedCIHigh = diff.Clip(c.UnpairedCILow, c.UnpairedCIHigh)
	if !p.Binary {
		c.Unavailable = append(c.Unavailable, Unavailable{statMcNemar, whyNotBinary})
	}
	if c.N < 2 {
		// No spread from one document: the stderrs are NaN and the
		// bootstrap of one difference is a point.
		c.CILow, c.CIHigh = math.NaN(), math.NaN()
		for _, st := range []string{statPairedCI, statPairedStderr, statUnpairedCI, statMDE} {
			c.Unavailable = append(c.Unavailable, Unavailable{st, whyOneDocument})
		}
	}
	c.PromptsChanged = len(changed)
	// A group's joined series spans several samples files: its changed
	// prompts are counted, and diffed per member in the members' comparisons.
	if n := opts.PromptDiffs; n >= 0 && len(changed) > 0 && !sa.joined() && !sb.joined() {
		if n == 0 {
			n = 3
		}
		sort.Ints(changed)
		c.PromptDiffs = promptDiffs(sa.File, sb.File, changed[:min(n, len(changed))])
	}
	return c, nil
}

// pairSeries pairs two series by doc_id, refusing documents whose doc_hash
// differs and, unless intersect, different sets of documents. It returns
// the paired values in a's order and the doc_ids whose prompt changed.
func pairSeries(sa, sb *Series, intersect bool) (av, bv []float64, changed []int, err error) {
	type key struct {
		task string
		id   int
	}
	idx := make(map[key]int, len(sb.Docs))
	for i, d := range sb.Docs {
		idx[key{d.Task, d.DocID}] = i
	}
	onlyA, seen := 0, 0
	for i, d := range sa.Docs {
		j, ok := idx[key{d.Task, d.DocID}]
		if !ok {
			onlyA++
			continue
		}
		seen++
		e := sb.Docs[j]
		if d.DocHash != "" && e.DocHash != "" && d.DocHash != e.DocHash {
			task := sa.Task
			if d.Task != "" {
				task = d.Task
			}
			return nil, nil, nil, fmt.Errorf("%w: %s doc_id %d is a different document in the two runs (doc_hash %.12s… at %s line %d, %.12s… at %s line %d)",
				ErrNotPaired, task, d.DocID, d.DocHash, sa.File.Path, d.Line, e.DocHash, sb.File.Path, e.Line)
		}
		if d.PromptHash != e.PromptHash {
			changed = append(changed, d.DocID)
		}
		av = append(av, sa.Values[i])
		bv = append(bv, sb.Values[j])
	}
	if onlyB := len(sb.Docs) - seen; (onlyA > 0 || onlyB > 0) && !intersect {
		return nil, nil, nil, fmt.Errorf("%w: %s was scored on different documents (%d only in %s, %d only in %s; e.g. a --limit run): compare the common ones with --intersect",
			ErrNotPaired, sa.Task, onlyA, sa.File.Path, onlyB, sb.File.Path)
	}
	if len(av) == 0 {
		return nil, nil, nil, fmt.Errorf("%w: %s has no document in common", ErrNotPaired, sa.Task)
	}
	return av, bv, changed, nil
}

// promptDiffs reads the first request's prompt of the given documents in
// both runs and diffs them line by line, with whitespace made visible.
func promptDiffs(fa, fb harness.SampleFile, ids []int) []PromptDiff {
	pa, errA := readPrompts(fa, ids)
	pb, errB := readPrompts(fb, ids)
	var out []PromptDiff
	for _, id := range ids {
		if errA != nil || errB != nil {
			out = append(out, PromptDiff{DocID: id, Diff: fmt.Sprintf("(prompts unreadable: %v %v)", errA, errB)})
			continue
		}
		d := diff.Diff("a", []byte(visible(pa[id])), "b", []byte(visible(pb[id])))
		out = append(out, PromptDiff{DocID: id, Diff: string(d)})
	}
	return out
}

// visible shows what a prompt diff turns on: trailing spaces and tabs, and
// the end of the text.
func visible(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		t := strings.TrimRight(l, " \t")
		if t != l {
			lines[i] = t + strings.NewReplacer(" ", "·", "\t", "→").Replace(l[len(t):])
		}
	}
	return strings.Join(lines, "⏎\n") + "␃\n"
}

// readPrompts returns arguments.gen_args_0.arg_0 (arguments[0][0] in old
// files) of the documents asked for.
func readPrompts(f harness.SampleFile, ids []int) (map[int]string, error) {
	want := map[int]bool{}
	for _, id := range ids {
		want[id] = true
	}
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := map[int]string{}
	for len(out) < len(want) {
		s, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, err
		}
		if !want[s.DocID] {
			continue
		}
		if _, done := out[s.DocID]; done {
			continue
		}
		args, err := s.ArgumentsValue()
		if err != nil {
			return out, err
		}
		var first harness.Value
		switch args.Kind {
		case harness.Object:
			if len(args.Vals) > 0 {
				first = args.Vals[0]
			}
		case harness.List:
			if len(args.List) > 0 {
				first = args.List[0]
			}
		}
		var ctx harness.Value
		if first.Kind == harness.Object {
			ctx, _ = first.Get("arg_0")
		} else if first.Kind == harness.List && len(first.List) > 0 {
			ctx = first.List[0]
		}
		text, _ := ctx.Text()
		out[s.DocID] = text
	}
	return out, nil
}
