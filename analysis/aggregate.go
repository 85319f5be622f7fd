package analysis

import (
	"math"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// Mean is lm-eval's mean aggregation, sum(items) / len(items), with the
// summation CPython used for items of this kind.
func Mean(xs []float64, kind PyKind, rule Summation) float64 {
	return pynum.Mean(xs, kind, rule)
}

// MeanStderr is lm-eval's mean_stderr: the Bessel-corrected sample standard
// deviation over sqrt(n), computed as
// math.sqrt(sum([(x - mu) ** 2 for x in xs]) / (n - 1)) / math.sqrt(n).
// It returns NaN when len(xs) < 2 (lm-eval writes "N/A" there).
func MeanStderr(xs []float64, kind PyKind, rule Summation) float64 {
	return pynum.MeanStderr(xs, kind, rule)
}

// SubtaskMean is lm-eval's aggregate_subtask_metrics: a group's value from its
// members' values, weighted by member size or not,
// sum([m * size for ...]) / sum(sizes).
func SubtaskMean(values []float64, sizes []int, weightBySize bool, rule Summation) float64 {
	return pynum.SubtaskMean(values, sizes, weightBySize, rule)
}

// PooledStderr is lm-eval's pooled_sample_stderr:
// np.sqrt(sum((n_i - 1) * se_i**2 * n_i) / (sum(n_i) - k) / sum(n_i)).
// kinds gives each stderr's Python type: a leaf's stderr is a Python float,
// a sub-group's (from np.sqrt) a numpy scalar, which changes the summation.
func PooledStderr(stderrs []float64, sizes []int, kinds []PyKind, rule Summation) float64 {
	return pynum.PooledStderr(stderrs, sizes, kinds, rule)
}

// CombinedStderr is the group aggregation of lm-eval v0.4.0 and v0.4.1: the
// children are folded in one at a time, the mean updated first and the
// variance then combined around the updated mean. It returns the group value
// and its stderr.
func CombinedStderr(values, stderrs []float64, sizes []int) (value, stderr float64) {
	mean, variance, size := values[0], pynum.Square(stderrs[0]), sizes[0]
	for i := 1; i < len(values); i++ {
		m, se, n := values[i], stderrs[i], sizes[i]
		mean = (float64(mean*float64(size)) + float64(m*float64(n))) / float64(size+n)
		a := float64(float64(size-1)*variance) + float64(float64(n-1)*pynum.Square(se))
		b := float64(float64(size*n) / float64((size+n)*(size+n-1)))
		variance = a/float64(size+n-1) + float64(b*pynum.Square(mean-m))
		size += n
	}
	return mean, math.Sqrt(variance)
}
