package gate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/evalcapsule/evalcapsule/analysis"
)

// The verdicts of a metric and of a whole gate.
const (
	Pass       = "pass"
	Regression = "regression"
	// Refused: the metric could not be gated (a setting changed, a task or
	// metric or documents missing on one side). It never counts as a pass.
	Refused = "refused"
	// NotGated: a metric both sides have that the policy does not gate.
	NotGated = "not-gated"
)

// Result is the gate's decision: per metric, the numbers and the verdict.
type Result struct {
	Baseline, Candidate           string
	BaselineModel, CandidateModel Model
	Policy                        *Policy
	// Verdict is Regression when a metric regressed, else Refused when one
	// was refused (or nothing was gated), else Pass.
	Verdict string
	// Changes is every identity difference between the sides, allowed or
	// not.
	Changes []Change
	// Refusals say, one line each, why metrics were refused.
	Refusals []string
	Metrics  []MetricResult
	// TasksNotGated are the baseline's tasks the policy's tasks do not
	// list, so that what was not looked at is named; sorted.
	TasksNotGated []string
}

// Passed reports whether the gate passed: every gated metric passed.
func (r *Result) Passed() bool { return r.Verdict == Pass }

// Change is one difference of identity between the two sides.
type Change struct {
	// Field is one of the allow_changed names (task_hashes, chat_template,
	// system_instruction, harness_version, harness_commit).
	Field     string
	Task      string // for task_hashes
	Baseline  string
	Candidate string
	Allowed   bool
}

func (c Change) String() string {
	what := c.Field
	if c.Task != "" {
		what += " of " + c.Task
	}
	show := func(s string) string {
		if s == "" {
			return "none"
		}
		if len(s) > 12 {
			return s[:12] + "…"
		}
		return s
	}
	return fmt.Sprintf("%s changed (baseline %s, candidate %s)", what, show(c.Baseline), show(c.Candidate))
}

// MetricResult is one task's metric under the gate. The values are in
// points for metrics in [0, 1], in the metric's unit otherwise (Unit).
type MetricResult struct {
	Task, Metric, Filter string
	Verdict              string
	Reason               string
	Test                 string
	HigherIsBetter       bool
	Unit                 string // "points" or "as logged"
	// N is the documents compared; OnlyBaseline and OnlyCandidate those
	// one side has, Missing the first few of them ("baseline: 12").
	N, OnlyBaseline, OnlyCandidate int
	Missing                        []string
	Baseline, Candidate            float64 // the means over the N documents
	// Delta is Candidate − Baseline; CILow..CIHigh its paired bootstrap
	// interval at Level.
	Delta, CILow, CIHigh float64
	// Level is the interval's level: 1 − alpha/(m − k) for the metric
	// whose p ranks k-th smallest of m gated ones, Holm's threshold.
	Level float64
	// P is the metric's test p (PTest names it), PHolm Holm-adjusted over
	// the gated metrics.
	P, PHolm float64
	PTest    string
	Margin   float64
}

// gated is a metric being evaluated, before Holm.
type gated struct {
	i      int       // index into Result.Metrics
	a, b   []float64 // gain-oriented: the statistics' B − A is the gain
	scale  analysis.Scale
	sign   float64 // +1 higher is better, −1 lower
	margin float64 // in the metric's raw unit
}

