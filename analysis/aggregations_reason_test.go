package analysis

import (
	"strings"
	"testing"
)

// TestReasonNamesAppliedSummation: a check's reason names the summation
// each sum used. Under Python 3.12 (Neumaier for floats), a bootstrap over
// numpy replicates (f1) and an int mean sum naively or exactly, and say so;
// Python-float sums say neumaier.
func TestReasonNamesAppliedSummation(t *testing.T) {
	ac := aggContext{rule: Neumaier, iters: 1000, patch: 9}
	pairs := [][]float64{{1, 1}, {0, 1}, {1, 0}, {0, 0}, {1, 1}, {1, 1}}
	cases := []struct {
		agg, metric string
		items       []float64
		pairs       [][]float64
		kind        PyKind
		says        []string
		never       string
		matters     bool
	}{
		{"f1", "f1", nil, pairs, PyInt, []string{"bootstrap stderr (1000 resamples)", "stderr: naive summation of numpy.float64"}, "neumaier", false},
		{"perplexity", "perplexity", []float64{-1.5, -2.25, -0.5, -3}, nil, PyFloat, []string{"value: neumaier summation of float", "stderr: neumaier summation of float"}, "naive", true},
		{"mean", "acc", []float64{1, 0, 1, 1}, nil, PyInt, []string{"value: exact sum of int", "stderr: neumaier summation of float"}, "naive", true},
		{"mean", "exact_match", []float64{1, 0, 1, 1}, nil, NumpyFloat, []string{"value: naive summation of numpy.float64", "stderr: naive summation of numpy.float64"}, "neumaier", false},
	}
	for _, c := range cases {
		ac.metric = c.metric
		_, _, why, matters, err := aggregateWith(c.agg, c.items, c.pairs, c.kind, ac)
		if err != nil {
			t.Fatalf("%s: %v", c.agg, err)
		}
		for _, s := range c.says {
			if !strings.Contains(why, s) {
				t.Errorf("%s %s: reason %q does not say %q", c.agg, c.kind, why, s)
			}
		}
		if strings.Contains(why, c.never) || matters != c.matters {
			t.Errorf("%s %s: reason %q (rule matters: %v, want %v) names %q", c.agg, c.kind, why, matters, c.matters, c.never)
		}
	}
}
