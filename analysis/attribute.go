package analysis

import (
	"fmt"
	"math"
	"strings"
)

// Attribution explains, for each claim of a model card, the road from the
// card's number to the reproduction: baseline run, each cumulative setting
// change with its effect, final number, and what is left unexplained.
type Attribution struct {
	Study     string `json:"-"`
	Simulated bool   `json:"-"` // some run was produced by the simulated backend
	// Claims are the attributions of the card's claims, one per claim in
	// the study file's order.
	Claims []ClaimAttribution `json:"claims"`
}

// UnmarshalJSON reads what MarshalJSON (the package function) writes,
// `capsule attribute --json`, with NaN where it wrote null. Study and
// Simulated, not written, are left as they are.
func (a *Attribution) UnmarshalJSON(b []byte) error {
	type attribution Attribution
	return unmarshalNaN(b, (*attribution)(a))
}

// Aggregate is how a score averages the documents of a group's members.
// For a plain task the two are the same number.
type Aggregate string

const (
	// Micro is the mean over all documents, each member weighted by its
	// size: lm-eval's group score (weight_by_size: true, as mmlu).
	Micro Aggregate = "micro"
	// Macro is the mean of the members' means, each member (each of MMLU's
	// 57 subjects) counting the same: what model cards usually report for
	// MMLU ("macro_avg/acc").
	Macro Aggregate = "macro"
)

// ClaimAttribution is the attribution of one claimed number.
type ClaimAttribution struct {
	// Task is the claim's task as the study file names it (a step may run
	// it under another name, at the same place in its task list).
	Task string `json:"task"`
	// Metric is the claim's lm-eval metric ("exact_match", "acc").
	Metric string `json:"metric"`
	// Filter is the claim's lm-eval filter ("strict-match", "none"), under
	// which the baseline is scored.
	Filter string `json:"filter"`
	// FinalFilter is the filter of the final score where a re-scoring step
	// changed it from Filter ("" where it did not).
	FinalFilter string `json:"final_filter,omitempty"`
	// Notes explain the rows whose CI and McNemar p disagree about a
	// change (the CI excludes 0 while p is above 1 − level, or the other
	// way round).
	Notes []string `json:"notes,omitempty"`
	// Aggregate is the average every score below is: the claim's, or micro
	// when the claim states none (AggregateStated false). Members is the
	// number of member tasks a group's documents belong to (0 for a plain
	// task).
	Aggregate       Aggregate `json:"aggregate"`
	AggregateStated bool      `json:"aggregate_stated"`  // whether the claim states its aggregate (false: micro, lm-eval's, by default)
	Members         int       `json:"members,omitempty"` // the number of member tasks of a group's claim (0, left out, for a plain task)
	// Card is the number the model card claims; Baseline the first run's,
	// Final the last step's.
	Card     float64 `json:"card"`
	Baseline float64 `json:"baseline"` // the baseline run's score, lm-eval's fraction for a [0, 1] metric
	Final    float64 `json:"final"`    // the score after the last step, lm-eval's fraction for a [0, 1] metric
	// Unexplained is Card − Final, with a CI from the final run's
	// uncertainty (the card's number has none we know of).
	Unexplained       float64           `json:"unexplained"`
	UnexplainedCILow  float64           `json:"unexplained_ci_low"`  // the lower end of Unexplained's CI: Card minus the upper end of the final score's CI (null when that CI cannot be computed)
	UnexplainedCIHigh float64           `json:"unexplained_ci_high"` // the upper end of Unexplained's CI: Card minus the lower end of the final score's CI (null when that CI cannot be computed)
	Steps             []AttributionStep `json:"steps"`               // the study's steps in order, each a change from the step before (empty, never null, with no steps)
	Sensitivity       []Sensitivity     `json:"sensitivity"`         // the study's variants, each one change from the baseline (empty, never null, with no variants)
	// HolmFamily says over which tests the PHolm of the steps and variants
	// is adjusted: all of this claim's step and variant tests together.
	HolmFamily string `json:"holm_family,omitempty"`
	// Settings compares the settings the card states for the claim with
	// the baseline's and the final run's.
	Settings []SettingRow `json:"settings"`
	// Shapley holds the order-independent attribution when the runs form a
	// full factorial over the settings (nil otherwise), and Interaction the
	// part of the total effect no single setting carries.
	Shapley     []ShapleyValue `json:"shapley,omitempty"`
	Interaction *float64       `json:"interaction,omitempty"` // the total effect minus the sum of the settings' one-at-a-time effects from the baseline corner; left out without a full factorial
	// Statement says in a sentence what the attribution shows, including
	// whether the unexplained residual is significant and which of the
	// card's settings the final run does not have.
	Statement string `json:"statement,omitempty"`
}

