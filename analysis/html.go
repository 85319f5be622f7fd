package analysis

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// HTMLTable is a table as notebooks and reports show it. Every cell is
// plain text, escaped when rendered, so that a model's output can never
// become markup.
type HTMLTable struct {
	Caption string
	Head    []string
	Rows    [][]string
	// Numeric marks the columns (by index) aligned right.
	Numeric map[int]bool
}

// HTML renders the table.
func (t HTMLTable) HTML() string {
	var b strings.Builder
	b.WriteString("<table>")
	if t.Caption != "" {
		b.WriteString("<caption style=\"text-align:left\">" + html.EscapeString(t.Caption) + "</caption>")
	}
	cell := func(tag string, i int, s string) {
		b.WriteString("<" + tag)
		if t.Numeric[i] {
			b.WriteString(` style="text-align:right"`)
		} else {
			b.WriteString(` style="text-align:left"`)
		}
		b.WriteString(">" + html.EscapeString(s) + "</" + tag + ">")
	}
	b.WriteString("<thead><tr>")
	for i, h := range t.Head {
		cell("th", i, h)
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for i, c := range r {
			cell("td", i, c)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table>")
	return b.String()
}

// String renders the table as aligned plain text, the fallback where
// HTML is not shown.
func (t HTMLTable) String() string {
	var b strings.Builder
	if t.Caption != "" {
		b.WriteString(t.Caption + "\n")
	}
	var rows strings.Builder
	tw := tabwriter.NewWriter(&rows, 0, 0, 2, ' ', 0)
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				tw.Write([]byte("\t"))
			}
			tw.Write([]byte(strings.NewReplacer("\n", "⏎", "\t", " ").Replace(c)))
		}
		tw.Write([]byte("\n"))
	}
	line(t.Head)
	for _, r := range t.Rows {
		line(r)
	}
	tw.Flush()
	// Empty last cells leave padding at the end of their line.
	for _, l := range strings.SplitAfter(rows.String(), "\n") {
		if l != "" {
			b.WriteString(strings.TrimRight(l, " \n") + "\n")
		}
	}
	return b.String()
}

// numeric marks columns as numeric.
func numeric(cols ...int) map[int]bool {
	m := map[int]bool{}
	for _, c := range cols {
		m[c] = true
	}
	return m
}

// points shows a score of a [0, 1] metric in points (percent), "–" for
// NaN. A metric on another scale takes its Scale's Format (MetricScale).
func points(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.2f", 100*x)
}

// signedPoints shows a difference of a [0, 1] metric in points.
func signedPoints(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%+.2f", 100*x)
}

// ciPoints shows a confidence interval of a difference of a [0, 1] metric
// in points, clipped to [-1, 1], the range of such a difference. Another
// metric takes its Scale: MetricScale(m).Diff().FormatCI(lo, hi, true).
func ciPoints(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "–"
	}
	d := pointsScale.Diff()
	lo, hi = d.Clip(lo, hi)
	return d.FormatCI(lo, hi, true)
}

// pointsScale is the scale of a [0, 1] metric.
var pointsScale = MetricScale("acc")

// pValue shows a p-value.
func pValue(p float64) string {
	if math.IsNaN(p) {
		return "–"
	}
	return fmt.Sprintf("%.2g", p)
}

// Table is one run's re-scoring checks, the numbers in full precision
// (they are compared bit for bit).
func (r *RunReport) Table() HTMLTable {
	caption := r.Path + ": lm-eval " + r.LMEvalVersion
	if r.PythonVersion != "" {
		caption += ", Python " + r.PythonVersion
	}
	t := HTMLTable{
		Caption: caption,
		Head:    []string{"task", "metric", "filter", "n", "reported", "recomputed", "reported stderr", "recomputed stderr", "level", "status", "how, or why not"},
		Numeric: numeric(3, 4, 5, 6, 7),
	}
	for _, c := range r.Checks {
		t.Rows = append(t.Rows, []string{c.Task, c.Metric, c.Filter, fmt.Sprint(c.N),
			c.Reported.String(), c.Recomputed.String(), c.ReportedStderr.String(), c.RecomputedStderr.String(),
			string(c.Level), string(c.Status), c.Reason})
	}
	return t
}

// HTML renders the re-scoring report for a notebook: the counts, then a
// table per run.
func (r *RescoreReport) HTML() string {
	exact, differs, none := r.Counts()
	var b strings.Builder
	fmt.Fprintf(&b, "<p><strong>%d numbers recomputed exactly, %d differ, %d not recomputable.</strong></p>", exact, differs, none)
	for _, run := range r.Runs {
		b.WriteString("\n" + run.Table().HTML())
	}
	return b.String()
}

