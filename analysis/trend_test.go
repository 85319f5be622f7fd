package analysis

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"
)

// Trend draws every checkpoint, the flagged one in vermillion, and says
// so in words; a NaN score or no score at all is an error, not a blank
// figure.
func TestTrend(t *testing.T) {
	pts := []TrendPoint{
		{Label: "step-1000", Value: 0.40, Lo: 0.35, Hi: 0.45},
		{Label: "step-2000", Value: 0.42, Lo: 0.37, Hi: 0.47},
		{Label: "step-3000", Value: 0.30, Lo: 0.25, Hi: 0.35, Flagged: true},
		{Label: "step-4000", Missing: true, Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()},
	}
	p := Trend("gsm8k exact_match,strict-match", pts, 0.40)
	b, err := p.PNG()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	vermillion, blue := 0, 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			switch [3]uint32{r >> 8, g >> 8, b >> 8} {
			case [3]uint32{0xD5, 0x5E, 0x00}:
				vermillion++
			case [3]uint32{0x00, 0x72, 0xB2}:
				blue++
			}
		}
	}
	if vermillion == 0 || blue == 0 {
		t.Errorf("%d vermillion and %d blue pixels: want the flagged point and the others drawn", vermillion, blue)
	}
	for _, want := range []string{"over 4 checkpoints", "step-1000 40.0", "step-3000 30.0 (regression)", "step-4000 n/a", "baseline 40.0"} {
		if !strings.Contains(p.String(), want) {
			t.Errorf("description %q lacks %q", p.String(), want)
		}
	}
	if _, err := Trend("x", []TrendPoint{{Label: "a", Value: math.NaN()}}, 0.4).PNG(); err == nil {
		t.Error("a NaN score was drawn")
	}
	if _, err := Trend("x", []TrendPoint{{Label: "a", Missing: true}}, math.NaN()).PNG(); err == nil {
		t.Error("a trend with no score was drawn")
	}
}
