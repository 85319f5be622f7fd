package analysis

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// pngDPI is twice the CSS pixel density, so the PNG stays sharp on
// high-density screens while HTML shows it at its size in points.
const pngDPI = 2 * vgimg.DefaultDPI

// Plot is a figure built from analysis results. It renders itself (the
// notebook kernel looks for HTML, PNG and SVG methods), so analysis needs
// no display code; the same bytes go into a self-contained report.
//
// Building a figure can fail (a NaN score, no rows); the error is kept and
// returned by every renderer, so the builders stay one-value expressions
// in a notebook cell.
type Plot struct {
	p    *plot.Plot
	w, h vg.Length
	alt  string // what the figure shows, in words
	err  error
}

// WriteTo writes the figure as PNG; it makes a Plot an io.WriterTo, which
// is how the kernel sends bytes and how tests compare them.
func (p *Plot) WriteTo(w io.Writer) (int64, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	c := vgimg.NewWith(vgimg.UseWH(p.w, p.h), vgimg.UseDPI(pngDPI))
	p.draw(c)
	return vgimg.PngCanvas{Canvas: c}.WriteTo(w)
}

// check returns the error of building the figure; a zero Plot, which no
// builder returns, has no figure to draw.
func (p *Plot) check() error {
	switch {
	case p.err != nil:
		return p.err
	case p.p == nil:
		return errors.New("analysis: empty Plot: build one with Waterfall, Forest or SubjectBars")
	}
	return nil
}

// draw leaves a white margin around the plot: gonum draws tick labels and
// the title up to the canvas edge, where a viewer's frame would touch
// them. The margin is painted too, or an SVG would show a dark notebook
// theme through it.
func (p *Plot) draw(c vg.CanvasSizer) {
	const margin = 6 // points
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.p.Draw(draw.Crop(dc, margin, -margin, margin, -margin))
}

// PNG returns the figure as PNG.
func (p *Plot) PNG() ([]byte, error) {
	var buf bytes.Buffer
	if _, err := p.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SVG returns the figure as SVG, for papers. Fonts are referenced by name,
// not embedded: embedding Liberation Sans would add half a megabyte.
func (p *Plot) SVG() ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	c := vgsvg.New(p.w, p.h)
	p.draw(c)
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(buf.Bytes(), []byte(svgFont), []byte(svgFontFallback)), nil
}

// vgsvg names only the family of the font file. Without fallbacks, a viewer
// lacking Liberation Sans would use its default, often a serif, whose
// widths break the layout; Arial and Helvetica have Liberation's metrics.
const (
	svgFont         = "font-family:Liberation Sans;"
	svgFontFallback = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"
)

// HTML returns an <img> with the PNG embedded, so the figure survives in a
// saved notebook or a report with no files beside it. Width and height are
// in CSS pixels, half the PNG's, which keeps the figure at its size in
// points.
func (p *Plot) HTML() string {
	b, err := p.PNG()
	if err != nil {
		return "<pre>" + html.EscapeString(err.Error()) + "</pre>"
	}
	return fmt.Sprintf(`<img src="data:image/png;base64,%s" width="%d" height="%d" alt="%s">`,
		base64.StdEncoding.EncodeToString(b), cssPixels(p.w), cssPixels(p.h), html.EscapeString(p.alt))
}

// String describes the figure in words: the plain-text fallback of a
// notebook, and the alt text of HTML.
func (p *Plot) String() string {
	if err := p.check(); err != nil {
		return err.Error()
	}
	return p.alt
}

func cssPixels(l vg.Length) int { return int(math.Round(l.Points() * 96 / 72)) }

// Colors from Okabe and Ito's palette, which stays distinguishable under
// the common color-vision deficiencies.
var (
	colorUp    = color.RGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF} // blue
	colorDown  = color.RGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF} // vermillion
	colorTotal = color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xFF}
	colorInk   = color.RGBA{R: 0x22, G: 0x22, B: 0x22, A: 0xFF}
	colorGroup = []color.Color{
		colorUp, colorDown,
		color.RGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
		color.RGBA{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
		color.RGBA{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
		color.RGBA{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
		color.RGBA{R: 0xF0, G: 0xE4, B: 0x42, A: 0xFF}, // yellow
		color.Black,
	}
)

// lighter mixes c with white, for bars that should read as "same color,
// weaker kind".
func lighter(c color.Color, f float64) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(math.Round(float64(v>>8)*(1-f) + 255*f)) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xFF}
}

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func textStyle(size vg.Length) text.Style {
	return text.Style{Color: colorInk, Font: font.From(sans, size), Handler: plot.DefaultTextHandler}
}