// Evaluate gates candidate against baseline under policy p (nil: the
// default policy). It fails only when a side is nil or the statistics
// fail; every reason not to gate is a Refused verdict in the Result.
// It caches each metric's documents, sorted, in the sides' TaskValues, so
// that a baseline gated against many candidates (concurrently too) is
// sorted once: a Side must not be changed once gated (a metric's map may
// be replaced by another, which is then sorted afresh).
func Evaluate(baseline, candidate *Side, p *Policy) (*Result, error) {
	if baseline == nil || candidate == nil {
		return nil, fmt.Errorf("%w: a side is missing", ErrSide)
	}
	if p == nil {
		p = DefaultPolicy()
	}
	r := &Result{Baseline: baseline.Name, Candidate: candidate.Name, Policy: p,
		BaselineModel: baseline.Identity.Model, CandidateModel: candidate.Identity.Model}
	r.Changes = identityChanges(baseline.Identity, candidate.Identity, p)
	var global []string
	taskChanged := map[string]string{}
	for _, c := range r.Changes {
		if c.Allowed {
			continue
		}
		if c.Field == ChangeTaskHashes {
			taskChanged[c.Task] = c.String() + "; allow_changed: [task_hashes] gates it anyway"
			continue
		}
		global = append(global, c.String())
	}
	if len(global) > 0 {
		r.Refusals = append(r.Refusals, "refused to gate: "+strings.Join(global, "; ")+" (list it under allow_changed to gate anyway)")
	}

	tasks := sortedKeys(p.Tasks)
	if len(tasks) == 0 {
		tasks = sortedKeys(baseline.Tasks)
	}
	for _, t := range sortedKeys(baseline.Tasks) {
		if _, ok := p.Tasks[t]; !ok && len(p.Tasks) > 0 {
			r.TasksNotGated = append(r.TasksNotGated, t)
		}
	}
	var work []gated
	for _, task := range tasks {
		bt, ct := baseline.Tasks[task], candidate.Tasks[task]
		if bt == nil || ct == nil {
			side := "baseline"
			if bt != nil {
				side = "candidate"
			}
			why := fmt.Sprintf("task %s is not in the %s", task, side)
			for _, sd := range []*Side{baseline, candidate} {
				for _, k := range sortedKeys(sd.Differs) {
					if strings.HasPrefix(k, task+" ") {
						why += fmt.Sprintf(" (%s: %s: %s)", sd.Name, k, sd.Differs[k])
						break
					}
				}
			}
			r.Metrics = append(r.Metrics, MetricResult{Task: task, Verdict: Refused, Reason: why, Test: p.Test})
			r.Refusals = append(r.Refusals, why)
			continue
		}
		matched := map[string]bool{}
		for _, key := range sortedKeys(bt.Metrics) {
			metric, filter, _ := strings.Cut(key, ",")
			m := MetricResult{Task: task, Metric: metric, Filter: filter, Test: p.Test, HigherIsBetter: higher(bt, key)}
			if !p.gated(task, key) {
				m.Verdict, m.Reason = NotGated, "not among the policy's metrics"
				r.Metrics = append(r.Metrics, m)
				continue
			}
			matched[key], matched[metric] = true, true
			cv, ok := ct.Metrics[key]
			switch {
			case !ok:
				m.Verdict, m.Reason = Refused, fmt.Sprintf("%s of %s is not in the candidate", key, task)
			case len(global) > 0:
				m.Verdict, m.Reason = Refused, "the sides' settings differ: "+strings.Join(global, "; ")
			case differs(baseline, candidate, task, key, bt.ordered(key).members) != "":
				m.Verdict, m.Reason = Refused, differs(baseline, candidate, task, key, bt.ordered(key).members)
			case taskChanged[task] != "":
				m.Verdict, m.Reason = Refused, taskChanged[task]
			case memberChanged(bt.ordered(key).members, taskChanged) != "":
				m.Verdict, m.Reason = Refused, "a member of the group: "+memberChanged(bt.ordered(key).members, taskChanged)
			}
			if m.Verdict != "" {
				r.Metrics = append(r.Metrics, m)
				if !ok || len(global) == 0 { // the settings' refusal is said once, above
					r.Refusals = appendNew(r.Refusals, strings.TrimPrefix(m.Reason, "a member of the group: "))
				}
				continue
			}
			g, why := pair(&m, bt, key, cv, p)
			if why != "" {
				m.Verdict, m.Reason = Refused, why
				r.Refusals = append(r.Refusals, fmt.Sprintf("%s %s: %s", task, key, why))
				r.Metrics = append(r.Metrics, m)
				continue
			}
			g.i = len(r.Metrics)
			r.Metrics = append(r.Metrics, m)
			work = append(work, g)
		}
		for _, want := range gatedList(p, task) {
			if !matched[want] {
				why := fmt.Sprintf("%s of %s is not in the baseline", want, task)
				r.Metrics = append(r.Metrics, MetricResult{Task: task, Metric: want, Verdict: Refused, Reason: why, Test: p.Test})
				r.Refusals = append(r.Refusals, why)
			}
		}
	}
	if err := decide(r, work, p); err != nil {
		return nil, err
	}
	r.Verdict = Pass
	gatedAny := false
	for _, m := range r.Metrics {
		switch m.Verdict {
		case Regression:
			r.Verdict = Regression
		case Refused:
			if r.Verdict == Pass {
				r.Verdict = Refused
			}
		case Pass:
			gatedAny = true
		}
	}
	if r.Verdict == Pass && !gatedAny {
		r.Verdict = Refused
		r.Refusals = append(r.Refusals, "no metric was gated: the policy's tasks and metrics match nothing both sides have")
	}
	return r, nil
}

