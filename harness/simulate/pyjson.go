package simulate

import (
	"math"
	"strconv"
)

// This file reproduces the bytes CPython's json module writes, because
// lm-eval hashes and stores json.dumps output and a re-scorer compares
// against it byte for byte:
//
//   - json.dumps(obj, ensure_ascii=False): separators ", " and ": ";
//   - json.dumps(obj, indent=2, ensure_ascii=False): items separated by ","
//     plus a newline, two spaces per level, empty containers as [] and {};
//   - floats as float.__repr__ (shortest round-trip digits);
//   - strings escaped like the encoder's ESCAPE_DCT, non-ASCII kept as UTF-8.

const hexDigits = "0123456789abcdef"

// appendPyString appends s as a JSON string literal exactly as Python's
// json encoder writes it with ensure_ascii=False: the escapes \" \\ \n \r
// \t \b \f, \u00XX (lower-case hex) for the other control characters, and
// every other byte (DEL, U+2028, all non-ASCII) unchanged.
func appendPyString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendPyEscaped(dst, s)
	return append(dst, '"')
}

// appendPyEscaped appends the inside of the string literal: s escaped,
// without the quotes. A long prompt prefix shared by many lines is escaped
// once with it and reused.
func appendPyEscaped(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// appendPyRepr appends Python's repr(f) (which str(f) equals): the shortest
// digits that round-trip, in positional notation when the decimal exponent
// is in [-4, 16) (always with a fractional part, so 1.0 not 1) and in
// scientific notation otherwise, with a signed exponent of at least two
// digits (1e-05, 1.5e+16). Non-finite values follow str(): inf, -inf, nan.
func appendPyRepr(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // [-]d[.ddd]e±XX
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	var digits [24]byte
	nd := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	// decpt is the position of the decimal point relative to the digits:
	// value = 0.d1d2... × 10^decpt, CPython's format_float_short convention.
	decpt := exp + 1
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			dst = append(dst, '0', '.')
			for k := 0; k < -decpt; k++ {
				dst = append(dst, '0')
			}
			dst = append(dst, digits[:nd]...)
		case decpt >= nd:
			dst = append(dst, digits[:nd]...)
			for k := nd; k < decpt; k++ {
				dst = append(dst, '0')
			}
			dst = append(dst, '.', '0')
		default:
			dst = append(dst, digits[:decpt]...)
			dst = append(dst, '.')
			dst = append(dst, digits[decpt:nd]...)
		}
		return dst
	}
	dst = append(dst, digits[0])
	if nd > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:nd]...)
	}
	dst = append(dst, 'e')
	x := decpt - 1
	if x < 0 {
		dst = append(dst, '-')
		x = -x
	} else {
		dst = append(dst, '+')
	}
	if x < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, int64(x), 10)
}

// appendPyJSONFloat appends a float as json.dumps writes it: repr for finite
// values, and the non-standard tokens NaN, Infinity, -Infinity otherwise.
func appendPyJSONFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	return appendPyRepr(dst, f)
}

// object is an insertion-ordered JSON object: Python dicts keep insertion
// order and lm-eval's files depend on it, so a Go map will not do.
type object struct {
	keys []string
	vals []any
}

func (o *object) set(key string, v any) *object {
	for i, k := range o.keys {
		if k == key {
			o.vals[i] = v
			return o
		}
	}
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, v)
	return o
}

func (o *object) get(key string) any {
	for i, k := range o.keys {
		if k == key {
			return o.vals[i]
		}
	}
	return nil
}

// appendIndented appends v as json.dumps(v, indent=2, ensure_ascii=False)
// writes it at nesting depth level. The values it understands mirror the
// Python types lm-eval stores: string, float64 (Python float), int (Python
// int), bool, nil (None), []any and []string (list), *object (dict).
func appendIndented(dst []byte, v any, level int) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if x {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case string:
		return appendPyString(dst, x)
	case float64:
		return appendPyJSONFloat(dst, x)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case []string:
		items := make([]any, len(x))
		for i, s := range x {
			items[i] = s
		}
		return appendIndented(dst, items, level)
	case []any:
		if len(x) == 0 {
			return append(dst, "[]"...)
		}
		dst = append(dst, '[')
		for i, item := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, level+1)
			dst = appendIndented(dst, item, level+1)
		}
		dst = newline(dst, level)
		return append(dst, ']')
	case *object:
		if len(x.keys) == 0 {
			return append(dst, "{}"...)
		}
		dst = append(dst, '{')
		for i, k := range x.keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, level+1)
			dst = appendPyString(dst, k)
			dst = append(dst, ':', ' ')
			dst = appendIndented(dst, x.vals[i], level+1)
		}
		dst = newline(dst, level)
		return append(dst, '}')
	}
	panic("simulate: no JSON form for a value of this type") // a bug in this package
}

func newline(dst []byte, level int) []byte {
	dst = append(dst, '\n')
	for i := 0; i < level; i++ {
		dst = append(dst, ' ', ' ')
	}
	return dst
}
