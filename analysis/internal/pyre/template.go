package pyre

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Template is a compiled re.sub replacement string: literal text with
// \1, \g<1>, \g<name> group references and the usual escapes, as parsed by
// CPython 3.11's re._parser.parse_template.
type Template struct {
	re    *Regexp
	src   string
	parts []templatePart
}

// templatePart is literal text, or (group >= 0) a group reference.
type templatePart struct {
	lit   string
	group int
}

// TemplateError reports a replacement template Python's re.sub rejects.
type TemplateError struct {
	Pattern, Template string
	Pos               int // code point offset in Template
	Msg               string
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("pyre: invalid replacement template %q for pattern %q: %s at position %d", e.Template, e.Pattern, e.Msg, e.Pos)
}

// CompileTemplate parses repl as Python's re.sub would for this pattern.
func (re *Regexp) CompileTemplate(repl string) (*Template, error) {
	t := &Template{re: re, src: repl}
	if !strings.Contains(repl, `\`) {
		if repl != "" {
			t.parts = []templatePart{{lit: repl, group: -1}}
		}
		return t, nil
	}
	src := []rune(repl)
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, templatePart{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	fail := func(pos int, format string, args ...any) error {
		return &TemplateError{Pattern: re.pattern, Template: repl, Pos: pos, Msg: fmt.Sprintf(format, args...)}
	}
	addGroup := func(index, pos int) error {
		if index > re.groups {
			return fail(pos, "invalid group reference %d", index)
		}
		flush()
		t.parts = append(t.parts, templatePart{group: index})
		return nil
	}
	isOct := func(i int) bool { return i < len(src) && '0' <= src[i] && src[i] <= '7' }
	isDigit := func(i int) bool { return i < len(src) && '0' <= src[i] && src[i] <= '9' }

	for i := 0; i < len(src); {
		if src[i] != '\\' {
			lit.WriteRune(src[i])
			i++
			continue
		}
		if i+1 >= len(src) {
			return nil, fail(len(src)-1, "bad escape (end of pattern)")
		}
		c := src[i+1]
		start := i
		i += 2
		switch {
		case c == 'g':
			if i >= len(src) || src[i] != '<' {
				return nil, fail(i, "missing <")
			}
			i++
			end := i
			for end < len(src) && src[end] != '>' {
				end++
			}
			name := string(src[i:end])
			if end >= len(src) {
				if name == "" {
					return nil, fail(end, "missing group name")
				}
				return nil, fail(i, "missing >, unterminated name")
			}
			if name == "" {
				return nil, fail(i, "missing group name")
			}
			i = end + 1
			var index int
			if isIdentifier(name) {
				gi, ok := re.groupIndex[name]
				if !ok {
					return nil, fail(start, "unknown group name %s", pyRepr(name))
				}
				index = gi
			} else {
				v, err := strconv.ParseUint(name, 10, 64)
				if err != nil {
					return nil, fail(end-runeLen(name), "bad character in group name %s", pyRepr(name))
				}
				if v >= maxGroups {
					return nil, fail(end-runeLen(name), "invalid group reference %d", v)
				}
				index = int(v)
			}
			if err := addGroup(index, end-runeLen(name)); err != nil {
				return nil, err
			}
		case c == '0':
			v := 0
			for n := 0; n < 2 && isOct(i); n++ {
				v = v*8 + int(src[i]-'0')
				i++
			}
			lit.WriteRune(rune(v & 0xff))
		case '1' <= c && c <= '9':
			digits := string(c)
			if isDigit(i) {
				digits += string(src[i])
				i++
				if c <= '7' && digits[1] <= '7' && isOct(i) {
					digits += string(src[i])
					i++
					v, _ := strconv.ParseUint(digits, 8, 32)
					if v > 0o377 {
						return nil, fail(start, "octal escape value \\%s outside of range 0-0o377", digits)
					}
					lit.WriteRune(rune(v))
					continue
				}
			}
			g, _ := strconv.Atoi(digits)
			if err := addGroup(g, start+1); err != nil {
				return nil, err
			}
		default:
			if r, ok := escapes[`\`+string(c)]; ok {
				lit.WriteRune(r)
			} else if c < utf8.RuneSelf && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				return nil, fail(start, "bad escape \\%c", c)
			} else {
				// Unknown non-letter escapes stay as written, backslash included.
				lit.WriteRune('\\')
				lit.WriteRune(c)
			}
		}
	}
	flush()
	return t, nil
}

func (t *Template) expand(b *strings.Builder, txt *text, spans []span) {
	for _, p := range t.parts {
		if p.group < 0 {
			b.WriteString(p.lit)
		} else {
			b.WriteString(txt.group(spans[p.group]))
		}
	}
}

// String returns the template source.
func (t *Template) String() string { return t.src }
