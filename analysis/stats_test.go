package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// The statistics of stats.go are checked against independent computations
// by scipy and numpy under Debian's Python (python3-scipy, python3-numpy),
// against hand computations, and by simulation. A missing module fails the
// test, naming the Debian package.

// pyStats runs body under Debian's Python with scipy.stats as stats and
// numpy as np, the JSON of input as `data`, and returns what body passed to
// emit(), as exact float64s (repr round-trips; inf and nan included).
func pyStats(t *testing.T, body string, input any) []float64 {
	t.Helper()
	requireModule(t, "numpy", "python3-numpy")
	requireModule(t, "scipy", "python3-scipy")
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	script := "import json, math, sys\nimport numpy as np\nfrom scipy import stats\n" +
		"data = json.load(sys.stdin)\nout = []\ndef emit(v): out.append(repr(float(v)))\n" +
		body + "\nprint(json.dumps(out))\n"
	var reprs []string
	if err := json.Unmarshal(runPython(t, script, string(in)), &reprs); err != nil {
		t.Fatalf("reading Python's output: %v", err)
	}
	vals := make([]float64, len(reprs))
	for i, s := range reprs {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("Python value %q: %v", s, err)
		}
		vals[i] = v
	}
	return vals
}

// relErr is |got − want| / |want| (|got − want| when want is 0); 0 when both
// are the same infinity or both NaN.
func relErr(got, want float64) float64 {
	if got == want || (math.IsNaN(got) && math.IsNaN(want)) {
		return 0
	}
	d := math.Abs(got - want)
	if want != 0 && !math.IsInf(want, 0) {
		d /= math.Abs(want)
	}
	if math.IsNaN(d) {
		return math.Inf(1)
	}
	return d
}

// exactBinomPy defines, for pyStats scripts, binomial probabilities in
// 45-digit decimal arithmetic from the standard library only, as a reference
// more exact than scipy's (whose binomtest is off by up to ~2e-12 at b+c near
// 1e6 and whose binom.logpmf by ~1e-9): log n! by Stirling's series with ten
// Bernoulli terms (exact to far beyond 45 digits for n ≥ 1000, a plain sum
// of logs below), and McNemar's tail by the ratio recurrence, summed until
// the terms fall below 1e-40 of the sum.
const exactBinomPy = `
from decimal import Decimal as D, getcontext
getcontext().prec = 45
PI = D("3.14159265358979323846264338327950288419716939937510582")
BERN = [(1, 6), (-1, 30), (1, 42), (-1, 30), (5, 66), (-691, 2730), (7, 6), (-3617, 510), (43867, 798), (-174611, 330)]
def lnfact(n):
    if n < 1000:
        return sum((D(i).ln() for i in range(2, n + 1)), D(0))
    z = D(n + 1)
    s = (z - D("0.5")) * z.ln() - z + (2 * PI).ln() / 2
    zp, z2 = z, z * z
    for k, (num, den) in enumerate(BERN, start=1):
        s += D(num) / D(den) / (2 * k * (2 * k - 1)) / zp
        zp *= z2
    return s
def exact_logpmf(k, n, p):
    p = D(p)
    lp = lnfact(n) - lnfact(k) - lnfact(n - k)
    if k: lp += k * p.ln()
    if n - k: lp += (n - k) * (1 - p).ln()
    return lp
def exact_mcnemar(b, c):
    m, k = b + c, min(b, c)
    if 2 * k == m:
        return 1.0
    s = t = D(1)
    eps = D(10) ** -40
    for j in range(k, 0, -1):
        t = t * j / (m - j + 1)
        s += t
        if t < s * eps:
            break
    return min(1.0, float(2 * exact_logpmf(k, m, D(1) / 2).exp() * s))
`