// newPlot returns a plot styled for print: sans-serif type at sizes that
// stay legible when the figure is shrunk to a column, and light grid
// lines along the value axis only.
func newPlot(title string, valueAxisVertical bool) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil // Plot.draw paints the whole canvas
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 12)
	p.Title.TextStyle.Color = colorInk
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 10)
		a.Tick.Label.Font = font.From(sans, 9)
		a.Color = colorInk
		a.Tick.Color = colorInk
		a.Tick.Marker = niceTicks{}
	}
	p.Legend.TextStyle = textStyle(9)
	p.Legend.ThumbnailWidth = vg.Points(16)
	p.Legend.Padding = vg.Points(2)

	grid := plotter.NewGrid()
	light := draw.LineStyle{Color: color.Gray{Y: 0xE0}, Width: vg.Points(0.5)}
	grid.Vertical, grid.Horizontal = draw.LineStyle{}, draw.LineStyle{}
	if valueAxisVertical {
		grid.Horizontal = light
	} else {
		grid.Vertical = light
	}
	p.Add(grid)
	return p
}

// percentScale returns 100 when every value is a fraction in [0, 1], so
// that axes read in percent points, the unit papers quote, and 1 otherwise
// (perplexities, BLEU, ...).
func percentScale(vs ...float64) float64 {
	for _, v := range vs {
		if !(v >= 0 && v <= 1) {
			return 1
		}
	}
	return 100
}

// niceTicks labels round values (steps of 1, 2 or 5 times a power of ten),
// four to seven along the axis: gonum's default labels only two or three,
// too few to read off a zoomed-in range.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	step := niceStep((hi - lo) / 6)
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ts []plot.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+1e-9*step; k++ {
		v := k * step
		if v == 0 {
			v = 0 // not -0, which would print as "-0"
		}
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
	}
	return ts
}

func niceStep(raw float64) float64 {
	if !(raw > 0) {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*e >= raw*(1-1e-9) {
			return m * e
		}
	}
	return 10 * e
}

// formatScore prints a score in display units: percent points to one
// decimal, as papers quote them; other scales (perplexity, a raw delta) to
// four significant digits, since their magnitude is unknown.
func formatScore(v, scale float64) string {
	if scale == 100 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// formatDelta is formatScore with a sign, and no "-0.0".
func formatDelta(v, scale float64) string {
	s := formatScore(v, scale)
	switch {
	case strings.Trim(s, "-0.") == "":
		return "+" + strings.TrimPrefix(s, "-")
	case v > 0:
		return "+" + s
	}
	return s
}

// checkFinite rejects NaN and infinite inputs up front: gonum would either
// refuse them deep inside a plotter or silently draw nothing.
func checkFinite(what string, vs ...float64) error {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("analysis: plot %s: %v is not a finite score", what, v)
		}
	}
	return nil
}

// wrap breaks s into lines no wider than width, so long setting names stay
// horizontal under their bar: wrapped text reads faster than rotated text.
// The lines are balanced ("chat / template on" rather than "chat template
// / on"); a piece with no break point wider than width keeps its own line.
func wrap(s string, sty text.Style, width vg.Length) string {
	lines := greedyWrap(s, sty, width)
	if len(lines) < 2 {
		return s
	}
	// The narrowest width that still needs no more lines.
	lo, hi := vg.Length(0), width
	for range 20 {
		mid := (lo + hi) / 2
		if len(greedyWrap(s, sty, mid)) <= len(lines) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return strings.Join(greedyWrap(s, sty, hi), "\n")
}

func greedyWrap(s string, sty text.Style, width vg.Length) []string {
	var lines []string
	line := ""
	for _, piece := range breakPieces(s) {
		if line == "" || sty.Width(strings.TrimRight(line+piece, " ")) <= width {
			line += piece
			continue
		}
		lines = append(lines, strings.TrimRight(line, " "))
		line = strings.TrimLeft(piece, " ")
	}
	return append(lines, strings.TrimRight(line, " "))
}

// breakPieces splits s after each space, underscore, hyphen and slash: the
// places a snake_case or path-like setting name (apply_chat_template,
// fewshot_as_multiturn) can break.
func breakPieces(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if strings.ContainsRune(" _-/", r) {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// swatch is a legend thumbnail for a kind of bar.
type swatch struct {
	fill, edge color.Color
	hatch      bool
	dashed     bool
}

func (s swatch) Thumbnail(c *draw.Canvas) {
	r := vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: c.Min.Y + 1}, Max: vg.Point{X: c.Max.X, Y: c.Max.Y - 1}}
	drawBar(c, r, s)
}

// drawBar fills r and outlines it; hatched bars get 45° lines, which
// survive grayscale printing where a lighter tint alone would not.
func drawBar(c *draw.Canvas, r vg.Rectangle, s swatch) {
	pts := []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}, r.Min}
	c.FillPolygon(s.fill, c.ClipPolygonXY(pts))
	if s.hatch {
		// Lines x = y + k, with k on a fixed lattice so that adjacent bars'
		// hatching lines up.
		const gap = 3.5
		ls := draw.LineStyle{Color: s.edge, Width: vg.Points(0.6)}
		minX, maxX, minY, maxY := r.Min.X.Points(), r.Max.X.Points(), r.Min.Y.Points(), r.Max.Y.Points()
		for k := math.Floor((minX-maxY)/gap) * gap; k <= maxX-minY; k += gap {
			y0, y1 := math.Max(minY, minX-k), math.Min(maxY, maxX-k)
			if y0 < y1 {
				seg := []vg.Point{{X: vg.Points(y0 + k), Y: vg.Points(y0)}, {X: vg.Points(y1 + k), Y: vg.Points(y1)}}
				c.StrokeLines(ls, c.ClipLinesXY(seg)...)
			}
		}
	}
	edge := draw.LineStyle{Color: s.edge, Width: vg.Points(0.8)}
	if s.dashed {
		edge.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
	}
	c.StrokeLines(edge, c.ClipLinesXY(pts)...)
}

