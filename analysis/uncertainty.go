package analysis

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// ScoreUncertainty is one score of a run with every uncertainty worth
// showing beside it: the intervals of ScoreIntervals (CLT, Wilson, bootstrap)
// side by side, and for a group the macro and micro averages and the
// standard error clustered by member task. Intervals are clipped to the
// metric's range (Scale); their Stderr is not, so the unclipped CLT
// interval is Value ± z·Stderr. An interval that cannot be computed is in
// Unavailable with the reason, not in Intervals.
type ScoreUncertainty struct {
	Task   string `json:"task"`   // the task, or the group whose members' documents are joined
	Metric string `json:"metric"` // the lm-eval metric ("exact_match", "acc")
	Filter string `json:"filter"` // the lm-eval filter of the metric ("strict-match", "none")
	N      int    `json:"n"`      // the documents the score is over: the logged ones, or the results file's n-samples (0 unknown)
	// Value is the score: the mean of the per-document values, or the
	// results file's value.
	Value float64 `json:"value"`
	// Scale is the metric's range and the unit it is shown in.
	Scale Scale `json:"scale"`
	// Source is SourceSamples, or SourceResults for a score the samples
	// do not have: then the CLT interval is lm-eval's own stderr.
	Source      string        `json:"source"`
	Intervals   []Interval    `json:"intervals"`             // the intervals that could be computed (clt, wilson for 0/1 values, bootstrap), clipped to Scale's range; null when none could
	Unavailable []Unavailable `json:"unavailable,omitempty"` // the intervals that could not be computed, each with why
	// Group is set for a group (e.g. mmlu) of member tasks.
	Group *GroupUncertainty `json:"group,omitempty"`
}

// Where a score comes from.
const (
	SourceSamples = "samples"
	SourceResults = "results file"
)

// Unavailable is a statistic that cannot be computed, and why: "1
// document", "not 0/1", "no samples".
type Unavailable struct {
	Method string `json:"method"` // the statistic: an interval's method ("clt", "wilson", "bootstrap") or a comparison's statistic ("mcnemar_p", "paired_ci", "paired_stderr", "unpaired_ci", "flips", "mde")
	Why    string `json:"why"`    // why it is missing: "1 document", "not 0/1", "no samples" or "lm-eval wrote no stderr"
}

// Reasons a statistic is not available, as the views print them after
// "n/a: ".
const (
	whyOneDocument = "1 document"
	whyNotBinary   = "not 0/1"
	whyNoSamples   = "no samples"
	whyNoStderr    = "lm-eval wrote no stderr"
)

// GroupUncertainty describes a group's score over its leaf tasks.
type GroupUncertainty struct {
	Averages
	// Clustered is the standard error of the micro average clustered by
	// member task (Miller 2024), ClusteredCorrected with the finite-cluster
	// correction C/(C−1).
	Clustered          float64 `json:"clustered_stderr"`
	ClusteredCorrected float64 `json:"clustered_stderr_corrected"` // Clustered times the finite-cluster correction √(C/(C−1)), C the member tasks
}

// Uncertainties is the uncertainty of every score of a run.
type Uncertainties struct {
	Run    string             `json:"run"`    // the run's results file (or, without one, its samples files' pattern or folder)
	Level  float64            `json:"level"`  // the confidence level of the intervals, a fraction (0.95 by default)
	Scores []ScoreUncertainty `json:"scores"` // every score: the logged series, then the results file's groups, then its scores the samples do not have
	// Trimmed names the series whose samples log fewer documents than
	// lm-eval scored; never nil.
	Trimmed []Trimmed `json:"trimmed_samples"`
}

// Uncertainty computes, for every task, metric and filter of a run, the
// intervals of ScoreIntervals, and for every group of the results file the
// macro/micro averages and clustered standard error over its leaves. A
// score of the results file that the samples do not have (none logged) is
// shown with lm-eval's value and stderr.
func Uncertainty(sc *Scores, level float64, seed uint64) *Uncertainties {
	if level == 0 {
		level = 0.95
	}
	out := &Uncertainties{Run: sc.Run.Output.Path(), Level: level, Trimmed: append([]Trimmed{}, sc.Trimmed...)}
	shown := map[[3]string]bool{}
	for _, s := range sc.Series {
		shown[[3]string{s.Task, s.Metric, s.Filter}] = true
		out.Scores = append(out.Scores, seriesUncertainty(s.Task, s.Metric, s.Filter, s.Values, level, seed))
	}
	r := sc.Run.Output.Results
	if r == nil {
		return out
	}
	for _, st := range r.Subtasks {
		leaves := r.Leaves(st.Group)
		if len(leaves) == 0 {
			continue
		}
		seen := map[string]bool{}
		for _, s := range sc.Series {
			key := s.Metric + "," + s.Filter
			if s.Task != leaves[0] || seen[key] {
				continue
			}
			seen[key] = true
			var values, stderrs, all []float64
			var sizes []int
			var clusters []string
			ok := true
			for _, leaf := range leaves {
				ls, found := sc.Find(leaf, s.Metric, s.Filter)
				if !found || len(ls.Values) < 2 {
					ok = false
					break
				}
				values = append(values, ls.Mean())
				stderrs = append(stderrs, MeanStderr(ls.Values, ls.Kind, Naive))
				sizes = append(sizes, len(ls.Values))
				all = append(all, ls.Values...)
				for range ls.Values {
					clusters = append(clusters, leaf)
				}
			}
			if !ok {
				continue
			}
			av, err := MacroMicro(values, stderrs, sizes)
			if err != nil {
				continue
			}
			g := &GroupUncertainty{Averages: av,
				Clustered:          ClusteredStderr(all, clusters, false),
				ClusteredCorrected: ClusteredStderr(all, clusters, true)}
			su := seriesUncertainty(st.Group, s.Metric, s.Filter, all, level, seed)
			su.Group = g
			shown[[3]string{st.Group, s.Metric, s.Filter}] = true
			out.Scores = append(out.Scores, su)
		}
	}
	for _, rep := range sc.Reported {
		if shown[[3]string{rep.Task, rep.Metric, rep.Filter}] {
			continue
		}
		out.Scores = append(out.Scores, reportedUncertainty(rep, level))
	}
	return out
}

