package harness

import (
	"bytes"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// appendJSON writes v as compact JSON (Python's separators, UTF-8 kept):
// numbers as FormatFloat, strings as json.dumps(s, ensure_ascii=False).
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
		buf.Write(pynum.AppendJSONNumber(buf.AvailableBuffer(), v.Num, v.IsInt))
	case String:
		buf.Write(pynum.AppendString(buf.AvailableBuffer(), v.Str))
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
			buf.Write(pynum.AppendString(buf.AvailableBuffer(), k))
			buf.WriteString(": ")
			appendJSON(buf, v.Vals[i])
		}
		buf.WriteByte('}')
	}
}
