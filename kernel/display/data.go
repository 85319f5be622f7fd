package display

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"image"
	_ "image/jpeg" // DecodeConfig of JPEG images
	"image/png"
	"maps"
	"regexp"
	"slices"
	"strings"

	"gonum.org/v1/plot"
)

// Data is one value in the MIME types a notebook can render, Jupyter's
// MIME bundle. The zero Data is empty and shows nothing.
type Data struct {
	data     map[string]any
	metadata map[string]any
}

// maxText bounds the text/plain form of a value: a 100,000-element slice
// printed with %+v would freeze the browser that renders it.
const maxText = 256 << 10

// MIME returns content as mimeType. A string is sent as is; a []byte is
// base64-encoded, as Jupyter expects binary types; any other value is
// encoded as JSON, for JSON-based types such as application/vnd.vega.v5+json.
func MIME(mimeType string, content any) Data {
	var v any
	switch c := content.(type) {
	case string:
		v = c
	case []byte:
		v = base64.StdEncoding.EncodeToString(c)
	default:
		b, err := json.Marshal(c)
		if err != nil {
			return Text(fmt.Sprintf("display: %s: %v", mimeType, err))
		}
		v = json.RawMessage(b)
	}
	return Data{data: map[string]any{mimeType: v}}
}

// Text returns plain text.
func Text(s string) Data { return MIME("text/plain", s) }

// HTML returns an HTML fragment.
func HTML(s string) Data { return MIME("text/html", s) }

// Markdown returns Markdown text.
func Markdown(s string) Data { return MIME("text/markdown", s) }

// PNG returns a PNG image from its encoded bytes.
func PNG(b []byte) Data { return MIME("image/png", b) }

// JPEG returns a JPEG image from its encoded bytes.
func JPEG(b []byte) Data { return MIME("image/jpeg", b) }

// SVG returns an SVG image from its XML text.
func SVG(s string) Data { return MIME("image/svg+xml", s) }

// JSON returns v encoded as JSON, which JupyterLab shows as a tree. The
// text/plain form is the indented JSON, for frontends without a JSON view.
func JSON(v any) Data {
	b, err := json.Marshal(v)
	if err != nil {
		return Text("display: JSON: " + err.Error())
	}
	return jsonDoc(b)
}

func jsonDoc(b []byte) Data {
	var indented bytes.Buffer
	if err := json.Indent(&indented, b, "", "  "); err != nil {
		return Text("display: JSON: " + err.Error())
	}
	return Data{data: map[string]any{
		"application/json": json.RawMessage(b),
		"text/plain":       indented.String(),
	}}
}

// Image returns img as a PNG image.
func Image(img image.Image) Data {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return Text("display: PNG: " + err.Error())
	}
	return PNG(buf.Bytes())
}

// With returns d with the MIME types of more added; a type present in both
// takes the later value. d is not changed.
func (d Data) With(more ...Data) Data {
	out := Data{data: maps.Clone(d.data), metadata: maps.Clone(d.metadata)}
	for _, m := range more {
		if len(m.data) > 0 && out.data == nil {
			out.data = map[string]any{}
		}
		maps.Copy(out.data, m.data)
		if len(m.metadata) > 0 && out.metadata == nil {
			out.metadata = map[string]any{}
		}
		maps.Copy(out.metadata, m.metadata)
	}
	return out
}

// MIMEBundle returns the bundle as Jupyter's messages carry it: data by
// MIME type, and metadata (never nil, as the protocol requires an object).
//
// Every frontend must be able to show it, so forms are added where d
// lacks them: text/html rendered from text/markdown (classic Notebook
// drops Markdown from a notebook it does not trust; the rendering escapes
// everything but the Markdown itself), an <img> of an SVG with neither
// HTML nor PNG (the same notebook drops SVG), and always a text/plain
// form: the Markdown, the text of the HTML, or what the image is.
func (d Data) MIMEBundle() (data, metadata map[string]any) {
	data, metadata = d.complete(), d.metadata
	if data == nil {
		data = map[string]any{}
	}
	if metadata == nil {
		metadata = map[string]any{}
	}
	return data, metadata
}

// complete returns d's data with the forms MIMEBundle adds; d is not
// changed.
func (d Data) complete() map[string]any {
	if len(d.data) == 0 {
		return d.data
	}
	_, hasHTML := d.data["text/html"]
	_, hasPlain := d.data["text/plain"]
	_, hasPNG := d.data["image/png"]
	md, hasMD := d.data["text/markdown"].(string)
	svg, hasSVG := d.data["image/svg+xml"].(string)
	if hasPlain && (hasHTML || !hasMD && !(hasSVG && !hasPNG)) {
		return d.data
	}
	data := maps.Clone(d.data)
	switch {
	case hasHTML:
	case hasMD:
		data["text/html"] = markdownHTML(md)
	case hasSVG && !hasPNG:
		data["text/html"] = `<img src="data:image/svg+xml;base64,` + base64.StdEncoding.EncodeToString([]byte(svg)) + `">`
	}
	if !hasPlain {
		data["text/plain"] = d.fallback()
	}
	return data
}

// fallback is the text/plain form of a bundle that has none.
func (d Data) fallback() string {
	if s, ok := d.data["text/markdown"].(string); ok {
		return s
	}
	if s, ok := d.data["text/html"].(string); ok {
		if t := htmlText(s); t != "" {
			return t
		}
	}
	for _, t := range []string{"image/png", "image/jpeg"} {
		if s, ok := d.data[t].(string); ok {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				continue
			}
			if c, format, err := image.DecodeConfig(bytes.NewReader(b)); err == nil {
				return fmt.Sprintf("[%s image, %d×%d]", strings.ToUpper(format), c.Width, c.Height)
			}
		}
	}
	if _, ok := d.data["image/svg+xml"]; ok {
		return "[SVG image]"
	}
	return "[" + strings.Join(slices.Sorted(maps.Keys(d.data)), ", ") + "]"
}