func TestNormalQuantileAgainstScipy(t *testing.T) {
	ps := []float64{
		5e-324, 1e-300, 1e-200, 1e-100, 1e-50, 1e-20, 1e-10, 1e-5, 1e-3,
		0.0125, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6,
		0.7, 0.8, 0.9, 0.95, 0.975, 0.99, 0.999, 1 - 1e-10, 1 - 0x1p-53,
	}
	r := newRand(1, 0)
	for range 400 {
		ps = append(ps, r.Float64())
	}
	for range 200 {
		ps = append(ps, math.Pow(10, -300*r.Float64())) // lower tail
	}
	want := pyStats(t, "for p in data: emit(stats.norm.ppf(p))", ps)
	worst := 0.0
	for i, p := range ps {
		e := relErr(NormalQuantile(p), want[i])
		worst = max(worst, e)
		if e > 1e-14 {
			t.Errorf("NormalQuantile(%v) = %v, scipy.stats.norm.ppf %v (relative error %.2g)", p, NormalQuantile(p), want[i], e)
		}
	}
	t.Logf("%d points, worst relative error %.2g", len(ps), worst)
	for _, c := range []struct{ p, want float64 }{
		{0, math.Inf(-1)}, {1, math.Inf(1)}, {-0.1, math.NaN()}, {1.1, math.NaN()}, {math.NaN(), math.NaN()},
	} {
		if got := NormalQuantile(c.p); relErr(got, c.want) != 0 {
			t.Errorf("NormalQuantile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestWilsonAgainstScipy(t *testing.T) {
	type wcase struct {
		K, N  int
		Level float64
	}
	var cases []wcase
	for _, n := range []int{1, 2, 5, 10, 30, 164, 1319, 14042, 1000000} {
		for _, k := range []int{0, 1, n / 3, n / 2, n - 1, n} {
			for _, level := range []float64{0.8, 0.9, 0.95, 0.99} {
				cases = append(cases, wcase{k, n, level})
			}
		}
	}
	want := pyStats(t, `
for c in data:
    ci = stats.binomtest(c["K"], c["N"]).proportion_ci(confidence_level=c["Level"], method="wilson")
    emit(ci.low); emit(ci.high)`, cases)
	for i, c := range cases {
		lo, hi := Wilson(c.K, c.N, c.Level)
		if math.Abs(lo-want[2*i]) > 1e-14 || math.Abs(hi-want[2*i+1]) > 1e-14 {
			t.Errorf("Wilson(%d, %d, %v) = [%v, %v], scipy [%v, %v]", c.K, c.N, c.Level, lo, hi, want[2*i], want[2*i+1])
		}
	}
	for _, c := range []wcase{{0, 0, 0.95}, {-1, 5, 0.95}, {6, 5, 0.95}, {2, 5, 1}, {2, 5, 0}} {
		if lo, hi := Wilson(c.K, c.N, c.Level); !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("Wilson(%d, %d, %v) = [%v, %v], want NaN", c.K, c.N, c.Level, lo, hi)
		}
	}
}

func TestStatsCLTInterval(t *testing.T) {
	// GSM8K in repro-anchors.md: p = 0.444, n = 1319, SE 1.37 pts, ± 2.68.
	se := math.Sqrt(0.444 * 0.556 / 1318)
	lo, hi := CLTInterval(0.444, se, 0.95)
	if math.Abs((hi-lo)/2-0.0268) > 0.00005 || math.Abs((lo+hi)/2-0.444) > 1e-15 {
		t.Errorf("CLTInterval(0.444, %v, 0.95) = [%v, %v]", se, lo, hi)
	}
	if lo, _ := CLTInterval(0.5, 0.1, 1.5); !math.IsNaN(lo) {
		t.Errorf("CLTInterval at level 1.5 = %v, want NaN", lo)
	}
}

func TestMcNemarAgainstScipy(t *testing.T) {
	var pairs [][2]int
	for b := range 25 {
		for c := range 25 {
			pairs = append(pairs, [2]int{b, c})
		}
	}
	r := newRand(2, 0)
	for range 150 {
		m := 1 + r.IntN(1000000)
		b := r.IntN(m + 1)
		if r.IntN(2) == 0 { // near the center, where the tail is long
			b = m/2 + r.IntN(3*int(math.Sqrt(float64(m)))+1) - int(math.Sqrt(float64(m)))
			b = min(max(b, 0), m)
		}
		pairs = append(pairs, [2]int{b, m - b})
	}
	pairs = append(pairs,
		[2]int{0, 1000000}, [2]int{499000, 501000}, [2]int{500000, 500001}, [2]int{499999, 500001},
		[2]int{497500, 502500}, [2]int{100, 999900}, [2]int{1234, 5678}, [2]int{100000, 100700},
		[2]int{510000, 490000}, [2]int{0, 1}, [2]int{1, 0}, [2]int{0, 1022}, [2]int{0, 1100},
		[2]int{300, 1000}, [2]int{46, 71}, [2]int{60, 34},
	)
	want := pyStats(t, exactBinomPy+`
for b, c in data:
    emit(stats.binomtest(min(b, c), b + c, 0.5).pvalue if b + c > 0 else 1.0)
    emit(exact_mcnemar(b, c))`, pairs)
	// Relative error, counted from 1e-290 up: below that both underflow
	// into subnormals.
	rel := func(got, want float64) float64 {
		if want < 1e-290 {
			return math.Abs(got-want) / 1e-290
		}
		return relErr(got, want)
	}
	worstScipy, worstExact := 0.0, 0.0
	for i, pc := range pairs {
		got := McNemarExact(pc[0], pc[1])
		scipyP, exactP := want[2*i], want[2*i+1]
		es, ee := rel(got, scipyP), rel(got, exactP)
		worstScipy, worstExact = max(worstScipy, es), max(worstExact, ee)
		if es > 1e-11 || ee > 1e-13 {
			t.Errorf("McNemarExact(%d, %d) = %v; scipy.stats.binomtest %v (relative error %.2g), 45-digit reference %v (%.2g)",
				pc[0], pc[1], got, scipyP, es, exactP, ee)
		}
	}
	t.Logf("%d pairs, b+c up to 1e6: worst relative error %.2g against scipy, %.2g against the 45-digit reference",
		len(pairs), worstScipy, worstExact)
	if got := McNemarExact(-1, 3); !math.IsNaN(got) {
		t.Errorf("McNemarExact(-1, 3) = %v, want NaN", got)
	}
}

// TestStatsBinomialPMFAgainstScipy checks Loader's binomial probabilities,
// which McNemarExact starts from, for general p.
func TestStatsBinomialPMFAgainstScipy(t *testing.T) {
	type pcase struct {
		K, N int
		P    float64
	}
	var cases []pcase
	r := newRand(3, 0)
	for range 300 {
		n := 1 + r.IntN(2000000)
		if r.IntN(2) == 0 {
			n = 1 + r.IntN(40)
		}
		p := r.Float64()
		mode := int(p * float64(n))
		k := mode + int(r.NormFloat64()*3*math.Sqrt(float64(n)*p*(1-p)+1))
		cases = append(cases, pcase{min(max(k, 0), n), n, p})
	}
	cases = append(cases, pcase{0, 10, 0.05}, pcase{10, 10, 0.97}, pcase{0, 1000000, 1e-7}, pcase{3, 5, 0.5}, pcase{0, 5, 0.5}, pcase{5, 5, 0.5})
	want := pyStats(t, exactBinomPy+`
for c in data:
    emit(stats.binom.pmf(c["K"], c["N"], c["P"]))
    emit(exact_logpmf(c["K"], c["N"], c["P"]))`, cases)
	worstScipy, worstExact := 0.0, 0.0
	for i, c := range cases {
		got := binomLogPMF(c.K, c.N, c.P)
		// An absolute error in log P is the relative error of P.
		es, ee := relErr(math.Exp(got), want[2*i]), math.Abs(got-want[2*i+1])
		worstScipy, worstExact = max(worstScipy, es), max(worstExact, ee)
		if es > 1e-10 || ee > 5e-14 {
			t.Errorf("binomLogPMF(%d, %d, %v) = %v; scipy.stats.binom.pmf %v (relative error %.2g), 45-digit log %v",
				c.K, c.N, c.P, got, want[2*i], es, want[2*i+1])
		}
	}
	t.Logf("%d cases: worst relative error %.2g against scipy.stats.binom.pmf, %.2g against the 45-digit reference",
		len(cases), worstScipy, worstExact)
}

// TestStatsBinomialSampler checks BinomialSample's distribution against the
// exact probabilities with a chi-square test (fixed seed, so deterministic)
// on each path: inversion, BTRS, and p > 1/2 by symmetry.
func TestStatsBinomialSampler(t *testing.T) {
	r := newRand(4, 0)
	const draws = 400000
	for _, c := range []struct {
		n int
		p float64
	}{
		{1, 0.3}, {20, 0.3}, {1000, 0.005}, {49, 0.2}, {50, 0.2}, {100, 0.5},
		{1319, 0.444}, {14042, 0.5}, {14042, 0.93}, {15, 0.9}, {1000000, 0.01},
	} {
		s := newBinomial(c.n, c.p)
		counts := make(map[int]int)
		sum, sumSq := 0.0, 0.0
		for range draws {
			k := s.draw(&uniforms{rand: r})
			if k < 0 || k > c.n {
				t.Fatalf("Binomial(%d, %v) drew %d", c.n, c.p, k)
			}
			counts[k]++
			sum += float64(k)
			sumSq += float64(k) * float64(k)
		}
		// Bins of expected count ≥ 20, the tails pooled into their
		// neighbours.
		mode := int(float64(c.n+1) * c.p)
		lo, hi := mode, mode
		for lo > 0 && math.Exp(binomLogPMF(lo-1, c.n, c.p))*draws >= 20 {
			lo--
		}
		for hi < c.n && math.Exp(binomLogPMF(hi+1, c.n, c.p))*draws >= 20 {
			hi++
		}
		chi, bins := 0.0, 0
		tailLo, tailHi := 0.0, 0.0
		obsLo, obsHi := 0, 0
		for k := 0; k < lo; k++ {
			tailLo += math.Exp(binomLogPMF(k, c.n, c.p))
			obsLo += counts[k]
		}
		for k := hi + 1; k <= c.n; k++ {
			tailHi += math.Exp(binomLogPMF(k, c.n, c.p))
			obsHi += counts[k]
		}
		add := func(obs int, prob float64) {
			e := prob * draws
			chi += (float64(obs) - e) * (float64(obs) - e) / e
			bins++
		}
		for k := lo; k <= hi; k++ {
			prob := math.Exp(binomLogPMF(k, c.n, c.p))
			switch k {
			case lo:
				prob += tailLo
				add(counts[k]+obsLo, prob)
			case hi:
				prob += tailHi
				add(counts[k]+obsHi, prob)
			default:
				add(counts[k], prob)
			}
		}
		if hi == lo {
			bins = 2 // the degenerate one-bin case: nothing to test
		}
		df := float64(bins - 1)
		// Wilson–Hilferty: the chi-square quantile at 1 − 1e-5.
		z := NormalQuantile(1 - 1e-5)
		crit := df * math.Pow(1-2/(9*df)+z*math.Sqrt(2/(9*df)), 3)
		m := sum / draws
		v := sumSq/draws - m*m
		wantM, wantV := float64(c.n)*c.p, float64(c.n)*c.p*(1-c.p)
		if chi > crit || math.Abs(m-wantM) > 5*math.Sqrt(wantV/draws) {
			t.Errorf("Binomial(%d, %v): chi-square %.1f on %v df (critical %.1f), mean %.4f want %.4f, var %.3f want %.3f",
				c.n, c.p, chi, df, crit, m, wantM, v, wantV)
		}
	}
	for _, bad := range []struct {
		n int
		p float64
	}{{-1, 0.5}, {5, -0.1}, {5, 1.5}, {5, math.NaN()}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("BinomialSample(%d, %v) did not panic", bad.n, bad.p)
				}
			}()
			BinomialSample(r, bad.n, bad.p)
		}()
	}
	if BinomialSample(r, 7, 0) != 0 || BinomialSample(r, 7, 1) != 7 || BinomialSample(r, 0, 0.5) != 0 {
		t.Error("BinomialSample at p = 0, p = 1 or n = 0 is not constant")
	}
}

