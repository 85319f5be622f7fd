package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis/internal/pyrand"
	"github.com/evalcapsule/evalcapsule/internal/pynum"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// debianPython is the reference interpreter of the cross-checks: Debian's
// /usr/bin/python3 (3.11 on bookworm), not whatever python3 is first on PATH.
// Its numpy and scikit-learn come from Debian's python3-numpy and
// python3-sklearn packages.
const debianPython = "/usr/bin/python3"

// runPython runs script with Debian's Python, feeding it stdin, and returns
// its standard output. A missing interpreter skips the test, and fails it
// under CI: these comparisons are what shows the ports are exact.
func runPython(t *testing.T, script, stdin string) []byte {
	t.Helper()
	testenv.Python(t)
	cmd := exec.Command(debianPython, "-c", script)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", debianPython, err, stderr.String())
	}
	return out
}

// requireModule skips the test (fails it under CI) when Debian's Python
// cannot import module, naming debPackage, the Debian package to install.
func requireModule(t *testing.T, module, debPackage string) {
	t.Helper()
	if testenv.Install(debPackage) == "" {
		t.Fatalf("testenv knows no Debian package %s", debPackage)
	}
	testenv.Python(t, module)
}

// pythonRule returns the summation rule of the reference interpreter.
func pythonRule(t *testing.T) Summation {
	t.Helper()
	out := runPython(t, "import sys; print(sys.version_info[0], sys.version_info[1])", "")
	var major, minor int
	if _, err := fmt.Sscan(string(out), &major, &minor); err != nil {
		t.Fatalf("parsing Python version %q: %v", out, err)
	}
	return SummationFor(major, minor)
}

func hexes(xs []float64) []string {
	h := make([]string, len(xs))
	for i, x := range xs {
		h[i] = strconv.FormatFloat(x, 'x', -1, 64)
	}
	return h
}

func parseHex(t *testing.T, s string) float64 {
	t.Helper()
	switch s {
	case "inf":
		return math.Inf(1)
	case "nan":
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("parsing %q: %v", s, err)
	}
	return v
}

// same reports whether a and b are the same float64, NaN included.
func same(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b)
}

// lmEvalPy is lm-eval's code under test, copied from lm_eval/api/metrics.py
// (0.4.x), with the single-process bootstrap loop that DISABLE_MULTIPROC
// selects; the pool version computes the same chunks in the same order.
const lmEvalPy = `
import json, math, random, sys

def mean(arr):
    return sum(arr) / len(arr)

def median(arr):
    return sorted(arr)[len(arr) // 2]

def perplexity(items):
    return math.exp(-mean(items))

def sample_stddev(arr):
    mu = mean(arr)
    return math.sqrt(sum([(x - mu) ** 2 for x in arr]) / (len(arr) - 1))

def bootstrap_stderr(f, xs, iters):
    res = []
    chunk_size = min(1000, iters)
    for i in range(iters // chunk_size):
        rnd = random.Random(i)
        for _ in range(chunk_size):
            res.append(f(rnd.choices(xs, k=len(xs))))
    return sample_stddev(res)
`

// testValues returns n floats drawn from a fixed generator: uniform in
// [lo, hi), rounded to a grid when step > 0 so that resamples repeat values.
func testValues(seed int64, n int, lo, hi, step float64) []float64 {
	r := pyrand.New(seed)
	xs := make([]float64, n)
	for i := range xs {
		x := lo + (hi-lo)*r.Random()
		if step > 0 {
			x = math.Round(x/step) * step
		}
		xs[i] = x
	}
	return xs
}