var (
	tagRE    = regexp.MustCompile(`(?s)<(script|style)\b.*?</(script|style)\s*>|<!--.*?-->|<[^>]*>`)
	blanksRE = regexp.MustCompile(`\n[ \t]*(\n[ \t]*)+`)
)

// htmlText is the text an HTML fragment shows, roughly: its tags removed,
// its entities decoded, and runs of blank lines made one.
func htmlText(s string) string {
	s = tagRE.ReplaceAllStringFunc(s, func(tag string) string {
		switch t := strings.ToLower(tag); {
		case strings.HasPrefix(t, "<br"), strings.HasPrefix(t, "</p"), strings.HasPrefix(t, "</tr"),
			strings.HasPrefix(t, "</li"), strings.HasPrefix(t, "</h"), strings.HasPrefix(t, "</div"):
			return "\n"
		case strings.HasPrefix(t, "</td"), strings.HasPrefix(t, "</th"):
			return "\t"
		}
		return ""
	})
	s = html.UnescapeString(s)
	return strings.TrimSpace(blanksRE.ReplaceAllString(s, "\n\n"))
}

// IsZero reports whether d has no MIME type: a nil value, which shows
// nothing.
func (d Data) IsZero() bool { return len(d.data) == 0 }

// String returns the text/plain form, or the one MIMEBundle adds when d
// has none.
func (d Data) String() string {
	if s, ok := d.data["text/plain"].(string); ok {
		return s
	}
	if d.IsZero() {
		return "[]"
	}
	return d.fallback()
}

// Of returns the forms in which v can be shown: the cell result of a value
// v. See the package documentation for the methods it looks for. A nil v
// gives empty Data. A method that fails or panics leaves its form out and
// says why in the text/plain form.
func Of(v any) Data {
	switch x := v.(type) {
	case nil:
		return Data{}
	case Data:
		return x
	case *Data:
		if x == nil {
			return Data{}
		}
		return *x
	case *plot.Plot:
		return gonumPlot(x)
	}
	var notes []string
	d := Data{data: map[string]any{}}
	// try runs one of v's methods: user code, which must not take the
	// kernel down with it.
	try := func(form string, f func() error) {
		defer func() {
			if r := recover(); r != nil {
				notes = append(notes, fmt.Sprintf("%s: panic: %v", form, r))
			}
		}()
		if err := f(); err != nil {
			notes = append(notes, form+": "+err.Error())
		}
	}
	if x, ok := v.(interface {
		MIMEBundle() (map[string]any, map[string]any)
	}); ok {
		try("MIMEBundle", func() error {
			data, md := x.MIMEBundle()
			d = d.With(Data{data: data, metadata: md})
			return nil
		})
	}
	if x, ok := v.(interface{ HTML() string }); ok {
		try("HTML", func() error { d.data["text/html"] = x.HTML(); return nil })
	}
	if x, ok := v.(interface{ Markdown() string }); ok {
		try("Markdown", func() error { d.data["text/markdown"] = x.Markdown(); return nil })
	}
	if x, ok := v.(interface{ PNG() ([]byte, error) }); ok {
		try("PNG", func() error {
			b, err := x.PNG()
			if err == nil {
				d.data["image/png"] = base64.StdEncoding.EncodeToString(b)
			}
			return err
		})
	} else if img, ok := v.(image.Image); ok {
		try("PNG", func() error { d = d.With(Image(img)); return nil })
	}
	if x, ok := v.(interface{ SVG() ([]byte, error) }); ok {
		try("SVG", func() error {
			b, err := x.SVG()
			if err == nil {
				d.data["image/svg+xml"] = string(b)
			}
			return err
		})
	}
	if x, ok := v.(interface{ JSON() ([]byte, error) }); ok {
		try("JSON", func() error {
			b, err := x.JSON()
			switch {
			case err != nil:
				return err
			case !json.Valid(b):
				return errors.New("not valid JSON")
			}
			d.data["application/json"] = json.RawMessage(b)
			return nil
		})
	}
	_, stringer := v.(fmt.Stringer)
	_, isErr := v.(error)
	_, hasPlain := d.data["text/plain"]
	if md, ok := d.data["text/markdown"].(string); ok && !hasPlain && !stringer && !isErr {
		// The Markdown reads better than a dump of the value's fields.
		d.data["text/plain"] = bounded(md)
	}
	if _, ok := d.data["text/plain"]; !ok {
		try("text", func() error { d.data["text/plain"] = plain(v); return nil })
	}
	if len(notes) > 0 {
		text, _ := d.data["text/plain"].(string)
		for _, n := range notes {
			text += "\n(" + n + ")"
		}
		d.data["text/plain"] = text
	}
	return d
}

// plain is the text/plain form: what fmt prints, with field names for
// structs, bounded in size.
func plain(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case error:
		s = x.Error()
	case fmt.Stringer:
		s = x.String()
	case image.Image:
		b := x.Bounds()
		s = fmt.Sprintf("%T %d×%d", v, b.Dx(), b.Dy()) // not a dump of its pixels
	default:
		s = fmt.Sprintf("%+v", v)
	}
	return bounded(s)
}

// bounded cuts s to maxText bytes, saying how many more it had.
func bounded(s string) string {
	if len(s) > maxText {
		s = fmt.Sprintf("%s… (%d more bytes)", s[:maxText], len(s)-maxText)
	}
	return s
}