// AttributionStep is one cumulative change from the baseline: a new run or
// a re-scoring of the previous run's samples.
type AttributionStep struct {
	Name string `json:"name"` // the step's name in the study file
	Kind string `json:"kind"` // "run" or "rescore"
	// Value is the score after the step, Delta its change from the
	// previous step, with the paired CI and McNemar p of that change, and
	// that p Holm-adjusted over the claim's family (HolmFamily).
	Value  float64 `json:"value"`
	Delta  float64 `json:"delta"`   // Value minus the previous step's (or the baseline's), lm-eval's fraction for a [0, 1] metric
	CILow  float64 `json:"ci_low"`  // the lower end of Delta's paired bootstrap CI (null when it cannot be computed)
	CIHigh float64 `json:"ci_high"` // the upper end of Delta's paired bootstrap CI (null when it cannot be computed)
	P      float64 `json:"p"`       // the exact McNemar p of the change (null for scores that are not 0/1)
	PHolm  float64 `json:"p_holm"`  // P Holm-adjusted over the claim's steps and variants (null where P is)
}

// Sensitivity is one variant: a single change from the baseline.
type Sensitivity struct {
	Change string  `json:"change"`  // the variant's name in the study file
	Value  float64 `json:"value"`   // the variant's score, lm-eval's fraction for a [0, 1] metric
	Delta  float64 `json:"delta"`   // Value minus the baseline's score
	CILow  float64 `json:"ci_low"`  // the lower end of Delta's paired bootstrap CI (null when it cannot be computed)
	CIHigh float64 `json:"ci_high"` // the upper end of Delta's paired bootstrap CI (null when it cannot be computed)
	P      float64 `json:"p"`       // the exact McNemar p of the change (null for scores that are not 0/1)
	PHolm  float64 `json:"p_holm"`  // P Holm-adjusted over the claim's steps and variants (null where P is)
}

// ShapleyValue is one setting's order-independent share of the total
// effect, with its paired bootstrap CI: documents resampled jointly across
// all the factorial's runs.
type ShapleyValue struct {
	Setting string  `json:"setting"` // the factorial step's name in the study file
	Value   float64 `json:"value"`   // the setting's Shapley value, in the claim's score's unit (lm-eval's fraction for a [0, 1] metric)
	CILow   float64 `json:"ci_low"`  // the lower end of Value's paired bootstrap CI
	CIHigh  float64 `json:"ci_high"` // the upper end of Value's paired bootstrap CI
}

// SettingRow is one setting the card states, beside what the baseline and
// the final run ran with ("" where a run leaves it to lm-eval or the task).
type SettingRow struct {
	Setting  string `json:"setting"`  // the setting's name as the study file writes it, a mapping's key dotted ("num_fewshot", "model_args.dtype")
	Card     string `json:"card"`     // the value the card states
	Baseline string `json:"baseline"` // the baseline run's value ("" where the run leaves it to lm-eval or the task)
	Final    string `json:"final"`    // the final run's value ("" where the run leaves it to lm-eval or the task)
	// Match is whether the final run has the card's value.
	Match bool `json:"match"`
}

// ClaimSpec is the claimed number an attribution explains.
type ClaimSpec struct {
	Task, Metric, Filter string
	Card                 float64
	// Aggregate is the claim's average; "" when the claim states none:
	// micro, lm-eval's, and the statement says so for a group.
	Aggregate Aggregate
	// Settings are the card's settings beside the runs'.
	Settings []SettingRow
}