// Table is the comparisons as one table, each row in its metric's unit
// (points: ×100, for metrics in [0, 1]); a statistic that cannot be
// computed says why ("n/a: not 0/1").
func (cs *Comparisons) Table() HTMLTable {
	t := HTMLTable{
		Caption: fmt.Sprintf("A: %s, B: %s (Δ = B − A in the unit of each row; 95 %% CIs, clipped to the range of a difference; n: documents both runs logged)", cs.A, cs.B),
		Head: []string{"task", "metric", "filter", "unit", "n (common docs)", "A", "B", "Δ", "paired CI", "unpaired CI", "McNemar p",
			"right in A only", "right in B only", "MDE", "prompts changed"},
		Numeric: numeric(4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14),
	}
	for _, c := range cs.Comparisons {
		sc := c.scale()
		d := sc.Diff()
		na := func(stat, v string) string {
			if why := c.unavailable(stat); why != "" {
				return "n/a: " + why
			}
			return v
		}
		n := fmt.Sprint(c.N)
		if c.Unpaired != "" {
			n = fmt.Sprintf("n/a: unpaired (A %s, B %s)", docCount(c.NA), docCount(c.NB))
		}
		t.Rows = append(t.Rows, []string{c.Task, c.Metric, c.Filter, sc.Unit, n, sc.Format(c.A), sc.Format(c.B),
			d.FormatDelta(c.Delta), na(statPairedCI, d.FormatCI(c.CILow, c.CIHigh, true)),
			na(statUnpairedCI, d.FormatCI(c.UnpairedCILow, c.UnpairedCIHigh, true)),
			na(statMcNemar, pValue(c.McNemarP)), na(statFlips, fmt.Sprint(c.AOnly)), na(statFlips, fmt.Sprint(c.BOnly)),
			na(statMDE, d.Format(c.MDE)), na(statFlips, fmt.Sprint(c.PromptsChanged))})
	}
	return t
}

