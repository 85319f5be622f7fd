package harness

import (
	"bytes"
	"unicode/utf8"
)

// appendJSON writes v as compact JSON (Python's separators, UTF-8 kept).
func appendJSON(buf *bytes.Buffer, v Value) {
	switch v.Kind {
	case Null:
		buf.WriteString("null")
	case Bool:
		if v.Bool {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case Number:
		buf.WriteString(FormatFloat(v.Num, v.IsInt))
	case String:
		appendJSONString(buf, v.Str)
	case List:
		buf.WriteByte('[')
		for i, e := range v.List {
			if i > 0 {
				buf.WriteString(", ")
			}
			appendJSON(buf, e)
		}
		buf.WriteByte(']')
	case Object:
		buf.WriteByte('{')
		for i, k := range v.Keys {
			if i > 0 {
				buf.WriteString(", ")
			}
			appendJSONString(buf, k)
			buf.WriteString(": ")
			appendJSON(buf, v.Vals[i])
		}
		buf.WriteByte('}')
	}
}

func appendJSONString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				buf.WriteString(`\"`)
			case '\\':
				buf.WriteString(`\\`)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			case '\b':
				buf.WriteString(`\b`)
			case '\f':
				buf.WriteString(`\f`)
			default:
				if c < 0x20 {
					buf.WriteString(`\u00`)
					buf.WriteByte(hex[c>>4])
					buf.WriteByte(hex[c&15])
				} else {
					buf.WriteByte(c)
				}
			}
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		buf.WriteString(s[i : i+size])
		i += size
	}
	buf.WriteByte('"')
}