// TestStatsPercentileAgainstNumpy checks that the bootstrap bounds are
// numpy.percentile's default (linear), to the bit, with the q values
// scipy.stats.bootstrap passes.
func TestStatsPercentileAgainstNumpy(t *testing.T) {
	type pcase struct {
		X     []float64
		Level float64
	}
	r := newRand(5, 0)
	var cases []pcase
	for _, n := range []int{1, 2, 3, 7, 10, 39, 40, 41, 1000, 2000, 10000} {
		for _, level := range []float64{0.5, 0.8, 0.9, 0.95, 0.99} {
			x := make([]float64, n)
			for i := range x {
				x[i] = r.NormFloat64() * 3
			}
			cases = append(cases, pcase{x, level})
		}
	}
	want := pyStats(t, `
for c in data:
    alpha = (1 - c["Level"]) / 2
    x = np.array(c["X"])
    emit(np.percentile(x, alpha * 100)); emit(np.percentile(x, (1 - alpha) * 100))`, cases)
	for i, c := range cases {
		lo, hi := percentileInterval(append([]float64(nil), c.X...), c.Level)
		if lo != want[2*i] || hi != want[2*i+1] {
			t.Errorf("n=%d level %v: percentile interval [%v, %v], numpy [%v, %v]", len(c.X), c.Level, lo, hi, want[2*i], want[2*i+1])
		}
	}
}