// PathPoint is the claim's scores after one step of the path: the baseline
// (first point) or a cumulative step.
type PathPoint struct {
	Name   string
	Kind   string // "run" or "rescore"
	Series *Series
}

// VariantPoint is the claim's scores in a one-change variant.
type VariantPoint struct {
	Change string
	Series *Series
}

// FactorialPoint is the claim's scores with a subset of the factorial's
// settings applied: bit i of Mask is setting i of the names passed to
// AttributeClaim.
type FactorialPoint struct {
	Mask   uint
	Series *Series
}

// AttributionOptions configures AttributeClaim. The zero value works.
type AttributionOptions struct {
	Resamples int     // of each paired bootstrap; 0 means 10,000
	Level     float64 // of the CIs; 0 means 0.95
	Seed      uint64
	// Intersect pairs runs on their common documents when their sets differ.
	Intersect bool
}

// AttributeClaim explains one claim: the path from the baseline through each
// cumulative step (Δ, paired CI and McNemar p of each change), the residual
// between the card and the final score, the one-change sensitivity of the
// variants, and, when factorial holds every subset of the (at most four)
// settings named by steps, the Shapley attribution with the interaction.
//
// Every score is the claim's aggregate. Under macro, a paired CI is the
// bootstrap of Σ wᵢ(bᵢ − aᵢ) with per-document weights wᵢ = 1/(n_m·M) on the
// common documents (n_m of document i's member, M members), documents
// resampled with replacement; the final run's CI is the CLT interval with
// the members as strata. The McNemar p stays a test on the documents: it
// asks whether the documents that flip from right to wrong and from wrong
// to right are equally many, each document counting once, which is the
// micro question; under macro it is a check on the direction of the
// change, not a test of the macro Δ.
//
// The p-values of the steps and variants are Holm-adjusted together, one
// family per claim.
func AttributeClaim(claim ClaimSpec, path []PathPoint, variants []VariantPoint, steps []string, factorial []FactorialPoint, opts AttributionOptions) (ClaimAttribution, error) {
	copts := CompareOptions{Resamples: opts.Resamples, Level: opts.Level, Seed: opts.Seed, Intersect: opts.Intersect}
	ca := ClaimAttribution{Task: claim.Task, Metric: claim.Metric, Filter: claim.Filter, Card: claim.Card,
		Aggregate: claim.Aggregate, AggregateStated: claim.Aggregate != "",
		Steps: []AttributionStep{}, Sensitivity: []Sensitivity{}, Settings: claim.Settings}
	if ca.Settings == nil {
		ca.Settings = []SettingRow{}
	}
	if ca.Aggregate == "" {
		ca.Aggregate = Micro
	}
	if ca.Aggregate != Micro && ca.Aggregate != Macro {
		return ca, fmt.Errorf("attribution of %s: aggregate %q is neither %s nor %s", claim.Task, ca.Aggregate, Micro, Macro)
	}
	if len(path) == 0 {
		return ca, fmt.Errorf("attribution of %s: no baseline", claim.Task)
	}
	if m := len(memberSizes(docTasks(path[0].Series.Docs))); m > 1 {
		ca.Members = m
	}
	agg := ca.Aggregate
	ca.Baseline = aggregateMean(path[0].Series, agg)
	for i := 1; i < len(path); i++ {
		c, err := pairedAggregate(path[i-1].Series, path[i].Series, agg, copts)
		if err != nil {
			return ca, fmt.Errorf("step %q: %w", path[i].Name, err)
		}
		ca.Steps = append(ca.Steps, AttributionStep{Name: path[i].Name, Kind: path[i].Kind, Value: c.value, Delta: c.delta, CILow: c.lo, CIHigh: c.hi, P: c.p})
	}
	final := path[len(path)-1].Series
	if final.Filter != "" && final.Filter != ca.Filter {
		ca.FinalFilter = final.Filter
	}
	ca.Final = aggregateMean(final, agg)
	ca.Unexplained = ca.Card - ca.Final
	lo, hi := finalInterval(final, agg, copts)
	ca.UnexplainedCILow, ca.UnexplainedCIHigh = ca.Card-hi, ca.Card-lo
	for _, v := range variants {
		c, err := pairedAggregate(path[0].Series, v.Series, agg, copts)
		if err != nil {
			return ca, fmt.Errorf("variant %q: %w", v.Change, err)
		}
		ca.Sensitivity = append(ca.Sensitivity, Sensitivity{Change: v.Change, Value: c.value, Delta: c.delta, CILow: c.lo, CIHigh: c.hi, P: c.p})
	}
	ca.holm()
	ca.Notes = disagreements(ca, opts.Level)
	if k := len(steps); k > 0 && k <= 4 && len(factorial) > 0 {
		corners := map[uint]*Series{}
		for _, f := range factorial {
			corners[f.Mask] = f.Series
		}
		if len(corners) == 1<<k {
			var err error
			ca.Shapley, ca.Interaction, err = shapley(steps, corners, agg, copts)
			if err != nil {
				return ca, fmt.Errorf("shapley attribution: %w", err)
			}
		}
	}
	var macroFinal float64
	if !ca.AggregateStated && ca.Members > 1 {
		macroFinal = aggregateMean(final, Macro)
	}
	ca.Statement = statement(ca, opts.level(), len(final.Values), macroFinal)
	return ca, nil
}