// whisker is the legend thumbnail of a vertical confidence interval;
// gonum's error bars have none.
type whisker struct{ draw.LineStyle }

func (w whisker) Thumbnail(c *draw.Canvas) {
	x, half := c.Center().X, vg.Points(2.5)
	c.StrokeLine2(w.LineStyle, x, c.Min.Y, x, c.Max.Y)
	c.StrokeLine2(w.LineStyle, x-half, c.Min.Y, x+half, c.Min.Y)
	c.StrokeLine2(w.LineStyle, x-half, c.Max.Y, x+half, c.Max.Y)
}

// backedLabels draws each label on a white box, so that a reference line
// passing behind it does not run through the digits.
type backedLabels struct{ *plotter.Labels }

func (l backedLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	pad := vg.Points(1)
	for i, s := range l.Labels.Labels {
		at := vg.Point{X: trX(l.XYs[i].X), Y: trY(l.XYs[i].Y)}.Add(l.Offset)
		r := l.TextStyle[i].Rectangle(s)
		lo, hi := r.Min.Add(at).Sub(vg.Point{X: pad, Y: pad}), r.Max.Add(at).Add(vg.Point{X: pad, Y: pad})
		c.FillPolygon(color.White, []vg.Point{lo, {X: hi.X, Y: lo.Y}, hi, {X: lo.X, Y: hi.Y}})
	}
	l.Labels.Plot(c, p)
}

// cardLine is the card's number: a dashed line across the bars, labelled
// right of the data area, where no bar can cover the label. Its glyph box
// makes gonum leave the label room.
type cardLine struct {
	y     float64
	label string
	line  draw.LineStyle
	style text.Style
}

const cardGap = 4 // points between the data area and the label

func (l cardLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(l.y)
	c.StrokeLine2(l.line, c.Min.X, y, c.Max.X, y)
	c.FillText(l.style, vg.Point{X: c.Max.X + cardGap, Y: y}, l.label)
}

func (l cardLine) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	w, h := l.style.Width(l.label), l.style.Height(l.label)
	return []plot.GlyphBox{{X: 1, Y: p.Y.Norm(l.y), Rectangle: vg.Rectangle{
		Min: vg.Point{X: cardGap, Y: -h / 2},
		Max: vg.Point{X: cardGap + w, Y: h / 2},
	}}}
}

func (l cardLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.line, c.Min.X, y, c.Max.X, y)
}

var ciStyle = draw.LineStyle{Color: colorInk, Width: vg.Points(0.9)}

