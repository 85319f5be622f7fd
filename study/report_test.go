package study_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
	"github.com/evalcapsule/evalcapsule/study"
)

// chromium returns Debian's headless Chromium; without it the report
// tests skip (fail under CI).
func chromium(t *testing.T) string {
	t.Helper()
	return testenv.Command(t, "chromium")
}

func headless(t *testing.T, args ...string) []byte {
	t.Helper()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.Command(chromium(t), append(base, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", args, err)
	}
	return out
}

// TestReportInChromium renders the report in headless Chromium and checks
// that the tables it shows hold the numbers of the attribution (the JSON
// `capsule attribute --json` prints), and that its first screen shows the
// simulated banner, the attribution table and the waterfall plot; and that
// this check fails on pages where one of them is hidden, broken or pushed
// down.
func TestReportInChromium(t *testing.T) {
	s := simulateStudy(t, demoStudy, 5, 300)
	opts := study.ReportOptions{Attribution: analysis.AttributionOptions{Seed: 1, Resamples: 2000}}
	rep, err := study.BuildReport(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	md, err := rep.WriteFiles(out)
	if err != nil {
		t.Fatal(err)
	}
	att, err := study.Attribute(context.Background(), s, opts.Attribution)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(att)

	page := mustRead(t, out)
	domBytes, shot, problems := firstScreen(t, page)
	for _, p := range problems {
		t.Error(p)
	}
	if keep := os.Getenv("EVALCAPSULE_KEEP_REPORT"); keep != "" {
		if err := os.WriteFile(keep, shot, 0o644); err != nil {
			t.Error(err)
		}
	}

	dom := string(domBytes)
	if !strings.Contains(dom, `id="simulated-banner"`) {
		t.Error("the simulated banner is missing")
	}
	// The attribution table's data-value attributes, in order, against
	// the attribution JSON.
	var got struct {
		Claims []struct {
			Card, Baseline, Final, Unexplained float64
			Steps                              []struct{ Value, Delta float64 }
		} `json:"claims"`
	}
	if err := json.Unmarshal(want, &got); err != nil {
		t.Fatal(err)
	}
	table := regexp.MustCompile(`(?s)<table class="attribution".*?</table>`).FindString(dom)
	vals := regexp.MustCompile(`data-field="(value|delta)" data-value="([^"]+)"`).FindAllStringSubmatch(table, -1)
	c := got.Claims[0]
	var expect []float64
	expect = append(expect, c.Card, c.Baseline)
	for _, st := range c.Steps {
		expect = append(expect, st.Value, st.Delta)
	}
	expect = append(expect, c.Final, c.Unexplained)
	if len(vals) != len(expect) {
		t.Fatalf("%d numbers in the rendered table, want %d", len(vals), len(expect))
	}
	for i, v := range vals {
		x, err := strconv.ParseFloat(v[2], 64)
		if err != nil || x != expect[i] {
			t.Errorf("table number %d = %s, attribute --json says %v", i, v[2], expect[i])
		}
	}
	// The displayed text matches too (points, two decimals).
	if !strings.Contains(table, strconv.FormatFloat(math.Round(c.Final*10000)/100, 'f', 2, 64)) {
		t.Errorf("final %v not shown", c.Final)
	}
	if !strings.Contains(dom, "data:image/png;base64,") {
		t.Error("the waterfall plot is not embedded")
	}

	mdText := string(mustRead(t, md))
	if !strings.Contains(mdText, "SIMULATED") || !strings.Contains(mdText, "| baseline | run |") {
		t.Errorf("markdown:\n%s", mdText)
	}

	// The first-screen check can fail: each broken copy of the page must be caught, for
	// the part that was broken.
	for _, b := range []struct {
		name, part string
		breakIt    func(string) string
	}{
		{"plot hidden", "plot", withStyle("figure.waterfall img{visibility:hidden}")},
		{"plot not an image", "plot", func(p string) string {
			return strings.Replace(p, "data:image/png;base64,", "data:image/png;base64,AAAA", 1)
		}},
		{"table hidden", "table", withStyle("table.attribution{visibility:hidden}")},
		{"table below the first screen", "table", withStyle("table.attribution{margin-top:1600px}")},
		{"banner hidden", "banner", withStyle("#simulated-banner{display:none}")},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			_, _, problems := firstScreen(t, []byte(b.breakIt(string(page))))
			if len(problems) == 0 {
				t.Fatal("the broken page passes the first-screen check")
			}
			var caught bool
			for _, p := range problems {
				t.Logf("caught %v", p)
				caught = caught || p.part == b.part
			}
			if !caught {
				t.Errorf("problems %v, none with the %s", problems, b.part)
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The window the report is checked in, and the README's picture taken at
// (docs/screenshot.sh).
const screenW, screenH = 1280, 1600

// probe, appended to a copy of the report, writes where the banner, the
// attribution table and the waterfall plot are laid out, in CSS pixels of
// the viewport (screenshot pixels at a device scale factor of 1), into an
// attribute that --dump-dom shows. It runs on load, after the plot's image
// has been decoded or has failed to.
const probe = `<script>
addEventListener("load", () => {
  const box = sel => {
    const e = document.querySelector(sel);
    if (!e) return null;
    const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height};
  };
  const img = document.querySelector("figure.waterfall img");
  document.documentElement.setAttribute("data-layout", JSON.stringify({
    width: innerWidth, height: innerHeight,
    banner: box("#simulated-banner"), table: box("table.attribution"), plot: box("figure.waterfall img"),
    plotLoaded: !!img && img.complete && img.naturalWidth > 0,
  }));
});
</script>
`

type box struct{ X, Y, W, H float64 }

// screenProblem is something a reader would miss on the first screen.
type screenProblem struct {
	part string // banner, table or plot
	why  string
}

func (p screenProblem) String() string { return p.part + ": " + p.why }

// firstScreen renders page in headless Chromium in a screenW×screenH
// window and checks what a reader sees without scrolling: the simulated
// banner (when the page has one), the attribution table and the waterfall
// plot each lie inside the window with non-zero size, the plot's image has
// loaded, and the screenshot's pixels in each of their boxes are not blank.
// It returns the rendered DOM, the screenshot (PNG) and the problems found.
func firstScreen(t *testing.T, page []byte) (dom, shot []byte, problems []screenProblem) {
	t.Helper()
	i := bytes.LastIndex(page, []byte("</body>"))
	if i < 0 {
		t.Fatal("the page has no </body>")
	}
	probed := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(probed, slices.Concat(page[:i], []byte(probe), page[i:]), 0o644); err != nil {
		t.Fatal(err)
	}
	window := []string{"--window-size=" + strconv.Itoa(screenW) + "," + strconv.Itoa(screenH),
		"--force-device-scale-factor=1", "--hide-scrollbars"}

	// One run dumps the DOM, with the layout the probe wrote, and takes the
	// screenshot of that same rendering.
	pngPath := filepath.Join(t.TempDir(), "shot.png")
	dom = headless(t, append(window, "--dump-dom", "--screenshot="+pngPath, "file://"+probed)...)
	m := regexp.MustCompile(`data-layout="([^"]*)"`).FindSubmatch(dom)
	if m == nil {
		t.Fatal("the probe wrote no layout: did the page load?")
	}
	var layout struct {
		Width, Height       float64
		Banner, Table, Plot *box
		PlotLoaded          bool
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &layout); err != nil {
		t.Fatal(err)
	}

	shot, err := os.ReadFile(pngPath)
	if err != nil {
		t.Fatalf("chromium took no screenshot along with --dump-dom (its new headless mode does both): %v", err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	// The layout's coordinates are the screenshot's if the page was laid
	// out as wide as the screenshot. While the page loads, headless
	// Chromium's viewport is shorter than the window (1457 of 1600 pixels
	// in Chromium 156); it grows to the window for the screenshot, which
	// moves nothing in the report (no height-dependent CSS). An element
	// must lie inside both.
	sb := img.Bounds()
	if sb.Dx() != screenW || sb.Dy() != screenH || layout.Width != screenW {
		t.Fatalf("screenshot %v, layout %v wide; want %d×%d", sb.Size(), layout.Width, screenW, screenH)
	}
	bottom := min(layout.Height, screenH)

	check := func(part string, b *box, enough func(inkStats) string) {
		switch {
		case b == nil:
			problems = append(problems, screenProblem{part, "not on the page"})
		case b.W < 1 || b.H < 1:
			problems = append(problems, screenProblem{part, fmt.Sprintf("laid out with no size: %+v", *b)})
		case b.X < 0 || b.Y < 0 || b.X+b.W > screenW || b.Y+b.H > bottom:
			problems = append(problems, screenProblem{part, fmt.Sprintf("at %+v, outside the first %d×%.0f pixels", *b, screenW, bottom)})
		default:
			r := image.Rect(int(math.Floor(b.X)), int(math.Floor(b.Y)), int(math.Ceil(b.X+b.W)), int(math.Ceil(b.Y+b.H)))
			if why := enough(inkIn(img, r)); why != "" {
				problems = append(problems, screenProblem{part, fmt.Sprintf("%v in the screenshot %s", r, why)})
			}
		}
	}
	// Text: a few per cent of a table's or banner's box is dark glyph
	// pixels, anti-aliased in many greys.
	text := func(s inkStats) string {
		if s.dark < 0.01 || s.colours < 16 {
			return fmt.Sprintf("is blank: %.2f%% dark pixels, %d colours", 100*s.dark, s.colours)
		}
		return ""
	}
	if bytes.Contains(page, []byte(`id="simulated-banner"`)) {
		check("banner", layout.Banner, text)
	}
	check("table", layout.Table, text)
	if layout.Plot != nil && !layout.PlotLoaded {
		problems = append(problems, screenProblem{"plot", "the image did not load"})
	}
	// The waterfall: axes and labels, and bars in colour.
	check("plot", layout.Plot, func(s inkStats) string {
		if why := text(s); why != "" {
			return why
		}
		if s.saturated < 0.0025 {
			return fmt.Sprintf("has no coloured bars: %.2f%% coloured pixels", 100*s.saturated)
		}
		return ""
	})
	return dom, shot, problems
}

// inkStats describes the pixels of a box: the fractions that are dark and
// that are strongly coloured, and how many distinct colours there are.
type inkStats struct {
	dark, saturated float64
	colours         int
}

func inkIn(img image.Image, r image.Rectangle) inkStats {
	r = r.Intersect(img.Bounds())
	colours := map[color.RGBA]bool{}
	var dark, saturated int
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			colours[c] = true
			if 299*int(c.R)+587*int(c.G)+114*int(c.B) < 128*1000 {
				dark++
			}
			if max(c.R, c.G, c.B)-min(c.R, c.G, c.B) > 80 {
				saturated++
			}
		}
	}
	n := float64(max(r.Dx()*r.Dy(), 1))
	return inkStats{dark: float64(dark) / n, saturated: float64(saturated) / n, colours: len(colours)}
}

// withStyle returns a function that adds a style sheet at the end of a
// page's head.
func withStyle(css string) func(string) string {
	return func(p string) string {
		return strings.Replace(p, "</head>", "<style>"+css+"</style></head>", 1)
	}
}

// TestMain lists the parts outside Go that tests skipped for.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