// holm adjusts the claim's step and variant p-values as one family.
func (ca *ClaimAttribution) holm() {
	var ps []float64
	for _, s := range ca.Steps {
		ps = append(ps, s.P)
	}
	for _, s := range ca.Sensitivity {
		ps = append(ps, s.P)
	}
	adj := HolmAdjust(ps)
	m := 0
	for i, p := range adj {
		if !math.IsNaN(p) {
			m++
		}
		if i < len(ca.Steps) {
			ca.Steps[i].PHolm = p
		} else {
			ca.Sensitivity[i-len(ca.Steps)].PHolm = p
		}
	}
	if m > 0 {
		ca.HolmFamily = fmt.Sprintf("Holm over this claim's %d McNemar tests (%s, %s)", m, plural(len(ca.Steps), "step"), plural(len(ca.Sensitivity), "variant"))
	}
}

// plural counts things: "1 step", "3 steps".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func (o AttributionOptions) level() float64 {
	if o.Level > 0 {
		return o.Level
	}
	return 0.95
}

// change is a paired comparison in the claim's aggregate.
type change struct{ value, delta, lo, hi, p float64 }

// pairedAggregate pairs two series by document and compares them in the
// aggregate: micro is PairedStats; macro weighs each common document by
// 1/(n_m·M) (see AttributeClaim).
func pairedAggregate(a, b *Series, agg Aggregate, opts CompareOptions) (change, error) {
	av, bv, _, err := pairSeries(a, b, opts.Intersect)
	if err != nil {
		return change{}, err
	}
	tasks := commonTasks(a, b)
	macro := agg == Macro && len(memberSizes(tasks)) > 1
	resamples := opts.resamples()
	if macro {
		resamples = 1 // only the counts and McNemar are used
	}
	p, err := PairedStats(av, bv, resamples, opts.level(), opts.Seed)
	if err != nil {
		return change{}, err
	}
	if !macro {
		return change{p.B, p.Delta, p.CILow, p.CIHigh, p.McNemarP}, nil
	}
	w := macroWeights(tasks)
	n := float64(len(av))
	x := make([]float64, len(av))
	for i := range av {
		x[i] = n * w[i] * (bv[i] - av[i])
	}
	lo, hi := percentileInterval(meanReplicates(x, opts.resamples(), opts.Seed), opts.level())
	ma, mb := macroMean(av, tasks), macroMean(bv, tasks)
	return change{mb, mb - ma, lo, hi, p.McNemarP}, nil
}

// docTasks is the member task of each document ("" in a plain task's
// series).
func docTasks(docs []DocRef) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Task
	}
	return out
}

// commonTasks is the member task of each document a and b have in common,
// in the order pairSeries pairs them.
func commonTasks(a, b *Series) []string {
	type key struct {
		task string
		id   int
	}
	in := make(map[key]bool, len(b.Docs))
	for _, d := range b.Docs {
		in[key{d.Task, d.DocID}] = true
	}
	var out []string
	for _, d := range a.Docs {
		if in[key{d.Task, d.DocID}] {
			out = append(out, d.Task)
		}
	}
	return out
}

