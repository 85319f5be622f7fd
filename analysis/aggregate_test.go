package analysis

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
)

// TestGroupFormulasAgainstCPython checks the group aggregations against the
// formulas as lm-eval writes them in Python (api/metrics.py:
// aggregate_subtask_metrics, pooled_sample_stderr; evaluator.py of v0.4.0:
// the sequential combined variance), run by Debian's Python on random
// members. Python sums plainly up to 3.11 and compensated from 3.12; np.sqrt is math.sqrt for a float.
func TestGroupFormulasAgainstCPython(t *testing.T) {
	// sum() compensates from Python 3.12: compare under the rule of the
	// interpreter that computed the reference.
	rule := pythonRule(t)
	rng := rand.New(rand.NewSource(11))
	type group struct {
		Values  []float64 `json:"values"`
		Stderrs []float64 `json:"stderrs"`
		Sizes   []int     `json:"sizes"`
	}
	var groups []group
	for g := 0; g < 300; g++ {
		k := 1 + rng.Intn(60)
		var gr group
		for i := 0; i < k; i++ {
			n := 2 + rng.Intn(1500)
			p := float64(rng.Intn(n+1)) / float64(n)
			gr.Values = append(gr.Values, p)
			gr.Stderrs = append(gr.Stderrs, MeanStderr(bernoulli(rng, n, p), PyFloat, Naive))
			gr.Sizes = append(gr.Sizes, n)
		}
		groups = append(groups, gr)
	}
	in, _ := json.Marshal(groups)
	out := runPython(t, `
import json, math, sys
def aggregate_subtask_metrics(metrics, sizes, weight_by_size=True):
    if not weight_by_size:
        sizes = [1] * len(sizes)
    return sum([metric * size for metric, size in zip(metrics, sizes)]) / sum(sizes)
def pooled_sample_stderr(stderrs, sizes):
    pooled_sample_var = (sum([(size - 1) * stderr**2 * size for size, stderr in zip(sizes, stderrs)])) / (sum(sizes) - len(sizes))
    return math.sqrt(pooled_sample_var / sum(sizes))
def combined(values, stderrs, sizes):
    mean, var, total = values[0], stderrs[0] ** 2, sizes[0]
    for m, se, n in zip(values[1:], stderrs[1:], sizes[1:]):
        mean = (mean * total + m * n) / (total + n)
        var = ((total - 1) * var + (n - 1) * se ** 2) / (total + n - 1) + total * n / ((total + n) * (total + n - 1)) * (mean - m) ** 2
        total += n
    return mean, math.sqrt(var)
for g in json.load(sys.stdin):
    # Go writes 1.0 as 1: make every value the float lm-eval has (an int
    # item would take sum()'s uncompensated int branch from Python 3.12).
    v, s, n = [float(x) for x in g["values"]], [float(x) for x in g["stderrs"]], g["sizes"]
    cm, cs = combined(v, s, n)
    print(" ".join(x.hex() for x in [aggregate_subtask_metrics(v, n), aggregate_subtask_metrics(v, n, False),
        pooled_sample_stderr(s, n) if sum(n) > len(n) else 0.0, cm, cs]))
`, string(in))
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(groups) {
		t.Fatalf("%d lines from Python for %d groups", len(lines), len(groups))
	}
	for i, g := range groups {
		f := strings.Fields(lines[i])
		cm, cs := CombinedStderr(g.Values, g.Stderrs, g.Sizes)
		got := []float64{
			SubtaskMean(g.Values, g.Sizes, true, rule),
			SubtaskMean(g.Values, g.Sizes, false, rule),
			PooledStderr(g.Stderrs, g.Sizes, nil, rule),
			cm, cs,
		}
		for j, name := range []string{"weighted mean", "unweighted mean", "pooled stderr", "combined mean", "combined stderr"} {
			if want := parseHex(t, f[j]); !same(got[j], want) {
				t.Errorf("group %d (%d members): %s = %x, Python %x", i, len(g.Values), name, got[j], want)
			}
		}
	}
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