// Waterfall draws the road from the first run to the card: the baseline,
// one floating bar per cumulative step (its length the step's delta, blue
// up and vermillion down, hatched when the step only re-scores the previous
// run's samples), the final score, and the unexplained rest up to the
// card's number, drawn as a dashed line. Each delta carries its paired CI
// as an error bar at the bar's end, so a reader sees at once which steps
// matter beyond noise.
//
// The value axis starts just below the smallest score rather than at zero:
// the deltas are a few points on scores of tens, and would vanish on a
// full axis. The baseline and final bars therefore start at the axis's
// first label, and their numbers are printed above them.
func (c ClaimAttribution) Waterfall() *Plot {
	w := waterfall{c: &c}
	vals := []float64{c.Baseline, c.Final, c.Card}
	for _, s := range c.Steps {
		vals = append(vals, s.Value)
	}
	w.scale = percentScale(vals...)

	out := &Plot{
		w:   max(6*vg.Inch, vg.Length(w.Len())*0.95*vg.Inch+vg.Inch),
		h:   4.5 * vg.Inch,
		alt: w.describe(),
	}
	check := append(vals, c.UnexplainedCILow, c.UnexplainedCIHigh)
	for _, s := range c.Steps {
		check = append(check, s.CILow, s.CIHigh)
	}
	if out.err = checkFinite("waterfall of "+c.Task, check...); out.err != nil {
		return out
	}

	p := newPlot(c.Task+": card → reproduction", true)
	p.Y.Label.Text = c.Metric
	if c.Filter != "" && c.Filter != "none" {
		p.Y.Label.Text += " (" + c.Filter + ")"
	}
	if w.scale == 100 {
		p.Y.Label.Text += ", %"
	}

	bars := waterfallBars{w}
	cis, err := plotter.NewYErrorBars(waterfallCIs{w})
	if err != nil {
		out.err = fmt.Errorf("analysis: plot waterfall of %s: %w", c.Task, err)
		return out
	}
	cis.LineStyle, cis.CapWidth = ciStyle, vg.Points(5)
	labels, err := plotter.NewLabels(waterfallLabels{w})
	if err != nil {
		out.err = fmt.Errorf("analysis: plot waterfall of %s: %w", c.Task, err)
		return out
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i] = textStyle(8)
		labels.TextStyle[i].XAlign, labels.TextStyle[i].YAlign = draw.XCenter, draw.YBottom
	}
	labels.Offset.Y = vg.Points(3)

	card := cardLine{
		y:     c.Card * w.scale,
		label: "card\n" + formatScore(c.Card*w.scale, w.scale),
		line:  draw.LineStyle{Color: colorInk, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}},
		style: textStyle(8),
	}
	card.style.YAlign = draw.YCenter

	// Labels go under the bars and whiskers and over the card's line, so
	// their white boxes can only ever hide a stretch of that line.
	p.Add(card, backedLabels{labels}, bars, cis)

	// Category axis: one slot per bar, names wrapped to the slot's width.
	slot := (out.w - vg.Inch) / vg.Length(w.Len())
	names := make([]string, w.Len())
	var namesH vg.Length
	for i := range names {
		names[i] = wrap(w.name(i), p.X.Tick.Label, slot*0.95)
		namesH = max(namesH, p.X.Tick.Label.Height(names[i]))
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(w.Len())-0.5

	// Legend in the top left, above the data: leave it room by raising the
	// axis maximum, rather than letting it cover a bar.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
	// Color says the sign, hatching the kind: entries only for those shown.
	var up, down, rescore bool
	for i := 1; i < w.final(); i++ {
		up = up || w.to(i) >= w.from(i)
		down = down || w.to(i) < w.from(i)
		rescore = rescore || w.kind(i) == barRescore
	}
	if up {
		p.Legend.Add("score up", swatch{fill: colorUp, edge: colorUp})
	}
	if down {
		p.Legend.Add("score down", swatch{fill: colorDown, edge: colorDown})
	}
	if rescore {
		p.Legend.Add("re-scored samples", swatch{fill: color.White, edge: colorInk, hatch: true})
	}
	p.Legend.Add("unexplained", swatch{fill: color.White, edge: colorInk, dashed: true})
	p.Legend.Add("CI of Δ", whisker{ciStyle})
	p.Legend.Add("model card", card)

	// The axis starts at a labelled round value, so the totals' bars start
	// at a number a reader can see, and leaves a band at the top, in points,
	// for the value labels and the legend, so the legend covers no bar.
	lo, hi := w.yRange()
	span := math.Max(hi-lo, 0.01*w.scale) // one point when all is flat
	p.Y.Min = lo - 0.25*span
	if w.scale == 100 {
		p.Y.Min = math.Max(p.Y.Min, 0)
	}
	band := p.Legend.Rectangle(draw.Canvas{}).Size().Y + vg.Points(20)
	dataH := out.h - 0.65*vg.Inch - namesH // less title, margins, bar names
	f := math.Min(float64(band/dataH), 0.6)
	yMax := func() float64 { return (hi - f*p.Y.Min) / (1 - f) } // hi is band below the top
	step := niceStep((yMax() - p.Y.Min) / 6)
	p.Y.Min = math.Floor(p.Y.Min/step+1e-9) * step
	p.Y.Max = yMax()
	out.p = p
	return out
}

