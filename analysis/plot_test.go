package analysis

import (
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with the current output")

// plotClaim is the attribution of a model card's 52% on gsm8k, built by
// hand: two new runs and one re-scoring explain 9 of its 12 points.
func plotClaim() ClaimAttribution {
	return ClaimAttribution{
		Task: "gsm8k", Metric: "exact_match", Filter: "strict-match",
		Card: 0.52, Baseline: 0.40, Final: 0.49,
		Unexplained: 0.03, UnexplainedCILow: 0.005, UnexplainedCIHigh: 0.055,
		Steps: []AttributionStep{
			{Name: "8-shot CoT task", Kind: "run", Value: 0.43, Delta: 0.03, CILow: 0.01, CIHigh: 0.05, P: 0.004},
			{Name: "chat template on", Kind: "run", Value: 0.48, Delta: 0.05, CILow: 0.02, CIHigh: 0.08, P: 0.001},
			{Name: "flexible extraction", Kind: "rescore", Value: 0.49, Delta: 0.01, CILow: 0.00, CIHigh: 0.02, P: 0.06},
		},
	}
}

func plotRuns() []ForestRow {
	return []ForestRow{
		{Label: "reproduction (baseline)", Value: 0.402, Lo: 0.375, Hi: 0.429, Group: "ours", Reference: true},
		{Label: "+ 8-shot CoT", Value: 0.431, Lo: 0.404, Hi: 0.458, Group: "ours"},
		{Label: "+ chat template", Value: 0.486, Lo: 0.459, Hi: 0.513, Group: "ours"},
		{Label: "model card", Value: 0.52, Lo: 0.493, Hi: 0.547, Group: "reported"},
	}
}

func plotSubjects() []ForestRow {
	subjects := []struct {
		name string
		acc  float64
	}{
		{"abstract_algebra", 0.31}, {"anatomy", 0.56}, {"astronomy", 0.62},
		{"business_ethics", 0.58}, {"clinical_knowledge", 0.64}, {"college_biology", 0.67},
		{"college_chemistry", 0.41}, {"high_school_government_and_politics", 0.83},
		{"moral_scenarios", 0.29}, {"world_religions", 0.78},
	}
	rows := make([]ForestRow, len(subjects))
	for i, s := range subjects {
		half := 0.09 // about 1.96·sqrt(p(1−p)/n) for n ≈ 100
		rows[i] = ForestRow{Label: s.name, Value: s.acc, Lo: max(0, s.acc-half), Hi: min(1, s.acc+half), Group: "STEM"}
		if i%3 == 1 {
			rows[i].Group = "other"
		}
	}
	return rows
}

type plotCase struct {
	name string // of the golden file, less its extension
	plot *Plot
}

func plotCases() []plotCase {
	return []plotCase{
		{"waterfall", plotClaim().Waterfall()},
		{"forest", Forest("gsm8k exact_match: runs vs. card", plotRuns())},
		{"subjects", SubjectBars("MMLU, 5-shot: accuracy per subject", plotSubjects())},
	}
}

// golden compares got with testdata/plots/name, or rewrites it under
// -update. equal says whether two versions are the same figure.
func golden(t *testing.T, name string, got []byte, equal func(t *testing.T, got, want []byte) bool) {
	t.Helper()
	path := filepath.Join("testdata", "plots", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./analysis -run Plot -update to create it)", err)
	}
	if !equal(t, got, want) {
		// Kept after the test, to be looked at beside the golden file.
		where := "(could not be saved)"
		if f, err := os.CreateTemp("", "got-*-"+name); err == nil {
			_, err = f.Write(got)
			if f.Close() == nil && err == nil {
				where = f.Name()
			}
		}
		t.Errorf("%s differs from the golden file; got is in %s (rerun with -update if the change is intended)", path, where)
	}
}