// pairedData is a test dataset for PairedStats.
type pairedData struct {
	A, B  []float64
	Level float64
}

// simulatePaired draws n documents scored by two models whose outcomes are
// correlated through each document's easiness θ ~ U(0, 1) and, with
// probability couple, through a shared uniform:
//
//	P(a = 1 | θ) = base − 0.35 + 0.7·θ,  P(b = 1 | θ) = that + delta,
//
// so the population difference E[b − a] is exactly delta (the shared uniform
// changes the correlation, not the marginals). base ± 0.35 + delta must stay
// in [0, 1].
func simulatePaired(r *rand.Rand, n int, base, delta, couple float64) (a, b []float64) {
	a, b = make([]float64, n), make([]float64, n)
	for i := range n {
		pa := base - 0.35 + 0.7*r.Float64()
		u := r.Float64()
		v := u
		if r.Float64() >= couple {
			v = r.Float64()
		}
		if u < pa {
			a[i] = 1
		}
		if v < pa+delta {
			b[i] = 1
		}
	}
	return a, b
}

func TestPairedStatsAgainstNumpy(t *testing.T) {
	r := newRand(6, 0)
	var cases []pairedData
	a, b := simulatePaired(r, 1319, 0.45, 0.03, 0.7)
	cases = append(cases, pairedData{a, b, 0.95})
	a, b = simulatePaired(r, 14042, 0.5, -0.01, 0.5)
	cases = append(cases, pairedData{a, b, 0.9})
	cases = append(cases, pairedData{[]float64{1, 0, 1, 1, 0, 0, 1}, []float64{1, 1, 1, 0, 0, 1, 1}, 0.95})
	// Non-binary: per-doc F1-like scores in [0, 1], some exactly 0.
	fa, fb := make([]float64, 500), make([]float64, 500)
	for i := range fa {
		x := r.Float64()
		fa[i] = math.Max(0, x-0.2+0.1*r.NormFloat64())
		fb[i] = math.Max(0, x-0.15+0.1*r.NormFloat64())
	}
	cases = append(cases, pairedData{fa, fb, 0.99})
	want := pyStats(t, `
for c in data:
    a, b, level = np.array(c["A"]), np.array(c["B"]), c["Level"]
    n = len(a)
    d = b - a
    z = stats.norm.ppf(1 - (1 - level) / 2)
    delta = b.mean() - a.mean()
    half = z * math.sqrt((a.std(ddof=1) / math.sqrt(n)) ** 2 + (b.std(ddof=1) / math.sqrt(n)) ** 2)
    aonly, bonly = int(np.sum((a > 0) & ~(b > 0))), int(np.sum(~(a > 0) & (b > 0)))
    both, neither = int(np.sum((a > 0) & (b > 0))), int(np.sum(~(a > 0) & ~(b > 0)))
    binary = bool(np.all(np.isin(a, [0, 1])) and np.all(np.isin(b, [0, 1])))
    mcnemar = (stats.binomtest(min(aonly, bonly), aonly + bonly, 0.5).pvalue if aonly + bonly else 1.0) if binary else math.nan
    for v in (a.mean(), b.mean(), delta, d.std(ddof=1) / math.sqrt(n), mcnemar, aonly, bonly, both, neither,
              delta - half, delta + half,
              (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * d.std(ddof=1) / math.sqrt(n),
              np.corrcoef(a, b)[0, 1], binary):
        emit(v)`, cases)
	const fields = 14
	for i, c := range cases {
		p, err := PairedStats(c.A, c.B, 2000, c.Level, 1)
		if err != nil {
			t.Fatal(err)
		}
		got := []float64{p.A, p.B, p.Delta, p.PairedStderr, p.McNemarP,
			float64(p.AOnly), float64(p.BOnly), float64(p.Both), float64(p.Neither),
			p.UnpairedCILow, p.UnpairedCIHigh, p.MDE, p.Correlation, 0}
		if p.Binary {
			got[13] = 1
		}
		names := []string{"A", "B", "Delta", "PairedStderr", "McNemarP", "AOnly", "BOnly", "Both", "Neither",
			"UnpairedCILow", "UnpairedCIHigh", "MDE", "Correlation", "Binary"}
		for f := range fields {
			w := want[i*fields+f]
			// Means and deltas can be near 0; compare those absolutely.
			if e := min(relErr(got[f], w), math.Abs(got[f]-w)); e > 1e-12 {
				t.Errorf("case %d (n=%d) %s = %v, numpy/scipy %v", i, len(c.A), names[f], got[f], w)
			}
		}
		if p.N != len(c.A) || !(p.CILow <= p.Delta && p.Delta <= p.CIHigh) {
			t.Errorf("case %d: N %d, bootstrap CI [%v, %v] around Delta %v", i, p.N, p.CILow, p.CIHigh, p.Delta)
		}
	}
}