type barKind int

const (
	barTotal barKind = iota
	barRun
	barRescore
	barUnexplained
)

// waterfall lays out a ClaimAttribution as bars: the baseline, one per step,
// the final score and the unexplained rest. Its wrappers below adapt it to
// gonum's plotter interfaces without copying the steps.
type waterfall struct {
	c     *ClaimAttribution
	scale float64
}

func (w waterfall) Len() int { return len(w.c.Steps) + 3 }

func (w waterfall) final() int { return len(w.c.Steps) + 1 }

func (w waterfall) kind(i int) barKind {
	switch {
	case i == 0 || i == w.final():
		return barTotal
	case i == w.final()+1:
		return barUnexplained
	case w.c.Steps[i-1].Kind == "rescore":
		return barRescore
	}
	return barRun
}

func (w waterfall) name(i int) string {
	switch i {
	case 0:
		return "baseline"
	case w.final():
		return "final"
	case w.final() + 1:
		return "unexplained"
	}
	return w.c.Steps[i-1].Name
}

// from is where bar i starts in display units; NaN for the totals, which
// start at the axis.
func (w waterfall) from(i int) float64 {
	switch {
	case i == 0 || i == w.final():
		return math.NaN()
	case i == 1:
		return w.c.Baseline * w.scale
	case i == w.final()+1:
		return w.c.Final * w.scale
	}
	return w.c.Steps[i-2].Value * w.scale
}

// to is where bar i ends in display units.
func (w waterfall) to(i int) float64 {
	switch i {
	case 0:
		return w.c.Baseline * w.scale
	case w.final():
		return w.c.Final * w.scale
	case w.final() + 1:
		return w.c.Card * w.scale
	}
	return w.c.Steps[i-1].Value * w.scale
}

// ci is the interval of bar i's end: its start plus the CI of its delta.
func (w waterfall) ci(i int) (lo, hi float64, ok bool) {
	switch {
	case i == 0 || i == w.final():
		return 0, 0, false
	case i == w.final()+1:
		return w.from(i) + w.c.UnexplainedCILow*w.scale, w.from(i) + w.c.UnexplainedCIHigh*w.scale, true
	}
	s := w.c.Steps[i-1]
	return w.from(i) + s.CILow*w.scale, w.from(i) + s.CIHigh*w.scale, true
}

func (w waterfall) yRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range w.Len() {
		for _, v := range []float64{w.from(i), w.to(i)} {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if l, h, ok := w.ci(i); ok {
			lo, hi = math.Min(lo, l), math.Max(hi, h)
		}
	}
	return lo, hi
}