// differs says why a side's values of a metric cannot be trusted: they
// do not re-score to what lm-eval reported, or the run's record does not
// match its output. "" when both sides' can.
// A group's (docs keyed "member/doc_id") is judged by its members', named
// sorted in members.
func differs(b, c *Side, task, key string, members []string) string {
	if len(b.Differs) == 0 && len(c.Differs) == 0 {
		return ""
	}
	keys := []string{task + " " + key, "record"}
	for _, m := range members {
		keys = append(keys, m+" "+key)
	}
	sort.Strings(keys[2:])
	for _, s := range []*Side{b, c} {
		for _, k := range keys {
			if why, ok := s.Differs[k]; ok {
				if k == "record" {
					return fmt.Sprintf("%s: its run.json does not match its output (%s)", s.Name, why)
				}
				return fmt.Sprintf("%s: %s does not re-score to what lm-eval reported (%s; see capsule rescore)", s.Name, k, why)
			}
		}
	}
	return ""
}

// memberChanged is the refusal of a group's member whose hash changed:
// a group's documents are keyed "member/doc_id"; members are sorted, the
// first changed one is named.
func memberChanged(members []string, changed map[string]string) string {
	if len(changed) == 0 {
		return ""
	}
	for _, m := range members {
		if why := changed[m]; why != "" {
			return why
		}
	}
	return ""
}

func gatedList(p *Policy, task string) []string {
	if tp, ok := p.Tasks[task]; ok && len(tp.Metrics) > 0 {
		return tp.Metrics
	}
	if len(p.Tasks) > 0 {
		return p.Metrics
	}
	return nil // every task of the baseline: a default metric need not be in each
}

// appendNew appends s unless list has it: a change that refuses several
// metrics is said once.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func higher(tv *TaskValues, key string) bool {
	if h, ok := tv.Higher[key]; ok {
		return h
	}
	return true
}

// pair lines up the documents of a metric; it returns why not, or "".
// The common documents come in the baseline's cached order (sortIDs), so
// that a baseline gated against many candidates is sorted once.
func pair(m *MetricResult, bt *TaskValues, key string, cv map[string]float64, p *Policy) (gated, string) {
	bo := bt.ordered(key)
	a, b := make([]float64, 0, len(bo.ids)), make([]float64, 0, len(bo.ids))
	var onlyB, onlyC []string
	for i, id := range bo.ids {
		y, ok := cv[id]
		if !ok {
			onlyB = append(onlyB, id) // in order: bo.ids is
			continue
		}
		a, b = append(a, bo.vals[i]), append(b, y)
	}
	if len(cv) > len(a) {
		bv := bt.Metrics[key]
		for id := range cv {
			if _, ok := bv[id]; !ok {
				onlyC = append(onlyC, id)
			}
		}
		sortIDs(onlyC)
	}
	n := len(a)
	m.N, m.OnlyBaseline, m.OnlyCandidate = n, len(onlyB), len(onlyC)
	for _, id := range onlyB[:min(3, len(onlyB))] {
		m.Missing = append(m.Missing, "baseline only: doc "+id)
	}
	for _, id := range onlyC[:min(3, len(onlyC))] {
		m.Missing = append(m.Missing, "candidate only: doc "+id)
	}
	if n == 0 {
		return gated{}, "no document in common"
	}
	if (len(onlyB) > 0 || len(onlyC) > 0) && !p.Allowed(ChangeDocuments) {
		return gated{}, fmt.Sprintf("the sides scored different documents (%d only in the baseline, %d only in the candidate: %s); allow_changed: [documents] compares the %d common ones",
			len(onlyB), len(onlyC), strings.Join(m.Missing, ", "), n)
	}
	g := gated{sign: 1}
	if !m.HigherIsBetter {
		g.sign = -1
	}
	all := make([]float64, 0, 2*n)
	for i := range a {
		all = append(all, a[i], b[i])
	}
	g.scale = analysis.ScaleOf(m.Metric, all...)
	if g.sign > 0 {
		g.a, g.b = a, b
	} else {
		g.a, g.b = b, a // B − A is then baseline − candidate: the gain
	}
	m.Unit = "as logged"
	factor := 1.0
	if g.scale.Points() {
		m.Unit, factor = "points", 100
	}
	m.Margin = p.margin(m.Task)
	g.margin = m.Margin / factor
	return g, ""
}

