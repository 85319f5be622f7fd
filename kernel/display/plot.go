package display

import (
	"bytes"
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The size a gonum plot is shown at: gonum's plots carry none.
const (
	plotWidth  = 6 * vg.Inch
	plotHeight = 4 * vg.Inch
	plotDPI    = 2 * vgimg.DefaultDPI // sharp on high-density screens
)

// gonumPlot is a gonum plot drawn as a PNG of 6 by 4 inches, shown at
// that size, with its title as the text/plain form. A plot that cannot be
// drawn gives the reason as text.
func gonumPlot(p *plot.Plot) Data {
	if p == nil {
		return Data{}
	}
	var buf bytes.Buffer
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		c := vgimg.NewWith(vgimg.UseWH(plotWidth, plotHeight), vgimg.UseDPI(plotDPI))
		p.Draw(draw.New(c))
		_, err = vgimg.PngCanvas{Canvas: c}.WriteTo(&buf)
		return err
	}()
	if err != nil {
		return Text("display: plot: " + err.Error())
	}
	text := "plot"
	if p.Title.Text != "" {
		text = "plot: " + p.Title.Text
	}
	px := func(l vg.Length) int { return int(l.Points()*96/72 + 0.5) }
	return PNG(buf.Bytes()).With(Text(text), Data{metadata: map[string]any{
		"image/png": map[string]any{"width": px(plotWidth), "height": px(plotHeight)},
	}})
}
