package analysis

import (
	"fmt"
	"html"
	"strings"
	"text/tabwriter"
)

// ScoreUncertainty is one score of a run with every uncertainty worth
// showing beside it: the intervals of ScoreIntervals (CLT, Wilson, bootstrap)
// side by side, and for a group the macro and micro averages and the
// standard error clustered by member task.
type ScoreUncertainty struct {
	Task      string     `json:"task"`
	Metric    string     `json:"metric"`
	Filter    string     `json:"filter"`
	N         int        `json:"n"`
	Intervals []Interval `json:"intervals"`
	// Group is set for a group (e.g. mmlu) of member tasks.
	Group *GroupUncertainty `json:"group,omitempty"`
}

// GroupUncertainty describes a group's score over its leaf tasks.
type GroupUncertainty struct {
	Averages
	// Clustered is the standard error of the micro average clustered by
	// member task (Miller 2024), ClusteredCorrected with the finite-cluster
	// correction C/(C−1).
	Clustered          float64 `json:"clustered_stderr"`
	ClusteredCorrected float64 `json:"clustered_stderr_corrected"`
}

// Uncertainties is the uncertainty of every score of a run.
type Uncertainties struct {
	Run    string             `json:"run"`
	Level  float64            `json:"level"`
	Scores []ScoreUncertainty `json:"scores"`
}

// Uncertainty computes, for every task, metric and filter of a run, the
// intervals of ScoreIntervals, and for every group of the results file the
// macro/micro averages and clustered standard error over its leaves.
func Uncertainty(sc *Scores, level float64, seed uint64) *Uncertainties {
	if level == 0 {
		level = 0.95
	}
	out := &Uncertainties{Run: sc.Run.Output.Path(), Level: level}
	for _, s := range sc.Series {
		out.Scores = append(out.Scores, ScoreUncertainty{Task: s.Task, Metric: s.Metric, Filter: s.Filter, N: len(s.Values),
			Intervals: ScoreIntervals(s.Values, level, seed)})
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
			out.Scores = append(out.Scores, ScoreUncertainty{Task: st.Group, Metric: s.Metric, Filter: s.Filter, N: len(all),
				Intervals: ScoreIntervals(all, level, seed), Group: g})
		}
	}
	return out
}

// String renders the uncertainties as a table, in points.
func (u *Uncertainties) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%.0f %% intervals, points)\n", u.Run, 100*u.Level)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tMETRIC\tFILTER\tN\tSCORE\tCLT\tWILSON\tBOOTSTRAP")
	for _, s := range u.Scores {
		cells := map[string]string{}
		score := "-"
		for _, iv := range s.Intervals {
			cells[iv.Method] = fmt.Sprintf("[%.2f, %.2f]", 100*iv.Lo, 100*iv.Hi)
			score = fmt.Sprintf("%.2f", 100*iv.Value)
		}
		cell := func(m string) string {
			if c, ok := cells[m]; ok {
				return c
			}
			return "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", s.Task, s.Metric, s.Filter, s.N, score, cell("clt"), cell("wilson"), cell("bootstrap"))
	}
	tw.Flush()
	for _, s := range u.Scores {
		if s.Group != nil {
			fmt.Fprintf(&b, "\n%s\n", s.groupLine())
		}
	}
	return b.String()
}

// groupLine describes a group's averages in one sentence.
func (s ScoreUncertainty) groupLine() string {
	g := s.Group
	return fmt.Sprintf("%s %s,%s over %d members: micro %.2f ± %.2f, macro %.2f ± %.2f (the mean of the member scores, what model cards usually report); SE clustered by member %.2f (%.2f with the finite-cluster correction)",
		s.Task, s.Metric, s.Filter, g.K, 100*g.Micro, 100*g.MicroStderr, 100*g.Macro, 100*g.MacroStderr, 100*g.Clustered, 100*g.ClusteredCorrected)
}

// HTML renders the table for a notebook, with the groups' averages below.
func (u *Uncertainties) HTML() string {
	var b strings.Builder
	b.WriteString(u.Table().HTML())
	for _, s := range u.Scores {
		if s.Group != nil {
			b.WriteString("\n<p>" + html.EscapeString(s.groupLine()) + "</p>")
		}
	}
	return b.String()
}