// memberSizes counts the documents of each member task.
func memberSizes(tasks []string) map[string]int {
	m := map[string]int{}
	for _, t := range tasks {
		m[t]++
	}
	return m
}

// macroWeights is each document's weight in the macro mean, 1/(n_m·M).
func macroWeights(tasks []string) []float64 {
	sizes := memberSizes(tasks)
	w := make([]float64, len(tasks))
	for i, t := range tasks {
		w[i] = 1 / (float64(sizes[t]) * float64(len(sizes)))
	}
	return w
}

// members splits values by member task, in the order members first occur.
func members(values []float64, tasks []string) (names []string, byMember map[string][]float64) {
	byMember = map[string][]float64{}
	for i, t := range tasks {
		if _, ok := byMember[t]; !ok {
			names = append(names, t)
		}
		byMember[t] = append(byMember[t], values[i])
	}
	return names, byMember
}

// macroMean is the mean of the member means.
func macroMean(values []float64, tasks []string) float64 {
	names, by := members(values, tasks)
	sum := 0.0
	for _, n := range names {
		sum += mean(by[n])
	}
	return sum / float64(len(names))
}

// aggregateMean is the series' score in the aggregate: lm-eval's mean of
// the documents (micro, or a plain task), or the mean of the member means.
func aggregateMean(s *Series, agg Aggregate) float64 {
	tasks := docTasks(s.Docs)
	if agg != Macro || len(memberSizes(tasks)) <= 1 {
		return s.Mean()
	}
	return macroMean(s.Values, tasks)
}

// finalInterval is the CI of the final score: Wilson for 0/1 scores, the
// CLT interval otherwise; under macro the CLT interval with the members as
// strata (MacroMicro).
func finalInterval(s *Series, agg Aggregate, opts CompareOptions) (lo, hi float64) {
	tasks := docTasks(s.Docs)
	if agg == Macro && len(memberSizes(tasks)) > 1 {
		names, by := members(s.Values, tasks)
		var means, ses []float64
		var sizes []int
		for _, n := range names {
			means = append(means, mean(by[n]))
			ses = append(ses, MeanStderr(by[n], s.Kind, Naive))
			sizes = append(sizes, len(by[n]))
		}
		av, err := MacroMicro(means, ses, sizes)
		if err != nil {
			return math.NaN(), math.NaN()
		}
		return CLTInterval(av.Macro, av.MacroStderr, opts.level())
	}
	if s.Binary() {
		k := 0
		for _, v := range s.Values {
			if v == 1 {
				k++
			}
		}
		return Wilson(k, len(s.Values), opts.level())
	}
	return CLTInterval(s.Mean(), MeanStderr(s.Values, s.Kind, Naive), opts.level())
}

// shapley returns each setting's Shapley value over the 2^k runs of a full
// factorial, with its paired bootstrap CI, and the interaction: the part of
// the total effect that the one-at-a-time effects do not add up to.
//
// The runs are paired on their common documents. Each Shapley value is a
// weighted sum of differences between runs, so it is the aggregate of a
// per-document contribution yᵢ; every value's CI resamples the same
// documents (one seed, one draw of indices for all of them), so the runs
// move together as the documents do.
func shapley(names []string, corners map[uint]*Series, agg Aggregate, opts CompareOptions) ([]ShapleyValue, *float64, error) {
	k := len(names)
	x, tasks, err := commonCorners(corners, k, opts.Intersect)
	if err != nil {
		return nil, nil, err
	}
	n := len(tasks)
	w := make([]float64, n)
	if agg == Macro && len(memberSizes(tasks)) > 1 {
		w = macroWeights(tasks)
	} else {
		for j := range w {
			w[j] = 1 / float64(n)
		}
	}
	fact := func(n int) float64 {
		f := 1.0
		for i := 2; i <= n; i++ {
			f *= float64(i)
		}
		return f
	}
	// estimate is the aggregate of a per-document contribution and its CI.
	estimate := func(y []float64) (v, lo, hi float64) {
		scaled := make([]float64, n)
		for j := range y {
			v += w[j] * y[j]
			scaled[j] = float64(n) * w[j] * y[j]
		}
		lo, hi = percentileInterval(meanReplicates(scaled, opts.resamples(), opts.Seed), opts.level())
		return v, lo, hi
	}
	out := make([]ShapleyValue, k)
	inter := make([]float64, n)
	for j := range inter {
		inter[j] = x[1<<k-1][j] - x[0][j]
	}
	for i := 0; i < k; i++ {
		bit := uint(1) << i
		y := make([]float64, n)
		for s := uint(0); s < 1<<k; s++ {
			if s&bit != 0 {
				continue
			}
			size := bitsSet(s)
			c := fact(size) * fact(k-size-1) / fact(k)
			for j := range y {
				y[j] += c * (x[s|bit][j] - x[s][j])
			}
		}
		v, lo, hi := estimate(y)
		out[i] = ShapleyValue{Setting: names[i], Value: v, CILow: lo, CIHigh: hi}
		for j := range inter {
			inter[j] -= x[bit][j] - x[0][j]
		}
	}
	iv := 0.0
	for j := range inter {
		iv += w[j] * inter[j]
	}
	return out, &iv, nil
}