// TestBootstrapAgainstCPython runs lm-eval's bootstrap_stderr with median and
// perplexity in CPython and compares the results bit for bit.
func TestBootstrapAgainstCPython(t *testing.T) {
	rule := pythonRule(t)
	type bootCase struct {
		name  string
		stat  string // "median" or "perplexity"
		kind  PyKind
		xs    []float64
		iters int
	}
	ints := testValues(3, 300, 0, 9, 1)
	cases := []bootCase{
		{"median/300/2000", "median", PyFloat, testValues(1, 300, -2, 3, 0), 2000},
		{"median-grid/300/2000", "median", PyFloat, testValues(2, 300, 0, 1, 0.05), 2000},
		{"median-int/300/2000", "median", PyInt, ints, 2000},
		{"median-zeros/120/2000", "median", PyFloat, []float64{0, math.Copysign(0, -1), 1, -1, 0, 2, math.Copysign(0, -1), 0}, 2000},
		{"perplexity/300/2000", "perplexity", PyFloat, testValues(4, 300, -6, -0.2, 0), 2000},
		{"median/300/1500", "median", PyFloat, testValues(5, 300, 0, 100, 0), 1500},
		{"perplexity/40/100", "perplexity", PyFloat, testValues(6, 40, -3, -1, 0), 100},
		{"median/1/2000", "median", PyFloat, []float64{0.25}, 2000},
		{"median/25/100000", "median", PyFloat, testValues(7, 25, 0, 1, 0), 100000},
		{"perplexity/25/100000", "perplexity", PyFloat, testValues(8, 25, -4, -1, 0), 100000},
	}
	type pyCase struct {
		Stat  string   `json:"stat"`
		Int   bool     `json:"int"`
		Xs    []string `json:"xs"`
		Iters int      `json:"iters"`
	}
	in := make([]pyCase, len(cases))
	for i, c := range cases {
		in[i] = pyCase{Stat: c.stat, Int: c.kind == PyInt, Xs: hexes(c.xs), Iters: c.iters}
	}
	payload, _ := json.Marshal(in)
	// Besides bootstrap_stderr itself, the script prints the replicates of
	// the smaller cases: a replicate off by one ulp rarely moves the final
	// standard error, so comparing only that would miss such a slip.
	out := runPython(t, lmEvalPy+`
def replicates(f, xs, iters):
    res = []
    chunk_size = min(1000, iters)
    for i in range(iters // chunk_size):
        rnd = random.Random(i)
        for _ in range(chunk_size):
            res.append(f(rnd.choices(xs, k=len(xs))))
    return res

for c in json.loads(sys.stdin.read()):
    xs = [float.fromhex(h) for h in c["xs"]]
    if c["int"]:
        xs = [int(x) for x in xs]
    f = median if c["stat"] == "median" else perplexity
    res = replicates(f, xs, c["iters"]) if c["iters"] <= 5000 else []
    print(json.dumps({
        "stderr": bootstrap_stderr(f, xs, c["iters"]).hex(),
        "res": [float(x).hex() for x in res],
    }))
`, string(payload))
	dec := json.NewDecoder(bytes.NewReader(out))
	for _, c := range cases {
		var py struct {
			Stderr string   `json:"stderr"`
			Res    []string `json:"res"`
		}
		if err := dec.Decode(&py); err != nil {
			t.Fatalf("%s: decoding Python output: %v", c.name, err)
		}
		want := parseHex(t, py.Stderr)
		stats := map[string]func([]int) float64{
			"Perplexity": func(idx []int) float64 { return Perplexity(c.xs, idx, c.kind, rule) },
		}
		replicate := PyFloat
		if c.stat == "median" {
			stats = map[string]func([]int) float64{
				"Median":   func(idx []int) float64 { return Median(c.xs, idx) },
				"MedianOf": MedianOf(c.xs),
			}
			replicate = c.kind
		}
		for name, stat := range stats {
			checkBootstrap(t, c.name+" "+name, len(c.xs), stat, c.iters, replicate, rule, py.Res, want)
		}
	}
}

