package analysis

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/evalcapsule/evalcapsule/analysis/internal/pyrand"
	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// This file reproduces the bootstrap standard errors of lm-eval 0.4.x
// (lm_eval/api/metrics.py: bootstrap_stderr, sample_stddev and the
// bootstrappable aggregations) bit for bit.
//
// Besides the resampling itself, three things decide the last bits:
//
//   - which summation CPython's sum() uses for the replicates (pynum.Sum);
//   - that (x - mu) ** 2 and math.exp are the C library's pow and exp, which
//     are not correctly rounded (pynum.Square and pynum.Exp call them);
//   - numpy's pairwise summation inside np.nanmean (NumpySum).
//
// Go may fuse x*y + z into one fused multiply-add on some architectures.
// Every product here that feeds an addition is either wrapped in float64(),
// which forbids the fusion, or written with math.FMA where the C build fuses.

// StderrMethod is how lm-eval fills a metric's "<metric>_stderr,<filter>"
// entry.
type StderrMethod uint8

const (
	// StderrNone means no standard error: lm-eval writes "N/A" (0.4.0 to
	// 0.4.2 write no entry at all when bootstrap_iters is 0 or less).
	StderrNone StderrMethod = iota
	// StderrMean is the closed-form mean_stderr, see MeanStderr.
	StderrMean
	// StderrAccAll is acc_all_stderr: mean_stderr over per-question
	// all-correct indicators. It is reached only when a Python task class
	// returns the acc_all function as an aggregation; "acc_all" is not a
	// registered aggregation name.
	StderrAccAll
	// StderrBootstrap is bootstrap_stderr with StderrRule.Iters resamples,
	// see BootstrapStderr.
	StderrBootstrap
)

func (m StderrMethod) String() string {
	switch m {
	case StderrMean:
		return "mean_stderr"
	case StderrAccAll:
		return "acc_all_stderr"
	case StderrBootstrap:
		return "bootstrap"
	}
	return "N/A"
}

// StderrRule is the outcome of StderrFor: the method, and for a bootstrap
// the number of resamples asked for (BootstrapStderr rounds it down to whole
// chunks of 1000).
type StderrRule struct {
	Method StderrMethod
	Iters  int
}

// StderrFor reproduces how lm-eval 0.4.<patch> (patch 9 for 0.4.9.1)
// decides the standard error of one metric: evaluator code that caps bootstrap_iters at 100 for the metrics
// named bleu, chrf and ter (by metric name, not aggregation), then
// stderr_for_metric, which looks the aggregation function up in its
// bootstrappable list and then in {mean: mean_stderr, acc_all:
// acc_all_stderr}, and finally the rule that a metric with fewer than two
// items gets "N/A".
//
// aggregation is the registered aggregation name ("mean", "median",
// "perplexity", "f1", "matthews_corrcoef", "bleu", "chrf", "ter", "nanmean",
// ...); a custom aggregation function, or any other name, has no standard
// error. bootstrapIters is the run's --bootstrap_iters (lm-eval's default is
// 100000); 0 or less turns every standard error off. nItems is the number of
// items the metric aggregates.
//
// Version differences: nanmean is bootstrapped from 0.4.9 on (before, it is
// not in the list and gets "N/A"); 0.4.0 has no two-item minimum (a
// one-item mean_stderr raised ZeroDivisionError there; this returns
// StderrMean and MeanStderr gives NaN). Negative bootstrapIters are treated
// as 0.
func StderrFor(metric, aggregation string, bootstrapIters, nItems, patch int) StderrRule {
	if bootstrapIters <= 0 {
		return StderrRule{Method: StderrNone}
	}
	if nItems < 2 && patch >= 1 {
		return StderrRule{Method: StderrNone}
	}
	switch aggregation {
	case "median", "matthews_corrcoef", "f1", "perplexity", "bleu", "chrf", "ter":
	case "nanmean":
		if patch < 9 {
			return StderrRule{Method: StderrNone}
		}
	case "mean":
		return StderrRule{Method: StderrMean}
	case "acc_all":
		return StderrRule{Method: StderrAccAll}
	default:
		return StderrRule{Method: StderrNone}
	}
	iters := bootstrapIters
	switch metric {
	case "bleu", "chrf", "ter":
		iters = min(iters, 100)
	}
	return StderrRule{Method: StderrBootstrap, Iters: iters}
}

