package harness

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// syntaxError is a JSON syntax error at a byte offset of the parsed text.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// fileError is e as the *FileError of path: pos gives the line and column
// of e's offset, and it wraps ErrTruncated when the text (n bytes) ended
// before the value did, ErrSyntax otherwise.
func (e *syntaxError) fileError(path string, n int, pos func(off int) (line, col int)) *FileError {
	kind := ErrSyntax
	if e.off >= n {
		kind = ErrTruncated
	}
	line, col := pos(e.off)
	return &FileError{Path: path, Line: line, Col: col, Err: fmt.Errorf("%w: %s", kind, e.msg)}
}

// parser reads JSON as Python's json module writes it (NaN and Infinity
// included), keeping object key order. Raw control characters inside strings
// are accepted (as json.loads(strict=False) does): lm-eval never writes them,
// and the samples reader skips most strings without looking inside. It works on a byte slice; the samples
// reader hands it one line at a time.
type parser struct {
	b []byte
	i int
	// scratch stacks for the members of the lists and objects being parsed
	items []Value
	keys  []string
	vals  []Value
}

// newParser returns a parser of b.
func newParser(b []byte) parser { return parser{b: b} }

// reset makes p parse b from its start, keeping its scratch stacks.
func (p *parser) reset(b []byte) { p.b, p.i = b, 0 }

func (p *parser) fail(format string, args ...any) error {
	return &syntaxError{off: p.i, msg: fmt.Sprintf(format, args...)}
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) expect(c byte) error {
	p.ws()
	if p.i >= len(p.b) {
		return p.fail("unexpected end of JSON, expected %q", c)
	}
	if p.b[p.i] != c {
		return p.fail("expected %q, found %q", c, p.b[p.i])
	}
	p.i++
	return nil
}

// document parses the whole text as one JSON value, which only whitespace
// may follow.
func (p *parser) document() (Value, error) {
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	if err := p.end("JSON value"); err != nil {
		return Value{}, err
	}
	return v, nil
}

// end fails unless only whitespace is left after the value (what) just
// parsed.
func (p *parser) end(what string) error {
	p.ws()
	if p.i < len(p.b) {
		return p.fail("unexpected data after the %s", what)
	}
	return nil
}

// object parses the JSON object at p one member at a time: it reads each
// key and its colon and calls member with p at the value, which member
// consumes (value, skip or raw). member returning stop ends the walk right
// after that value. name, e.g. "sample object", says in errors what is not
// closed.
func (p *parser) object(name string, member func(key string) (stop bool, err error)) error {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return p.fail("expected a JSON object")
	}
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return nil
	}
	for {
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return p.fail("expected a string key")
		}
		key, err := p.key()
		if err != nil {
			return err
		}
		if err := p.expect(':'); err != nil {
			return err
		}
		p.ws()
		if stop, err := member(key); err != nil || stop {
			return err
		}
		p.ws()
		if p.i >= len(p.b) {
			return p.fail("unexpected end of line: the %s is not closed", name)
		}
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.b[p.i] == '}' {
			p.i++
			return nil
		}
		return p.fail("expected ',' or '}' after %q, found %q", key, p.b[p.i])
	}
}

// key parses an object key; keys are short and escape-free in lm-eval files.
func (p *parser) key() (string, error) { return p.str() }