// commonCorners pairs the factorial's runs on their common documents: the
// values of each corner on them, in the order of corner 0, and each
// document's member task.
func commonCorners(corners map[uint]*Series, k int, intersect bool) (map[uint][]float64, []string, error) {
	type key struct {
		task string
		id   int
	}
	index := make([]map[key]int, 1<<k)
	for m := uint(0); m < 1<<k; m++ {
		s := corners[m]
		index[m] = make(map[key]int, len(s.Docs))
		for i, d := range s.Docs {
			index[m][key{d.Task, d.DocID}] = i
		}
	}
	base := corners[0]
	var keep []int
	for i, d := range base.Docs {
		all := true
		for m := uint(1); m < 1<<k && all; m++ {
			_, all = index[m][key{d.Task, d.DocID}]
		}
		if all {
			keep = append(keep, i)
		}
	}
	for m := uint(0); m < 1<<k; m++ {
		if len(corners[m].Docs) != len(keep) && !intersect {
			return nil, nil, fmt.Errorf("%w: %s was scored on different documents in the factorial's runs (%d in %s, %d in all of them): compare the common ones with --intersect",
				ErrNotPaired, base.Task, len(corners[m].Docs), corners[m].File.Path, len(keep))
		}
	}
	if len(keep) == 0 {
		return nil, nil, fmt.Errorf("%w: %s has no document in common across the factorial's runs", ErrNotPaired, base.Task)
	}
	x := map[uint][]float64{}
	tasks := make([]string, len(keep))
	for j, i := range keep {
		tasks[j] = base.Docs[i].Task
	}
	for m := uint(0); m < 1<<k; m++ {
		s := corners[m]
		v := make([]float64, len(keep))
		for j, i := range keep {
			d := base.Docs[i]
			v[j] = s.Values[index[m][key{d.Task, d.DocID}]]
		}
		x[m] = v
	}
	return x, tasks, nil
}