// TestPairedBootstrapAgainstScipy compares the paired bootstrap interval
// with scipy.stats.bootstrap(paired=True, method='percentile') on the same
// data, binary and not. The two draw different resamples, so they agree to
// Monte Carlo error only: with 10,000 resamples a 2.5 % bound moves by about
// 0.03 standard errors; the tolerance is 0.15.
func TestPairedBootstrapAgainstScipy(t *testing.T) {
	r := newRand(7, 0)
	var cases []pairedData
	a, b := simulatePaired(r, 1319, 0.45, 0.02, 0.7)
	cases = append(cases, pairedData{a, b, 0.95})
	fa, fb := make([]float64, 800), make([]float64, 800)
	for i := range fa {
		x := r.Float64()
		fa[i] = x * x
		fb[i] = math.Min(1, x*x+0.05*r.NormFloat64()+0.01)
	}
	cases = append(cases, pairedData{fa, fb, 0.9})
	want := pyStats(t, `
rng = np.random.default_rng(12345)
for c in data:
    res = stats.bootstrap((np.array(c["A"]), np.array(c["B"])),
                          lambda a, b, axis=-1: b.mean(axis=axis) - a.mean(axis=axis),
                          paired=True, vectorized=True, n_resamples=10000, method="percentile",
                          confidence_level=c["Level"], random_state=rng)
    emit(res.confidence_interval.low); emit(res.confidence_interval.high)`, cases)
	for i, c := range cases {
		p, err := PairedStats(c.A, c.B, 10000, c.Level, 99)
		if err != nil {
			t.Fatal(err)
		}
		tol := 0.15 * p.PairedStderr
		if math.Abs(p.CILow-want[2*i]) > tol || math.Abs(p.CIHigh-want[2*i+1]) > tol {
			t.Errorf("case %d (binary %v): capsule [%.5f, %.5f], scipy.stats.bootstrap [%.5f, %.5f], tolerance %.5f",
				i, p.Binary, p.CILow, p.CIHigh, want[2*i], want[2*i+1], tol)
		}
	}
}

func TestPairedStatsErrors(t *testing.T) {
	for _, c := range []struct {
		a, b      []float64
		resamples int
		level     float64
	}{
		{[]float64{1, 0}, []float64{1}, 100, 0.95},
		{nil, nil, 100, 0.95},
		{[]float64{1}, []float64{0}, 0, 0.95},
		{[]float64{1}, []float64{0}, 100, 1},
		{[]float64{1, math.NaN()}, []float64{0, 1}, 100, 0.95},
	} {
		if _, err := PairedStats(c.a, c.b, c.resamples, c.level, 1); err == nil {
			t.Errorf("PairedStats(%v, %v, %d, %v) did not fail", c.a, c.b, c.resamples, c.level)
		}
	}
	// Identical runs: no discordant pair, a degenerate but valid answer.
	x := []float64{1, 0, 1, 1}
	p, err := PairedStats(x, x, 100, 0.95, 1)
	if err != nil || p.Delta != 0 || p.CILow != 0 || p.CIHigh != 0 || p.McNemarP != 1 || p.Correlation != 1 {
		t.Errorf("PairedStats of a run with itself = %+v, %v", p, err)
	}
}

func TestHolmAdjust(t *testing.T) {
	// By hand: sorted 0.005, 0.01, 0.02, 0.03, 0.04, 0.2, 0.5 times
	// 7, 6, 5, 4, 3, 2, 1 are 0.035, 0.06, 0.10, 0.12, 0.12, 0.4, 0.5,
	// already non-decreasing.
	for _, c := range []struct{ p, want []float64 }{
		{[]float64{0.01, 0.04, 0.03, 0.005, 0.20, 0.5, 0.02}, []float64{0.06, 0.12, 0.12, 0.035, 0.4, 0.5, 0.10}},
		// The step-down maximum: 2·0.3 = 0.6 carries over 1·0.4.
		{[]float64{0.4, 0.3}, []float64{0.6, 0.6}},
		// Capped at 1; NaN stays and does not count in m.
		{[]float64{0.6, math.NaN(), 0.7}, []float64{1, math.NaN(), 1}},
		{[]float64{0.01, 0.01}, []float64{0.02, 0.02}},
		{[]float64{0.04}, []float64{0.04}},
		{nil, []float64{}},
	} {
		got := HolmAdjust(c.p)
		if len(got) != len(c.want) {
			t.Fatalf("HolmAdjust(%v) = %v", c.p, got)
		}
		for i := range got {
			if relErr(got[i], c.want[i]) > 1e-15 {
				t.Errorf("HolmAdjust(%v) = %v, want %v", c.p, got, c.want)
				break
			}
		}
	}
}

func TestClusteredStderrAgainstPython(t *testing.T) {
	type ccase struct {
		X []float64
		C []string
	}
	r := newRand(8, 0)
	var cases []ccase
	for _, shape := range []struct{ clusters, n int }{{2, 10}, {5, 100}, {57, 1400}, {300, 1319}, {40, 40}} {
		var c ccase
		effect := make([]float64, shape.clusters)
		for k := range effect {
			effect[k] = 0.4 * r.Float64()
		}
		for range shape.n {
			k := r.IntN(shape.clusters)
			x := 0.0
			if r.Float64() < 0.3+effect[k] {
				x = 1
			}
			c.X = append(c.X, x)
			c.C = append(c.C, fmt.Sprintf("subject-%d", k))
		}
		cases = append(cases, c)
	}
	// The paper's formula as a literal double sum over pairs in a cluster,
	// and Inspect's C/(C-1) correction of the variance.
	want := pyStats(t, `
for c in data:
    x, cl = c["X"], c["C"]
    n = len(x)
    m = sum(x) / n
    total = 0.0
    for i in range(n):
        for j in range(n):
            if cl[i] == cl[j]:
                total += (x[i] - m) * (x[j] - m)
    k = len(set(cl))
    emit(math.sqrt(total) / n)
    emit(math.sqrt(total * k / (k - 1)) / n)`, cases)
	for i, c := range cases {
		got, gotFC := ClusteredStderr(c.X, c.C, false), ClusteredStderr(c.X, c.C, true)
		if relErr(got, want[2*i]) > 1e-10 || relErr(gotFC, want[2*i+1]) > 1e-10 {
			t.Errorf("case %d (n=%d): ClusteredStderr %v / corrected %v, Python double sum %v / %v",
				i, len(c.X), got, gotFC, want[2*i], want[2*i+1])
		}
	}
}

