package analysis

import (
	"fmt"
	"math"
	"strings"
)

// Lookup returns the series of a task, metric and filter the way a model
// card names them: the filter may be spelled with '-' or '_' (strict-match
// in gsm8k, strict_match in gsm8k_llama), and the task may be a group
// (mmlu, mmlu_llama), whose series is its leaf tasks' documents joined.
func (sc *Scores) Lookup(task, metric, filter string) (*Series, error) {
	if s, ok := sc.find(task, metric, filter); ok {
		return s, nil
	}
	if r := sc.Run.Output.Results; r != nil && r.IsGroup(task) {
		return sc.joinGroup(task, metric, filter)
	}
	return nil, fmt.Errorf("%w: %s has no %s,%s for task %s (its samples hold %s)",
		ErrNoSeries, sc.Run.Output.Path(), metric, filter, task, seriesNames(sc))
}

// find is Find with the filter's '-' and '_' taken as the same.
func (sc *Scores) find(task, metric, filter string) (*Series, bool) {
	if s, ok := sc.Find(task, metric, filter); ok {
		return s, true
	}
	norm := func(s string) string { return strings.ReplaceAll(s, "-", "_") }
	for _, s := range sc.Series {
		if s.Task == task && s.Metric == metric && norm(s.Filter) == norm(filter) {
			return s, true
		}
	}
	return nil, false
}

// joinGroup joins the documents of a group's leaf tasks, in leaf order, into
// one series named after the group, whose mean is the group's score when
// lm-eval weights members by size (weight_by_size: true, as mmlu does). A
// group averaged over its members' scores instead is refused: a comparison
// over its documents would explain a different number from the one
// reported.
func (sc *Scores) joinGroup(group, metric, filter string) (*Series, error) {
	r := sc.Run.Output.Results
	leaves := r.Leaves(group)
	out := &Series{Task: group, Metric: metric, Filter: filter}
	var means []float64
	for i, leaf := range leaves {
		s, ok := sc.find(leaf, metric, filter)
		if !ok {
			return nil, fmt.Errorf("%w: group %s of %s: its member %s has no %s,%s in the samples",
				ErrNoSeries, group, sc.Run.Output.Path(), leaf, metric, filter)
		}
		if i == 0 {
			out.Filter, out.Kind = s.Filter, s.Kind
		} else if s.Kind != out.Kind {
			out.Kind = PyFloat
		}
		for _, d := range s.Docs {
			d.Task = leaf
			out.Docs = append(out.Docs, d)
		}
		out.Values = append(out.Values, s.Values...)
		means = append(means, s.Mean())
	}
	if len(out.Values) == 0 {
		return nil, fmt.Errorf("%w: group %s of %s has no member with samples", ErrNoSeries, group, sc.Run.Output.Path())
	}
	reported, ok := reportedValue(sc, group, metric, out.Filter)
	if !ok {
		return out, nil
	}
	micro := out.Mean()
	var macro float64
	for _, m := range means {
		macro += m
	}
	macro /= float64(len(means))
	if !sameScore(reported, micro) {
		how := fmt.Sprintf("the mean over its %d documents is %.6g", len(out.Values), micro)
		if sameScore(reported, macro) {
			how += fmt.Sprintf(" and the mean of its %d member scores %.6g: lm-eval averaged the members without weighting them by size (weight_by_size: false)", len(means), macro)
		}
		return nil, fmt.Errorf("%w: group %s of %s: lm-eval reported %s,%s = %.6g, but %s; pair its members one by one instead",
			ErrGroupNotJoinable, group, sc.Run.Output.Path(), metric, out.Filter, reported, how)
	}
	return out, nil
}

// joined reports whether s is a group's joined series.
func (s *Series) joined() bool { return len(s.Docs) > 0 && s.Docs[0].Task != "" }

// sameScore reports whether a group score lm-eval computed as Σ mᵢnᵢ / Σ nᵢ
// and the mean of the joined documents are the same number up to rounding.
func sameScore(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a))
}

// reportedValue is the value lm-eval reported for a task's metric and filter.
func reportedValue(sc *Scores, task, metric, filter string) (float64, bool) {
	tr, ok := sc.Run.Output.Results.Task(task)
	if !ok {
		return 0, false
	}
	for _, m := range tr.Metrics {
		if m.Metric == metric && m.Filter == filter {
			return m.Value.Float()
		}
	}
	return 0, false
}

func seriesNames(sc *Scores) string {
	var out []string
	for _, s := range sc.Series {
		out = append(out, s.Task+" "+s.Metric+","+s.Filter)
	}
	if len(out) > 6 {
		out = append(out[:6], fmt.Sprintf("and %d more", len(out)-6))
	}
	return strings.Join(out, ", ")
}