func (w waterfall) describe() string {
	c, unit := w.c, ""
	if w.scale == 100 {
		unit = " %"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: baseline %s%s", c.Task, c.Metric, formatScore(c.Baseline*w.scale, w.scale), unit)
	for _, s := range c.Steps {
		fmt.Fprintf(&b, ", %s %s [%s, %s]", s.Name, formatDelta(s.Delta*w.scale, w.scale), formatDelta(s.CILow*w.scale, w.scale), formatDelta(s.CIHigh*w.scale, w.scale))
	}
	fmt.Fprintf(&b, ", final %s, card %s, unexplained %s [%s, %s]", formatScore(c.Final*w.scale, w.scale), formatScore(c.Card*w.scale, w.scale),
		formatDelta(c.Unexplained*w.scale, w.scale), formatDelta(c.UnexplainedCILow*w.scale, w.scale), formatDelta(c.UnexplainedCIHigh*w.scale, w.scale))
	return b.String()
}

// waterfallBars draws the bars; gonum's BarChart cannot float a bar or
// hatch it.
type waterfallBars struct{ waterfall }

func (b waterfallBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	lo, hi := b.yRange()
	return -0.5, float64(b.Len()) - 0.5, lo, hi
}

func (b waterfallBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	const half = 0.32 // of a slot
	for i := range b.Len() {
		from, to := b.from(i), b.to(i)
		if math.IsNaN(from) {
			from = p.Y.Min
		}
		r := vg.Rectangle{
			Min: vg.Point{X: trX(float64(i) - half), Y: trY(math.Min(from, to))},
			Max: vg.Point{X: trX(float64(i) + half), Y: trY(math.Max(from, to))},
		}
		col := colorUp
		if to < from && b.kind(i) != barTotal {
			col = colorDown
		}
		var s swatch
		switch b.kind(i) {
		case barTotal:
			s = swatch{fill: colorTotal, edge: colorTotal}
		case barRun:
			s = swatch{fill: col, edge: col}
		case barRescore:
			s = swatch{fill: lighter(col, 0.7), edge: col, hatch: true}
		case barUnexplained:
			s = swatch{fill: color.White, edge: colorInk, dashed: true}
		}
		drawBar(&c, r, s)
	}
}

// waterfallCIs adapts the steps' and the residual's CIs to plotter.XYer
// and plotter.YErrorer. The point is the interval's midpoint, not the
// bar's end: gonum takes the absolute value of each half-width, which
// would draw the wrong interval when a bootstrap CI does not contain its
// estimate.
type waterfallCIs struct{ waterfall }

func (w waterfallCIs) Len() int { return len(w.c.Steps) + 1 }

func (w waterfallCIs) bar(j int) int {
	if j == len(w.c.Steps) {
		return w.final() + 1
	}
	return j + 1
}

func (w waterfallCIs) XY(j int) (x, y float64) {
	lo, hi, _ := w.ci(w.bar(j))
	return float64(w.bar(j)), (lo + hi) / 2
}

func (w waterfallCIs) YError(j int) (low, high float64) {
	lo, hi, _ := w.ci(w.bar(j))
	return (hi - lo) / 2, (hi - lo) / 2
}

// waterfallLabels adapts the bars to plotter.XYLabeller: each bar's number
// (the score for totals, the delta otherwise) just above the bar or its
// CI, whichever is higher.
type waterfallLabels struct{ waterfall }

func (w waterfallLabels) XY(i int) (x, y float64) {
	y = w.to(i)
	if f := w.from(i); !math.IsNaN(f) {
		y = math.Max(y, f)
	}
	if _, hi, ok := w.ci(i); ok {
		y = math.Max(y, hi)
	}
	return float64(i), y
}

func (w waterfallLabels) Label(i int) string {
	if w.kind(i) == barTotal {
		return formatScore(w.to(i), w.scale)
	}
	return formatDelta(w.to(i)-w.from(i), w.scale)
}

// ForestRow is one estimate with its confidence interval: a run's score, a
// subject's accuracy. Scores that are all fractions in [0, 1] are shown in
// percent.
type ForestRow struct {
	Label         string
	Value, Lo, Hi float64 // the estimate and its CI's bounds
	// Rows with the same Group share a color and a legend entry; rows with
	// none are gray.
	Group string
	// The first row marked Reference is also drawn as a dashed vertical
	// line, so the others read as differences from it.
	Reference bool
}

// rowSet adapts ForestRows to gonum's plotter interfaces. Rows are drawn
// top to bottom in the order given, so row i sits at y = n-1-i; idx selects
// the rows of one group (nil for all).
type rowSet struct {
	rows  []ForestRow
	idx   []int
	scale float64
}

func (r rowSet) Len() int {
	if r.idx == nil {
		return len(r.rows)
	}
	return len(r.idx)
}

func (r rowSet) row(j int) int {
	if r.idx == nil {
		return j
	}
	return r.idx[j]
}

func (r rowSet) XY(j int) (x, y float64) {
	i := r.row(j)
	return r.rows[i].Value * r.scale, float64(len(r.rows) - 1 - i)
}

// rowCIs adapts the rows' intervals to plotter.XYer and XErrorer, centered
// on the interval's midpoint for the reason given at waterfallCIs.
type rowCIs struct{ rowSet }

func (r rowCIs) XY(j int) (x, y float64) {
	row := r.rows[r.row(j)]
	_, y = r.rowSet.XY(j)
	return (row.Lo + row.Hi) / 2 * r.scale, y
}

func (r rowCIs) XError(j int) (low, high float64) {
	row := r.rows[r.row(j)]
	return (row.Hi - row.Lo) / 2 * r.scale, (row.Hi - row.Lo) / 2 * r.scale
}

// rowColumn prints "value [lo, hi]" for each row in a column right of the
// data area, as forest plots in papers have it, so the figure can be
// quoted without a table beside it. Its glyph box makes gonum narrow the
// data area to leave the column room.
type rowColumn struct {
	rowSet
	style text.Style
}

const columnGap = 8 // points between the data area and the column

func (r rowColumn) label(i int) string {
	row := r.rows[i]
	return fmt.Sprintf("%s [%s, %s]", formatScore(row.Value*r.scale, r.scale), formatScore(row.Lo*r.scale, r.scale), formatScore(row.Hi*r.scale, r.scale))
}

func (r rowColumn) width() vg.Length {
	var w vg.Length
	for i := range r.rows {
		w = max(w, r.style.Width(r.label(i)))
	}
	return w
}

func (r rowColumn) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	x := c.Max.X + columnGap + r.width() // right-aligned: the digits line up
	for i := range r.rows {
		_, y := r.XY(i)
		c.FillText(r.style, vg.Point{X: x, Y: trY(y)}, r.label(i))
	}
}