// sortIDs sorts doc ids numerically where they are numbers ("member/12"
// by member, then number). Each id is split once.
func sortIDs(ids []string) {
	type split struct {
		prefix string
		n      int
		id     string
	}
	ks := make([]split, len(ids))
	for i, id := range ids {
		p, n := splitID(id)
		ks[i] = split{p, n, id}
	}
	slices.SortFunc(ks, func(x, y split) int {
		if c := strings.Compare(x.prefix, y.prefix); c != 0 {
			return c
		}
		if x.n != y.n {
			return cmp.Compare(x.n, y.n)
		}
		return strings.Compare(x.id, y.id)
	})
	for i := range ks {
		ids[i] = ks[i].id
	}
}

func splitID(id string) (string, int) {
	prefix, num := "", id
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		prefix, num = id[:i], id[i+1:]
	}
	n := 0
	for _, c := range num {
		if c < '0' || c > '9' {
			return id, 0
		}
		n = n*10 + int(c-'0')
	}
	return prefix, n
}

// decide computes every gated metric's p, Holm-adjusts them, and judges
// each by its interval at Holm's level for its rank.
func decide(r *Result, work []gated, p *Policy) error {
	ps := make([]float64, len(work))
	for i, g := range work {
		st, err := analysis.PairedStats(g.a, g.b, 1, 0.5, p.Seed)
		if err != nil {
			return fmt.Errorf("gate: %s %s,%s: %w", r.Metrics[g.i].Task, r.Metrics[g.i].Metric, r.Metrics[g.i].Filter, err)
		}
		m := &r.Metrics[g.i]
		ps[i], m.PTest = testP(st, g.margin, p.Test)
		m.P = ps[i]
	}
	adj := analysis.HolmAdjust(ps)
	order := make([]int, len(work))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return ps[order[x]] < ps[order[y]] })
	for k, i := range order {
		g := work[i]
		m := &r.Metrics[g.i]
		m.PHolm = adj[i]
		m.Level = 1 - p.Alpha/float64(len(work)-k)
		st, err := analysis.PairedStats(g.a, g.b, p.Resamples, m.Level, p.Seed)
		if err != nil {
			return fmt.Errorf("gate: %s %s,%s: %w", m.Task, m.Metric, m.Filter, err)
		}
		lo, hi := g.scale.Diff().Clip(st.CILow, st.CIHigh)
		judge(m, st.Delta, lo, hi, g.margin, p)
		f := 1.0
		if m.Unit == "points" {
			f = 100
		}
		// Back from the gain to candidate − baseline.
		m.Baseline, m.Candidate = st.A*f, st.B*f
		m.Delta, m.CILow, m.CIHigh = st.Delta*f, lo*f, hi*f
		if g.sign < 0 {
			m.Baseline, m.Candidate = st.B*f, st.A*f
			m.Delta, m.CILow, m.CIHigh = -m.Delta, -m.CIHigh, -m.CILow
		}
	}
	return nil
}

