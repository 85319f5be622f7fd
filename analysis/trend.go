package analysis

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TrendPoint is one checkpoint of a Trend: its score with the CI, and
// whether the gate flagged it.
type TrendPoint struct {
	Label         string
	Value, Lo, Hi float64
	Flagged       bool // drawn in vermillion (a regression)
	Missing       bool // the checkpoint lacks the score: no point drawn

}

// Trend draws a score over checkpoints, left to right in the order given:
// each checkpoint's value with its CI as a vertical whisker, joined by a
// line, the flagged ones in vermillion, and the baseline value (NaN: none)
// as a dashed line across. Scores in [0, 1] are drawn in percent points.
func Trend(title string, points []TrendPoint, baseline float64) *Plot {
	out := &Plot{w: 6.5 * vg.Inch, h: 3 * vg.Inch}
	var vs []float64
	for _, pt := range points {
		if pt.Missing {
			continue
		}
		if err := checkFinite("trend "+title, pt.Value); err != nil {
			out.err = err
			return out
		}
		vs = append(vs, pt.Value)
		for _, b := range []float64{pt.Lo, pt.Hi} {
			if !math.IsNaN(b) {
				vs = append(vs, b)
			}
		}
	}
	if len(vs) == 0 {
		out.err = fmt.Errorf("analysis: plot trend %s: no checkpoint has the score", title)
		return out
	}
	if !math.IsNaN(baseline) {
		vs = append(vs, baseline)
	}
	scale := percentScale(vs...)
	p := newPlot(title, true)
	p.Y.Label.Text = "score"
	if scale == 100 {
		p.Y.Label.Text = "score (points)"
	}
	p.X.Label.Text = "checkpoint"
	names := make([]string, len(points))
	for i, pt := range points {
		names[i] = pt.Label
	}
	p.X.Tick.Marker = plot.ConstantTicks(labelTicks(names))
	p.X.Min, p.X.Max = -0.5, float64(len(points))-0.5

	line := trendXY{points: points, scale: scale}
	if l, err := plotter.NewLine(line); err == nil && line.Len() > 1 {
		l.LineStyle = draw.LineStyle{Color: lighter(colorUp, 0.4), Width: vg.Points(1)}
		p.Add(l)
	}
	for _, flagged := range []bool{false, true} {
		set := trendXY{points: points, scale: scale, only: &flagged}
		if set.Len() == 0 {
			continue
		}
		col := colorUp
		if flagged {
			col = colorDown
		}
		if set.hasCI() {
			cis, err := plotter.NewYErrorBars(set)
			if err != nil {
				out.err = fmt.Errorf("analysis: plot trend %s: %w", title, err)
				return out
			}
			cis.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.2)}
			cis.CapWidth = vg.Points(6)
			p.Add(cis)
		}
		pts, err := plotter.NewScatter(set)
		if err != nil {
			out.err = fmt.Errorf("analysis: plot trend %s: %w", title, err)
			return out
		}
		pts.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		p.Add(pts)
		if flagged {
			p.Legend.Add("regression", pts)
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		lo, hi = math.Min(lo, v*scale), math.Max(hi, v*scale)
	}
	if !math.IsNaN(baseline) {
		base := cardLine{
			y:     baseline * scale,
			label: "baseline\n" + formatScore(baseline*scale, scale),
			line:  draw.LineStyle{Color: colorInk, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}},
			style: textStyle(8),
		}
		base.style.YAlign = draw.YCenter
		p.Add(base)
	}
	step := niceStep(math.Max(hi-lo, 1e-9) / 6)
	p.Y.Min, p.Y.Max = math.Floor(lo/step+1e-9)*step, math.Ceil(hi/step-1e-9)*step
	if p.Y.Min == p.Y.Max {
		p.Y.Min, p.Y.Max = p.Y.Min-step, p.Y.Max+step
	}
	p.Legend.Top = true
	out.p = p
	out.alt = describeTrend(title, points, baseline, scale)
	return out
}

// labelTicks puts one tick per checkpoint, labelled with its name; with
// many checkpoints only every k-th is labelled so the labels do not run
// into each other.
func labelTicks(names []string) []plot.Tick {
	every := max(1, (len(names)+11)/12)
	ts := make([]plot.Tick, len(names))
	for i, n := range names {
		ts[i] = plot.Tick{Value: float64(i)}
		if i%every == 0 {
			ts[i].Label = n
		}
	}
	return ts
}

func describeTrend(title string, points []TrendPoint, baseline, scale float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s over %d checkpoints:", title, len(points))
	for _, pt := range points {
		if pt.Missing {
			fmt.Fprintf(&b, " %s n/a;", pt.Label)
			continue
		}
		fmt.Fprintf(&b, " %s %s", pt.Label, formatScore(pt.Value*scale, scale))
		if pt.Flagged {
			b.WriteString(" (regression)")
		}
		b.WriteString(";")
	}
	if !math.IsNaN(baseline) {
		fmt.Fprintf(&b, " baseline %s", formatScore(baseline*scale, scale))
	}
	return strings.TrimSuffix(b.String(), ";")
}

// trendXY adapts trend points (those flagged as only says, or all) to
// gonum's XYer and YErrorer; missing ones are left out.
type trendXY struct {
	points []TrendPoint
	scale  float64
	only   *bool
}

func (t trendXY) idx() []int {
	var out []int
	for i, pt := range t.points {
		if !pt.Missing && (t.only == nil || pt.Flagged == *t.only) {
			out = append(out, i)
		}
	}
	return out
}

func (t trendXY) Len() int { return len(t.idx()) }

func (t trendXY) XY(i int) (float64, float64) {
	k := t.idx()[i]
	return float64(k), t.points[k].Value * t.scale
}

func (t trendXY) YError(i int) (float64, float64) {
	pt := t.points[t.idx()[i]]
	lo, hi := pt.Value-pt.Lo, pt.Hi-pt.Value
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return 0, 0
	}
	return lo * t.scale, hi * t.scale
}

func (t trendXY) hasCI() bool {
	for _, k := range t.idx() {
		if !math.IsNaN(t.points[k].Lo) && !math.IsNaN(t.points[k].Hi) {
			return true
		}
	}
	return false
}
