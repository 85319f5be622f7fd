package simulate

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestAppendPyRepr_Known(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-2, "-2.0"},
		{0.1, "0.1"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{1.5e-5, "1.5e-05"},
		{1e15, "1000000000000000.0"},
		{1e16, "1e+16"},
		{1.5e16, "1.5e+16"},
		{123456789012345678, "1.2345678901234568e+17"},
		{9.536740890325746e-07, "9.536740890325746e-07"},
		{0.09999999999999999, "0.09999999999999999"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{1e100, "1e+100"},
		{math.Inf(1), "inf"},
		{math.NaN(), "nan"},
	} {
		if got := string(appendPyRepr(nil, tc.f)); got != tc.want {
			t.Errorf("repr(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

// TestAppendPyRepr_Python compares float repr with CPython on values of
// every magnitude, including each boundary of the positional range.
func TestAppendPyRepr_Python(t *testing.T) {
	r := stream(1, "repr-test", 0)
	var vals []float64
	for e := -330; e <= 310; e++ {
		for _, m := range []float64{1, 1.5, 9.999999999999999, 2.5} {
			vals = append(vals, m*math.Pow(10, float64(e)))
		}
	}
	for i := 0; i < 20000; i++ {
		switch i % 4 {
		case 0:
			vals = append(vals, math.Float64frombits(r.next()))
		case 1:
			vals = append(vals, -r.float64()*float64(i))
		case 2:
			vals = append(vals, detLog(r.float64()))
		default:
			vals = append(vals, float64(r.intn(1000))/float64(1+r.intn(999)))
		}
	}
	var in strings.Builder
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		in.WriteString(strconv.FormatUint(math.Float64bits(v), 16))
		in.WriteString(" ")
		in.Write(appendPyRepr(nil, v))
		in.WriteString("\n")
	}
	out := runPython(t, `
import struct, sys
bad = 0
for line in sys.stdin:
    bits, s = line.split()
    f = struct.unpack('<d', struct.pack('<Q', int(bits, 16)))[0]
    if repr(f) != s or str(f) != s:
        bad += 1
        if bad < 10: print('mismatch', repr(f), s)
print('bad', bad)
`, []byte(in.String()))
	if !strings.HasSuffix(out, "bad 0\n") {
		t.Fatalf("repr differs from CPython:\n%s", out)
	}
}

// TestAppendPyString_Python compares string literals with json.dumps(s,
// ensure_ascii=False) on every control character, quotes, backslashes and
// non-ASCII text.
func TestAppendPyString_Python(t *testing.T) {
	var samples []string
	for c := 0; c < 0x80; c++ {
		samples = append(samples, "a"+string(rune(c))+"b", string(rune(c)))
	}
	samples = append(samples, "", `"quoted" \ back\\slash`, "naïve café – “curly” ’", "中文 😀 \u2028 \u2029 \u0085 \u00a0 \ufeff",
		"tab\tnl\ncr\rff\fbs\b", "\x00\x1f\x7f", "Question: x\nAnswer:", "</s><|im_end|>")
	r := stream(2, "string-test", 0)
	alphabet := []rune("ab\"\\\n\t\x01\x1f é中😀/<>&'")
	for i := 0; i < 2000; i++ {
		n := r.intn(30)
		rs := make([]rune, n)
		for j := range rs {
			rs[j] = alphabet[r.intn(len(alphabet))]
		}
		samples = append(samples, string(rs))
	}
	var in strings.Builder
	for _, s := range samples {
		in.WriteString(hex.EncodeToString([]byte(s)))
		in.WriteString(" ")
		in.WriteString(hex.EncodeToString(appendPyString(nil, s)))
		in.WriteString("\n")
	}
	out := runPython(t, `
import json, sys
bad = 0
for line in sys.stdin:
    raw, lit = line.split(' ')
    s = bytes.fromhex(raw).decode('utf-8')
    want = json.dumps(s, ensure_ascii=False).encode('utf-8').hex()
    if want != lit.strip():
        bad += 1
        if bad < 10: print('mismatch', repr(s), bytes.fromhex(lit).decode())
print('bad', bad)
`, []byte(in.String()))
	if !strings.HasSuffix(out, "bad 0\n") {
		t.Fatalf("string literals differ from CPython:\n%s", out)
	}
}

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