// testP is the p of the policy's test on the gain: for no-significant-drop
// the two-sided test of no difference (McNemar's exact test on 0/1 values,
// the paired z-test otherwise); for non-inferiority the one-sided paired
// z-test of gain ≤ −margin.
func testP(st analysis.Paired, margin float64, test string) (float64, string) {
	z := func(x float64) float64 { // x / SE, ±Inf for a spread of 0
		switch {
		case st.PairedStderr > 0:
			return x / st.PairedStderr
		case x > 0:
			return math.Inf(1)
		case x < 0:
			return math.Inf(-1)
		}
		return 0
	}
	if test == NonInferiority {
		return 0.5 * math.Erfc(z(st.Delta+margin)/math.Sqrt2), "paired z-test, one-sided, of gain <= -margin"
	}
	if st.Binary {
		if math.IsNaN(st.McNemarP) {
			return 1, "McNemar exact (no document changed)"
		}
		return st.McNemarP, "McNemar exact, two-sided"
	}
	if st.N < 2 {
		return 1, "paired z-test, two-sided (one document: no spread)"
	}
	return math.Erfc(math.Abs(z(st.Delta)) / math.Sqrt2), "paired z-test, two-sided"
}

// judge sets a gated metric's verdict from its gain, interval and p.
func judge(m *MetricResult, gain, lo, hi, margin float64, p *Policy) {
	unit := func(x float64) string {
		if m.Unit == "points" {
			return fmt.Sprintf("%.2f points", 100*x)
		}
		return fmt.Sprintf("%.4g", x)
	}
	switch p.Test {
	case NonInferiority:
		switch {
		case math.IsNaN(lo):
			m.Verdict, m.Reason = Regression, "no interval (one document): non-inferiority cannot be shown"
		case lo <= -margin:
			m.Verdict, m.Reason = Regression, fmt.Sprintf("the interval's worse end, %s, is not above -margin (-%s)", unit(lo), unit(margin))
		case m.PHolm > p.Alpha:
			m.Verdict, m.Reason = Regression, fmt.Sprintf("Holm-adjusted p %.3g > alpha %g: non-inferiority not shown", m.PHolm, p.Alpha)
		default:
			m.Verdict, m.Reason = Pass, fmt.Sprintf("the interval's worse end, %s, is above -margin (-%s)", unit(lo), unit(margin))
		}
	default:
		drop := -gain
		switch {
		case math.IsNaN(hi):
			m.Verdict, m.Reason = Pass, "no interval (one document): no drop can be shown"
		case lo > 0 && m.PHolm <= p.Alpha:
			m.Verdict, m.Reason = Pass, fmt.Sprintf("significant gain of %s", unit(gain))
		case lo > 0:
			m.Verdict, m.Reason = Pass, "no drop: the interval lies above 0"
		case !(hi < 0):
			m.Verdict, m.Reason = Pass, "no significant drop: the interval reaches 0"
		case m.PHolm > p.Alpha:
			m.Verdict, m.Reason = Pass, fmt.Sprintf("drop of %s, but Holm-adjusted p %.3g > alpha %g", unit(drop), m.PHolm, p.Alpha)
		case drop <= margin:
			m.Verdict, m.Reason = Pass, fmt.Sprintf("significant drop of %s, within the margin of %s", unit(drop), unit(margin))
		default:
			m.Verdict, m.Reason = Regression, fmt.Sprintf("significant drop of %s, more than the margin of %s", unit(drop), unit(margin))
		}
	}
}

func identityChanges(a, b Identity, p *Policy) []Change {
	var out []Change
	add := func(field, task, x, y string) {
		if x != y {
			out = append(out, Change{Field: field, Task: task, Baseline: x, Candidate: y, Allowed: p.Allowed(field)})
		}
	}
	add(ChangeHarnessVersion, "", a.HarnessVersion, b.HarnessVersion)
	add(ChangeHarnessCommit, "", a.HarnessCommit, b.HarnessCommit)
	add(ChangeChatTemplate, "", a.ChatTemplateSHA, b.ChatTemplateSHA)
	add(ChangeSystemInstruction, "", a.SystemInstructionSHA, b.SystemInstructionSHA)
	for _, t := range sortedKeys(a.TaskHashes) {
		if y, ok := b.TaskHashes[t]; ok {
			add(ChangeTaskHashes, t, a.TaskHashes[t], y)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
