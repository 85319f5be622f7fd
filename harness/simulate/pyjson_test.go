package simulate

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestAppendIndented_Python compares indent=2 output with CPython's on a
// value holding every kind the results file uses.
func TestAppendIndented_Python(t *testing.T) {
	v := (&object{}).
		set("s", "x\ny").
		set("f", 0.1).
		set("i", 3).
		set("integral", 2.0).
		set("b", true).
		set("n", nil).
		set("empty_list", []any{}).
		set("empty_dict", &object{}).
		set("strings", []string{"a", "b"}).
		set("nested", []any{(&object{}).set("k", []any{1, 2.5, "N/A", false}), []any{}, &object{}}).
		set("é", "ü")
	got := appendIndented(nil, v, 0)
	out := runPython(t, `
import json, sys
raw = sys.stdin.buffer.read().decode('utf-8')
obj = json.loads(raw)
print(json.dumps(obj, indent=2, ensure_ascii=False) == raw)
print(type(obj['f']).__name__, type(obj['i']).__name__, type(obj['integral']).__name__)
`, got)
	if out != "True\nfloat int float\n" {
		t.Fatalf("indent=2 output differs from CPython: %q\n%s", out, got)
	}
}

func TestPyStrip(t *testing.T) {
	for in, want := range map[string]string{
		"  x  ":               "x",
		"\n\tx y\r\n":         "x y",
		"\x1c\x1fx\x1e":       "x",
		"\u00a0x\u3000":       "x",
		"\u2028x\u0085":       "x",
		"x\u200b":             "x\u200b", // zero-width space is not whitespace to Python
		"":                    "",
		" \t ":                "",
		"[invalid]":           "[invalid]",
		"\ufeffx":             "\ufeffx",
		"a\u2009":             "a",
		"\u180ea":             "\u180ea", // Mongolian vowel separator: not space since Unicode 6.3
		"\u1680a\u205f\u202f": "a",
	} {
		if got := pyStrip(in); got != want {
			t.Errorf("pyStrip(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDetLog(t *testing.T) {
	r := stream(3, "log-test", 0)
	for i := 0; i < 100000; i++ {
		x := r.float64()*2 + 1e-300
		if i%10 == 0 {
			x = math.Float64frombits(r.next() &^ (1 << 63))
			// Subnormals are left out: math.Log's amd64 assembly is off
			// there (ln(1.8e-308) comes out as -708.497, not -708.608).
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0x1p-1022 {
				continue
			}
		}
		got, want := detLog(x), math.Log(x)
		if math.Abs(got-want) > 4e-16*math.Max(1, math.Abs(want)) {
			t.Fatalf("detLog(%v) = %v, math.Log = %v", x, got, want)
		}
	}
}

// TestPyIsSpace_Python compares the whitespace set with str.isspace() over
// all of Unicode.
func TestPyIsSpace_Python(t *testing.T) {
	out := runPython(t, "print(' '.join(str(c) for c in range(0x110000) if chr(c).isspace()))", nil)
	want := map[rune]bool{}
	for _, f := range strings.Fields(out) {
		c, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		want[rune(c)] = true
	}
	for c := rune(0); c < 0x110000; c++ {
		if pyIsSpace(c) != want[c] {
			t.Errorf("pyIsSpace(%U) = %v, Python says %v", c, pyIsSpace(c), want[c])
		}
	}
}