func bitsSet(x uint) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// statement says in one sentence what the attribution found: the
// aggregate, the path, whether the residual is significant, which of the
// card's settings the final run does not have. n is the final run's
// documents, macroFinal its macro mean (shown when a group's claim states
// no aggregate).
func statement(ca ClaimAttribution, level float64, n int, macroFinal float64) string {
	pts := func(x float64) string { return fmt.Sprintf("%.1f", 100*x) }
	s := fmt.Sprintf("%s %s (%s)", ca.Task, ca.Metric, ca.Filter)
	if ca.FinalFilter != "" {
		s = fmt.Sprintf("%s %s (%s; the final score under %s)", ca.Task, ca.Metric, ca.Filter, ca.FinalFilter)
	}
	if ca.Members > 1 {
		switch {
		case ca.Aggregate == Macro:
			s += fmt.Sprintf(", macro mean over %d members", ca.Members)
		case ca.AggregateStated:
			s += fmt.Sprintf(", micro mean over %d documents", n)
		}
	}
	s += fmt.Sprintf(": card %s, baseline %s, final %s after %d steps", pts(ca.Card), pts(ca.Baseline), pts(ca.Final), len(ca.Steps))
	switch {
	case ca.UnexplainedCILow > 0:
		s += fmt.Sprintf("; the reproduction stays %s pts below the card (%.0f%% CI %s to %s): not explained by these steps",
			pts(ca.Unexplained), 100*level, pts(ca.UnexplainedCILow), pts(ca.UnexplainedCIHigh))
	case ca.UnexplainedCIHigh < 0:
		s += fmt.Sprintf("; the reproduction is %s pts above the card (%.0f%% CI %s to %s): not explained by these steps",
			pts(-ca.Unexplained), 100*level, pts(-ca.UnexplainedCIHigh), pts(-ca.UnexplainedCILow))
	default:
		s += fmt.Sprintf("; the remaining %s pts are within the final run's noise (%.0f%% CI %s to %s)",
			pts(ca.Unexplained), 100*level, pts(ca.UnexplainedCILow), pts(ca.UnexplainedCIHigh))
	}
	var card, final []string
	for _, r := range ca.Settings {
		if !r.Match {
			card = append(card, settingPhrase(r.Setting, r.Card))
			final = append(final, settingPhrase(r.Setting, r.Final))
		}
	}
	if len(card) > 0 {
		s += fmt.Sprintf("; the final run differs from the card's settings (card: %s; final run: %s)", strings.Join(card, ", "), strings.Join(final, ", "))
	}
	if ca.Members > 1 && !ca.AggregateStated {
		s += fmt.Sprintf("; the claim states no aggregate: these are lm-eval's micro means over the documents of %d members (the final run's macro mean, over members, is %s)",
			ca.Members, pts(macroFinal))
	}
	return s + "."
}

// settingPhrase says a setting's value in words: "8-shot", "chat template",
// "no template", "dtype bfloat16".
func settingPhrase(setting, value string) string {
	unset := value == ""
	switch setting {
	case "num_fewshot":
		if unset {
			return "the task's default shots"
		}
		return value + "-shot"
	case "apply_chat_template":
		switch value {
		case "", "false":
			return "no template"
		case "true":
			return "chat template"
		}
		return "chat template " + value
	case "fewshot_as_multiturn":
		if value == "true" {
			return "few-shot as turns"
		}
		return "few-shot in one turn"
	case "system_instruction":
		if unset {
			return "no system instruction"
		}
		return fmt.Sprintf("system instruction %q", value)
	}
	name := setting
	if i := strings.LastIndexByte(setting, '.'); i >= 0 {
		name = setting[i+1:]
	}
	if unset {
		return name + " unset"
	}
	return name + " " + value
}

// disagreements notes each step and variant whose paired CI and McNemar p
// fall on different sides of "no change", and why the two can.
func disagreements(ca ClaimAttribution, level float64) []string {
	if level <= 0 || level >= 1 {
		level = 0.95
	}
	alpha := 1 - level
	var notes []string
	check := func(row string, lo, hi, p float64) {
		if math.IsNaN(lo) || math.IsNaN(hi) || math.IsNaN(p) {
			return
		}
		excludes := lo > 0 || hi < 0
		switch {
		case excludes && p > alpha:
			notes = append(notes, fmt.Sprintf("%s: the %.0f%% CI excludes 0 while McNemar p = %.2g is above %.2g", row, 100*level, p, alpha))
		case !excludes && p <= alpha:
			notes = append(notes, fmt.Sprintf("%s: McNemar p = %.2g is below %.2g while the %.0f%% CI includes 0", row, p, alpha, 100*level))
		default:
			return
		}
	}
	for _, st := range ca.Steps {
		check(st.Name, st.CILow, st.CIHigh, st.P)
	}
	for _, v := range ca.Sensitivity {
		check(v.Change, v.CILow, v.CIHigh, v.P)
	}
	if len(notes) > 0 {
		notes = append(notes, "the CI resamples every document's paired difference, McNemar's exact test counts only the documents that changed; near the threshold the two can fall on different sides of it, and neither is then strong evidence")
	}
	return notes
}
