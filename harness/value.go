package harness

import (
	"bytes"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The kinds of JSON values. Python's json module also writes the non-standard
// tokens NaN, Infinity and -Infinity; they are read as numbers.
const (
	Null Kind = iota
	Bool
	Number
	String
	List
	Object
)

func (k Kind) String() string {
	return [...]string{"null", "bool", "number", "string", "list", "object"}[k]
}

// Value is one JSON value as lm-eval wrote it. Objects keep their key order
// (Python dicts are ordered, and lm-eval's output order carries meaning, such
// as the order of a group's members), and numbers remember whether they were
// written as integers (a Python int) or with a fraction or exponent (a float),
// because CPython sums the two differently.
type Value struct {
	Kind  Kind
	Bool  bool
	Num   float64
	IsInt bool // a Number written without fraction or exponent
	Str   string
	List  []Value
	Keys  []string // Object keys, in file order
	Vals  []Value  // Object values, parallel to Keys
}

// Get returns the value of key in an object, and whether it was there.
func (v Value) Get(key string) (Value, bool) {
	for i, k := range v.Keys {
		if k == key {
			return v.Vals[i], true
		}
	}
	return Value{}, false
}

// Has reports whether an object has key.
func (v Value) Has(key string) bool {
	_, ok := v.Get(key)
	return ok
}

// String renders the value as compact JSON, for messages.
func (v Value) String() string {
	var b bytes.Buffer
	appendJSON(&b, v)
	return b.String()
}

// Text returns a string value, or the text of a number or bool, the way
// lm-eval stringifies response leaves ("True"/"False" for bools).
func (v Value) Text() (string, bool) {
	switch v.Kind {
	case String:
		return v.Str, true
	case Number:
		return FormatFloat(v.Num, v.IsInt), true
	case Bool:
		if v.Bool {
			return "True", true
		}
		return "False", true
	}
	return "", false
}

// Float returns a number, or a string holding a Python float repr (lm-eval
// stringifies log-likelihoods), as a float64.
func (v Value) Float() (float64, bool) {
	switch v.Kind {
	case Number:
		return v.Num, true
	case String:
		f, err := pynum.ParseFloat(v.Str)
		return f, err == nil
	case Bool:
		if v.Bool {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Truth returns a bool, or a string "True"/"False" as lm-eval stringifies it.
func (v Value) Truth() (bool, bool) {
	switch v.Kind {
	case Bool:
		return v.Bool, true
	case String:
		switch v.Str {
		case "True", "true":
			return true, true
		case "False", "false":
			return false, true
		}
	case Number:
		return v.Num != 0, true
	}
	return false, false
}

// FormatFloat writes a number the way Python writes it into JSON: a float
// as repr does (shortest round-trip digits, "1.0" for integral floats,
// exponent notation exactly when Python uses it: exponent < -4 or >= 16) and
// NaN, Infinity and -Infinity as json.dumps does; an int (isInt) as its
// digits.
func FormatFloat(f float64, isInt bool) string {
	var b [32]byte
	return string(pynum.AppendJSONNumber(b[:0], f, isInt))
}
