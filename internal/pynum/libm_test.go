package pynum

import (
	"bufio"
	"math"
	"strings"
	"testing"
)

// TestLibmAgainstCPython compares Exp with Python's math.exp and
// Square with Python's x ** 2, which call glibc's exp and pow, on inputs
// that cover the fast paths and the overflow and subnormal special cases.
func TestLibmAgainstCPython(t *testing.T) {
	out := runPython(t, `
import math, random, struct
r = random.Random(20240611)
xs = [0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1e-310, 2.0**-1022, 1e308, -1e308,
      1.3407807929942596e154, 1.4916681462400413e-154, 709.782712893384,
      709.7827128933841, -745.1332191019411, -708.3964185322641, -744.0,
      2.0**-55, 2.0**-54, -2.0**-54, 512.0, 1024.0, -1024.0, float("inf"),
      float("-inf"), float("nan")]
for i in range(60000):
    c = i % 6
    if c == 0:
        x = struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0]
    elif c == 1:
        x = r.uniform(-746, 710)
    elif c == 2:
        x = r.uniform(-1, 30)
    elif c == 3:
        x = (r.random() - 0.5) * 2.0 ** r.randint(-1074, 1023)
    elif c == 4:
        x = r.uniform(-760, -700)
    else:
        x = (r.random() - 0.5) * 2.0 ** r.randint(-60, 60)
    xs.append(x)
def h(f, x):
    try:
        return f(x).hex()
    except OverflowError:
        return "inf"
for x in xs:
    print(x.hex(), h(math.exp, x), h(lambda v: v ** 2, x))
`, nil)
	sc := bufio.NewScanner(strings.NewReader(out))
	n, expBad, sqBad, naiveSq := 0, 0, 0, 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		x, wantExp, wantSq := parseHex(t, f[0]), parseHex(t, f[1]), parseHex(t, f[2])
		n++
		if got := Exp(x); !same(got, wantExp) {
			expBad++
			if expBad <= 5 {
				t.Errorf("Exp(%x) = %x, math.exp %x", x, got, wantExp)
			}
		}
		if got := Square(x); !same(got, wantSq) {
			sqBad++
			if sqBad <= 5 {
				t.Errorf("Square(%x) = %x, x ** 2 %x", x, got, wantSq)
			}
		}
		if !same(x*x, wantSq) {
			naiveSq++
		}
	}
	if n < 60000 {
		t.Fatalf("only %d lines from Python", n)
	}
	if expBad+sqBad > 0 {
		t.Errorf("%d of %d exp and %d of %d squares differ", expBad, n, sqBad, n)
	}
	// The port exists because x*x is not x ** 2: make sure the inputs
	// exercise that difference.
	if naiveSq == 0 {
		t.Errorf("no input where x*x differs from x ** 2; the check is too weak")
	}
}

// TestLibmKnownValues pins values that need no Python: cases where x ** 2
// is not x*x and math.exp is not Go's math.Exp, taken from CPython 3.11 on
// glibc 2.36 (x86-64, FMA).
func TestLibmKnownValues(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{0x1.e1374ada93898p-1, 0x1.c448699d4f1c9p-1},  // x*x ends in ...cap-1
		{-0x1.11196d762639dp+0, 0x1.23573dfc8d68ap+0}, // x*x ends in ...689p+0
		{0x1.0000000000001p0, 0x1.0000000000002p0},
		{3, 9},
		{-0x1p-540, 0},
		{math.Inf(-1), math.Inf(1)},
		{0x1p600, math.Inf(1)},
	} {
		if got := Square(c.x); !same(got, c.want) {
			t.Errorf("Square(%x) = %x, want %x", c.x, got, c.want)
		}
	}
	for _, c := range []struct{ x, want float64 }{
		{0x1.a1caf76d922p+02, 0x1.5604d4b26f003p+09},   // math.Exp: ...004p+09
		{-0x1.a4625ce87338p+00, 0x1.8c6d6e5ef84d5p-03}, // math.Exp: ...4d4p-03
		{0, 1},
		{1, math.E},
		{-746, 0},
		{710, math.Inf(1)},
		{math.Inf(-1), 0},
	} {
		if got := Exp(c.x); !same(got, c.want) {
			t.Errorf("Exp(%x) = %x, want %x", c.x, got, c.want)
		}
	}
}

// TestLogAgainstCPython compares Log with Python's math.log (glibc's log)
// on positive finite inputs over the whole range, and the magnitudes
// sacrebleu takes the log of (BLEU precisions in (0, 100]).
func TestLogAgainstCPython(t *testing.T) {
	out := runPython(t, `
import math, random, struct
r = random.Random(19)
xs = [1.0, 100.0, 5e-324, 2.0**-1022, 1e308, 16.0, 8.333333333333334, 4.3478260869565215]
for i in range(40000):
    if i % 2:
        x = abs(struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0])
        if not (0 < x < float("inf")):
            continue
    else:
        x = 100.0 * r.randint(1, 60) / r.randint(1, 60) / 2.0 ** r.randint(0, 4)
    xs.append(x)
for x in xs:
    print(x.hex(), math.log(x).hex())
`, nil)
	sc := bufio.NewScanner(strings.NewReader(out))
	n, bad, goDiffers := 0, 0, 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		x, want := parseHex(t, f[0]), parseHex(t, f[1])
		n++
		if got := Log(x); !same(got, want) {
			bad++
			if bad <= 5 {
				t.Errorf("Log(%x) = %x, math.log %x", x, got, want)
			}
		}
		if !same(math.Log(x), want) {
			goDiffers++
		}
	}
	if n < 30000 {
		t.Fatalf("only %d lines from Python", n)
	}
	t.Logf("%d inputs; Go's math.Log differs from glibc's on %d", n, goDiffers)
}
