package pynum

import (
	"encoding/json"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// lmEvalPy is lm-eval's code under test, copied from lm_eval/api/metrics.py
// (0.4.x).
const lmEvalPy = `
import json, math, sys

def mean(arr):
    return sum(arr) / len(arr)

def sample_stddev(arr):
    mu = mean(arr)
    return math.sqrt(sum([(x - mu) ** 2 for x in arr]) / (len(arr) - 1))

def aggregate_subtask_metrics(metrics, sizes, weight_by_size=True):
    if not weight_by_size:
        sizes = [1] * len(sizes)
    return sum([metric * size for metric, size in zip(metrics, sizes)]) / sum(sizes)

def pooled_sample_stderr(stderrs, sizes):
    pooled_sample_var = (sum([(size - 1) * stderr**2 * size for size, stderr in zip(sizes, stderrs)])) / (sum(sizes) - len(sizes))
    return math.sqrt(pooled_sample_var / sum(sizes))
`

// TestSampleStddevAgainstCPython compares SampleStddev with lm-eval's
// sample_stddev on arrays of a few distinct values each, the shape of
// bootstrap replicates of 0/1 scores. There every deviation's square is
// repeated many times, so the one input in a thousand where Python's
// (x - mu) ** 2 (glibc's pow) is not (x - mu) * (x - mu) moves the result;
// the test also makes sure the data contains such cases. Python draws the
// arrays (random.Random(2718)) and prints each with its sample_stddev.
func TestSampleStddevAgainstCPython(t *testing.T) {
	rule := pythonRule(t)
	out := runPython(t, lmEvalPy+`
import random
r = random.Random(2718)
arrays = []
for i in range(2000):
    distinct = [r.random(), r.random() * 3, r.random() - 7]
    a = [0.0] * (20 + int(r.random() * 60))
    for j in range(len(a)):
        a[j] = distinct[int(r.random() * 3)]
    arrays.append(a)
# 61 ones and 309 zeros: the one binary array of length 20 to 400 a
# search of 200000 found where pow and d*d disagree (by 2 ulp).
arrays.append([1.0] * 61 + [0.0] * 309)
for a in arrays:
    print(sample_stddev(a).hex(), " ".join(x.hex() for x in a))
`, nil)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2001 {
		t.Fatalf("Python printed %d arrays, want 2001", len(lines))
	}
	bad, mulDiffers := 0, 0
	for i, line := range lines {
		f := strings.Fields(line)
		want := parseHex(t, f[0])
		a := make([]float64, len(f)-1)
		for j, h := range f[1:] {
			a[j] = parseHex(t, h)
		}
		if got := SampleStddev(a, Float, rule); !same(got, want) {
			bad++
			if bad <= 5 {
				t.Errorf("array %d: SampleStddev = %x, CPython %x", i, got, want)
			}
		}
		// The same with d*d in place of pow.
		mu := Sum(a, Float, rule) / float64(len(a))
		sq := make([]float64, len(a))
		for j, x := range a {
			d := x - mu
			sq[j] = float64(d * d)
		}
		if !same(math.Sqrt(Sum(sq, Float, rule)/float64(len(a)-1)), want) {
			mulDiffers++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d arrays differ", bad, len(lines))
	}
	if mulDiffers == 0 {
		t.Error("no array where d*d instead of d ** 2 changes the result; the check is too weak")
	}
}

// TestSampleStddevSummation checks sample_stddev's two sums under both
// summation rules on hand-worked data where they disagree.
func TestSampleStddevSummation(t *testing.T) {
	// sum([0.1]*10) is 0.9999999999999999 with plain addition and 1.0 with
	// CPython 3.12's compensated sum (its What's New example), so the mean
	// is exact and every deviation 0 only under Neumaier. The naive value
	// is CPython 3.11's sample_stddev([0.1]*10).
	tenths := slices.Repeat([]float64{0.1}, 10)
	naiveTenths := 0x1.0dd90273c3ce2p-56
	// A, 1, -A, -1, 1, -1, 1, -1 with A = 2^26 has mean 0 either way; the
	// squares 2^52, 1, 2^52, 1, ... add up to 2^53 plainly (each 1 is lost
	// to ties-to-even at 2^53) and to 2^53+6 exactly, which Neumaier
	// finds. sqrt(2^53/7) and sqrt((2^53+6)/7) as float.hex:
	a := float64(1 << 26)
	big := []float64{a, 1, -a, -1, 1, -1, 1, -1}
	naiveBig, exactBig := 0x1.11acee560242ap+25, 0x1.11acee560242cp+25
	for _, c := range []struct {
		name string
		xs   []float64
		kind Kind
		rule Summation
		want float64
	}{
		{"tenths float naive", tenths, Float, Naive, naiveTenths},
		{"tenths float neumaier", tenths, Float, Neumaier, 0},
		{"tenths numpy neumaier", tenths, Numpy, Neumaier, naiveTenths},
		{"big float naive", big, Float, Naive, naiveBig},
		{"big float neumaier", big, Float, Neumaier, exactBig},
		{"big numpy neumaier", big, Numpy, Neumaier, naiveBig},
		// Ints sum exactly either way, but their deviations are floats.
		{"big int neumaier", big, Int, Neumaier, exactBig},
		{"big int naive", big, Int, Naive, naiveBig},
	} {
		if got := SampleStddev(c.xs, c.kind, c.rule); !same(got, c.want) {
			t.Errorf("%s: SampleStddev = %x, want %x", c.name, got, c.want)
		}
	}
	// sample_stddev([1.0]*61 + [0.0]*309) in CPython 3.11 is ...b3d; squaring
	// with d*d instead of pow gives ...b3b.
	ones := slices.Concat(slices.Repeat([]float64{1}, 61), slices.Repeat([]float64{0}, 309))
	if got, want := SampleStddev(ones, Float, Naive), 0x1.7c7a7bfd0fb3dp-2; got != want {
		t.Errorf("61 ones, 309 zeros: SampleStddev = %x, want %x", got, want)
	}
	if got := SampleStddev([]float64{1}, Float, Naive); !math.IsNaN(got) {
		t.Errorf("one value: got %v, want NaN (Python divides by zero)", got)
	}
	if got := MeanStderr([]float64{1}, Float, Naive); !math.IsNaN(got) {
		t.Errorf("MeanStderr of one value: got %v, want NaN", got)
	}
	// The mean of [0.1]*10, and mean_stderr = sample_stddev / sqrt(n).
	for _, c := range []struct {
		kind Kind
		rule Summation
		mean float64
	}{
		{Float, Naive, 0.9999999999999999 / 10}, {Float, Neumaier, 0.1}, {Numpy, Neumaier, 0.9999999999999999 / 10},
	} {
		if got := Mean(tenths, c.kind, c.rule); got != c.mean {
			t.Errorf("Mean(tenths, %v, %v) = %v, want %v", c.kind, c.rule, got, c.mean)
		}
		if got, want := MeanStderr(tenths, c.kind, c.rule), SampleStddev(tenths, c.kind, c.rule)/math.Sqrt(10); got != want {
			t.Errorf("MeanStderr(tenths, %v, %v) = %v, want %v", c.kind, c.rule, got, want)
		}
	}
}

// TestGroupFormulasAgainstCPython checks the group aggregations against the
// formulas as lm-eval writes them in Python (api/metrics.py:
// aggregate_subtask_metrics, pooled_sample_stderr), run by Debian's Python
// on random members. Python sums plainly up to 3.11 and compensated from 3.12; np.sqrt is math.sqrt for a
// float.
func TestGroupFormulasAgainstCPython(t *testing.T) {
	// sum() compensates from Python 3.12: compare under the rule of the
	// interpreter that computed the reference.
	rule := pythonRule(t)
	groups := randomGroups()
	in, _ := json.Marshal(groups)
	out := runPython(t, lmEvalPy+`
for g in json.load(sys.stdin):
    # Go writes 1.0 as 1: make every value the float lm-eval has (an int
    # item would take sum()'s uncompensated int branch from Python 3.12).
    v, s, n = [float(x) for x in g["values"]], [float(x) for x in g["stderrs"]], g["sizes"]
    print(" ".join(x.hex() for x in [aggregate_subtask_metrics(v, n), aggregate_subtask_metrics(v, n, False),
        pooled_sample_stderr(s, n)]))
`, in)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(groups) {
		t.Fatalf("%d lines from Python for %d groups", len(lines), len(groups))
	}
	for i, g := range groups {
		f := strings.Fields(lines[i])
		got := []float64{
			SubtaskMean(g.Values, g.Sizes, true, rule),
			SubtaskMean(g.Values, g.Sizes, false, rule),
			PooledStderr(g.Stderrs, g.Sizes, nil, rule),
		}
		for j, name := range []string{"weighted mean", "unweighted mean", "pooled stderr"} {
			if want := parseHex(t, f[j]); !same(got[j], want) {
				t.Errorf("group %d (%d members): %s = %x, Python %x", i, len(g.Values), name, got[j], want)
			}
		}
	}
}

// TestPooledStderrKinds checks that the stderrs' kinds choose the summation
// of pooled_sample_stderr's sum(): numpy scalars add plainly under every
// rule, Python floats are compensated under Neumaier, and the random groups
// hold cases where that changes the result.
func TestPooledStderrKinds(t *testing.T) {
	differ := 0
	for i, g := range randomGroups() {
		numpy := slices.Repeat([]Kind{Numpy}, len(g.Stderrs))
		naive := PooledStderr(g.Stderrs, g.Sizes, nil, Naive)
		if got := PooledStderr(g.Stderrs, g.Sizes, numpy, Neumaier); !same(got, naive) {
			t.Errorf("group %d: numpy stderrs under Neumaier %x, want the plain sum's %x", i, got, naive)
		}
		floats := slices.Repeat([]Kind{Float}, len(g.Stderrs))
		comp := PooledStderr(g.Stderrs, g.Sizes, nil, Neumaier)
		if got := PooledStderr(g.Stderrs, g.Sizes, floats, Neumaier); !same(got, comp) {
			t.Errorf("group %d: float kinds %x, nil kinds %x", i, got, comp)
		}
		if !same(comp, naive) {
			differ++
		}
	}
	if differ == 0 {
		t.Error("no group where Neumaier's sum changes the pooled stderr; the check is too weak")
	}
}

// group is a group's members as lm-eval aggregates them.
type group struct {
	Values  []float64 `json:"values"`
	Stderrs []float64 `json:"stderrs"`
	Sizes   []int     `json:"sizes"`
}

// randomGroups returns 300 groups of 1 to 60 members of 0/1 scores.
func randomGroups() []group {
	rng := rand.New(rand.NewSource(11))
	var groups []group
	for g := 0; g < 300; g++ {
		k := 1 + rng.Intn(60)
		var gr group
		for i := 0; i < k; i++ {
			n := 2 + rng.Intn(1500)
			p := float64(rng.Intn(n+1)) / float64(n)
			gr.Values = append(gr.Values, p)
			gr.Stderrs = append(gr.Stderrs, MeanStderr(bernoulli(rng, n, p), Float, Naive))
			gr.Sizes = append(gr.Sizes, n)
		}
		groups = append(groups, gr)
	}
	return groups
}

func bernoulli(rng *rand.Rand, n int, p float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		if float64(i) < p*float64(n) {
			xs[i] = 1
		}
	}
	rng.Shuffle(n, func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	return xs
}