// TestClusteredStderrSingletons checks the documented identity: one item per
// cluster gives the CLT standard error with the population variance,
// sqrt(Σ(x−x̄)²/n)/√n.
func TestClusteredStderrSingletons(t *testing.T) {
	r := newRand(9, 0)
	for _, n := range []int{2, 3, 50, 1319} {
		xs := make([]float64, n)
		labels := make([]string, n)
		for i := range xs {
			xs[i] = r.NormFloat64()
			labels[i] = strconv.Itoa(i)
		}
		popSE := sampleSD(xs) * math.Sqrt(float64(n-1)/float64(n)) / math.Sqrt(float64(n))
		if got := ClusteredStderr(xs, labels, false); relErr(got, popSE) > 1e-13 {
			t.Errorf("n=%d singletons: ClusteredStderr %v, population CLT SE %v", n, got, popSE)
		}
		// With the finite-cluster correction, C = n, it is the Bessel one.
		if got := ClusteredStderr(xs, labels, true); relErr(got, cltStderr(xs)) > 1e-13 {
			t.Errorf("n=%d singletons: corrected ClusteredStderr %v, CLT SE %v", n, got, cltStderr(xs))
		}
	}
	// Whole clusters answered alike (10 copies of each of 100 values) make
	// the SE √10 times the naive one, about.
	var xs []float64
	var labels []string
	for k := range 100 {
		v := float64(k % 2)
		for range 10 {
			xs = append(xs, v)
			labels = append(labels, strconv.Itoa(k))
		}
	}
	ratio := ClusteredStderr(xs, labels, false) / cltStderr(xs)
	if math.Abs(ratio-math.Sqrt(10)) > 0.01 {
		t.Errorf("perfectly clustered: clustered/naive SE ratio %v, want about √10", ratio)
	}
	if !math.IsNaN(ClusteredStderr(nil, nil, false)) || !math.IsNaN(ClusteredStderr([]float64{1, 0}, []string{"a", "a"}, true)) {
		t.Error("ClusteredStderr of nothing, or one cluster corrected, is not NaN")
	}
	defer func() {
		if recover() == nil {
			t.Error("ClusteredStderr with mismatched lengths did not panic")
		}
	}()
	ClusteredStderr([]float64{1}, nil, false)
}

func TestStatsMacroMicro(t *testing.T) {
	r := newRand(10, 0)
	type mcase struct {
		V, SE []float64
		N     []int
	}
	var c mcase
	for range 57 {
		n := 100 + r.IntN(400)
		p := 0.25 + 0.55*r.Float64()
		c.V = append(c.V, p)
		c.SE = append(c.SE, math.Sqrt(p*(1-p)/float64(n-1)))
		c.N = append(c.N, n)
	}
	want := pyStats(t, `
v, se, n = np.array(data["V"]), np.array(data["SE"]), np.array(data["N"], dtype=float)
emit(v.mean()); emit(math.sqrt(np.sum(se ** 2)) / len(v))
emit(np.sum(n * v) / n.sum()); emit(math.sqrt(np.sum((n / n.sum()) ** 2 * se ** 2)))`, c)
	av, err := MacroMicro(c.V, c.SE, c.N)
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range []float64{av.Macro, av.MacroStderr, av.Micro, av.MicroStderr} {
		if relErr(got, want[i]) > 1e-13 {
			t.Errorf("MacroMicro field %d = %v, numpy %v", i, got, want[i])
		}
	}
	if av.K != 57 || av.MacroStderr <= av.MicroStderr {
		t.Errorf("MacroMicro = %+v: want K 57 and a macro SE above the micro one for unequal sizes", av)
	}
	// Equal sizes: the two averages and their SEs coincide.
	eq, err := MacroMicro([]float64{0.2, 0.6}, []float64{0.04, 0.05}, []int{100, 100})
	if err != nil || math.Abs(eq.Macro-eq.Micro) > 1e-15 || math.Abs(eq.MacroStderr-eq.MicroStderr) > 1e-15 || eq.N != 200 {
		t.Errorf("MacroMicro with equal sizes = %+v, %v", eq, err)
	}
	for _, bad := range []mcase{{nil, nil, nil}, {[]float64{1}, nil, []int{1}}, {[]float64{1}, []float64{0}, []int{0}}} {
		if _, err := MacroMicro(bad.V, bad.SE, bad.N); err == nil {
			t.Errorf("MacroMicro(%v, %v, %v) did not fail", bad.V, bad.SE, bad.N)
		}
	}
}

