package kernel_test

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
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/evalcapsule/evalcapsule/internal/testenv"
	"github.com/evalcapsule/evalcapsule/kernel"
)

// classicNotebook is Debian's jupyter-notebook package, the classic
// Notebook 6.4.
const classicNotebook = "/usr/bin/jupyter-notebook"

// classicProbe is the Notebook's custom.js during the test: it lays the
// whole notebook out in the window (the Notebook scrolls inside a
// window-high frame) and, once the notebook has loaded and its images
// have decoded, writes into an attribute that --dump-dom shows where each
// output area is, how much text it shows and how many images that
// loaded. An output that scrolls inside its cell counts as what shows.
const classicProbe = `define([], function () {
  var style = document.createElement("style");
  style.textContent = "#site{height:auto!important;overflow:visible!important} body{overflow:visible!important}";
  document.head.appendChild(style);
  var all = function (root, sel) { return Array.prototype.slice.call(root.querySelectorAll(sel)); };
  var tries = 0;
  var report = function () {
    if (!(window.Jupyter && Jupyter.notebook && Jupyter.notebook._fully_loaded) ||
        all(document, "#notebook .output_area img").some(function (i) { return !i.complete; })) {
      if (tries++ < 400) setTimeout(report, 50);
      return;
    }
    var cells = all(document, "#notebook .cell");
    var areas = all(document, "#notebook .output_area").map(function (a) {
      // An execute_result's area has its Out[n] prompt even when nothing
      // of its data could be shown: only the subarea counts.
      var out = a.querySelector(".output_subarea");
      if (!out) return {cell: cells.indexOf(a.closest(".cell")), x: 0, y: 0, w: 0, h: 0, text: 0, images: 0};
      var r = out.getBoundingClientRect(), clip = a.closest(".output").getBoundingClientRect();
      var top = Math.max(r.top, clip.top), bottom = Math.min(r.bottom, clip.bottom);
      return {cell: cells.indexOf(a.closest(".cell")), x: r.left, y: top, w: r.width, h: Math.max(0, bottom - top),
        text: (out.innerText || "").trim().length,
        images: all(out, "img").filter(function (i) { return i.naturalWidth > 0; }).length};
    });
    document.documentElement.setAttribute("data-outputs", JSON.stringify({
      trusted: Jupyter.notebook.trusted, width: innerWidth, height: document.documentElement.scrollHeight, areas: areas}));
  };
  report();
});
`

// shownArea is one output area as the probe found it.
type shownArea struct {
	Cell       int
	X, Y, W, H float64
	Text       int // characters of visible text
	Images     int // images that loaded
}

// The window the notebook is shown in: as tall as the executed
// quickstart (13,200 pixels today) with room to grow, so that one
// screenshot holds every output.
const classicW, classicH = 1280, 16000

// TestQuickstartInClassicNotebook executes the quickstart, opens it in
// Debian's classic Notebook, which does not trust it (so it drops
// Markdown and sanitises HTML), in headless Chromium, and checks that
// every output of every cell shows: an output area with text or a loaded
// image, whose pixels in the screenshot are not blank. Two control cells
// whose only output is Markdown, as the kernel's outputs were, must be
// caught as blank.
func TestQuickstartInClassicNotebook(t *testing.T) {
	browser := testenv.Command(t, "chromium")
	testenv.Command(t, "jupyter-notebook") // classicNotebook
	j := requireJupyter(t)                 // the kernel the Notebook starts for the notebook

	in, err := os.ReadFile("../notebooks/quickstart.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	res, err := kernel.ExecuteNotebook(context.Background(), in, kernel.NotebookOptions{Dir: t.TempDir(), Env: []string{"CAPSULE_DEMO_STUDY="}})
	if err != nil {
		t.Fatalf("executing the quickstart: %v", err)
	}
	var nb map[string]any
	if err := json.Unmarshal(res.Notebook, &nb); err != nil {
		t.Fatal(err)
	}
	cells := nb["cells"].([]any)
	// Control cells: Markdown alone, as a display and as a result.
	controls := []int{len(cells), len(cells) + 1}
	for _, kind := range []string{"display_data", "execute_result"} {
		out := map[string]any{"output_type": kind, "metadata": map[string]any{},
			"data": map[string]any{"text/markdown": "**only Markdown**"}}
		if kind == "execute_result" {
			out["execution_count"] = 99
		}
		cells = append(cells, map[string]any{
			"cell_type": "code", "execution_count": nil, "id": "control-" + kind, "metadata": map[string]any{},
			"source": `display.Markdown("**only Markdown**")`, "outputs": []any{out},
		})
	}
	nb["cells"] = cells
	wantOutputs := map[int]int{}
	for i, c := range cells {
		if outs, ok := c.(map[string]any)["outputs"].([]any); ok && len(outs) > 0 {
			wantOutputs[i] = len(outs)
		}
	}
	dir := t.TempDir()
	b, _ := json.Marshal(nb)
	must(t, os.WriteFile(filepath.Join(dir, "quickstart.ipynb"), b, 0o644))
	config := filepath.Join(dir, "config")
	must(t, os.MkdirAll(filepath.Join(config, "custom"), 0o755))
	must(t, os.WriteFile(filepath.Join(config, "custom", "custom.js"), []byte(classicProbe), 0o644))
	nbDir := filepath.Join(dir, "notebooks")
	must(t, os.MkdirAll(nbDir, 0o755))
	must(t, os.Rename(filepath.Join(dir, "quickstart.ipynb"), filepath.Join(nbDir, "quickstart.ipynb")))

	url := startClassicNotebook(t, j, nbDir, config)

	// look opens the notebook in a fresh browser and returns what shows.
	look := func() ([]shownArea, map[int][]string) {
		shotPath := filepath.Join(t.TempDir(), "shot.png")
		cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir="+t.TempDir(), "--window-size="+strconv.Itoa(classicW)+","+strconv.Itoa(classicH),
			"--force-device-scale-factor=1", "--hide-scrollbars", "--virtual-time-budget=30000",
			"--dump-dom", "--screenshot="+shotPath, url+"notebooks/quickstart.ipynb")
		dom, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		m := regexp.MustCompile(`data-outputs="([^"]*)"`).FindSubmatch(dom)
		if m == nil {
			t.Fatal("the probe wrote nothing: did the notebook load?")
		}
		var shown struct {
			Trusted       bool
			Width, Height float64
			Areas         []shownArea
		}
		if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &shown); err != nil {
			t.Fatal(err)
		}
		if shown.Trusted {
			t.Fatal("the Notebook trusts the notebook: the test is of one it does not trust")
		}
		if shown.Width != classicW || shown.Height > classicH {
			t.Fatalf("the notebook is laid out %v×%v, the window is %d×%d: make the window taller", shown.Width, shown.Height, classicW, classicH)
		}
		shotBytes, err := os.ReadFile(shotPath)
		if err != nil {
			t.Fatalf("chromium took no screenshot: %v", err)
		}
		if keep := os.Getenv("EVALCAPSULE_KEEP_CLASSIC"); keep != "" {
			must(t, os.WriteFile(keep, shotBytes, 0o644))
		}
		shot, err := png.Decode(bytes.NewReader(shotBytes))
		if err != nil {
			t.Fatal(err)
		}

		return shown.Areas, blankOutputs(shot, shown.Areas, wantOutputs)
	}
	areas, blank := look()
	if len(blank) > len(controls) {
		// Headless chromium now and then paints part of a page this tall
		// blank in its screenshot; the DOM check above has already
		// passed. Looking once more tells a painting miss from an output
		// that does not show, which stays blank every time.
		t.Logf("blank on the first look, looking again: %v", blank)
		areas, blank = look()
	}
	for _, c := range controls {
		if len(blank[c]) == 0 {
			t.Errorf("control cell %d, Markdown only, is not caught as blank", c)
		}
		t.Logf("control cell %d: %v", c, blank[c])
		delete(blank, c)
	}
	for cell, why := range blank {
		t.Errorf("cell %d shows a blank output: %v", cell, why)
	}
	t.Logf("%d output areas of %d cells shown", len(areas)-1, len(wantOutputs)-len(controls)) // less the control result's
}