// checkBootstrap compares bootstrap replicates (when want holds them) and
// the standard error with CPython's.
func checkBootstrap(t *testing.T, name string, n int, stat func([]int) float64, iters int, replicate PyKind, rule Summation, wantRes []string, want float64) {
	t.Helper()
	if len(wantRes) > 0 {
		res := bootstrapReplicates(n, stat, iters)
		if len(res) != len(wantRes) {
			t.Errorf("%s: %d replicates, CPython %d", name, len(res), len(wantRes))
			return
		}
		bad := 0
		for i, h := range wantRes {
			if w := parseHex(t, h); !same(res[i], w) {
				if bad == 0 {
					t.Errorf("%s: replicate %d = %x, CPython %x", name, i, res[i], w)
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d replicates differ", name, bad, len(res))
		}
	}
	if got := BootstrapStderr(n, stat, iters, replicate, rule); !same(got, want) {
		t.Errorf("%s: BootstrapStderr = %x, CPython %x", name, got, want)
	}
}

// TestBootstrapNeumaier checks that BootstrapStderr hands its replicates to
// the summation of their kind: a constant statistic of 0.1 gives 1000
// replicates whose compensated mean is exactly 0.1 (standard error 0) while
// plain addition drifts.
func TestBootstrapNeumaier(t *testing.T) {
	stat := func([]int) float64 { return 0.1 }
	if got := BootstrapStderr(5, stat, 1000, PyFloat, Neumaier); got != 0 {
		t.Errorf("Python floats, Neumaier: %v, want 0", got)
	}
	naive := pynum.SampleStddev(slices.Repeat([]float64{0.1}, 1000), PyFloat, Naive)
	if naive == 0 {
		t.Fatal("plain addition of 1000 × 0.1 is exact; the check is too weak")
	}
	if got := BootstrapStderr(5, stat, 1000, NumpyFloat, Neumaier); got != naive {
		t.Errorf("numpy floats, Neumaier: %v, want the plain-addition %v", got, naive)
	}
	if got := BootstrapStderr(5, stat, 1000, PyFloat, Naive); got != naive {
		t.Errorf("Python floats, naive: %v, want %v", got, naive)
	}
}

func TestBootstrapChunking(t *testing.T) {
	count := func(iters int) int {
		return len(bootstrapReplicates(3, func([]int) float64 { return 1 }, iters))
	}
	for _, c := range []struct{ iters, want int }{
		{0, 0}, {-5, 0}, {1, 1}, {100, 100}, {999, 999}, {1000, 1000},
		{1500, 1000}, {2999, 2000}, {100000, 100000},
	} {
		if got := count(c.iters); got != c.want {
			t.Errorf("iters=%d: %d replicates, want %d", c.iters, got, c.want)
		}
	}
	if got := BootstrapStderr(3, func([]int) float64 { return 1 }, 1, PyFloat, Naive); !math.IsNaN(got) {
		t.Errorf("iters=1: %v, want NaN (one replicate)", got)
	}
	// Each chunk is random.Random(chunk).choices: chunk 1's first resample
	// is what a fresh generator seeded with 1 draws first.
	var first [][]int
	bootstrapReplicates(7, func(idx []int) float64 {
		if len(first) == 0 {
			first = append(first, slices.Clone(idx))
		}
		return 0
	}, 1) // one chunk, one worker
	if want := pyrand.New(0).Choices(7, 7, nil); !slices.Equal(first[0], want) {
		t.Errorf("first resample %v, want random.Random(0).choices: %v", first[0], want)
	}
}

// TestBootstrapDeterministic runs the same bootstrap on one and on several
// goroutines' worth of chunks and expects identical replicates.
func TestBootstrapDeterministic(t *testing.T) {
	xs := testValues(11, 200, 0, 1, 0)
	stat := func(idx []int) float64 { return Median(xs, idx) }
	a := bootstrapReplicates(len(xs), stat, 8000)
	for range 3 {
		if b := bootstrapReplicates(len(xs), stat, 8000); !slices.Equal(a, b) {
			t.Fatal("replicates differ between runs")
		}
	}
	// Chunk c must hold exactly what a single generator seeded with c gives.
	r := pyrand.New(5)
	var idx []int
	for j := range bootstrapChunk {
		idx = r.Choices(len(xs), len(xs), idx)
		if got, want := a[5*bootstrapChunk+j], Median(xs, idx); got != want {
			t.Fatalf("chunk 5, replicate %d: %v, want %v", j, got, want)
		}
	}
}

func TestBootstrapPanics(t *testing.T) {
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want the statistic's panic value", p)
		}
	}()
	BootstrapStderr(3, func([]int) float64 { panic("boom") }, 4000, PyFloat, Naive)
}

