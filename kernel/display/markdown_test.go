package display_test

import (
	"image"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/evalcapsule/evalcapsule/kernel/display"
	"github.com/evalcapsule/evalcapsule/kernel/internal/frontend"
)

func htmlOf(t *testing.T, d display.Data) string {
	t.Helper()
	data, _ := d.MIMEBundle()
	s, ok := data["text/html"].(string)
	if !ok {
		t.Fatalf("no text/html in %v", data)
	}
	return s
}

// TestMarkdownHTML checks the HTML of the Markdown that the notebooks and
// the kernel's values use.
func TestMarkdownHTML(t *testing.T) {
	for _, c := range []struct{ md, html string }{
		{"**SIMULATED** study: `demo`.", "<p><strong>SIMULATED</strong> study: <code>demo</code>.</p>"},
		{"*emphasis*, _too_, exact_match,strict-match and a_b_c", "<p><em>emphasis</em>, <em>too</em>, exact_match,strict-match and a_b_c</p>"},
		{"```yaml\nname: demo\n  x: 1\n```", "<pre><code class=\"language-yaml\">name: demo\n  x: 1\n</code></pre>"},
		{"> **SIMULATED**: no model\nwas run.", "<blockquote>\n<p><strong>SIMULATED</strong>: no model\nwas run.</p>\n</blockquote>"},
		{"Re-scored:\n\n- run a: ok\n- run b: `3` differ", "<p>Re-scored:</p>\n<ul>\n<li>run a: ok</li>\n<li>run b: <code>3</code> differ</li>\n</ul>"},
		{"3. three\n4. four", "<ol start=\"3\">\n<li>three</li>\n<li>four</li>\n</ol>"},
		{"## Claims\ntext  \nbroken", "<h2>Claims</h2>\n<p>text<br>\nbroken</p>"},
		{"| run | score |\n|:--|--:|\n| a \\| b | 0.41 |", "<table>\n<thead>\n<tr><th style=\"text-align:left\">run</th><th style=\"text-align:right\">score</th></tr>\n</thead>\n<tbody>\n<tr><td style=\"text-align:left\">a | b</td><td style=\"text-align:right\">0.41</td></tr>\n</tbody>\n</table>"},
		{"[a link](https://pkg.go.dev/ \"docs\") and <https://example.org/x>", `<p><a href="https://pkg.go.dev/" rel="noopener noreferrer" title="docs">a link</a> and <a href="https://example.org/x" rel="noopener noreferrer">https://example.org/x</a></p>`},
		{"    indented <code>\n\n---\n\\*not em\\*", "<pre><code>indented &lt;code&gt;\n</code></pre>\n<hr>\n<p>*not em*</p>"},
		{"in 2024. The end", "<p>in 2024. The end</p>"},
	} {
		if got := htmlOf(t, display.Markdown(c.md)); got != c.html {
			t.Errorf("%q:\n got %q\nwant %q", c.md, got, c.html)
		}
	}
}

// allowedTags and allowedAttrs are all that the Markdown rendering may
// write; anything else came from its input.
var (
	tagRE        = regexp.MustCompile(`<(/?)([a-zA-Z0-9]+)((?:\s+[a-z]+="[^"<>]*")*)\s*(/?)>|<`)
	attrRE       = regexp.MustCompile(`([a-z]+)="([^"]*)"`)
	allowedTags  = "p strong em code pre a img br h1 h2 h3 h4 h5 h6 blockquote ul ol li hr table thead tbody tr th td"
	allowedAttrs = "href src alt title rel class start style"
)

// unsafeHTML returns what in s the Markdown rendering must never write: a
// tag or attribute outside the lists, a bare "<", a link to a scheme
// other than http, https or mailto.
func unsafeHTML(s string) []string {
	var bad []string
	for _, m := range tagRE.FindAllStringSubmatch(s, -1) {
		if m[0] == "<" || !strings.Contains(" "+allowedTags+" ", " "+strings.ToLower(m[2])+" ") {
			bad = append(bad, m[0])
			continue
		}
		for _, a := range attrRE.FindAllStringSubmatch(m[3], -1) {
			switch {
			case !strings.Contains(" "+allowedAttrs+" ", " "+a[1]+" "):
				bad = append(bad, a[0])
			case a[1] == "href" || a[1] == "src":
				u := strings.ToLower(a[2])
				if i := strings.IndexAny(u, ":/?#"); i >= 0 && u[i] == ':' &&
					!strings.HasPrefix(u, "http:") && !strings.HasPrefix(u, "https:") && !strings.HasPrefix(u, "mailto:") {
					bad = append(bad, a[0])
				}
			case a[1] == "style" && !regexp.MustCompile(`^text-align:(left|right|center)$`).MatchString(a[2]):
				bad = append(bad, a[0])
			}
		}
	}
	return bad
}