// docCount shows a number of documents, "?" when unknown (0).
func docCount(n int) string {
	if n == 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

// HTML renders the comparisons for a notebook, with the changed prompts of
// each task shown once (every metric and filter of a task shares them).
func (cs *Comparisons) HTML() string {
	var b strings.Builder
	b.WriteString(cs.Table().HTML())
	for _, d := range cs.promptDiffs() {
		fmt.Fprintf(&b, "\n<p>%s doc_id %d: prompt A → B</p><pre>%s</pre>", html.EscapeString(d.task), d.DocID, html.EscapeString(d.Diff))
	}
	if len(cs.PromptSets) > 0 {
		b.WriteString("\n<p>" + html.EscapeString(cs.promptSetsLine()) + "</p>")
	}
	if len(cs.Skipped) > 0 {
		b.WriteString("\n<p>Not compared: " + html.EscapeString(strings.Join(cs.Skipped, "; ")) + "</p>")
	}
	for _, n := range cs.notes() {
		b.WriteString("\n<p>" + html.EscapeString(n) + "</p>")
	}
	return b.String()
}

// ClassTable counts the misses per class.
func (fr *FailureReport) ClassTable() HTMLTable {
	t := HTMLTable{Head: []string{"class", "misses", "share"}, Numeric: numeric(1, 2)}
	for _, c := range fr.ClassOrder() {
		share := "–"
		if fr.NMisses > 0 {
			share = fmt.Sprintf("%.1f %%", 100*float64(fr.Classes[c])/float64(fr.NMisses))
		}
		t.Rows = append(t.Rows, []string{string(c), fmt.Sprint(fr.Classes[c]), share})
	}
	return t
}

// SampleTable is the sample of misses. A generated answer's row has the
// target, the final answer the classes read, what each filter extracted and
// how the output ends; a multiple-choice row the gold and the chosen choice
// with their log-likelihoods and the probability margin of the chosen one.
func (fr *FailureReport) SampleTable() HTMLTable {
	labelled := fr.Agreement != nil
	for _, f := range fr.Samples {
		labelled = labelled || f.Label != ""
	}
	t := HTMLTable{
		Caption: fmt.Sprintf("a seeded sample of %d misses", len(fr.Samples)),
		Head:    []string{"doc_id", "class", "target (last line)", "final answer", "extracted by each filter", "end of the output"},
		Numeric: numeric(0),
	}
	if fr.MultipleChoice {
		t.Head = []string{"doc_id", "class", "gold", "gold log-likelihood", "chosen", "chosen log-likelihood", "p(chosen) − p(gold)"}
		t.Numeric = numeric(0, 3, 5, 6)
	}
	if labelled {
		t.Head = slices.Insert(t.Head, 2, "hand label")
		t.Numeric = shift(t.Numeric, 2)
	}
	grouped := len(fr.Samples) > 0 && fr.Samples[0].Task != ""
	if grouped {
		t.Head = slices.Insert(t.Head, 0, "task")
		t.Numeric = shift(t.Numeric, 0)
	}
	for _, f := range fr.Samples {
		var row []string
		if fr.MultipleChoice {
			margin := "–" // the gold is not among the choices
			if f.Gold != nil && f.Chosen != nil {
				margin = fmt.Sprintf("%.3f", f.Chosen.Probability-f.Gold.Probability)
			}
			row = []string{fmt.Sprint(f.DocID), string(f.Class), f.Gold.label(), f.Gold.ll(), f.Chosen.label(), f.Chosen.ll(), margin}
		} else {
			var ex []string
			for _, k := range f.filters() {
				ex = append(ex, k+": "+f.Extracted[k])
			}
			row = []string{fmt.Sprint(f.DocID), string(f.Class), f.targetLine(), f.FinalAnswer, strings.Join(ex, "; "), "…" + f.OutputTail}
		}
		if labelled {
			row = slices.Insert(row, 2, string(f.Label))
		}
		if grouped {
			row = slices.Insert(row, 0, f.Task)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// shift moves the numeric columns at or after i one to the right, for a
// column inserted at i.
func shift(cols map[int]bool, i int) map[int]bool {
	out := map[int]bool{}
	for c := range cols {
		if c >= i {
			c++
		}
		out[c] = true
	}
	return out
}

// label names a choice by its index and quoted text; "–" for none.
func (c *ChoiceScore) label() string {
	if c == nil {
		return "–"
	}
	return fmt.Sprintf("%d %q", c.Index, c.Text)
}

// ll is a choice's log-likelihood as logged, "–" for none.
func (c *ChoiceScore) ll() string {
	if c == nil {
		return "–"
	}
	return strconv.FormatFloat(c.LogLikelihood, 'g', -1, 64)
}

// summary says how many documents missed.
func (fr *FailureReport) summary() string {
	return fmt.Sprintf("%s %s (%s): %d misses of %d documents", fr.Task, fr.Metric, fr.Filter, fr.NMisses, fr.N)
}

// HTML renders the classes, the agreement with hand labels when there are
// any, and the sample of misses.
func (fr *FailureReport) HTML() string {
	var b strings.Builder
	b.WriteString("<p>" + html.EscapeString(fr.summary()) + "</p>\n")
	b.WriteString(fr.ClassTable().HTML())
	if len(fr.Unread) > 0 {
		b.WriteString("\n<p>Not read (no samples): " + html.EscapeString(strings.Join(fr.Unread, ", ")) + "</p>")
	}
	if a := fr.Agreement; a != nil {
		fmt.Fprintf(&b, "\n<p>Hand labels: %d, of which %d agree with the automatic class (Cohen's κ %.2f).</p>",
			a.Labelled, a.Agree, a.Kappa)
	}
	b.WriteString("\n" + fr.SampleTable().HTML())
	return b.String()
}

// aggregateCaption names the claim's aggregate for a table caption.
func (ca ClaimAttribution) aggregateCaption() string {
	switch {
	case ca.Members <= 1:
		return ""
	case ca.Aggregate == Macro:
		return fmt.Sprintf(", macro mean over %d members", ca.Members)
	case ca.AggregateStated:
		return ", micro mean over the documents"
	}
	return ", micro mean over the documents (the claim states no aggregate)"
}

// StepTable is the attribution path of one claim, in points: baseline,
// each step, final, card and the unexplained rest, with each step's raw
// and Holm-adjusted McNemar p.
func (ca ClaimAttribution) StepTable() HTMLTable {
	t := HTMLTable{
		Caption: fmt.Sprintf("%s %s (%s)%s, points", ca.Task, ca.Metric, ca.Filter, ca.aggregateCaption()),
		Head:    []string{"step", "kind", "score", "Δ", "95 % CI", "McNemar p", "Holm p"},
		Numeric: numeric(2, 3, 4, 5, 6),
	}
	t.Rows = append(t.Rows, []string{"card", "", points(ca.Card), "", "", "", ""},
		[]string{"baseline", "run", points(ca.Baseline), "", "", "", ""})
	for _, st := range ca.Steps {
		t.Rows = append(t.Rows, []string{st.Name, st.Kind, points(st.Value), signedPoints(st.Delta), ciPoints(st.CILow, st.CIHigh), pValue(st.P), pValue(st.PHolm)})
	}
	t.Rows = append(t.Rows, []string{"final", "", points(ca.Final), signedPoints(ca.Final - ca.Baseline), "", "", ""},
		[]string{"unexplained (card − final)", "", "", signedPoints(ca.Unexplained), ciPoints(ca.UnexplainedCILow, ca.UnexplainedCIHigh), "", ""})
	return t
}

// SensitivityTable is the one-change variants of the baseline, in points.
func (ca ClaimAttribution) SensitivityTable() HTMLTable {
	t := HTMLTable{
		Caption: "sensitivity: one change from the baseline each",
		Head:    []string{"change", "score", "Δ from baseline", "95 % CI", "McNemar p", "Holm p"},
		Numeric: numeric(1, 2, 3, 4, 5),
	}
	for _, s := range ca.Sensitivity {
		t.Rows = append(t.Rows, []string{s.Change, points(s.Value), signedPoints(s.Delta), ciPoints(s.CILow, s.CIHigh), pValue(s.P), pValue(s.PHolm)})
	}
	return t
}

// SettingsTable is the settings the card states for the claim beside the
// baseline's and the final run's; "–" where a run leaves the setting to
// lm-eval or the task.
func (ca ClaimAttribution) SettingsTable() HTMLTable {
	t := HTMLTable{Caption: "settings: the card's against the runs'", Head: []string{"setting", "card", "baseline", "final run", "match"}}
	dash := func(s string) string {
		if s == "" {
			return "–"
		}
		return s
	}
	for _, r := range ca.Settings {
		match := "yes"
		if !r.Match {
			match = "NO"
		}
		t.Rows = append(t.Rows, []string{r.Setting, dash(r.Card), dash(r.Baseline), dash(r.Final), match})
	}
	return t
}

// ShapleyTable is the order-independent attribution of a full factorial,
// in points, each value with its paired bootstrap CI, and the interaction
// no single setting carries; no rows otherwise.
func (ca ClaimAttribution) ShapleyTable() HTMLTable {
	t := HTMLTable{Caption: "Shapley attribution (order-independent), points", Head: []string{"setting", "share of the total effect", "95 % CI"}, Numeric: numeric(1, 2)}
	for _, v := range ca.Shapley {
		t.Rows = append(t.Rows, []string{v.Setting, signedPoints(v.Value), ciPoints(v.CILow, v.CIHigh)})
	}
	if ca.Interaction != nil {
		t.Rows = append(t.Rows, []string{"interaction (no single setting)", signedPoints(*ca.Interaction), ""})
	}
	return t
}

// HTML renders the claim's path, its settings beside the card's, its
// sensitivity and, for a full factorial, the Shapley attribution.
func (ca ClaimAttribution) HTML() string {
	var b strings.Builder
	if ca.Statement != "" {
		b.WriteString("<p>" + html.EscapeString(ca.Statement) + "</p>\n")
	}
	b.WriteString(ca.StepTable().HTML())
	if len(ca.Settings) > 0 {
		b.WriteString("\n" + ca.SettingsTable().HTML())
	}
	if len(ca.Sensitivity) > 0 {
		b.WriteString("\n" + ca.SensitivityTable().HTML())
	}
	if ca.HolmFamily != "" {
		b.WriteString("\n<p>Holm p: " + html.EscapeString(ca.HolmFamily) + ".</p>")
	}
	for _, n := range ca.Notes {
		b.WriteString("\n<p class=\"note\">Note: " + html.EscapeString(n) + ".</p>")
	}
	if len(ca.Shapley) > 0 {
		b.WriteString("\n" + ca.ShapleyTable().HTML())
	}
	return b.String()
}

// HTML renders every claim's attribution.
func (a *Attribution) HTML() string {
	var b strings.Builder
	if a.Simulated {
		b.WriteString("<p><strong>SIMULATED</strong>: " + html.EscapeString(simulatedNote) + "</p>\n")
	}
	for i, ca := range a.Claims {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(ca.HTML())
	}
	return b.String()
}

// Table is the uncertainties as one table: each score with its intervals
// side by side, in the unit of its row (points: ×100, for metrics in
// [0, 1]), or why an interval is not there.
func (u *Uncertainties) Table() HTMLTable {
	t := HTMLTable{
		Caption: fmt.Sprintf("%s (%.0f %% intervals, clipped to the metric's range; unit per row)", u.Run, 100*u.Level),
		Head:    []string{"task", "metric", "filter", "n", "unit", "score", "CLT", "Wilson", "bootstrap", "from"},
		Numeric: numeric(3, 5, 6, 7, 8),
	}
	for _, s := range u.Scores {
		t.Rows = append(t.Rows, []string{s.Task, s.Metric, s.Filter, fmt.Sprint(s.N), s.Scale.Unit, s.Scale.Format(s.Value),
			s.cell("clt", true), s.cell("wilson", true), s.cell("bootstrap", true), s.Source})
	}
	return t
}