// value parses any JSON value.
func (p *parser) value(depth int) (Value, error) {
	if depth > 10000 {
		return Value{}, p.fail("JSON nested too deeply")
	}
	p.ws()
	if p.i >= len(p.b) {
		return Value{}, p.fail("unexpected end of JSON")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		// Members collect on the parser's scratch stack and are copied out
		// at the end, so each object costs two exact-size allocations.
		base := len(p.keys)
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return Value{Kind: Object, Keys: []string{}, Vals: []Value{}}, nil
		}
		for {
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				p.keys, p.vals = p.keys[:base], p.vals[:base]
				return Value{}, p.fail("expected a string key in object")
			}
			k, err := p.str()
			if err == nil {
				err = p.expect(':')
			}
			var e Value
			if err == nil {
				e, err = p.value(depth + 1)
			}
			if err != nil {
				p.keys, p.vals = p.keys[:base], p.vals[:base]
				return Value{}, err
			}
			p.keys = append(p.keys, k)
			p.vals = append(p.vals, e)
			p.ws()
			if p.i >= len(p.b) {
				p.keys, p.vals = p.keys[:base], p.vals[:base]
				return Value{}, p.fail("unexpected end of JSON in object")
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] == '}' {
				p.i++
				v := Value{Kind: Object, Keys: append([]string(nil), p.keys[base:]...), Vals: append([]Value(nil), p.vals[base:]...)}
				p.keys, p.vals = p.keys[:base], p.vals[:base]
				return v, nil
			}
			found := p.b[p.i]
			p.keys, p.vals = p.keys[:base], p.vals[:base]
			return Value{}, p.fail("expected ',' or '}' in object, found %q", found)
		}
	case c == '[':
		p.i++
		base := len(p.items)
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return Value{Kind: List, List: []Value{}}, nil
		}
		for {
			e, err := p.value(depth + 1)
			if err != nil {
				p.items = p.items[:base]
				return Value{}, err
			}
			p.items = append(p.items, e)
			p.ws()
			if p.i >= len(p.b) {
				p.items = p.items[:base]
				return Value{}, p.fail("unexpected end of JSON in list")
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] == ']' {
				p.i++
				v := Value{Kind: List, List: append([]Value(nil), p.items[base:]...)}
				p.items = p.items[:base]
				return v, nil
			}
			found := p.b[p.i]
			p.items = p.items[:base]
			return Value{}, p.fail("expected ',' or ']' in list, found %q", found)
		}
	case c == '"':
		s, err := p.str()
		return Value{Kind: String, Str: s}, err
	case c == 't':
		return p.literal("true", Value{Kind: Bool, Bool: true})
	case c == 'f':
		return p.literal("false", Value{Kind: Bool})
	case c == 'n':
		return p.literal("null", Value{})
	case c == 'N':
		return p.literal("NaN", Value{Kind: Number, Num: nan})
	case c == 'I':
		return p.literal("Infinity", Value{Kind: Number, Num: posInf})
	case c == '-' || (c >= '0' && c <= '9'):
		if c == '-' && bytes.HasPrefix(p.b[p.i:], []byte("-Infinity")) {
			p.i += len("-Infinity")
			return Value{Kind: Number, Num: negInf}, nil
		}
		return p.number()
	default:
		return Value{}, p.fail("unexpected character %q", c)
	}
}

func (p *parser) literal(word string, v Value) (Value, error) {
	if !bytes.HasPrefix(p.b[p.i:], []byte(word)) {
		return Value{}, p.fail("invalid literal, expected %s", word)
	}
	p.i += len(word)
	return v, nil
}

func (p *parser) number() (Value, error) {
	start := p.i
	isInt := true
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c >= '0' && c <= '9':
		case c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-':
			isInt = false
		default:
			goto done
		}
		p.i++
	}
done:
	if p.i == digits {
		return Value{}, p.fail("invalid number")
	}
	f, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	if err != nil {
		// Out-of-range literals still parse to ±Inf with an error; keep
		// them as lm-eval's Python would (float('1e999') is inf).
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			p.i = start
			return Value{}, p.fail("invalid number %q", p.b[start:min(len(p.b), start+40)])
		}
	}
	return Value{Kind: Number, Num: f, IsInt: isInt}, nil
}

// str parses a string starting at the opening quote.
func (p *parser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := intern(p.b[start:p.i])
			p.i++
			return s, nil
		}
		if c == '\\' {
			break
		}
		p.i++
	}
	buf := make([]byte, 0, p.i-start+16)
	buf = append(buf, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), nil
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", p.fail("unterminated escape in string")
			}
			e := p.b[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					// A pair gives one code point; a lone surrogate is kept as
					// U+FFFD, since Go strings cannot hold it.
					if p.i+6 <= len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
						save := p.i
						p.i += 2
						r2, err := p.hex4()
						if err == nil && utf16.DecodeRune(r, r2) != utf8.RuneError {
							r = utf16.DecodeRune(r, r2)
						} else {
							p.i = save
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", p.fail("invalid escape \\%c in string", e)
			}
		default:
			buf = append(buf, c)
			p.i++
		}
	}
	return "", p.fail("unterminated string")
}

