package pynum

import "math"

// This file holds lm-eval's aggregation formulas (lm_eval/api/metrics.py,
// 0.4.x) as CPython evaluates them. Go may fuse x*y + z into one fused
// multiply-add on some architectures; every product here that feeds an
// addition is wrapped in float64(), which forbids the fusion.

// Mean is lm-eval's mean aggregation, sum(items) / len(items), with the
// summation CPython used for items of this kind.
func Mean(xs []float64, kind Kind, rule Summation) float64 {
	return Sum(xs, kind, rule) / float64(len(xs))
}

// MeanStderr is lm-eval's mean_stderr: the Bessel-corrected sample standard
// deviation over sqrt(n), computed as
// math.sqrt(sum([(x - mu) ** 2 for x in xs]) / (n - 1)) / math.sqrt(n).
// It returns NaN when len(xs) < 2 (lm-eval writes "N/A" there).
func MeanStderr(xs []float64, kind Kind, rule Summation) float64 {
	return SampleStddev(xs, kind, rule) / math.Sqrt(float64(len(xs)))
}

// SampleStddev is lm-eval's sample_stddev:
//
//	mu = sum(arr) / len(arr)
//	math.sqrt(sum([(x - mu) ** 2 for x in arr]) / (len(arr) - 1))
//
// for values of Python type kind summed under rule. Deviations of ints and
// floats are Python floats, those of numpy scalars numpy scalars; ** 2 is the
// C library's pow for both (Square). It returns NaN for fewer than two
// values, where Python divides by zero.
func SampleStddev(xs []float64, kind Kind, rule Summation) float64 {
	n := len(xs)
	if n < 2 {
		return math.NaN()
	}
	mu := Sum(xs, kind, rule) / float64(n)
	devKind := Float
	if kind == Numpy {
		devKind = Numpy
	}
	sq := make([]float64, n)
	for i, x := range xs {
		sq[i] = Square(x - mu)
	}
	return math.Sqrt(Sum(sq, devKind, rule) / float64(n-1))
}

// SubtaskMean is lm-eval's aggregate_subtask_metrics: a group's value from its
// members' values, weighted by member size or not,
// sum([m * size for ...]) / sum(sizes).
func SubtaskMean(values []float64, sizes []int, weightBySize bool, rule Summation) float64 {
	prod := make([]float64, len(values))
	total := 0
	for i, v := range values {
		w := 1
		if weightBySize {
			w = sizes[i]
		}
		prod[i] = float64(v * float64(w))
		total += w
	}
	return Sum(prod, Float, rule) / float64(total)
}

// PooledStderr is lm-eval's pooled_sample_stderr:
// np.sqrt(sum((n_i - 1) * se_i**2 * n_i) / (sum(n_i) - k) / sum(n_i)).
// kinds gives each stderr's Python type: a leaf's stderr is a Python float,
// a sub-group's (from np.sqrt) a numpy scalar, which changes the summation.
// A nil kinds means Python floats throughout.
func PooledStderr(stderrs []float64, sizes []int, kinds []Kind, rule Summation) float64 {
	terms := make([]float64, len(stderrs))
	termKinds := make([]Kind, len(stderrs))
	total := 0
	for i, se := range stderrs {
		// (size - 1) * stderr**2 * size, left to right; ** 2 is libm's pow.
		terms[i] = float64(float64(float64(sizes[i]-1)*Square(se)) * float64(sizes[i]))
		termKinds[i] = Float
		if kinds != nil && kinds[i] == Numpy {
			termKinds[i] = Numpy
		}
		total += sizes[i]
	}
	pooledVar := SumKinds(terms, termKinds, rule) / float64(total-len(stderrs))
	return math.Sqrt(pooledVar / float64(total))
}
