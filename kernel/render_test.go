package kernel

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image/png"
	"log"
	"log/slog"
	"strings"
	"testing"
)

// TestRenderForms checks that what cells show carries the forms every
// frontend needs: text/html beside Markdown (classic Notebook drops
// Markdown from notebooks it does not trust), text/plain always, and a
// gonum plot as a PNG rather than a dump of its fields.
func TestRenderForms(t *testing.T) {
	te := newTestEngine(t)
	te.cell(`import ("image/color"; "gonum.org/v1/plot"; "gonum.org/v1/plot/plotter"; "github.com/evalcapsule/evalcapsule/kernel/display")`)
	for _, c := range []struct {
		src        string
		want, lack map[string]string // MIME type → a substring it must have, must not have
	}{
		{`display.Markdown("**SIMULATED** study: ` + "`demo`" + `")`,
			map[string]string{"text/html": "<strong>SIMULATED</strong> study: <code>demo</code>", "text/plain": "**SIMULATED** study", "text/markdown": "**SIMULATED**"}, nil},
		{"display.Markdown(\"```yaml\\nmodel: </code><script>alert(1)</script>\\n```\")",
			map[string]string{"text/html": `<pre><code class="language-yaml">model: &lt;/code&gt;&lt;script&gt;`},
			map[string]string{"text/html": "<script"}},
		{"type Note struct{ S string }\nfunc (n Note) Markdown() string { return \"*\" + n.S + \"*\" }\nNote{\"<img src=x onerror=alert(1)>\"}",
			map[string]string{"text/html": "<em>&lt;img src=x onerror=alert(1)&gt;</em>", "text/plain": "*<img src=x onerror=alert(1)>*"},
			map[string]string{"text/html": "<img"}},
		{`display.HTML("<p>a &amp; b</p>")`, map[string]string{"text/html": "<p>a &amp; b</p>", "text/plain": "a & b"}, nil},
		{"p := plot.New()\np.Title.Text = \"y = x²\"\nl, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}, {X: 2, Y: 4}})\nl.Color = color.RGBA{B: 255, A: 255}\np.Add(l)\np",
			map[string]string{"image/png": "iVBOR", "text/plain": "plot: y = x²"},
			map[string]string{"text/plain": "{Title:"}},
	} {
		te.n++
		o := te.run(context.Background(), fmt.Sprintf("In[%d]", te.n), c.src)
		if o.err != nil {
			t.Errorf("%s: %s: %s", c.src, o.err.name, o.err.value)
			continue
		}
		data, md := o.result.MIMEBundle()
		for mime, sub := range c.want {
			if s, _ := data[mime].(string); !strings.Contains(s, sub) {
				t.Errorf("%s: %s = %q, want it to contain %q", c.src, mime, s, sub)
			}
		}
		for mime, sub := range c.lack {
			if s, _ := data[mime].(string); strings.Contains(s, sub) {
				t.Errorf("%s: %s = %q holds %q", c.src, mime, s, sub)
			}
		}
		if s, ok := data["image/png"].(string); ok {
			b, _ := base64.StdEncoding.DecodeString(s)
			cfg, err := png.DecodeConfig(bytes.NewReader(b))
			if err != nil || cfg.Width < 500 {
				t.Errorf("%s: the PNG is not a plot: %v, %+v", c.src, err, cfg)
			}
			if _, ok := md["image/png"]; !ok {
				t.Errorf("%s: no size in the metadata: %v", c.src, md)
			}
		}
	}
}

// TestCellLogs checks that log and slog in cells write to the cell's
// standard error, and that neither the process's standard logger nor its
// slog default changes.
func TestCellLogs(t *testing.T) {
	var kernelLog bytes.Buffer
	oldOut, oldFlags := log.Writer(), log.Flags()
	log.SetOutput(&kernelLog)
	defer func() { log.SetOutput(oldOut); log.SetFlags(oldFlags) }()
	oldDefault := slog.Default()

	te := newTestEngine(t)
	te.cell(`import ("log"; "log/slog"; "os")`)
	for _, c := range []struct{ src, stderr string }{
		{`slog.Info("sweep", "runs", 7)`, "level=INFO msg=sweep runs=7\n"},
		{`slog.Debug("hidden")`, ""},
		{`slog.Default().Warn("careful", "n", 1)`, "level=WARN msg=careful n=1\n"},
		{"log.SetFlags(0)\nlog.Println(\"plain\")", "plain\n"},
		{"l := log.Default()\nl.Print(\"default\")", "default\n"},
		{"slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)).With(\"cell\", 5))\nslog.Error(\"own\")", `"msg":"own","cell":5}`},
	} {
		_, ename, evalue, _ := te.cell(c.src)
		if ename != "" {
			t.Errorf("%s: %s: %s", c.src, ename, evalue)
		}
		te.mu.Lock()
		got := te.stderr.String()
		te.stderr.Reset()
		te.mu.Unlock()
		if c.stderr == "" && got != "" || !strings.Contains(got, c.stderr) {
			t.Errorf("%s: stderr %q, want %q", c.src, got, c.stderr)
		}
	}
	if kernelLog.Len() > 0 {
		t.Errorf("the process's log got the cells' output: %q", kernelLog.String())
	}
	if slog.Default() != oldDefault || log.Flags() != oldFlags {
		t.Error("a cell changed the process's slog default or log flags")
	}
}
