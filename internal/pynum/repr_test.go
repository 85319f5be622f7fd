package pynum

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestAppendRepr_Known(t *testing.T) {
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
		{math.Inf(-1), "-inf"},
		{math.NaN(), "nan"},
	} {
		if got := string(AppendRepr(nil, tc.f)); got != tc.want {
			t.Errorf("repr(%v) = %q, want %q", tc.f, got, tc.want)
		}
		// json.dumps writes the same digits, and its own non-finite tokens.
		want := tc.want
		switch want {
		case "inf":
			want = "Infinity"
		case "-inf":
			want = "-Infinity"
		case "nan":
			want = "NaN"
		}
		if got := string(AppendJSONFloat(nil, tc.f)); got != want {
			t.Errorf("json.dumps(%v) = %q, want %q", tc.f, got, want)
		}
		if got := string(AppendJSONNumber(nil, tc.f, false)); got != want {
			t.Errorf("AppendJSONNumber(%v, false) = %q, want %q", tc.f, got, want)
		}
	}
}

// TestAppendJSONNumber checks how a number read from JSON is written back:
// ints as digits while a float64 holds them, everything else as a float.
func TestAppendJSONNumber(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{1, "1"},
		{-42, "-42"},
		{1e15, "1000000000000000"},
		{1<<53 - 1, "9007199254740991"},
		{-(1<<53 - 1), "-9007199254740991"},
		{1 << 53, "9007199254740992.0"},
		{1e20, "1e+20"},
		{2.5, "2.5"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
	} {
		if got := string(AppendJSONNumber([]byte("x"), tc.f, true)); got != "x"+tc.want {
			t.Errorf("AppendJSONNumber(%v, true) = %q, want %q", tc.f, got, "x"+tc.want)
		}
	}
}

// TestAppendRepr_Python compares float repr with CPython on values of
// every magnitude, including each boundary of the positional range.
func TestAppendRepr_Python(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 0))
	var vals []float64
	for e := -330; e <= 310; e++ {
		for _, m := range []float64{1, 1.5, 9.999999999999999, 2.5} {
			vals = append(vals, m*math.Pow(10, float64(e)))
		}
	}
	for i := 0; i < 20000; i++ {
		switch i % 4 {
		case 0:
			vals = append(vals, math.Float64frombits(r.Uint64()))
		case 1:
			vals = append(vals, -r.Float64()*float64(i))
		case 2:
			vals = append(vals, math.Log(r.Float64()))
		default:
			vals = append(vals, float64(r.IntN(1000))/float64(1+r.IntN(999)))
		}
	}
	var in strings.Builder
	n := 0
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		in.WriteString(strconv.FormatUint(math.Float64bits(v), 16))
		in.WriteString(" ")
		in.Write(AppendRepr(nil, v))
		in.WriteString("\n")
		n++
	}
	out := runPython(t, `
import struct, sys
bad = n = 0
for line in sys.stdin:
    n += 1
    bits, s = line.split()
    f = struct.unpack('<d', struct.pack('<Q', int(bits, 16)))[0]
    if repr(f) != s or str(f) != s:
        bad += 1
        if bad < 10: print('mismatch', repr(f), s)
print('checked', n, 'bad', bad)
`, []byte(in.String()))
	if want := "checked " + strconv.Itoa(n) + " bad 0\n"; !strings.HasSuffix(out, want) {
		t.Fatalf("repr differs from CPython (want %q):\n%s", want, out)
	}
}

func TestParseFloat(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want float64
	}{
		{"nan", math.NaN()},
		{"NaN", math.NaN()},
		{"inf", math.Inf(1)},
		{"Infinity", math.Inf(1)},
		{"-inf", math.Inf(-1)},
		{"-Infinity", math.Inf(-1)},
		{"-0.0", math.Copysign(0, -1)},
		{"1e-05", 1e-05},
		{"-2.3025850929940455", -2.3025850929940455},
		{"1.7976931348623157e+308", math.MaxFloat64},
		{"3", 3},
	} {
		got, err := ParseFloat(tc.s)
		if err != nil || !same(got, tc.want) {
			t.Errorf("ParseFloat(%q) = %v, %v; want %v", tc.s, got, err, tc.want)
		}
	}
	for _, s := range []string{"", "N/A", "1.0.0", "True"} {
		if _, err := ParseFloat(s); err == nil {
			t.Errorf("ParseFloat(%q) succeeded", s)
		}
	}
	// Every repr reads back to the same bits.
	r := rand.New(rand.NewPCG(2, 0))
	for i := 0; i < 100000; i++ {
		f := math.Float64frombits(r.Uint64())
		if got, err := ParseFloat(string(AppendRepr(nil, f))); err != nil || !same(got, f) {
			t.Fatalf("ParseFloat(repr(%x)) = %x, %v", f, got, err)
		}
	}
}
