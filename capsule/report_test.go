package capsule_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
)

// chromium returns Debian's headless Chromium; the report tests fail, not
// skip, without it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("chromium is missing: CI must install Debian's chromium package")
	return ""
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
// `capsule attribute --json` prints), and that the page renders.
func TestReportInChromium(t *testing.T) {
	s := simulateStudy(t, demoStudy, 5, 300)
	opts := capsule.ReportOptions{Attribution: analysis.AttributionOptions{Seed: 1, Resamples: 2000}}
	rep, err := capsule.BuildReport(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	md, err := rep.WriteFiles(out)
	if err != nil {
		t.Fatal(err)
	}
	att, err := capsule.Attribute(context.Background(), s, opts.Attribution)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(att)

	dom := string(headless(t, "--dump-dom", "file://"+out))
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

	png := filepath.Join(t.TempDir(), "shot.png")
	headless(t, "--screenshot="+png, "--window-size=1200,2400", "--hide-scrollbars", "file://"+out)
	st, err := os.Stat(png)
	if err != nil || st.Size() < 20000 {
		t.Fatalf("screenshot %v: %v", png, err)
	}
	if os.Getenv("EVALCAPSULE_KEEP_REPORT") != "" {
		os.WriteFile(os.Getenv("EVALCAPSULE_KEEP_REPORT"), mustRead(t, png), 0o644)
	}
	mdText := string(mustRead(t, md))
	if !strings.Contains(mdText, "SIMULATED") || !strings.Contains(mdText, "| baseline | run |") {
		t.Errorf("markdown:\n%s", mdText)
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