// blankOutputs returns, by cell, why outputs the notebook file holds do
// not show: too few output areas, an area with neither text nor an image,
// or one whose pixels in the screenshot are blank.
func blankOutputs(shot image.Image, areas []shownArea, want map[int]int) map[int][]string {
	blank := map[int][]string{}
	got := map[int]int{}
	for _, a := range areas {
		got[a.Cell]++
		r := image.Rect(int(math.Floor(a.X)), int(math.Floor(a.Y)), int(math.Ceil(a.X+a.W)), int(math.Ceil(a.Y+a.H)))
		switch ink, colours := inkOf(shot, r); {
		case a.Text == 0 && a.Images == 0:
			blank[a.Cell] = append(blank[a.Cell], fmt.Sprintf("an output area at %v with no text and no image", r))
		case r.Empty() || !r.In(shot.Bounds()):
			blank[a.Cell] = append(blank[a.Cell], fmt.Sprintf("an output area at %v, outside the screenshot", r))
		case ink < 0.003 || colours < 8:
			blank[a.Cell] = append(blank[a.Cell], fmt.Sprintf("the output area at %v is blank in the screenshot: %.2f%% ink, %d colours", r, 100*ink, colours))
		}
	}
	for cell, n := range want {
		if got[cell] < n {
			blank[cell] = append(blank[cell], fmt.Sprintf("%d outputs in the file, %d shown", n, got[cell]))
		}
	}
	return blank
}

// inkOf returns the fraction of r's pixels that are not near white, and
// how many colours r has.
func inkOf(img image.Image, r image.Rectangle) (float64, int) {
	r = r.Intersect(img.Bounds())
	colours := map[color.RGBA]bool{}
	ink := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			colours[c] = true
			if 299*int(c.R)+587*int(c.G)+114*int(c.B) < 200*1000 {
				ink++
			}
		}
	}
	return float64(ink) / float64(max(r.Dx()*r.Dy(), 1)), len(colours)
}

// startClassicNotebook serves dir with the classic Notebook on a free
// loopback port, with config as its configuration directory, and returns
// its address; the server and the kernels it started stop with the test.
func startClassicNotebook(t *testing.T, j *jupyterEnv, dir, config string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	var log bytes.Buffer
	cmd := exec.Command(classicNotebook, "--no-browser", "--ip=127.0.0.1", "--port="+strconv.Itoa(port), "--port-retries=0",
		"--NotebookApp.token=", "--NotebookApp.password=", "--allow-root", "--notebook-dir="+dir)
	cmd.Env = append(append([]string{}, j.env...), "JUPYTER_CONFIG_DIR="+config,
		"JUPYTER_DATA_DIR="+filepath.Join(t.TempDir()), "JUPYTER_RUNTIME_DIR="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		// On SIGTERM the server shuts its kernels down and exits.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	for range 1200 { // two minutes on a loaded machine
		select {
		case err := <-done:
			t.Fatalf("the Notebook server ended: %v\n%s", err, log.String())
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get(url + "api"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
	}
	t.Fatalf("the Notebook server does not answer on %s:\n%s", url, log.String())
	return ""
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