func (r rowColumn) GlyphBoxes(*plot.Plot) []plot.GlyphBox {
	h := r.style.Height("0")
	return []plot.GlyphBox{{X: 1, Y: 0.5, Rectangle: vg.Rectangle{
		Min: vg.Point{X: columnGap, Y: -h / 2},
		Max: vg.Point{X: columnGap + r.width(), Y: h / 2},
	}}}
}

// barValues adapts one group's rows to plotter.Valuer for a horizontal
// BarChart, which draws value i at y = i: it reverses the order so the
// first row is on top, and gives the other groups' rows zero length.
type barValues struct {
	rowSet
	group string
}

func (b barValues) Value(i int) float64 {
	row := b.rows[len(b.rows)-1-i]
	if row.Group != b.group {
		return 0
	}
	return row.Value * b.scale
}

// rowLayout checks the rows and returns their scale and their groups in
// order of first appearance (not sorted: the caller's order is meaningful).
func rowLayout(what string, rows []ForestRow) (scale float64, groups []string, err error) {
	if len(rows) == 0 {
		return 0, nil, fmt.Errorf("analysis: plot %s: %w", what, errNoRows)
	}
	var vals []float64
	seen := map[string]bool{}
	for _, r := range rows {
		vals = append(vals, r.Value, r.Lo, r.Hi)
		if !seen[r.Group] {
			seen[r.Group] = true
			groups = append(groups, r.Group)
		}
	}
	if err := checkFinite(what, vals...); err != nil {
		return 0, nil, err
	}
	return percentScale(vals...), groups, nil
}

var errNoRows = errors.New("no rows")

// rowAxis puts the labels on the y axis, first row on top, and names the
// value axis.
func rowAxis(p *plot.Plot, rows []ForestRow, scale float64) {
	names := make([]string, len(rows))
	for i, r := range rows {
		names[len(rows)-1-i] = r.Label
	}
	p.NominalY(names...)
	if scale == 100 {
		p.X.Label.Text = "score, %"
	} else {
		p.X.Label.Text = "score"
	}
}

// reference is the dashed vertical line at the first Reference row's
// value, across all rows; it draws nothing when no row is a reference.
type reference struct {
	rows  []ForestRow
	scale float64
}