// samePixels decodes both PNGs and compares them pixel by pixel, so that a
// change of encoder settings alone does not fail the test.
func samePixels(t *testing.T, got, want []byte) bool {
	t.Helper()
	g, err := png.Decode(bytes.NewReader(got))
	if err != nil {
		t.Fatalf("decode rendered PNG: %v", err)
	}
	w, err := png.Decode(bytes.NewReader(want))
	if err != nil {
		t.Fatalf("decode golden PNG: %v", err)
	}
	if g.Bounds() != w.Bounds() {
		t.Logf("size %v, golden %v", g.Bounds().Size(), w.Bounds().Size())
		return false
	}
	var n int
	var where image.Rectangle
	b := g.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r1, g1, b1, a1 := g.At(x, y).RGBA()
			r2, g2, b2, a2 := w.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				n++
				where = where.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	if n > 0 {
		t.Logf("%d pixels differ, within %v", n, where)
	}
	return n == 0
}

// sameText compares SVGs as text and prints the first differing line.
func sameText(t *testing.T, got, want []byte) bool {
	t.Helper()
	if bytes.Equal(got, want) {
		return true
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Logf("line %d:\n got: %.200s\nwant: %.200s", i+1, gl[i], wl[i])
			return false
		}
	}
	t.Logf("%d lines, golden %d", len(gl), len(wl))
	return false
}

func TestPlotGolden(t *testing.T) {
	for _, c := range plotCases() {
		t.Run(c.name, func(t *testing.T) {
			b, err := c.plot.PNG()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".png", b, samePixels)
		})
	}
	t.Run("waterfall.svg", func(t *testing.T) {
		b, err := plotClaim().Waterfall().SVG()
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "waterfall.svg", b, sameText)
	})
}

// Rendering twice, and building twice, gives the same bytes: the figures
// can be content-addressed and reports diffed.
func TestPlotDeterministic(t *testing.T) {
	for _, c := range plotCases() {
		t.Run(c.name, func(t *testing.T) {
			first, err := c.plot.PNG()
			if err != nil {
				t.Fatal(err)
			}
			again, _ := c.plot.PNG()
			if !bytes.Equal(first, again) {
				t.Error("PNG differs between two renderings of one Plot")
			}
			var buf bytes.Buffer
			n, err := c.plot.WriteTo(&buf)
			if err != nil || n != int64(len(first)) || !bytes.Equal(buf.Bytes(), first) {
				t.Errorf("WriteTo = %d, %v; want the PNG's %d bytes", n, err, len(first))
			}
			svg1, _ := c.plot.SVG()
			svg2, _ := c.plot.SVG()
			if !bytes.Equal(svg1, svg2) {
				t.Error("SVG differs between two renderings of one Plot")
			}
		})
	}
	a, _ := plotClaim().Waterfall().PNG()
	b, _ := plotClaim().Waterfall().PNG()
	if !bytes.Equal(a, b) {
		t.Error("PNG differs between two Plots built from the same attribution")
	}
}

func TestPlotHTML(t *testing.T) {
	p := plotClaim().Waterfall()
	h := p.HTML()
	m := regexp.MustCompile(`^<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" width="(\d+)" height="(\d+)" alt="([^"]+)">$`).FindStringSubmatch(h)
	if m == nil {
		t.Fatalf("HTML() = %.200s…, want one <img> with a base64 PNG, width, height and alt", h)
	}
	embedded, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	want, _ := p.PNG()
	if !bytes.Equal(embedded, want) {
		t.Error("the embedded image is not the PNG")
	}
	// The PNG is drawn at twice the CSS size, for high-density screens.
	cfg, err := png.DecodeConfig(bytes.NewReader(embedded))
	if err != nil {
		t.Fatal(err)
	}
	w, _ := strconv.Atoi(m[2])
	ht, _ := strconv.Atoi(m[3])
	if abs(2*w-cfg.Width) > 1 || abs(2*ht-cfg.Height) > 1 {
		t.Errorf("width, height = %d, %d; want half the PNG's %dx%d", w, ht, cfg.Width, cfg.Height)
	}
	if !strings.Contains(m[4], "gsm8k exact_match: baseline 40.0 %") || !strings.Contains(m[4], "chat template on +5.0 [+2.0, +8.0]") {
		t.Errorf("alt = %q, want the numbers in words", m[4])
	}
}