// TestMarkdownHostile renders Markdown that carries HTML, scripts and
// dangerous links, as an lm-eval output may, and checks that all of it
// is text in the HTML; the check itself catches each of them unescaped.
func TestMarkdownHostile(t *testing.T) {
	hostile := []string{
		`<script>alert(1)</script>`,
		`<img src=x onerror=alert(1)>`,
		`**<iframe src="https://evil.example/">**`,
		"`</code><script>alert(1)</script>`",
		"```\n</code></pre><script>alert(1)</script>\n```",
		"```\" onmouseover=\"alert(1)\nx\n```",
		`[click](javascript:alert(1))`,
		`[click](JaVaScRiPt:alert(1))`,
		"[click](java\tscript:alert(1))",
		`[click](https://ok.example/" onmouseover="alert(1))`,
		`![x](data:text/html;base64,PHNjcmlwdD4=)`,
		`<javascript:alert(1)>`,
		`<svg onload=alert(1)>`,
		"| <b onclick=alert(1)> | x |\n|---|---|\n| <style>*{}</style> | y |",
		"- <a href=javascript:alert(1)>x</a>\n- y",
		"> <object data=x>",
		`&lt;script&gt; &#60;b&#62;`,
		"[x](<javascript:alert(1)>)",
		"\x00<script>",
	}
	for _, md := range hostile {
		got := htmlOf(t, display.Markdown(md))
		if bad := unsafeHTML(got); len(bad) > 0 {
			t.Errorf("%q renders %q: unsafe %q", md, got, bad)
		}
		if strings.Contains(strings.ToLower(got), "javascript:") && strings.Contains(got, "href=\"javascript") {
			t.Errorf("%q renders a javascript link: %q", md, got)
		}
		// The text is still there for the reader, escaped.
		if strings.Contains(md, "<script>") && !strings.Contains(got, "&lt;script&gt;") {
			t.Errorf("%q: the script tag is not shown as text: %q", md, got)
		}
	}
	// The check can fail: raw HTML of each kind is caught.
	for _, raw := range []string{`<script>`, `<img src=x onerror=alert(1)>`, `<a href="javascript:alert(1)">`,
		`<p onclick="x">`, `<td style="background:url(x)">`, `a < b`} {
		if len(unsafeHTML(raw)) == 0 {
			t.Errorf("unsafeHTML passes %q", raw)
		}
	}
}

// publisher records what display sends to the notebook.
type publisher struct{ bundles []map[string]any }

func (p *publisher) Publish(msgType string, content any) {
	if c, ok := content.(map[string]any); ok {
		if d, ok := c["data"].(map[string]any); ok {
			p.bundles = append(p.bundles, d)
		}
	}
}

type markdowner struct{ s string }

func (m markdowner) Markdown() string { return m.s }

type htmler struct{}

func (htmler) HTML() string { return "<p>a &amp; <b>b</b></p>" }

// TestBundleForms checks that every rich output display sends carries
// text/plain, and text/html unless it is a PNG or JPEG image (which every
// frontend shows, a notebook it does not trust too), so that classic
// Notebook, JupyterLab and nbconvert's HTML all show it.
func TestBundleForms(t *testing.T) {
	p := &publisher{}
	frontend.Set(p)
	defer frontend.Set(nil)

	pl := plot.New()
	pl.Title.Text = "a title"
	for _, c := range []struct {
		name        string
		v           any
		plain, html string // substrings
		image       bool
	}{
		{"Markdown", display.Markdown("**x** <y>"), "**x** <y>", "<strong>x</strong> &lt;y&gt;", false},
		{"Markdown method", markdowner{"# T"}, "# T", "<h1>T</h1>", false},
		{"HTML", display.HTML("<p>a &amp; <b>b</b></p>"), "a & b", "<b>b</b>", false},
		{"HTML method", htmler{}, "{}", "<b>b</b>", false},
		{"SVG", display.SVG("<svg xmlns='http://www.w3.org/2000/svg'/>"), "[SVG image]", `<img src="data:image/svg+xml;base64,`, false},
		{"JSON", display.JSON(map[string]int{"a": 1}), `"a": 1`, "", false},
		{"vega", display.MIME("application/vnd.vega.v5+json", map[string]int{"a": 1}), "[application/vnd.vega.v5+json]", "", false},
		{"image", image.NewGray(image.Rect(0, 0, 3, 2)), "*image.Gray 3×2", "", true},
		{"PNG", display.Image(image.NewGray(image.Rect(0, 0, 3, 2))), "[PNG image, 3×2]", "", true},
		{"gonum plot", pl, "plot: a title", "", true},
		{"sweep", display.NewSweep(), "", "<table>", false},
	} {
		p.bundles = nil
		display.Show(c.v)
		if len(p.bundles) != 1 {
			t.Errorf("%s: %d outputs", c.name, len(p.bundles))
			continue
		}
		b := p.bundles[0]
		plain, ok := b["text/plain"].(string)
		if !ok || !strings.Contains(plain, c.plain) {
			t.Errorf("%s: text/plain %q (present: %v), want %q", c.name, plain, ok, c.plain)
		}
		_, png := b["image/png"]
		if c.image != png {
			t.Errorf("%s: image/png present %v, want %v", c.name, png, c.image)
		}
		if c.image || c.html == "" && b["application/json"] != nil || strings.HasPrefix(c.name, "vega") {
			continue // images every frontend shows; JSON whose text form is its text
		}
		h, ok := b["text/html"].(string)
		if !ok || !strings.Contains(h, c.html) {
			t.Errorf("%s: text/html %q (present: %v), want %q", c.name, h, ok, c.html)
		}
	}
}