// seriesUncertainty is the intervals of per-document values, clipped to
// the metric's scale, with the ones that cannot be computed named.
func seriesUncertainty(task, metric, filter string, xs []float64, level float64, seed uint64) ScoreUncertainty {
	su := ScoreUncertainty{Task: task, Metric: metric, Filter: filter, N: len(xs), Scale: ScaleOf(metric, xs...), Source: SourceSamples}
	ivs := ScoreIntervals(xs, level, seed)
	if len(ivs) > 0 {
		su.Value = ivs[0].Value
	}
	has := map[string]bool{}
	for _, iv := range ivs {
		has[iv.Method] = true
		if len(xs) < 2 && iv.Method != "wilson" {
			// No spread from one document: the CLT stderr is NaN and a
			// bootstrap of one value is a point.
			su.Unavailable = append(su.Unavailable, Unavailable{iv.Method, whyOneDocument})
			continue
		}
		iv.Lo, iv.Hi = su.Scale.Clip(iv.Lo, iv.Hi)
		su.Intervals = append(su.Intervals, iv)
	}
	if !has["wilson"] && len(xs) > 0 {
		su.Unavailable = append(su.Unavailable, Unavailable{"wilson", whyNotBinary})
	}
	return su
}

// reportedUncertainty is a results file's score: its CLT interval from
// lm-eval's stderr, nothing that needs the documents.
func reportedUncertainty(rep Reported, level float64) ScoreUncertainty {
	su := ScoreUncertainty{Task: rep.Task, Metric: rep.Metric, Filter: rep.Filter, N: rep.N, Value: rep.Value,
		Scale: ScaleOf(rep.Metric, rep.Value), Source: SourceResults}
	if math.IsNaN(rep.Stderr) {
		su.Unavailable = append(su.Unavailable, Unavailable{"clt", whyNoStderr})
	} else {
		lo, hi := CLTInterval(rep.Value, rep.Stderr, level)
		lo, hi = su.Scale.Clip(lo, hi)
		su.Intervals = append(su.Intervals, Interval{Value: rep.Value, Stderr: rep.Stderr, Lo: lo, Hi: hi, N: rep.N, Method: "clt"})
	}
	su.Unavailable = append(su.Unavailable, Unavailable{"wilson", whyNoSamples}, Unavailable{"bootstrap", whyNoSamples})
	return su
}

// cell is the text of one method's interval, or why there is none.
func (s ScoreUncertainty) cell(method string, withSE bool) string {
	for _, iv := range s.Intervals {
		if iv.Method == method {
			c := s.Scale.FormatCI(iv.Lo, iv.Hi, false)
			if withSE {
				c += " SE " + s.Scale.Format(iv.Stderr)
			}
			return c
		}
	}
	for _, u := range s.Unavailable {
		if u.Method == method {
			return "n/a: " + u.Why
		}
	}
	return "n/a"
}

// String renders the uncertainties as a table, each score in its unit,
// with the trimmed samples and the groups' averages below.
func (u *Uncertainties) String() string {
	var b strings.Builder
	b.WriteString(u.Table().String())
	if notes := u.notes(); len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	return b.String()
}

// notes are the lines below the table: where rows come from the results
// file, the trimmed samples, and the groups' averages.
func (u *Uncertainties) notes() []string {
	var out []string
	for _, s := range u.Scores {
		if s.Source == SourceResults {
			out = append(out, "rows from results file, no samples: lm-eval's value and stderr; no per-document statistics")
			break
		}
	}
	for _, t := range u.Trimmed {
		out = append(out, "warning: "+t.String())
	}
	for _, s := range u.Scores {
		if s.Group != nil {
			out = append(out, s.groupLine())
		}
	}
	return out
}

// groupLine describes a group's averages in one sentence.
func (s ScoreUncertainty) groupLine() string {
	g := s.Group
	f := s.Scale.Format
	return fmt.Sprintf("%s %s,%s over %d members (%s): micro %s ± %s, macro %s ± %s (the mean of the member scores, what model cards usually report); SE clustered by member %s (%s with the finite-cluster correction)",
		s.Task, s.Metric, s.Filter, g.K, s.Scale.Unit, f(g.Micro), f(g.MicroStderr), f(g.Macro), f(g.MacroStderr), f(g.Clustered), f(g.ClusteredCorrected))
}

// HTML renders the table for a notebook, with the notes below.
func (u *Uncertainties) HTML() string {
	var b strings.Builder
	b.WriteString(u.Table().HTML())
	for _, n := range u.notes() {
		b.WriteString("\n<p>" + html.EscapeString(n) + "</p>")
	}
	return b.String()
}