func TestPlotErrors(t *testing.T) {
	bad := plotClaim()
	bad.Steps[1].CIHigh = math.NaN()
	for name, p := range map[string]*Plot{
		"no rows":   Forest("empty", nil),
		"no rows 2": SubjectBars("empty", []ForestRow{}),
		"NaN CI":    bad.Waterfall(),
		"NaN value": Forest("nan", []ForestRow{{Label: "a", Value: math.NaN()}}),
		"zero Plot": {},
	} {
		if _, err := p.PNG(); err == nil {
			t.Errorf("%s: PNG succeeded", name)
		}
		if _, err := p.SVG(); err == nil {
			t.Errorf("%s: SVG succeeded", name)
		}
		if h := p.HTML(); !strings.HasPrefix(h, "<pre>") {
			t.Errorf("%s: HTML = %q, want the error", name, h)
		}
	}
}

func abs(n int) int { return max(n, -n) }

func TestPlotHelpers(t *testing.T) {
	sty := textStyle(9)
	for _, c := range []struct {
		in    string
		width vg.Length
		want  string
	}{
		{"baseline", vg.Inch, "baseline"},
		{"chat template on", vg.Points(60), "chat\ntemplate on"}, // balanced, not "chat template\non"
		{"apply_chat_template", vg.Points(60), "apply_chat_\ntemplate"},
		{"supercalifragilistic", vg.Points(10), "supercalifragilistic"},
	} {
		if got := wrap(c.in, sty, c.width); got != c.want {
			t.Errorf("wrap(%q, %v) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
	for _, c := range []struct {
		v, scale float64
		want     string
	}{
		{3, 100, "+3.0"}, {-0.04, 100, "+0.0"}, {-4.5, 100, "-4.5"}, {-0.6, 1, "-0.6"}, {0.0312, 1, "+0.0312"},
	} {
		if got := formatDelta(c.v, c.scale); got != c.want {
			t.Errorf("formatDelta(%v, %v) = %q, want %q", c.v, c.scale, got, c.want)
		}
	}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{35, 62.4, "35 40 45 50 55 60"},
		{-0.2, 62.4, "0 20 40 60"}, // not "-0"
		{8.5, 10.8, "8.5 9.0 9.5 10.0 10.5"},
	} {
		var labels []string
		for _, tk := range (niceTicks{}).Ticks(c.lo, c.hi) {
			labels = append(labels, tk.Label)
		}
		if got := strings.Join(labels, " "); got != c.want {
			t.Errorf("ticks on [%v, %v] = %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}

// The waterfall of a claim, rendered as PNG bytes for a report or the
// notebook kernel.
func ExampleClaimAttribution_Waterfall() {
	c := ClaimAttribution{
		Task: "gsm8k", Metric: "exact_match", Filter: "strict-match",
		Card: 0.52, Baseline: 0.40, Final: 0.43,
		Unexplained: 0.09, UnexplainedCILow: 0.06, UnexplainedCIHigh: 0.12,
		Steps: []AttributionStep{{Name: "8-shot CoT task", Kind: "run", Value: 0.43, Delta: 0.03, CILow: 0.01, CIHigh: 0.05}},
	}
	p := c.Waterfall()
	b, err := p.PNG()
	if err != nil {
		fmt.Println(err)
		return
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(img.Bounds())
	fmt.Println(p)
	// Output:
	// (0,0)-(1152,864)
	// gsm8k exact_match: baseline 40.0 %, 8-shot CoT task +3.0 [+1.0, +5.0], final 43.0, card 52.0, unexplained +9.0 [+6.0, +12.0]
}