func (p *parser) hex4() (rune, error) {
	if p.i+4 > len(p.b) {
		return 0, p.fail("truncated \\u escape")
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, p.fail("invalid \\u escape")
		}
	}
	p.i += 4
	return r, nil
}

// skip moves past one value, checking its structure without building it;
// it is the hot path of the samples reader, which skips the long prompts and
// documents. Strings are skipped with bytes.IndexByte, which runs at memory
// speed.
func (p *parser) skip() error { return p.skipValue(0) }

// raw skips one value, as skip, and returns its text.
func (p *parser) raw() ([]byte, error) {
	p.ws()
	start := p.i
	if err := p.skip(); err != nil {
		return nil, err
	}
	return p.b[start:p.i], nil
}

func (p *parser) skipValue(depth int) error {
	if depth > 10000 {
		return p.fail("JSON nested too deeply")
	}
	p.ws()
	if p.i >= len(p.b) {
		return p.fail("unexpected end of JSON")
	}
	switch c := p.b[p.i]; {
	case c == '"':
		return p.skipString()
	case c == '{':
		p.i++
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return nil
		}
		for {
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return p.fail("expected a string key in object")
			}
			if err := p.skipString(); err != nil {
				return err
			}
			if err := p.expect(':'); err != nil {
				return err
			}
			if err := p.skipValue(depth + 1); err != nil {
				return err
			}
			p.ws()
			if p.i >= len(p.b) {
				return p.fail("unexpected end of JSON in object")
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] == '}' {
				p.i++
				return nil
			}
			return p.fail("expected ',' or '}' in object, found %q", p.b[p.i])
		}
	case c == '[':
		p.i++
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return nil
		}
		for {
			if err := p.skipValue(depth + 1); err != nil {
				return err
			}
			p.ws()
			if p.i >= len(p.b) {
				return p.fail("unexpected end of JSON in list")
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] == ']' {
				p.i++
				return nil
			}
			return p.fail("expected ',' or ']' in list, found %q", p.b[p.i])
		}
	default:
		_, err := p.value(depth)
		return err
	}
}

func (p *parser) skipString() error {
	p.i++
	for {
		j := bytes.IndexByte(p.b[p.i:], '"')
		if j < 0 {
			p.i = len(p.b)
			return p.fail("unterminated string")
		}
		// Check the escapes before the quote; a backslash right before it
		// escapes it, and the string goes on.
		seg := p.b[p.i : p.i+j]
		escaped := false
		for k := 0; ; {
			b := bytes.IndexByte(seg[k:], '\\')
			if b < 0 {
				break
			}
			k += b
			if k+1 == len(seg) {
				escaped = true
				break
			}
			switch seg[k+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				k += 2
			case 'u':
				if k+6 > len(seg) || !isHex4(seg[k+2:k+6]) {
					p.i += k
					return p.fail("invalid \\u escape in string")
				}
				k += 6
			default:
				p.i += k
				return p.fail("invalid escape \\%c in string", seg[k+1])
			}
		}
		p.i += j + 1
		if !escaped {
			return nil
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// position converts a byte offset into a 1-based line and column.
func position(b []byte, off int) (line, col int) {
	if off > len(b) {
		off = len(b)
	}
	line = 1 + bytes.Count(b[:off], []byte{'\n'})
	col = off - bytes.LastIndexByte(b[:off], '\n')
	return line, col
}

// ParseJSON parses one JSON document as Python's json module reads it
// (NaN and Infinity included), keeping object key order.
func ParseJSON(b []byte) (Value, error) {
	p := newParser(b)
	v, err := p.document()
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			line, col := position(b, se.off)
			return Value{}, fmt.Errorf("line %d, column %d: %s", line, col, se.msg)
		}
		return Value{}, err
	}
	return v, nil
}

// intern returns the common short strings of samples files (stringified
// booleans, filter and metric names) without allocating.
func intern(b []byte) string {
	switch string(b) {
	case "False":
		return "False"
	case "True":
		return "True"
	case "none":
		return "none"
	case "exact_match":
		return "exact_match"
	case "acc":
		return "acc"
	case "acc_norm":
		return "acc_norm"
	case "strict-match":
		return "strict-match"
	case "flexible-extract":
		return "flexible-extract"
	case "":
		return ""
	}
	return string(b)
}