// TestPairedBootstrapCoverage simulates 1,000 GSM8K-sized paired datasets
// with a planted population delta and checks that the 95 % paired bootstrap
// interval covers it 93–97 % of the time (±3 binomial standard errors of a
// true 95 %). Fixed seeds make it deterministic.
func TestPairedBootstrapCoverage(t *testing.T) {
	const (
		datasets  = 1000
		n         = 1319
		delta     = 0.02
		resamples = 2000
	)
	var covered, cltCovered, done atomic.Int64
	var wg sync.WaitGroup
	next := make(chan int, datasets)
	for j := range datasets {
		next <- j
	}
	close(next)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range next {
				a, b := simulatePaired(newRand(2024, uint64(j)), n, 0.45, delta, 0.7)
				p, err := PairedStats(a, b, resamples, 0.95, uint64(j))
				if err != nil {
					t.Error(err)
					return
				}
				if p.CILow <= delta && delta <= p.CIHigh {
					covered.Add(1)
				}
				if lo, hi := CLTInterval(p.Delta, p.PairedStderr, 0.95); lo <= delta && delta <= hi {
					cltCovered.Add(1)
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if done.Load() != datasets {
		t.Fatalf("%d of %d datasets done", done.Load(), datasets)
	}
	cov := float64(covered.Load()) / datasets
	t.Logf("95%% paired bootstrap covers the planted delta in %.1f%% of %d datasets (paired CLT: %.1f%%)",
		100*cov, datasets, 100*float64(cltCovered.Load())/datasets)
	if cov < 0.93 || cov > 0.97 {
		t.Errorf("coverage %.3f, want 0.93–0.97", cov)
	}
}

// TestPairedBootstrapMatchesCLT checks that at large n the bootstrap
// intervals agree with the CLT ones (both estimate the same normal limit):
// paired 0/1 (multinomial path), paired non-binary (item resampling), and
// a single proportion against the CLT and Wilson. The tolerance, 0.1 SE, is
// about 3× the Monte Carlo error of a bound at 10,000 resamples.
func TestPairedBootstrapMatchesCLT(t *testing.T) {
	r := newRand(11, 0)
	a, b := simulatePaired(r, 14042, 0.5, 0.01, 0.6)
	fa, fb := make([]float64, 5000), make([]float64, 5000)
	for i := range fa {
		x := r.Float64()
		fa[i] = x
		fb[i] = math.Max(0, x+0.2*r.NormFloat64())
	}
	for _, c := range []struct {
		name string
		a, b []float64
	}{{"binary", a, b}, {"non-binary", fa, fb}} {
		p, err := PairedStats(c.a, c.b, 10000, 0.95, 5)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := CLTInterval(p.Delta, p.PairedStderr, 0.95)
		if tol := 0.1 * p.PairedStderr; math.Abs(p.CILow-lo) > tol || math.Abs(p.CIHigh-hi) > tol {
			t.Errorf("%s n=%d: bootstrap [%.5f, %.5f], CLT [%.5f, %.5f]", c.name, p.N, p.CILow, p.CIHigh, lo, hi)
		}
		if p.CIHigh-p.CILow >= p.UnpairedCIHigh-p.UnpairedCILow {
			t.Errorf("%s: paired CI [%v, %v] not narrower than unpaired [%v, %v] at correlation %.2f",
				c.name, p.CILow, p.CIHigh, p.UnpairedCILow, p.UnpairedCIHigh, p.Correlation)
		}
	}
	k, n := 6923, 14042 // MMLU micro, p = 0.493
	se := math.Sqrt(0.493 * 0.507 / float64(n))
	blo, bhi := BootstrapProportion(k, n, 10000, 0.95, 3)
	clo, chi := CLTInterval(float64(k)/float64(n), se, 0.95)
	wlo, whi := Wilson(k, n, 0.95)
	if tol := 0.1 * se; math.Abs(blo-clo) > tol || math.Abs(bhi-chi) > tol || math.Abs(wlo-clo) > tol || math.Abs(whi-chi) > tol {
		t.Errorf("proportion at n=%d: bootstrap [%.5f, %.5f], CLT [%.5f, %.5f], Wilson [%.5f, %.5f]", n, blo, bhi, clo, chi, wlo, whi)
	}
	xs := make([]float64, 14042)
	for i := range xs {
		xs[i] = r.ExpFloat64()
	}
	mlo, mhi := BootstrapMean(xs, 10000, 0.95, 4)
	clo, chi = CLTInterval(mean(xs), cltStderr(xs), 0.95)
	// Exponential scores are skewed: the percentile interval shifts right
	// of the symmetric one, by well under 0.2 SE at this n.
	if tol := 0.2 * cltStderr(xs); math.Abs(mlo-clo) > tol || math.Abs(mhi-chi) > tol {
		t.Errorf("mean at n=%d: bootstrap [%.5f, %.5f], CLT [%.5f, %.5f]", len(xs), mlo, mhi, clo, chi)
	}
}

func TestStatsScoreIntervals(t *testing.T) {
	r := newRand(12, 0)
	xs := make([]float64, 1319)
	k := 0
	for i := range xs {
		if r.Float64() < 0.444 {
			xs[i] = 1
			k++
		}
	}
	ivs := ScoreIntervals(xs, 0.95, 1)
	if len(ivs) != 3 || ivs[0].Method != "clt" || ivs[1].Method != "wilson" || ivs[2].Method != "bootstrap" {
		t.Fatalf("ScoreIntervals of 0/1 scores = %v", ivs)
	}
	wlo, whi := Wilson(k, len(xs), 0.95)
	blo, bhi := BootstrapProportion(k, len(xs), DefaultResamples, 0.95, 1)
	if ivs[1].Lo != wlo || ivs[1].Hi != whi || ivs[2].Lo != blo || ivs[2].Hi != bhi {
		t.Errorf("ScoreIntervals disagrees with Wilson [%v, %v] / BootstrapProportion [%v, %v]: %v", wlo, whi, blo, bhi, ivs)
	}
	for _, iv := range ivs {
		if iv.N != len(xs) || iv.Value != float64(k)/float64(len(xs)) || !(iv.Lo < iv.Value && iv.Value < iv.Hi) ||
			math.Abs(iv.Stderr-ivs[0].Stderr) > 0.05*ivs[0].Stderr {
			t.Errorf("interval %v", iv)
		}
	}
	fs := make([]float64, 300)
	for i := range fs {
		fs[i] = r.Float64()
	}
	fivs := ScoreIntervals(fs, 0.9, 2)
	mlo, mhi := BootstrapMean(fs, DefaultResamples, 0.9, 2)
	if len(fivs) != 2 || fivs[1].Method != "bootstrap" || fivs[1].Lo != mlo || fivs[1].Hi != mhi {
		t.Errorf("ScoreIntervals of non-binary scores = %v, BootstrapMean [%v, %v]", fivs, mlo, mhi)
	}
	if ScoreIntervals(nil, 0.95, 1) != nil {
		t.Error("ScoreIntervals(nil) is not nil")
	}
	if s := ivs[0].String(); s != fmt.Sprintf("clt        %.4f [%.4f, %.4f]  SE %.4f  n=1319", ivs[0].Value, ivs[0].Lo, ivs[0].Hi, ivs[0].Stderr) {
		t.Errorf("Interval.String() = %q", s)
	}
}

// TestStatsBootstrapReproducible checks that a seed fixes the result, also
// across GOMAXPROCS (streams belong to chunks, not goroutines), and that
// different seeds differ.
func TestStatsBootstrapReproducible(t *testing.T) {
	r := newRand(13, 0)
	xs := make([]float64, 2000)
	for i := range xs {
		xs[i] = r.Float64()
	}
	lo1, hi1 := BootstrapMean(xs, 3000, 0.95, 7)
	old := runtime.GOMAXPROCS(1)
	lo2, hi2 := BootstrapMean(xs, 3000, 0.95, 7)
	runtime.GOMAXPROCS(old)
	lo3, hi3 := BootstrapMean(xs, 3000, 0.95, 8)
	if lo1 != lo2 || hi1 != hi2 {
		t.Errorf("BootstrapMean depends on GOMAXPROCS: [%v, %v] vs [%v, %v]", lo1, hi1, lo2, hi2)
	}
	if lo1 == lo3 && hi1 == hi3 {
		t.Error("BootstrapMean ignores its seed")
	}
	p1, _ := BootstrapProportion(500, 1000, 1000, 0.95, 1)
	p2, _ := BootstrapProportion(500, 1000, 1000, 0.95, 1)
	if p1 != p2 {
		t.Error("BootstrapProportion is not reproducible")
	}
	if lo, hi := BootstrapProportion(0, 50, 1000, 0.95, 1); lo != 0 || hi != 0 {
		t.Errorf("BootstrapProportion(0 of 50) = [%v, %v], want the degenerate [0, 0]", lo, hi)
	}
	for _, bad := range [][3]int{{1, 0, 100}, {-1, 5, 100}, {6, 5, 100}, {2, 5, 0}} {
		if lo, _ := BootstrapProportion(bad[0], bad[1], bad[2], 0.95, 1); !math.IsNaN(lo) {
			t.Errorf("BootstrapProportion%v = %v, want NaN", bad, lo)
		}
	}
	if lo, _ := BootstrapMean(nil, 100, 0.95, 1); !math.IsNaN(lo) {
		t.Error("BootstrapMean(nil) is not NaN")
	}
}

func ExampleWilson() {
	// HumanEval-sized: 120 of 164 problems solved.
	lo, hi := Wilson(120, 164, 0.95)
	fmt.Printf("%.4f [%.4f, %.4f]\n", 120.0/164, lo, hi)
	// At 164 of 164 the CLT interval collapses to a point; Wilson's does not.
	lo, hi = Wilson(164, 164, 0.95)
	fmt.Printf("[%.4f, %.4f]\n", lo, hi)
	// Output:
	// 0.7317 [0.6592, 0.7936]
	// [0.9771, 1.0000]
}

func ExamplePairedStats() {
	// Two runs on the same 20 documents (1 = correct).
	a := []float64{1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0, 1, 1}
	b := []float64{0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1}
	p, err := PairedStats(a, b, 10000, 0.95, 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("A %.2f  B %.2f  delta %+.2f\n", p.A, p.B, p.Delta)
	fmt.Printf("A only %d, B only %d, both %d, neither %d\n", p.AOnly, p.BOnly, p.Both, p.Neither)
	fmt.Printf("paired SE %.4f, bootstrap 95%% CI [%+.2f, %+.2f]\n", p.PairedStderr, p.CILow, p.CIHigh)
	fmt.Printf("unpaired 95%% CI [%+.4f, %+.4f]\n", p.UnpairedCILow, p.UnpairedCIHigh)
	fmt.Printf("McNemar exact p %.4f, MDE %.4f, correlation %.4f\n", p.McNemarP, p.MDE, p.Correlation)
	// Every figure but the bootstrap bounds is what numpy and scipy give
	// from the definitions; scipy.stats.bootstrap(paired=True,
	// method='percentile') gives [-0.05, +0.35] too. At n = 20 nothing
	// under a 31-point effect could be detected reliably.
	// Output:
	// A 0.60  B 0.75  delta +0.15
	// A only 1, B only 4, both 11, neither 4
	// paired SE 0.1094, bootstrap 95% CI [-0.05, +0.35]
	// unpaired 95% CI [-0.1440, +0.4440]
	// McNemar exact p 0.3750, MDE 0.3066, correlation 0.4714
}
