package simulate

import (
	"strconv"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
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
//
// The floats and strings themselves are package pynum's.

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
		return pynum.AppendString(dst, x)
	case float64:
		return pynum.AppendJSONFloat(dst, x)
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
			dst = pynum.AppendString(dst, k)
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
