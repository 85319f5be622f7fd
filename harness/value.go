package harness

import (
	"bytes"
	"math"
	"strconv"
	"strings"
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
		f, err := parsePyFloat(v.Str)
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

// parsePyFloat parses Python's float repr, including nan and inf.
func parsePyFloat(s string) (float64, error) {
	switch s {
	case "nan", "NaN":
		return math.NaN(), nil
	case "inf", "Infinity":
		return math.Inf(1), nil
	case "-inf", "-Infinity":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(s, 64)
}

// FormatFloat writes f the way Python's repr writes a float (or an int when
// isInt): shortest round-trip digits, "1.0" for integral floats, exponent
// notation exactly when Python uses it (exponent < -4 or >= 16).
func FormatFloat(f float64, isInt bool) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if isInt && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	digits := strconv.FormatFloat(math.Abs(f), 'e', -1, 64) // d.ddde±XX
	mant, expStr, _ := strings.Cut(digits, "e")
	exp, _ := strconv.Atoi(expStr)
	ds := strings.Replace(mant, ".", "", 1)
	sign := ""
	if f < 0 {
		sign = "-"
	}
	if exp < -4 || exp >= 16 {
		m := ds[:1]
		if len(ds) > 1 {
			m += "." + ds[1:]
		}
		es := "+"
		if exp < 0 {
			es = "-"
			exp = -exp
		}
		return sign + m + "e" + es + leftPad2(exp)
	}
	if exp < 0 {
		return sign + "0." + strings.Repeat("0", -exp-1) + ds
	}
	if len(ds) <= exp+1 {
		return sign + ds + strings.Repeat("0", exp+1-len(ds)) + ".0"
	}
	return sign + ds[:exp+1] + "." + ds[exp+1:]
}

func leftPad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