// bootstrapChunk is lm-eval's chunk size: each chunk of resamples has its own
// random.Random seeded with the chunk's number.
const bootstrapChunk = 1000

// BootstrapStderr reproduces lm-eval's bootstrap_stderr(f, xs, iters) for a
// population of n items:
//
//	chunk_size = min(1000, iters)
//	for i in range(iters // chunk_size):
//	    rnd = random.Random(i)
//	    for _ in range(chunk_size):
//	        res.append(f(rnd.choices(xs, k=len(xs))))
//	return sample_stddev(res)
//
// (lm-eval's multiprocessing worker writes rnd = random.Random();
// rnd.seed(i), which leaves the same state.) stat plays f: it receives the indices into the
// population that one resample drew, in draw order, never a nil slice, so a
// caller can resample anything indexed by item (values, or gold/prediction
// pairs for f1 and matthews_corrcoef). The helpers Median, MedianOf,
// Perplexity, NanMean, F1Binary, F1BinaryLegacy and MatthewsCorrcoef compute
// lm-eval's aggregations from such indices.
//
// replicate is the Python type of the values f returns, and rule the
// summation of the CPython that ran lm-eval (SummationFor); together they
// decide how sample_stddev's two sum() calls add up. median returns an
// element of xs (its kind), perplexity a Python float, nanmean and f1 a
// numpy.float64. matthews_corrcoef returns a numpy.float64 from scikit-learn
// releases that return cov_ytyp / np.sqrt(...) as is, and a Python float from
// those that wrap it in float(). Its 0.0 for a degenerate resample is a
// Python float in every release; mixed into numpy scalars it sums exactly as
// one would (sum() leaves its float path at the first numpy scalar, and the
// zeros before it add exactly), so NumpyFloat covers that case.
//
// The chunks are computed in parallel on up to GOMAXPROCS goroutines, each
// with its own generator, and stored in chunk order, so the result does not
// depend on scheduling; this is what lm-eval's multiprocessing pool.imap does
// too. stat must therefore be safe for concurrent use, and must not keep idx
// after it returns. A panic in stat is re-raised in the caller's goroutine.
//
// The result is NaN where Python raises: iters below 2 (no chunk, or a
// single replicate, which divides by zero in sample_stddev).
func BootstrapStderr(n int, stat func(idx []int) float64, iters int, replicate PyKind, rule Summation) float64 {
	se, _ := BootstrapStderrContext(context.Background(), n, stat, iters, replicate, rule)
	return se
}

// BootstrapStderrContext is BootstrapStderr, stopped when ctx is done: the
// error is then ctx's, and the value NaN. It looks at ctx before each
// replicate.
func BootstrapStderrContext(ctx context.Context, n int, stat func(idx []int) float64, iters int, replicate PyKind, rule Summation) (float64, error) {
	res, err := bootstrapReplicatesContext(ctx, n, stat, iters)
	if err != nil {
		return math.NaN(), fmt.Errorf("analysis: BootstrapStderr: %w", err)
	}
	return pynum.SampleStddev(res, replicate, rule), nil
}

// bootstrapReplicates returns the replicates bootstrap_stderr collects in
// res, in the same order.
func bootstrapReplicates(n int, stat func(idx []int) float64, iters int) []float64 {
	res, _ := bootstrapReplicatesContext(context.Background(), n, stat, iters)
	return res
}

