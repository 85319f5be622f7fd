package kernel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A notebook is read into these values and written back from them:
// jsonObject keeps the keys of an object in the order the file has them,
// and numbers stay as written (json.Number), so that what ExecuteNotebook
// does not change is written back as it was. Values are nil, bool,
// json.Number, string, []any and jsonObject.

// jsonObject is a JSON object whose keys keep their order.
type jsonObject []jsonMember

type jsonMember struct {
	key   string
	value any
}

func (o jsonObject) get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// set replaces the value of key, or adds it: where it sorts when the keys
// are sorted, as in a file nbformat wrote, at the end otherwise.
func (o *jsonObject) set(key string, v any) {
	sorted := true
	for i, m := range *o {
		if m.key == key {
			(*o)[i].value = v
			return
		}
		sorted = sorted && (i == 0 || (*o)[i-1].key < m.key)
	}
	i := len(*o)
	if sorted {
		i = 0
		for i < len(*o) && (*o)[i].key < key {
			i++
		}
	}
	*o = append(*o, jsonMember{})
	copy((*o)[i+1:], (*o)[i:])
	(*o)[i] = jsonMember{key, v}
}

// decodeJSON reads one JSON value, the whole of b.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	delim, ok := t.(json.Delim)
	if !ok {
		return t, nil
	}
	switch delim {
	case '{':
		o := jsonObject{}
		seen := map[string]int{}
		for d.More() {
			t, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			k := t.(string)
			if i, dup := seen[k]; dup {
				o[i].value = v // the last value, as Python's json keeps it
				continue
			}
			seen[k] = len(o)
			o = append(o, jsonMember{k, v})
		}
		_, err := d.Token()
		return o, err
	case '[':
		a := []any{}
		for d.More() {
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return nil, fmt.Errorf("unexpected %v", delim)
}

// toJSONValue converts v (maps, json.RawMessage, anything encoding/json
// marshals) to the values above; map keys come out sorted.
func toJSONValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeJSON(b)
}

// encodeNotebook writes v as nbformat writes a notebook (Python's
// json.dumps with indent=1, ensure_ascii=False), with a final newline: a
// notebook that Jupyter wrote and that is read and written again is
// unchanged byte for byte.
func encodeNotebook(v any) []byte {
	var b bytes.Buffer
	writeValue(&b, v, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v any, depth int) {
	newline := func(d int) {
		b.WriteByte('\n')
		for range d {
			b.WriteByte(' ')
		}
	}
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		b.WriteString(string(v))
	case string:
		writeString(b, v)
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(depth + 1)
			writeValue(b, x, depth+1)
		}
		newline(depth)
		b.WriteByte(']')
	case jsonObject:
		if len(v) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(depth + 1)
			writeString(b, m.key)
			b.WriteString(": ")
			writeValue(b, m.value, depth+1)
		}
		newline(depth)
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("kernel: no JSON form for %T", v))
	}
}

// writeString quotes s as Python's json module does with
// ensure_ascii=False: only quotes, backslashes and control characters
// are escaped. Invalid UTF-8 becomes U+FFFD, as encoding/json does.
func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString("\ufffd")
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// splitLines splits s after each line break, as Python's
// str.splitlines(keepends=True), which nbformat uses to store
// multi-line text as a list of lines.
func splitLines(s string) []any {
	lines := []any{}
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				size = 2
			}
		case '\n', '\v', '\f', '\x1c', '\x1d', '\x1e', '\u0085', '\u2028', '\u2029':
		default:
			i += size
			continue
		}
		i += size
		lines = append(lines, s[start:i])
		start = i
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// joinText is multi-line text as nbformat stores it, a string or a list
// of strings, as one string.
func joinText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []any:
		var b strings.Builder
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return "", false
			}
			b.WriteString(s)
		}
		return b.String(), true
	}
	return "", false
}

// splitBundle splits the text values of a MIME bundle into lines as
// nbformat writes them: text/* types, JavaScript and SVG; JSON types and
// base64 images stay as they are.
func splitBundle(data jsonObject) jsonObject {
	out := make(jsonObject, len(data))
	for i, m := range data {
		out[i] = m
		if s, ok := m.value.(string); ok && (strings.HasPrefix(m.key, "text/") || m.key == "application/javascript" || m.key == "image/svg+xml") {
			out[i].value = splitLines(s)
		}
	}
	return out
}