// TestMedian compares the selection with Python's rule, sorted(arr)[n//2],
// on resamples full of repeats, and checks the sign of a zero median.
func TestMedian(t *testing.T) {
	r := pyrand.New(9)
	for trial := range 2000 {
		n := 1 + trial%97
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(int(r.Random()*7)) - 3
		}
		idx := r.Choices(n, n, nil)
		vals := make([]float64, n)
		for i, j := range idx {
			vals[i] = xs[j]
		}
		slices.Sort(vals)
		if got, want := Median(xs, idx), vals[n/2]; got != want {
			t.Fatalf("trial %d: Median = %v, sorted()[n//2] = %v", trial, got, want)
		}
		if got, want := MedianOf(xs)(idx), vals[n/2]; got != want {
			t.Fatalf("trial %d: MedianOf = %v, sorted()[n//2] = %v", trial, got, want)
		}
	}
	negZero := math.Copysign(0, -1)
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		// Stable sort keeps equal zeros in draw order.
		{[]float64{negZero, 0, 0}, 0},
		{[]float64{0, negZero, negZero}, negZero},
		{[]float64{-1, 0, negZero, 5}, negZero},
		{[]float64{-1, negZero, 0, 5}, 0},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 3},
	} {
		idx := make([]int, len(c.xs))
		for i := range idx {
			idx[i] = i
		}
		if got := Median(c.xs, idx); !same(got, c.want) {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
		}
		if got := MedianOf(c.xs)(idx); !same(got, c.want) {
			t.Errorf("MedianOf(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	if got := Median(nil, nil); !math.IsNaN(got) {
		t.Errorf("empty: %v, want NaN", got)
	}
	// A nil idx is every item once: the aggregate itself.
	if got := Median([]float64{5, 1, 4, 2, 3}, nil); got != 3 {
		t.Errorf("nil idx: %v, want 3", got)
	}
	if got := MedianOf([]float64{5, 1, 4, 2, 3})(nil); got != 3 {
		t.Errorf("MedianOf, nil idx: %v, want 3", got)
	}
	if got := MedianOf([]float64{1})([]int{}); !math.IsNaN(got) {
		t.Errorf("MedianOf, empty: %v, want NaN", got)
	}
	withNaN := []float64{1, math.NaN(), 2}
	if got := Median(withNaN, []int{0, 1}); !math.IsNaN(got) {
		t.Errorf("with NaN: %v, want NaN", got)
	}
	if got := MedianOf(withNaN)([]int{0, 1}); !math.IsNaN(got) {
		t.Errorf("MedianOf with NaN: %v, want NaN", got)
	}
	if got := MedianOf(withNaN)([]int{0, 2, 2}); got != 2 {
		t.Errorf("MedianOf, NaN not drawn: %v, want 2", got)
	}
}

// TestPairwiseSum checks numpy's pairwise order on hand-worked vectors. With
// 1e16 (ulp 2) at the ends, plain addition loses every 1.0 to ties-to-even;
// numpy's accumulators keep some of them.
func TestPairwiseSum(t *testing.T) {
	ones := func(n int) []float64 {
		a := slices.Repeat([]float64{1}, n)
		a[0], a[n-1] = 1e16, -1e16
		return a
	}
	for _, c := range []struct {
		a    []float64
		want float64
	}{
		{nil, 0},
		// Below 8 values numpy adds plainly: every 1 is lost.
		{ones(7), 0},
		// 8 values: ((1e16+1)+(1+1)) + ((1+1)+(1-1e16)) = (1e16+2) + (2-1e16).
		{ones(8), 4},
		{append(ones(8), 1), 5},
		// 136 values split at 64: pairwise(a[:64]) = 1e16+56 (the seven
		// other accumulators hold 8 each), pairwise(a[64:]) = -1e16+70
		// after one tie rounds 17-1e16 down to 16-1e16. numpy 1.24 agrees.
		{ones(136), 126},
	} {
		if got := pairwiseSum(c.a); got != c.want {
			t.Errorf("pairwiseSum(n=%d) = %v, want %v", len(c.a), got, c.want)
		}
	}
	// Below 8 values pairwise is plain left-to-right addition.
	r := pyrand.New(4)
	for n := range 8 {
		a := make([]float64, n)
		plain := 0.0
		for i := range a {
			a[i] = (r.Random() - 0.5) * math.Pow(10, float64(int(r.Random()*30)-15))
			plain += a[i]
		}
		if got := pairwiseSum(a); got != plain {
			t.Errorf("n=%d: pairwiseSum = %v, plain = %v", n, got, plain)
		}
	}
	// The buffered reduction restarts the pairwise tree every 8192 values.
	long := slices.Repeat([]float64{1}, 8200)
	long[0], long[8192] = 1e16, -1e16
	if got, want := NumpySum(long, NumpyBuffered), pairwiseSum(long[:8192])+pairwiseSum(long[8192:]); got != want {
		t.Errorf("buffered sum = %v, want %v", got, want)
	}
	if got, want := NumpySum(long, NumpyWhole), pairwiseSum(long); got != want {
		t.Errorf("whole sum = %v, want %v", got, want)
	}
}

func TestNanMean(t *testing.T) {
	nan := math.NaN()
	xs := []float64{1, nan, 2, nan, 4}
	if got := NanMean(xs, []int{0, 1, 2, 3, 4}, NumpyBuffered); got != 7.0/3 {
		t.Errorf("NanMean = %v, want 7/3", got)
	}
	if got := NanMean(xs, []int{1, 3}, NumpyBuffered); !math.IsNaN(got) {
		t.Errorf("all NaN: %v, want NaN", got)
	}
	if got := NanMean(xs, []int{}, NumpyBuffered); !math.IsNaN(got) {
		t.Errorf("empty: %v, want NaN", got)
	}
	if got := NanMean(xs, nil, NumpyBuffered); got != 7.0/3 {
		t.Errorf("nil idx (every item): %v, want 7/3", got)
	}
}

// numpyVersion returns the reduction rule of the reference numpy.
func numpyVersion(t *testing.T) NumpyReduce {
	t.Helper()
	out := runPython(t, "import numpy; print(*numpy.__version__.split('.')[:2])", "")
	var major, minor int
	if _, err := fmt.Sscan(string(out), &major, &minor); err != nil {
		t.Fatalf("parsing numpy version %q: %v", out, err)
	}
	return NumpyReduceFor(major, minor)
}

// TestNumpyAgainstNumpy compares NumpySum with np.sum, NanMean with lm-eval's
// nanmean, and a nanmean bootstrap with lm-eval's, using Debian's numpy.
func TestNumpyAgainstNumpy(t *testing.T) {
	requireModule(t, "numpy", "python3-numpy")
	reduce := numpyVersion(t)
	rule := pythonRule(t)
	r := pyrand.New(31)
	wild := func(n int, nanEvery int) []float64 {
		a := make([]float64, n)
		for i := range a {
			a[i] = (r.Random() - 0.5) * math.Pow(10, float64(int(r.Random()*12)-6))
			if nanEvery > 0 && int(r.Random()*float64(nanEvery)) == 0 {
				a[i] = math.NaN()
			}
		}
		return a
	}
	var sums [][]float64
	for _, n := range []int{0, 1, 5, 7, 8, 9, 15, 16, 17, 100, 127, 128, 129, 136, 1000, 8191, 8192, 8193, 9000, 20000, 50000} {
		sums = append(sums, wild(n, 0))
	}
	var means [][]float64
	for _, n := range []int{1, 3, 8, 100, 129, 1000, 8193, 20000} {
		means = append(means, wild(n, 5))
	}
	means = append(means, []float64{math.NaN(), math.NaN()})
	boot := wild(300, 10)
	payload, _ := json.Marshal(map[string]any{
		"sums": func() (h [][]string) {
			for _, a := range sums {
				h = append(h, hexes(a))
			}
			return
		}(),
		"means": func() (h [][]string) {
			for _, a := range means {
				h = append(h, hexes(a))
			}
			return
		}(),
		"boot": hexes(boot),
	})
	out := runPython(t, lmEvalPy+`
import numpy as np

def nanmean(arr):
    if len(arr) == 0 or all(np.isnan(arr)):
        return np.nan
    return np.nanmean(arr)

def fx(hs):
    return [float.fromhex(h) for h in hs]

d = json.loads(sys.stdin.read())
print(json.dumps({
    "sums": [float(np.sum(np.array(fx(a)))).hex() for a in d["sums"]],
    "means": [float(nanmean(fx(a))).hex() for a in d["means"]],
    "boot": bootstrap_stderr(nanmean, fx(d["boot"]), 2000).hex(),
}))
`, string(payload))
	var want struct {
		Sums  []string `json:"sums"`
		Means []string `json:"means"`
		Boot  string   `json:"boot"`
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
	for i, a := range sums {
		if got, w := NumpySum(a, reduce), parseHex(t, want.Sums[i]); !same(got, w) {
			t.Errorf("NumpySum(n=%d, %v) = %x, np.sum %x", len(a), reduce, got, w)
		}
	}
	for i, a := range means {
		idx := make([]int, len(a))
		for j := range idx {
			idx[j] = j
		}
		if got, w := NanMean(a, idx, reduce), parseHex(t, want.Means[i]); !same(got, w) {
			t.Errorf("NanMean(n=%d) = %x, nanmean %x", len(a), got, w)
		}
	}
	got := BootstrapStderr(len(boot), func(idx []int) float64 { return NanMean(boot, idx, reduce) }, 2000, NumpyFloat, rule)
	if w := parseHex(t, want.Boot); !same(got, w) {
		t.Errorf("nanmean bootstrap = %x, lm-eval %x", got, w)
	}
}

// TestSklearnAgainstSklearn compares F1Binary/F1BinaryLegacy and
// MatthewsCorrcoef with lm-eval's f1 and matthews_corrcoef aggregations on
// random label vectors, binary and multiclass, and their bootstraps, using
// Debian's scikit-learn.
func TestSklearnAgainstSklearn(t *testing.T) {
	requireModule(t, "sklearn", "python3-sklearn")
	rule := pythonRule(t)
	out := runPython(t, `import sklearn; print(*sklearn.__version__.split('.')[:2])`, "")
	var major, minor int
	if _, err := fmt.Sscan(string(out), &major, &minor); err != nil {
		t.Fatalf("parsing scikit-learn version %q: %v", out, err)
	}
	f1 := F1Binary
	if major < 1 || (major == 1 && minor < 4) {
		f1 = F1BinaryLegacy
	}

	type pairs struct {
		Golds []int `json:"golds"`
		Preds []int `json:"preds"`
	}
	r := pyrand.New(77)
	labelSets := [][]int{{0, 1}, {0, 1}, {0, 1}, {1}, {0}, {1, 2}, {0, 2}, {0, 1, 2}, {0, 1, 2, 3, 4}, {-1, 1}, {1, 100, 1000}, {3, 70}}
	var cases []pairs
	for trial := range 400 {
		labels := labelSets[trial%len(labelSets)]
		n := 1 + int(r.Random()*120)
		c := pairs{make([]int, n), make([]int, n)}
		skew := r.Random()
		for i := range n {
			c.Golds[i] = labels[int(r.Random()*float64(len(labels)))]
			if r.Random() < skew {
				c.Preds[i] = c.Golds[i]
			} else {
				c.Preds[i] = labels[int(r.Random()*float64(len(labels)))]
			}
		}
		cases = append(cases, c)
	}
	boot := cases[0]
	boot.Golds, boot.Preds = make([]int, 200), make([]int, 200)
	for i := range boot.Golds {
		boot.Golds[i] = int(r.Random() * 2)
		boot.Preds[i] = boot.Golds[i]
		if r.Random() < 0.3 {
			boot.Preds[i] = 1 - boot.Golds[i]
		}
	}
	payload, _ := json.Marshal(map[string]any{"cases": cases, "boot": boot})
	out = runPython(t, lmEvalPy+`
import warnings
import numpy as np
warnings.filterwarnings("ignore")

def f1_score(items):
    from sklearn.metrics import f1_score
    unzipped_list = list(zip(*items))
    golds = unzipped_list[0]
    preds = unzipped_list[1]
    fscore = f1_score(golds, preds)
    return np.max(fscore)

def matthews_corrcoef(items):
    from sklearn.metrics import matthews_corrcoef
    unzipped_list = list(zip(*items))
    golds = unzipped_list[0]
    preds = unzipped_list[1]
    return matthews_corrcoef(golds, preds)

def h(f, items):
    try:
        return float(f(items)).hex()
    except ValueError:
        return "error"

d = json.loads(sys.stdin.read())
res = {"f1": [], "mcc": [], "mcc_type": type(matthews_corrcoef([(0, 0), (1, 1), (0, 1)])).__name__}
for c in d["cases"]:
    items = list(zip(c["golds"], c["preds"]))
    res["f1"].append(h(f1_score, items))
    res["mcc"].append(h(matthews_corrcoef, items))
b = list(zip(d["boot"]["golds"], d["boot"]["preds"]))
res["boot_f1"] = bootstrap_stderr(f1_score, b, 1000).hex()
res["boot_mcc"] = bootstrap_stderr(matthews_corrcoef, b, 1000).hex()
print(json.dumps(res))
`, string(payload))
	var want struct {
		F1      []string `json:"f1"`
		MCC     []string `json:"mcc"`
		MCCType string   `json:"mcc_type"`
		BootF1  string   `json:"boot_f1"`
		BootMCC string   `json:"boot_mcc"`
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
	errOrHex := func(s string) float64 {
		if s == "error" {
			return math.NaN()
		}
		return parseHex(t, s)
	}
	for i, c := range cases {
		idx := make([]int, len(c.Golds))
		for j := range idx {
			idx[j] = j
		}
		if got, w := f1(c.Golds, c.Preds, idx), errOrHex(want.F1[i]); !same(got, w) {
			t.Errorf("case %d: f1 = %x, sklearn %s (golds %v, preds %v)", i, got, want.F1[i], c.Golds, c.Preds)
		}
		if got, w := MatthewsCorrcoef(c.Golds, c.Preds, idx), errOrHex(want.MCC[i]); !same(got, w) {
			t.Errorf("case %d: mcc = %x, sklearn %s (golds %v, preds %v)", i, got, want.MCC[i], c.Golds, c.Preds)
		}
	}
	mccKind := NumpyFloat
	if want.MCCType == "float" {
		mccKind = PyFloat
	}
	n := len(boot.Golds)
	gotF1 := BootstrapStderr(n, func(idx []int) float64 { return f1(boot.Golds, boot.Preds, idx) }, 1000, NumpyFloat, rule)
	if w := parseHex(t, want.BootF1); !same(gotF1, w) {
		t.Errorf("f1 bootstrap = %x, lm-eval %x", gotF1, w)
	}
	gotMCC := BootstrapStderr(n, func(idx []int) float64 { return MatthewsCorrcoef(boot.Golds, boot.Preds, idx) }, 1000, mccKind, rule)
	if w := parseHex(t, want.BootMCC); !same(gotMCC, w) {
		t.Errorf("mcc bootstrap = %x, lm-eval %x", gotMCC, w)
	}
}

// TestF1Formulas checks both F1 formulas on counts whose results are exact
// rationals rounded once, or where the precision/recall route rounds twice.
func TestF1Formulas(t *testing.T) {
	// tp=1, fp=1, fn=0: 2/(1+2) both ways is 2/3 rounded once.
	golds := []int{1, 0, 0}
	preds := []int{1, 1, 0}
	idx := []int{0, 1, 2}
	if got := F1Binary(golds, preds, idx); got != 2.0/3 {
		t.Errorf("F1Binary = %v, want 2/3", got)
	}
	// Legacy: precision 0.5, recall 1: 2*0.5*1/1.5 = 1/1.5, which is also
	// the double nearest 2/3.
	if got := F1BinaryLegacy(golds, preds, idx); got != 1/1.5 {
		t.Errorf("F1BinaryLegacy = %v, want 1/1.5", got)
	}
	// No positive anywhere: zero_division gives 0.0 in both.
	zeros := []int{0, 0, 0}
	if got := F1Binary(golds, preds, nil); got != 2.0/3 {
		t.Errorf("F1Binary, nil idx = %v, want 2/3", got)
	}
	if F1Binary(zeros, zeros, idx) != 0 || F1BinaryLegacy(zeros, zeros, idx) != 0 {
		t.Error("all-negative resample: want 0")
	}
	// Three labels: sklearn raises ValueError.
	if got := F1Binary([]int{0, 1, 2}, zeros, idx); !math.IsNaN(got) {
		t.Errorf("multiclass: %v, want NaN", got)
	}
	// The two formulas do differ: tp=3, fp=1, fn=2.
	g := []int{1, 1, 1, 0, 1, 1}
	p := []int{1, 1, 1, 1, 0, 0}
	all := []int{0, 1, 2, 3, 4, 5}
	newF, oldF := F1Binary(g, p, all), F1BinaryLegacy(g, p, all)
	if newF != 6.0/9 {
		t.Errorf("F1Binary = %v, want 6/9", newF)
	}
	if want := float64(float64(2*0.75)*0.6) / (0.75 + 0.6); oldF != want {
		t.Errorf("F1BinaryLegacy = %v, want %v", oldF, want)
	}
}

func TestMatthewsCorrcoefEdges(t *testing.T) {
	idx := []int{0, 1, 2, 3}
	if got := MatthewsCorrcoef([]int{1, 1, 1, 1}, []int{1, 1, 1, 1}, idx); got != 0 {
		t.Errorf("one label: %v, want 0 (sklearn)", got)
	}
	if got := MatthewsCorrcoef([]int{0, 1, 0, 1}, []int{0, 1, 0, 1}, idx); got != 1 {
		t.Errorf("perfect: %v, want 1", got)
	}
	if got := MatthewsCorrcoef([]int{0, 1, 0, 1}, []int{1, 0, 1, 0}, idx); got != -1 {
		t.Errorf("inverted: %v, want -1", got)
	}
	// Labels beyond the fixed arrays take the map path.
	if got := MatthewsCorrcoef([]int{-5, 900, -5, 900}, []int{-5, 900, -5, 900}, idx); got != 1 {
		t.Errorf("large labels: %v, want 1", got)
	}
	if got := MatthewsCorrcoef(nil, nil, nil); !math.IsNaN(got) {
		t.Errorf("empty: %v, want NaN", got)
	}
	if got := MatthewsCorrcoef([]int{0, 1, 0, 1}, []int{1, 0, 1, 0}, nil); got != -1 {
		t.Errorf("nil idx (every pair): %v, want -1", got)
	}
}

func TestStderrFor(t *testing.T) {
	for _, c := range []struct {
		metric, agg   string
		iters, n, pat int
		want          StderrRule
	}{
		{"acc", "mean", 100000, 50, 9, StderrRule{Method: StderrMean}},
		{"acc", "mean", 0, 50, 9, StderrRule{Method: StderrNone}},
		{"acc", "mean", -1, 50, 9, StderrRule{Method: StderrNone}},
		{"acc", "mean", 100000, 1, 9, StderrRule{Method: StderrNone}},
		{"acc", "mean", 100000, 1, 0, StderrRule{Method: StderrMean}},
		{"exact_match", "median", 100000, 50, 9, StderrRule{StderrBootstrap, 100000}},
		{"mcc", "matthews_corrcoef", 5000, 50, 4, StderrRule{StderrBootstrap, 5000}},
		{"f1", "f1", 100000, 50, 4, StderrRule{StderrBootstrap, 100000}},
		{"word_perplexity", "perplexity", 100000, 50, 4, StderrRule{StderrBootstrap, 100000}},
		{"bleu", "bleu", 100000, 50, 4, StderrRule{StderrBootstrap, 100}},
		{"chrf", "chrf", 50, 50, 4, StderrRule{StderrBootstrap, 50}},
		{"ter", "ter", 100000, 50, 4, StderrRule{StderrBootstrap, 100}},
		// The cap goes by metric name: bleu aggregated by mean is mean_stderr,
		// and a bleu aggregation under another metric name is not capped.
		{"bleu", "mean", 100000, 50, 4, StderrRule{Method: StderrMean}},
		{"sacrebleu", "bleu", 100000, 50, 4, StderrRule{StderrBootstrap, 100000}},
		{"score", "nanmean", 100000, 50, 9, StderrRule{StderrBootstrap, 100000}},
		{"score", "nanmean", 100000, 50, 8, StderrRule{Method: StderrNone}},
		{"acc", "acc_all", 100000, 50, 4, StderrRule{Method: StderrAccAll}},
		{"bits_per_byte", "bits_per_byte", 100000, 50, 4, StderrRule{Method: StderrNone}},
		{"x", "weighted_perplexity", 100000, 50, 4, StderrRule{Method: StderrNone}},
		{"x", "my_custom_fn", 100000, 50, 4, StderrRule{Method: StderrNone}},
	} {
		if got := StderrFor(c.metric, c.agg, c.iters, c.n, c.pat); got != c.want {
			t.Errorf("StderrFor(%q, %q, %d, %d, %d) = %+v, want %+v", c.metric, c.agg, c.iters, c.n, c.pat, got, c.want)
		}
	}
}

func TestStatsDoNotAllocate(t *testing.T) {
	xs := testValues(1, 1000, 0, 1, 0)
	ints := make([]int, 1000)
	idx := pyrand.New(0).Choices(1000, 1000, nil)
	medianOf := MedianOf(xs)
	for name, f := range map[string]func(){
		"Median":           func() { Median(xs, idx) },
		"MedianOf":         func() { medianOf(idx) },
		"Perplexity":       func() { Perplexity(xs, idx, PyFloat, Naive) },
		"NanMean":          func() { NanMean(xs, idx, NumpyBuffered) },
		"F1Binary":         func() { F1Binary(ints, ints, idx) },
		"MatthewsCorrcoef": func() { MatthewsCorrcoef(ints, ints, idx) },
	} {
		f() // warm the pool
		if a := testing.AllocsPerRun(50, f); a > 0 {
			t.Errorf("%s allocates %v times per call", name, a)
		}
	}
}

func ExampleBootstrapStderr() {
	// Per-document scores of a ten-document task whose metric lm-eval
	// aggregates with median: the stderr lm-eval reports with
	// --bootstrap_iters 1000, from CPython 3.11 (plain summation).
	scores := []float64{0.2, 0.5, 0.9, 0.1, 0.7, 0.3, 0.8, 0.4, 0.6, 1.0}
	rule := StderrFor("score", "median", 1000, len(scores), 9)
	fmt.Println(rule.Method, rule.Iters)
	stderr := BootstrapStderr(len(scores), MedianOf(scores), rule.Iters, PyFloat, SummationFor(3, 11))
	fmt.Println(stderr)
	// Output:
	// bootstrap 1000
	// 0.14553669960161508
}

// BenchmarkBootstrapMedian is lm-eval's default bootstrap (100000
// resamples) of the median of 1000 items, with each median helper.
func BenchmarkBootstrapMedian(b *testing.B) {
	xs := testValues(1, 1000, 0, 1, 0)
	for name, stat := range map[string]func([]int) float64{
		"MedianOf": MedianOf(xs),
		"Median":   func(idx []int) float64 { return Median(xs, idx) },
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				BootstrapStderr(len(xs), stat, 100000, PyFloat, Naive)
			}
		})
	}
}