// bootstrapReplicatesContext is bootstrapReplicates, or ctx's error when it
// is done first.
func bootstrapReplicatesContext(ctx context.Context, n int, stat func(idx []int) float64, iters int) ([]float64, error) {
	if iters <= 0 {
		return nil, nil
	}
	done := ctx.Done()
	chunk := min(bootstrapChunk, iters)
	chunks := iters / chunk
	res := make([]float64, chunks*chunk)

	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		failOnce sync.Once
		failure  any
		failed   atomic.Bool
	)
	workers := min(runtime.GOMAXPROCS(0), chunks)
	for range workers {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					failOnce.Do(func() { failure = p })
					failed.Store(true)
				}
			}()
			var rng pyrand.Random
			idx := make([]int, 0, n)
			for !failed.Load() {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				rng.Seed(int64(c))
				out := res[c*chunk : (c+1)*chunk]
				for j := range out {
					select {
					case <-done:
						return
					default:
					}
					idx = rng.Choices(n, n, idx)
					out[j] = stat(idx)
				}
			}
		})
	}
	wg.Wait()
	if failure != nil {
		panic(failure)
	}
	return res, ctx.Err()
}

// floatPool holds scratch slices for the statistics, which run once per
// resample on several goroutines at once: reusing buffers keeps a 100000
// resample bootstrap from allocating 100000 copies of the data.
var floatPool = sync.Pool{New: func() any { return new([]float64) }}

// scratch returns a pooled slice of length n; give it back with
// floatPool.Put.
func scratch(n int) *[]float64 {
	p := floatPool.Get().(*[]float64)
	if cap(*p) < n {
		*p = make([]float64, n)
	}
	*p = (*p)[:n]
	return p
}

