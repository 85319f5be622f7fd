package history

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/internal/quote"
)

// HTML renders the history as a self-contained page: the checkpoints in
// order with the gate's verdicts, then per task, metric and filter the
// trend plot (PNG embedded), its numbers and the flips between
// consecutive checkpoints. Every string from a capsule is escaped.
func (h *History) HTML() string {
	var b strings.Builder
	e := html.EscapeString
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>History of a model line</title>\n")
	b.WriteString(`<style>body{font-family:Arial,Helvetica,sans-serif;max-width:60em;margin:1em auto;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}
td.num{text-align:right}.regression{color:#D55E00;font-weight:bold}.pass{color:#0072B2}.refused{color:#CC79A7;font-weight:bold}.not-gated{color:#808080}
section{margin-top:2em}</style></head><body>
`)
	b.WriteString("<h1>History of a model line</h1>\n")
	fmt.Fprintf(&b, "<p>%d checkpoints, ordered by %s (%s). Baseline: <strong>%s</strong>.</p>\n",
		len(h.Checkpoints), e(h.Order), e(h.OrderReason), e(h.Baseline))
	if len(h.Verdicts) > 0 {
		fmt.Fprintf(&b, "<p>Gate: %s</p>\n", e(h.Policy))
	} else {
		b.WriteString("<p>Gate: not run.</p>\n")
	}
	b.WriteString("<table id=\"checkpoints\"><caption>Checkpoints</caption><thead><tr><th>#</th><th>checkpoint</th><th>step</th><th>model</th><th>digest</th><th>verdict</th><th>what failed or changed</th></tr></thead><tbody>\n")
	for i, c := range h.Checkpoints {
		step := ""
		if c.Step >= 0 {
			step = strconv.FormatInt(c.Step, 10)
		}
		verdict, why := "", ""
		if i < len(h.Verdicts) {
			v := h.Verdicts[i]
			verdict = v.Verdict
			why = strings.Join(v.Reasons, "; ")
		}
		fmt.Fprintf(&b, "<tr class=\"checkpoint\" data-name=\"%s\"><td class=\"num\">%d</td><td>%s</td><td class=\"num\">%s</td><td>%s</td><td><code>%s</code></td><td class=\"%s\">%s</td><td>%s</td></tr>\n",
			e(c.Name), i+1, e(c.Name), step, e(c.Model), e(shortDigest(c.Digest)), e(verdict), e(verdict), e(why))
	}
	b.WriteString("</tbody></table>\n")
	// Tasks a group joins (mmlu's subjects) are folded away below the
	// others, drawn only where the gate flagged them.
	var members []*Trend
	for _, t := range h.Trends {
		if t.Group != "" {
			members = append(members, t)
			continue
		}
		h.trendHTML(&b, t, true)
	}
	if len(members) > 0 {
		fmt.Fprintf(&b, "<details><summary>%d tasks that groups join (plots only where the gate flagged them)</summary>\n", len(members))
		for _, t := range members {
			flagged := false
			for i := range t.Points {
				flagged = flagged || h.failedIn(i, t)
			}
			h.trendHTML(&b, t, flagged)
		}
		b.WriteString("</details>\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// trendHTML writes one trend's section: its plot (when plot is set), its
// numbers and its flips.
func (h *History) trendHTML(b *strings.Builder, t *Trend, plot bool) {
	e := html.EscapeString
	title := t.Task + " " + t.Metric + "," + t.Filter
	class := "trend"
	if t.Group != "" {
		class += " member"
	}
	fmt.Fprintf(b, "<section class=\"%s\" data-task=\"%s\" data-group=\"%s\"><h2>%s</h2>\n", class, e(t.Task), e(t.Group), e(title))
	if plot {
		b.WriteString(analysis.Trend(title, h.trendPoints(t), t.Baseline).HTML())
	}
	b.WriteString("\n<table><thead><tr><th>checkpoint</th><th>score</th><th>95 % CI</th><th>n</th><th>gate</th></tr></thead><tbody>\n")
	for i, p := range t.Points {
		verdict := ""
		if i < len(h.Verdicts) {
			v := h.Verdicts[i]
			verdict = v.Verdict
			if verdict != "baseline" {
				verdict = v.Metrics[FailedKey(t.Task, t.Metric, t.Filter)]
			}
		}
		if p.Missing {
			fmt.Fprintf(b, "<tr><td>%s</td><td>n/a</td><td></td><td></td><td>%s</td></tr>\n", e(p.Checkpoint), e(verdict))
			continue
		}
		fmt.Fprintf(b, "<tr><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%d</td><td class=\"%s\">%s</td></tr>\n",
			e(p.Checkpoint), num(p.Value), ci(p.Low, p.High), p.N, e(verdict), e(verdict))
	}
	b.WriteString("</tbody></table>\n")
	if len(t.Flips) > 0 {
		b.WriteString("<table class=\"flips\"><caption>Documents that flipped</caption><thead><tr><th>from</th><th>to</th><th>common</th><th>right→wrong</th><th>first doc ids</th><th>wrong→right</th><th>first doc ids</th></tr></thead><tbody>\n")
		for _, f := range t.Flips {
			fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td class=\"num\">%d</td><td class=\"num\">%d</td><td>%s</td><td class=\"num\">%d</td><td>%s</td></tr>\n",
				e(f.From), e(f.To), f.Common, f.RightToWrong, ids(f.FirstRightToWrong, f.RightToWrong), f.WrongToRight, ids(f.FirstWrongToRight, f.WrongToRight))
		}
		b.WriteString("</tbody></table>\n")
	}
	b.WriteString("</section>\n")
}

// trendPoints are a trend's points for the plot, flagged where the gate
// found this task and metric regressed.
func (h *History) trendPoints(t *Trend) []analysis.TrendPoint {
	pts := make([]analysis.TrendPoint, len(t.Points))
	for i, p := range t.Points {
		pts[i] = analysis.TrendPoint{Label: p.Checkpoint, Value: p.Value, Lo: p.Low, Hi: p.High, Missing: p.Missing, Flagged: h.failedIn(i, t)}
	}
	return pts
}

// failedIn reports whether the gate's verdict on checkpoint i names t's
// task and metric among those that regressed.
func (h *History) failedIn(i int, t *Trend) bool {
	if i >= len(h.Verdicts) || h.Verdicts[i].Verdict != "regression" {
		return false
	}
	for _, f := range h.Verdicts[i].Failed {
		if f == FailedKey(t.Task, t.Metric, t.Filter) {
			return true
		}
	}
	return false
}

// FailedKey is how a Verdict names a task, metric and filter that
// regressed: "task metric,filter".
func FailedKey(task, metric, filter string) string { return task + " " + metric + "," + filter }

func shortDigest(d string) string {
	if len(d) > 7+12 {
		return d[:7+12]
	}
	return d
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

func ci(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "n/a"
	}
	return "[" + num(lo) + ", " + num(hi) + "]"
}

func ids(first []string, n int) string {
	out := html.EscapeString(strings.Join(first, ", "))
	if n > len(first) {
		out += ", …"
	}
	return out
}

// Text renders the history for a terminal: one line per checkpoint with
// its verdict, then per trend the scores in order; strings from capsules
// are escaped (internal/quote).
func (h *History) Text() string {
	var b strings.Builder
	q := quote.Text
	fmt.Fprintf(&b, "%d checkpoints, ordered by %s (%s); baseline %s\n", len(h.Checkpoints), h.Order, h.OrderReason, q(h.Baseline))
	if len(h.Verdicts) > 0 {
		fmt.Fprintf(&b, "gate: %s\n", q(h.Policy))
	}
	for i, c := range h.Checkpoints {
		v := ""
		if i < len(h.Verdicts) {
			v = h.Verdicts[i].Verdict
			if len(h.Verdicts[i].Reasons) > 0 {
				v += ": " + q(strings.Join(h.Verdicts[i].Reasons, "; "))
			}
		}
		fmt.Fprintf(&b, "  %2d  %-28s %s\n", i+1, q(c.Name), v)
	}
	for _, t := range h.Trends {
		fmt.Fprintf(&b, "%s %s,%s:", q(t.Task), q(t.Metric), q(t.Filter))
		for _, p := range t.Points {
			fmt.Fprintf(&b, " %s", num(p.Value))
		}
		b.WriteString("\n")
	}
	return b.String()
}