func (r reference) Plot(c draw.Canvas, p *plot.Plot) {
	for _, row := range r.rows {
		if row.Reference {
			trX, trY := p.Transforms(&c)
			x := trX(row.Value * r.scale)
			sty := draw.LineStyle{Color: colorTotal, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
			c.StrokeLine2(sty, x, trY(-0.5), x, trY(float64(len(r.rows))-0.5))
			return
		}
	}
}

// rowFigure returns the height of a figure of n rows at the given pitch,
// and sets the row axis' range, leaving a band at the top for the legend
// (when there is one) so that it covers no row.
func rowFigure(p *plot.Plot, n int, pitch vg.Length) vg.Length {
	const fixed = 1.05 * vg.Inch // title, value axis, margins
	band := p.Legend.Rectangle(draw.Canvas{}).Size().Y
	if band > 0 {
		band += vg.Points(6)
	}
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5+float64(band/pitch)
	return fixed + vg.Length(n)*pitch + band
}

// groupColors gives each group a color of the palette, and rows with no
// group (an "overall" row) a neutral gray.
func groupColors(groups []string) []color.Color {
	cols := make([]color.Color, len(groups))
	n := 0
	for i, g := range groups {
		if g == "" {
			cols[i] = colorTotal
			continue
		}
		cols[i] = colorGroup[n%len(colorGroup)]
		n++
	}
	return cols
}

// Forest draws one row per estimate, top to bottom in the order given: a
// point with its CI as a horizontal whisker, and the numbers in a column
// at the right, the way several runs' scores are compared in a paper. A
// row marked Reference adds a dashed vertical line at its value.
func Forest(title string, rows []ForestRow) *Plot {
	out := &Plot{w: 6.5 * vg.Inch}
	scale, groups, err := rowLayout("forest "+title, rows)
	if err != nil {
		out.err = err
		return out
	}
	out.alt = describeRows(title, rows, scale)

	p := newPlot(title, false)
	rowAxis(p, rows, scale)
	p.Add(reference{rows, scale}) // under the points
	colors := groupColors(groups)
	for gi, g := range groups {
		set := rowSet{rows: rows, scale: scale, idx: []int{}}
		for i, r := range rows {
			if r.Group == g {
				set.idx = append(set.idx, i)
			}
		}
		cis, err := plotter.NewXErrorBars(rowCIs{set})
		if err != nil {
			out.err = fmt.Errorf("analysis: plot forest %s: %w", title, err)
			return out
		}
		col := colors[gi]
		cis.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.2)}
		cis.CapWidth = vg.Points(6)
		pts, err := plotter.NewScatter(set)
		if err != nil {
			out.err = fmt.Errorf("analysis: plot forest %s: %w", title, err)
			return out
		}
		pts.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		p.Add(cis, pts)
		if g != "" && len(groups) > 1 {
			p.Legend.Add(g, pts)
		}
	}
	col := rowColumn{rowSet{rows: rows, scale: scale}, textStyle(9)}
	col.style.XAlign, col.style.YAlign = draw.XRight, draw.YCenter
	p.Add(col)

	// The value axis ends on labelled round numbers.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		lo, hi = math.Min(lo, math.Min(r.Lo, r.Value)*scale), math.Max(hi, math.Max(r.Hi, r.Value)*scale)
	}
	step := niceStep((hi - lo) / 6)
	p.X.Min, p.X.Max = math.Floor(lo/step+1e-9)*step, math.Ceil(hi/step-1e-9)*step
	p.Legend.Top = true
	out.h = max(2.5*vg.Inch, rowFigure(p, len(rows), 0.4*vg.Inch))
	out.p = p
	return out
}

// SubjectBars draws one horizontal bar per row in the order given, with its
// CI as a whisker, for breakdowns with many categories (MMLU's 57
// subjects): horizontal bars keep long subject names readable. The value
// axis starts at zero, since subjects range widely; a row marked Reference
// (the overall score, say) adds a dashed vertical line at its value.
func SubjectBars(title string, rows []ForestRow) *Plot {
	out := &Plot{w: 6.5 * vg.Inch}
	scale, groups, err := rowLayout("subject bars "+title, rows)
	if err != nil {
		out.err = err
		return out
	}
	out.alt = describeRows(title, rows, scale)

	p := newPlot(title, false)
	rowAxis(p, rows, scale)
	colors := groupColors(groups)
	const pitch = 0.24 * vg.Inch
	width := pitch * 0.65 // gonum sizes bars in points, not in data units
	set := rowSet{rows: rows, scale: scale}
	for gi, g := range groups {
		bars, err := plotter.NewBarChart(barValues{set, g}, width)
		if err != nil {
			out.err = fmt.Errorf("analysis: plot subject bars %s: %w", title, err)
			return out
		}
		bars.Horizontal = true
		bars.Color = lighter(colors[gi], 0.25)
		bars.LineStyle.Width = 0
		p.Add(bars)
		if g != "" && len(groups) > 1 {
			p.Legend.Add(g, bars)
		}
	}
	cis, err := plotter.NewXErrorBars(rowCIs{set})
	if err != nil {
		out.err = fmt.Errorf("analysis: plot subject bars %s: %w", title, err)
		return out
	}
	cis.LineStyle, cis.CapWidth = ciStyle, width*0.6
	p.Add(cis, reference{rows, scale}) // over the bars, to read each against it
	p.Legend.Top = true
	p.X.Min = 0 // bars start at zero; a negative score extends the axis
	for _, r := range rows {
		p.X.Min = math.Min(p.X.Min, r.Lo*scale)
	}
	if scale == 100 {
		p.X.Max = 100
	}
	out.h = max(3*vg.Inch, rowFigure(p, len(rows), pitch))
	out.p = p
	return out
}

func describeRows(title string, rows []ForestRow, scale float64) string {
	var b strings.Builder
	b.WriteString(title)
	for i, r := range rows {
		sep := ": "
		if i > 0 {
			sep = ", "
		}
		fmt.Fprintf(&b, "%s%s %s [%s, %s]", sep, r.Label, formatScore(r.Value*scale, scale), formatScore(r.Lo*scale, scale), formatScore(r.Hi*scale, scale))
	}
	return b.String()
}