// orAll returns idx, or for a nil idx the indices 0..n-1: the statistics
// below take nil to mean every item once, in order, which is how the
// aggregate itself (not a resample) is computed with the same code. An empty
// but non-nil idx is an empty resample.
func orAll(idx []int, n int) []int {
	if idx != nil {
		return idx
	}
	idx = make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// Median is lm-eval's median aggregation, sorted(arr)[len(arr) // 2], of the
// resample xs[idx[0]], xs[idx[1]], ... (all of xs for a nil idx, see orAll):
// the upper median for an even count, always one of the values. It selects
// in linear time rather than sorting, and still returns the element Python's
// stable sort puts in the middle, down to the sign of a zero. The replicate
// kind is the kind of xs. For a bootstrap, MedianOf is faster.
//
// It returns NaN for an empty resample (Python raises IndexError) and for a
// resample holding a NaN, where the outcome of Python's sort depends on where
// the NaN sits and is not reproduced.
func Median(xs []float64, idx []int) float64 {
	idx = orAll(idx, len(xs))
	n := len(idx)
	if n == 0 {
		return math.NaN()
	}
	p := scratch(n)
	defer floatPool.Put(p)
	v := *p
	for i, j := range idx {
		x := xs[j]
		if x != x {
			return math.NaN()
		}
		v[i] = x
	}
	m := selectKth(v, n/2)
	if m == 0 {
		return drawnZero(xs, idx)
	}
	return m
}

// drawnZero returns the zero that sorted() puts in the middle of a resample
// whose median is zero. 0.0 and -0.0 compare equal, so Python's stable sort
// keeps them in draw order: the answer is the (k - #negatives)-th zero drawn.
func drawnZero(xs []float64, idx []int) float64 {
	k := len(idx) / 2
	below := 0
	for _, j := range idx {
		if xs[j] < 0 {
			below++
		}
	}
	seen := 0
	for _, j := range idx {
		if xs[j] == 0 {
			if seen == k-below {
				return xs[j]
			}
			seen++
		}
	}
	return 0 // not reached: the median is one of the zeros
}

// MedianOf returns a statistic equal to Median(xs, idx) for every idx, made
// for the 100000 resamples of a bootstrap: it sorts xs once, and each call
// then counts how often each value was drawn and walks the counts to the
// middle, which is several times faster than selecting from a copy. The
// returned function is safe for concurrent use; xs must not change while it
// is in use.
func MedianOf(xs []float64) func(idx []int) float64 {
	n := len(xs)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	hasNaN := false
	for _, x := range xs {
		if x != x {
			hasNaN = true
		}
	}
	if hasNaN {
		return func(idx []int) float64 { return Median(xs, idx) }
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	// Equal values share a slot, so a slot's count is how often its value
	// was drawn, whichever copy was drawn.
	slot := make([]int32, n)
	values := make([]float64, 0, n)
	for i, j := range order {
		if i == 0 || xs[j] != xs[order[i-1]] {
			values = append(values, xs[j])
		}
		slot[j] = int32(len(values) - 1)
	}
	pool := sync.Pool{New: func() any { return new([]int32) }}
	return func(idx []int) float64 {
		idx = orAll(idx, n)
		if len(idx) == 0 {
			return math.NaN()
		}
		p := pool.Get().(*[]int32)
		defer pool.Put(p)
		if cap(*p) < len(values) {
			*p = make([]int32, len(values))
		}
		counts := (*p)[:len(values)]
		clear(counts)
		for _, j := range idx {
			counts[slot[j]]++
		}
		k, seen := int32(len(idx)/2), int32(0)
		for s, c := range counts {
			if seen += c; seen > k {
				if values[s] == 0 {
					return drawnZero(xs, idx)
				}
				return values[s]
			}
		}
		return math.NaN() // not reached
	}
}

// selectKth returns the k-th smallest value of v (0-based), reordering v. It
// is quickselect with a three-way partition, which stays linear on the many
// repeated values of a resample drawn with replacement (0/1 scores above
// all).
func selectKth(v []float64, k int) float64 {
	lo, hi := 0, len(v)
	for hi-lo > 12 {
		a, b, c := v[lo], v[lo+(hi-lo)/2], v[hi-1]
		if a > b {
			a, b = b, a
		}
		if b > c {
			b = c
			if a > b {
				b = a
			}
		}
		pivot := b
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch x := v[i]; {
			case x < pivot:
				v[lt], v[i] = x, v[lt]
				lt++
				i++
			case x > pivot:
				gt--
				v[i], v[gt] = v[gt], x
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return pivot
		}
	}
	for i := lo + 1; i < hi; i++ {
		for j := i; j > lo && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	return v[k]
}

// Perplexity is lm-eval's perplexity aggregation, math.exp(-mean(items)),
// of the resample xs[idx[0]], xs[idx[1]], ... (all of xs for a nil idx).
// kind and rule are those of the items (Python floats: the per-document
// loglikelihoods) for mean's sum(). The replicate is a Python float.
// math.exp is glibc's exp, see pynum.Exp. It returns NaN for an empty resample
// (Python raises ZeroDivisionError) and +Inf where math.exp raises
// OverflowError (a mean loglikelihood below about -709.78).
func Perplexity(xs []float64, idx []int, kind PyKind, rule Summation) float64 {
	idx = orAll(idx, len(xs))
	n := len(idx)
	if n == 0 {
		return math.NaN()
	}
	p := scratch(n)
	defer floatPool.Put(p)
	v := *p
	for i, j := range idx {
		v[i] = xs[j]
	}
	return pynum.Exp(-(pynum.Sum(v, kind, rule) / float64(n)))
}

// NumpyReduce is how numpy's add.reduce walks a contiguous float64 array,
// which changed in numpy 2.3 and moves the last bits of sums over more than
// 8192 values.
type NumpyReduce uint8

const (
	// NumpyBuffered is numpy before 2.3: the reduction iterator hands the
	// inner loop blocks of at most 8192 values (its buffer size) even when
	// nothing needs buffering; each block is pairwise-summed and added in
	// turn to the running total. Checked against numpy 1.24.
	NumpyBuffered NumpyReduce = iota
	// NumpyWhole is numpy 2.3 and later, whose iterator honours "growinner"
	// for buffered reductions that need no buffering (numpy 2.3.0 release
	// notes, gh-27883), so the whole array is pairwise-summed in one call.
	// Taken from the release notes and source; not checked against a numpy
	// 2.3 build.
	NumpyWhole
)

func (r NumpyReduce) String() string {
	if r == NumpyWhole {
		return "whole"
	}
	return "buffered"
}

// NumpyReduceFor returns the reduction of numpy major.minor.
func NumpyReduceFor(major, minor int) NumpyReduce {
	if major > 2 || (major == 2 && minor >= 3) {
		return NumpyWhole
	}
	return NumpyBuffered
}

// numpyBufferSize is numpy's default ufunc buffer size (np.getbufsize()).
const numpyBufferSize = 8192

// NumpySum is np.sum of a contiguous float64 array: the add.reduce identity
// 0.0 plus the pairwise sums of the blocks r gives, in order. Only the sign
// of an all-zero total can differ from a given numpy version (numpy 2 starts
// its short sums at -0.0).
func NumpySum(xs []float64, r NumpyReduce) float64 {
	block := len(xs)
	if r == NumpyBuffered {
		block = numpyBufferSize
	}
	var total float64
	for start := 0; start < len(xs); start += block {
		total += pairwiseSum(xs[start:min(start+block, len(xs))])
	}
	return total
}

// pairwiseSum is numpy's DOUBLE_pairwise_sum for unit stride
// (numpy/_core/src/umath/loops_utils.h.src): a plain loop below 8 values;
// up to 128 values, eight interleaved accumulators combined as
// ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) with the leftover values added one by
// one; above that, a split at half the length rounded down to a multiple of 8.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		res := math.Copysign(0, -1)
		for _, x := range a {
			res += x
		}
		return res
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			r[0] += a[i]
			r[1] += a[i+1]
			r[2] += a[i+2]
			r[3] += a[i+3]
			r[4] += a[i+4]
			r[5] += a[i+5]
			r[6] += a[i+6]
			r[7] += a[i+7]
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
}

// NanMean is lm-eval's nanmean aggregation of the resample xs[idx[0]],
// xs[idx[1]], ... (all of xs for a nil idx): NaN when the resample is empty or all NaN, else
// np.nanmean, which replaces each NaN by 0, sums the whole array with
// NumpySum and divides by the number of values that were not NaN. The
// replicate is a numpy.float64 (the all-NaN NaN is a Python float, and makes
// the standard error NaN anyway). r is the reduction of the numpy that ran
// lm-eval (NumpyReduceFor); it matters only for more than 8192 items.
func NanMean(xs []float64, idx []int, r NumpyReduce) float64 {
	idx = orAll(idx, len(xs))
	n := len(idx)
	p := scratch(n)
	defer floatPool.Put(p)
	v := *p
	count := 0
	for i, j := range idx {
		x := xs[j]
		if x != x {
			x = 0
		} else {
			count++
		}
		v[i] = x
	}
	if count == 0 {
		return math.NaN()
	}
	return NumpySum(v, r) / float64(count)
}

// binaryCounts returns the confusion counts of sklearn's f1_score(golds,
// preds) with its defaults (average="binary", pos_label=1) over the resampled
// pairs, and false where sklearn raises ValueError: more than two distinct
// labels among golds and preds together ("Target is multiclass but
// average='binary'"), or two labels of which neither is 1 ("pos_label=1 is
// not a valid label").
func binaryCounts(golds, preds []int, idx []int) (tp, fp, fn int, ok bool) {
	idx = orAll(idx, len(golds))
	var labels [2]int
	distinct := 0
	note := func(l int) bool {
		for _, s := range labels[:distinct] {
			if s == l {
				return true
			}
		}
		if distinct == 2 {
			return false
		}
		labels[distinct] = l
		distinct++
		return true
	}
	for _, j := range idx {
		g, p := golds[j], preds[j]
		if !note(g) || !note(p) {
			return 0, 0, 0, false
		}
		switch {
		case g == 1 && p == 1:
			tp++
		case p == 1:
			fp++
		case g == 1:
			fn++
		}
	}
	if distinct == 2 && labels[0] != 1 && labels[1] != 1 {
		return 0, 0, 0, false
	}
	return tp, fp, fn, true
}

// F1Binary is lm-eval's f1 aggregation, np.max(sklearn.metrics.f1_score(
// golds, preds)), of the gold/prediction pairs idx selects (all of them for
// a nil idx), as scikit-learn 1.4 and later compute it: 2*tp / ((tp+fn) +
// (tp+fp)), with 0.0 where that denominator is 0 (no positive gold and no positive prediction: sklearn's
// zero_division="warn" acts as 0 and warns). Earlier releases go through
// precision and recall, see F1BinaryLegacy; the two differ in the last bit
// for many counts.
//
// It returns NaN where sklearn raises ValueError: more than two distinct
// labels among golds and preds, or two labels neither of which is 1. The
// replicate is a numpy.float64 (np.max makes one of any float).
func F1Binary(golds, preds []int, idx []int) float64 {
	tp, fp, fn, ok := binaryCounts(golds, preds, idx)
	if !ok {
		return math.NaN()
	}
	denom := float64(tp+fn) + float64(tp+fp)
	if denom == 0 {
		return 0
	}
	return float64(2*tp) / denom
}

// F1BinaryLegacy is F1Binary as scikit-learn before 1.4 computes it (the
// formula changed in scikit-learn PR #27577): precision = tp/(tp+fp) and
// recall = tp/(tp+fn), 0 where their denominators are 0, then
// 2*precision*recall / (precision+recall), evaluated left to right, with 0.0
// where precision+recall is 0 (that is, where tp is 0). Errors and replicate
// kind are as for F1Binary.
func F1BinaryLegacy(golds, preds []int, idx []int) float64 {
	tp, fp, fn, ok := binaryCounts(golds, preds, idx)
	if !ok {
		return math.NaN()
	}
	if tp == 0 {
		return 0
	}
	precision := float64(tp) / float64(tp+fp)
	recall := float64(tp) / float64(tp+fn)
	return float64(float64(2*precision)*recall) / (precision + recall)
}

// smallLabels bounds the labels MatthewsCorrcoef counts in fixed arrays;
// other labels go through a map.
const smallLabels = 64

// MatthewsCorrcoef is lm-eval's matthews_corrcoef aggregation,
// sklearn.metrics.matthews_corrcoef(golds, preds), of the gold/prediction
// pairs idx selects (all of them for a nil idx), for binary and multiclass
// labels alike:
//
//	cov_ytyp = n_correct * n - t·p
//	cov_ypyp = n**2 - p·p
//	cov_ytyt = n**2 - t·t
//	0.0 if cov_ypyp * cov_ytyt == 0 else cov_ytyp / sqrt(cov_ypyp * cov_ytyt)
//
// where t and p count each label among golds and preds. Every count, dot
// product and difference is an integer held exactly in a float64 for fewer
// than 9.4e7 items, so numpy's summation order does not matter; n**2 is
// glibc's pow like any numpy scalar power. A resample whose golds or preds
// are all one label gives 0.0, as sklearn does. It returns NaN for an empty
// resample, where sklearn raises.
func MatthewsCorrcoef(golds, preds []int, idx []int) float64 {
	idx = orAll(idx, len(golds))
	if len(idx) == 0 {
		return math.NaN()
	}
	var tSmall, pSmall [smallLabels]int
	var tBig, pBig map[int]int
	correct := 0
	for _, j := range idx {
		g, p := golds[j], preds[j]
		if g == p {
			correct++
		}
		if uint(g) < smallLabels {
			tSmall[g]++
		} else {
			if tBig == nil {
				tBig = make(map[int]int)
			}
			tBig[g]++
		}
		if uint(p) < smallLabels {
			pSmall[p]++
		} else {
			if pBig == nil {
				pBig = make(map[int]int)
			}
			pBig[p]++
		}
	}
	var tp, pp, tt int
	for l := range smallLabels {
		tp += tSmall[l] * pSmall[l]
		pp += pSmall[l] * pSmall[l]
		tt += tSmall[l] * tSmall[l]
	}
	for l, c := range tBig {
		tt += c * c
		tp += c * pBig[l]
	}
	for _, c := range pBig {
		pp += c * c
	}
	n := float64(len(idx))
	n2 := pynum.Square(n)
	covYtYp := float64(float64(correct)*n) - float64(tp)
	covYpYp := n2 - float64(pp)
	covYtYt := n2 - float64(tt)
	prod := float64(covYpYp * covYtYt)
	if prod == 0 {
		return 0
	}
	return covYtYp / math.Sqrt(prod)
}
