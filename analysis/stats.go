package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// This file holds the statistics put on every score and every comparison,
// following Evan Miller, "Adding Error Bars to Evals" (arXiv 2411.00640):
// questions are a sample from a super-population, so a score has a standard
// error, two runs on the same questions are compared through their paired
// per-question differences, and a "no difference" comes with the minimum
// effect the data could have detected.
//
// Unlike the rest of the package, nothing here reproduces lm-eval bit for
// bit; the formulas are checked against scipy and numpy instead
// (stats_test.go). Every random draw comes from a seed the caller passes (or
// a *rand.Rand the caller owns), never from a global source, so a notebook
// re-run prints the same intervals.

// DefaultResamples is the number of bootstrap resamples ScoreIntervals uses.
// At 10,000 the Monte Carlo error of a 95 % percentile bound is about 3 % of
// the standard error, well below what any reported digit shows.
const DefaultResamples = 10000

// NormalQuantile is the inverse of the standard normal CDF: the z with
// P(Z ≤ z) = p. It returns -Inf at 0, +Inf at 1 and NaN outside [0, 1].
//
// It is Wichura's algorithm AS 241 (PPND16, Applied Statistics 37, 1988),
// which works from min(p, 1−p) and so keeps the far tails that
// math.Erfinv(2p−1) would round away; below 1e-294, where AS 241 was not
// fitted, Newton steps on the asymptotic tail series finish the job. Checked
// against scipy.stats.norm.ppf from 5e-324 to 1−2⁻⁵³: within 1e-15
// relative.
func NormalQuantile(p float64) float64 {
	switch {
	case math.IsNaN(p) || p < 0 || p > 1:
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	}
	q := p - 0.5
	if math.Abs(q) <= 0.425 {
		r := 0.180625 - q*q
		return q * (((((((2.5090809287301226727e+3*r+3.3430575583588128105e+4)*r+
			6.7265770927008700853e+4)*r+4.5921953931549871457e+4)*r+
			1.3731693765509461125e+4)*r+1.9715909503065514427e+3)*r+
			1.3314166789178437745e+2)*r + 3.3871328727963666080e+0) /
			(((((((5.2264952788528545610e+3*r+2.8729085735721942674e+4)*r+
				3.9307895800092710610e+4)*r+2.1213794301586595867e+4)*r+
				5.3941960214247511077e+3)*r+6.8718700749205790830e+2)*r+
				4.2313330701600911252e+1)*r + 1)
	}
	r := p
	if q > 0 {
		r = 1 - p // exact: p ≥ 0.5
	}
	logr := logAccurate(r)
	r = math.Sqrt(-logr)
	var x float64
	tail := r > 26
	if r <= 5 {
		r -= 1.6
		x = (((((((7.74545014278341407640e-4*r+2.27238449892691845833e-2)*r+
			2.41780725177450611770e-1)*r+1.27045825245236838258e+0)*r+
			3.64784832476320460504e+0)*r+5.76949722146069140550e+0)*r+
			4.63033784615654529590e+0)*r + 1.42343711074968357734e+0) /
			(((((((1.05075007164441684324e-9*r+5.47593808499534494600e-4)*r+
				1.51986665636164571966e-2)*r+1.48103976427480074590e-1)*r+
				6.89767334985100004550e-1)*r+1.67638483018380384940e+0)*r+
				2.05319162663775882187e+0)*r + 1)
	} else {
		r -= 5
		x = (((((((2.01033439929228813265e-7*r+2.71155556874348757815e-5)*r+
			1.24266094738807843860e-3)*r+2.65321895265761230930e-2)*r+
			2.96560571828504891230e-1)*r+1.78482653991729133580e+0)*r+
			5.46378491116411436990e+0)*r + 6.65790464350110377720e+0) /
			(((((((2.04426310338993978564e-15*r+1.42151175831644588870e-7)*r+
				1.84631831751005468180e-5)*r+7.86869131145613259100e-4)*r+
				1.48753612908506148525e-2)*r+1.36929880922735805310e-1)*r+
				5.99832206555887937690e-1)*r + 1)
	}
	if tail {
		// p < 1e-294: past the range AS 241 was fitted on (it is off by
		// 2.5 % at the smallest subnormal); polish with Newton steps on
		// log Φ(−x) from its asymptotic series.
		x = normalTailQuantile(logr, x)
	}
	if q < 0 {
		x = -x
	}
	return x
}

// logAccurate is math.Log made exact for subnormal x as well: Go's amd64
// assembly Log returns log(2^-1074) as -709.09 instead of -744.44.
func logAccurate(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

// normalTailQuantile solves log Φ(−t) = logp for t ≥ 26 by Newton's method
// from the estimate t, with log Φ(−t) = −t²/2 − log t − log √(2π) + log S(t)
// and Mills' asymptotic series S(t) = Σ_k (−1)^k (2k−1)!!/t^{2k}, whose terms
// fall below 1e-17 within ten at t ≥ 26. Each step gains about twice the
// digits; the loop stops when the step is below rounding.
func normalTailQuantile(logp, t float64) float64 {
	for range 8 {
		u := 1 / (t * t)
		s, term := 1.0, 1.0
		for k := 1; k < 20; k++ {
			term *= -float64(2*k-1) * u
			s += term
			if math.Abs(term) < 1e-18 {
				break
			}
		}
		logPhi := -t*t/2 - math.Log(t) - 0.5*math.Log(2*math.Pi) + math.Log(s)
		step := (logPhi - logp) * s / t
		t += step
		if math.Abs(step) <= 1e-16*t {
			break
		}
	}
	return t
}

// twoSidedZ is the z of a two-sided interval at level: Φ⁻¹(1 − (1−level)/2),
// 1.959964 at 0.95. NaN unless 0 < level < 1.
func twoSidedZ(level float64) float64 {
	if !(level > 0 && level < 1) {
		return math.NaN()
	}
	return NormalQuantile(1 - (1-level)/2)
}

// CLTInterval is the normal-approximation interval mean ± z·stderr at the
// given two-sided level (0.95 for a 95 % interval): Miller's recommended
// default once n is in the hundreds. Both bounds are NaN unless
// 0 < level < 1.
func CLTInterval(mean, stderr, level float64) (lo, hi float64) {
	z := twoSidedZ(level)
	return mean - z*stderr, mean + z*stderr
}

// Wilson is the Wilson score interval for a proportion (no continuity
// correction), the interval the small-n companion paper (arXiv 2503.01747)
// recommends over the CLT: it stays inside [0, 1] and does not collapse to a
// point at 0 or n successes, where the CLT and the bootstrap both do.
//
//	center = (p̂ + z²/2n) / (1 + z²/n)
//	half   = z / (1 + z²/n) · sqrt(p̂(1−p̂)/n + z²/4n²)
//
// Both bounds are NaN when n ≤ 0, successes is outside [0, n], or level is
// outside (0, 1).
func Wilson(successes, n int, level float64) (lo, hi float64) {
	z := twoSidedZ(level)
	if n <= 0 || successes < 0 || successes > n || math.IsNaN(z) {
		return math.NaN(), math.NaN()
	}
	nf := float64(n)
	p := float64(successes) / nf
	z2 := z * z
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z / denom * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	// At p̂ = 0 or 1 one bound is 0 or 1 exactly; keep rounding from
	// pushing it a hair outside.
	return max(0, center-half), min(1, center+half)
}

// percentileQ returns the quantiles (as fractions) of the lower and upper
// bound of a two-sided percentile interval at level, computed the way
// scipy.stats.bootstrap hands them to np.percentile: alpha·100 and
// (1−alpha)·100, divided by 100 again inside numpy.
func percentileQ(level float64) (qlo, qhi float64) {
	alpha := (1 - level) / 2
	return alpha * 100 / 100, (1 - alpha) * 100 / 100
}

// quantileSorted is numpy.percentile(x, 100·q) with numpy's default
// "linear" method (Hyndman & Fan type 7, also R's default) on an ascending
// x: the virtual index (len−1)·q, interpolated between its neighbours with
// numpy's _lerp, which computes from the nearer end for accuracy. This is
// the percentile scipy.stats.bootstrap's method='percentile' uses.
func quantileSorted(x []float64, q float64) float64 {
	n := len(x)
	h := float64(n-1) * q
	if h >= float64(n-1) {
		return x[n-1]
	}
	if h < 0 {
		return x[0]
	}
	lo := math.Floor(h)
	i := int(lo)
	t := h - lo
	a, b := x[i], x[i+1]
	d := b - a
	if t >= 0.5 {
		return b - float64(d*(1-t))
	}
	return a + float64(d*t)
}

// percentileInterval reorders the replicates in place and returns the
// percentile interval at level; NaN when there are none. It is
// quantileSorted of the sorted replicates, found by selecting the (at most
// four) order statistics it interpolates between instead of sorting all.
func percentileInterval(reps []float64, level float64) (lo, hi float64) {
	if len(reps) == 0 || !(level > 0 && level < 1) {
		return math.NaN(), math.NaN()
	}
	qlo, qhi := percentileQ(level)
	return quantileSelect(reps, qlo), quantileSelect(reps, qhi)
}

// quantileSelect is quantileSorted(sorted x, q), with x reordered in place
// (x must hold no NaN): the order statistics at floor(h) and floor(h)+1 by
// selection (selectKth).
func quantileSelect(x []float64, q float64) float64 {
	n := len(x)
	h := float64(n-1) * q
	switch {
	case h >= float64(n-1):
		return slices.Max(x)
	case h < 0:
		return slices.Min(x)
	}
	i := int(math.Floor(h))
	// selectKth leaves everything after index i ≥ x[i]: the next order
	// statistic is the least of them.
	pair := [2]float64{selectKth(x, i), 0}
	pair[1] = slices.Min(x[i+1:])
	return quantileSorted(pair[:], h-float64(i))
}

// BinomialSample draws one value from Binomial(n, p) with r, exactly (no
// normal approximation): by inversion (summing geometric waiting times)
// when min(p, 1−p)·n < 10, otherwise by Hörmann's transformed rejection
// with squeeze, BTRS ("The generation of binomial random variates", J.
// Statist. Comput. Simul. 46, 1993), whose cost does not grow with n. It
// panics when n < 0 or p is outside [0, 1].
//
// It is what lets the 0/1 bootstraps resample a count instead of n items.
func BinomialSample(r *rand.Rand, n int, p float64) int {
	s := newBinomial(n, p)
	return s.draw(&uniforms{rand: r})
}

// uniforms is where a binomial draw takes its uniforms from: r when set
// (BinomialSample's caller's), else the inlined PCG, which gives the
// numbers rand.New(rand.NewPCG(hi, lo)).Float64() gives without an
// interface call per draw.
type uniforms struct {
	pcg  pcg
	rand *rand.Rand
}

func newUniforms(seed, stream uint64) *uniforms {
	return &uniforms{pcg: pcg{hi: seed, lo: stream}}
}

// Float64 is Rand.Float64: 53 random bits over 2⁵³.
func (u *uniforms) Float64() float64 {
	if u.rand != nil {
		return u.rand.Float64()
	}
	return float64(u.pcg.uint64()<<11>>11) / (1 << 53)
}

// binomial is a Binomial(n, p) sampler with its setup done once.
type binomial struct {
	n    int
	p    float64 // min(p, 1−p)
	flip bool    // return n − draw: the caller's p was > 1/2
	btrs bool
	logq float64 // inversion: log(1−p)
	// BTRS constants, named as in Hörmann's paper.
	a, b, c, vr, alpha, lpq, m, h float64
	// logFact[j] is math.Lgamma(j + 1) for j ≤ n (nil for a large n):
	// the exact acceptance test looks it up instead of computing it.
	logFact []float64
}

// maxLogFactorials bounds the shared table of log-factorials (8 MiB).
const maxLogFactorials = 1 << 20

var logFactorials struct {
	mu    sync.Mutex
	table atomic.Pointer[[]float64]
}

// logFactorialsTo is a table of math.Lgamma(j + 1) for j ≤ n at least,
// nil when n is too large for one: computed once, grown on demand.
func logFactorialsTo(n int) []float64 {
	if n >= maxLogFactorials {
		return nil
	}
	if t := logFactorials.table.Load(); t != nil && len(*t) > n {
		return *t
	}
	logFactorials.mu.Lock()
	defer logFactorials.mu.Unlock()
	var old []float64
	if t := logFactorials.table.Load(); t != nil {
		if len(*t) > n {
			return *t
		}
		old = *t
	}
	size := min(max(n+1, 2*len(old), 1024), maxLogFactorials)
	t := make([]float64, size)
	copy(t, old)
	for j := len(old); j < size; j++ {
		t[j], _ = math.Lgamma(float64(j) + 1)
	}
	logFactorials.table.Store(&t)
	return t
}

func newBinomial(n int, p float64) binomial {
	if n < 0 || !(p >= 0 && p <= 1) {
		panic(fmt.Sprintf("analysis: Binomial(%d, %v) is not a distribution", n, p))
	}
	s := binomial{n: n, p: p}
	if p > 0.5 {
		s.p, s.flip = 1-p, true
	}
	nf := float64(n)
	if nf*s.p < 10 {
		s.logq = math.Log1p(-s.p)
		return s
	}
	q := 1 - s.p
	spq := math.Sqrt(nf * s.p * q)
	s.btrs = true
	s.b = 1.15 + 2.53*spq
	s.a = -0.0873 + 0.0248*s.b + 0.01*s.p
	s.c = nf*s.p + 0.5
	s.vr = 0.92 - 4.2/s.b
	s.alpha = (2.83 + 5.1/s.b) * spq
	s.lpq = math.Log(s.p / q)
	s.m = math.Floor((nf + 1) * s.p)
	s.logFact = logFactorialsTo(n)
	lm, _ := math.Lgamma(s.m + 1)
	lnm, _ := math.Lgamma(nf - s.m + 1)
	s.h = lm + lnm
	return s
}

func (s *binomial) draw(r *uniforms) int {
	var k int
	switch {
	case s.n == 0 || s.p == 0:
		k = 0
	case s.btrs:
		k = s.drawBTRS(r)
	default:
		k = s.drawInversion(r)
	}
	if s.flip {
		return s.n - k
	}
	return k
}

// drawInversion counts successes as the number of geometric waiting times
// (trials up to and including the next success) that fit in n trials;
// about n·p + 1 uniforms per draw.
func (s *binomial) drawInversion(r *uniforms) int {
	k, trials := 0, 0.0
	for {
		u := r.Float64()
		if u == 0 {
			continue // log(0); the geometric variate needs u in (0, 1)
		}
		trials += math.Ceil(math.Log(u) / s.logq)
		if trials > float64(s.n) {
			return k
		}
		k++
	}
}

// drawBTRS is Hörmann's algorithm BTRS, steps 2 to 6, with the exact
// acceptance test through log-gamma (about 1.15 uniform pairs per draw at
// large n·p).
func (s *binomial) drawBTRS(r *uniforms) int {
	nf := float64(s.n)
	for {
		u := r.Float64() - 0.5
		v := r.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*s.a/us+s.b)*u + s.c)
		if us >= 0.07 && v <= s.vr {
			return int(k)
		}
		if k < 0 || k > nf {
			continue
		}
		v = math.Log(v * s.alpha / (s.a/(us*us) + s.b))
		var lk, lnk float64
		if s.logFact != nil {
			lk, lnk = s.logFact[int(k)], s.logFact[s.n-int(k)]
		} else {
			lk, _ = math.Lgamma(k + 1)
			lnk, _ = math.Lgamma(nf - k + 1)
		}
		if v <= s.h-lk-lnk+(k-s.m)*s.lpq {
			return int(k)
		}
	}
}

// newRand is the generator behind every seed argument of this file: PCG
// from math/rand/v2, whose output for a given seed is fixed by the Go 1
// compatibility promise, so intervals are reproducible across Go releases.
// stream separates independent streams of one seed. The bootstraps' hot
// loops draw from pcg and uniforms, inlined copies giving the same numbers.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// pcg is math/rand/v2's PCG (128-bit LCG, DXSM output) with Rand.IntN's
// reduction, inlined for the item-resampling loop: the very numbers
// rand.New(rand.NewPCG(hi, lo)).IntN(n) gives (TestPCGMatchesRand), without
// an interface call per draw.
type pcg struct{ hi, lo uint64 }

func (p *pcg) uint64() uint64 {
	const (
		mulHi    = 2549297995355413924
		mulLo    = 4865540595714422341
		incHi    = 6364136223846793005
		incLo    = 1442695040888963407
		cheapMul = 0xda942042e4dd58b5
	)
	hi, lo := bits.Mul64(p.lo, mulLo)
	hi += p.hi*mulLo + p.lo*mulHi
	lo, c := bits.Add64(lo, incLo, 0)
	hi, _ = bits.Add64(hi, incHi, c)
	p.lo, p.hi = lo, hi
	hi ^= hi >> 32
	hi *= cheapMul
	hi ^= hi >> 48
	hi *= lo | 1
	return hi
}

// intN is Rand.IntN(n) for n > 0 on a 64-bit platform: a mask for a power
// of two, else Lemire's multiply with rejection (the 32-bit platforms'
// code path gives the same numbers by design of math/rand/v2).
func (p *pcg) intN(n uint64) uint64 {
	if n&(n-1) == 0 {
		return p.uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(p.uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(p.uint64(), n)
		}
	}
	return hi
}

// resampleSum is the sum of len(xs) items of xs drawn with replacement,
// in draw order.
func (p *pcg) resampleSum(xs []float64) float64 {
	n := uint64(len(xs))
	sum := 0.0
	for range n {
		sum += xs[p.intN(n)]
	}
	return sum
}

// BootstrapProportion is the percentile bootstrap interval of a proportion
// at the given level (0.95 for 95 %) from resamples resamples: each
// resample draws its count of successes k ~ Binomial(n, successes/n)
// exactly, which has the same distribution as the number of 1s among n
// items drawn with replacement, at a cost independent of n. The bounds are
// numpy.percentile of the k/n with its default "linear" interpolation, the
// percentile scipy.stats.bootstrap(method='percentile') uses.
//
// At 0 or n successes every resample is identical and the interval collapses
// to a point; Wilson does not. Both bounds are NaN when n ≤ 0, successes is
// outside [0, n], resamples < 1 or level is outside (0, 1).
func BootstrapProportion(successes, n, resamples int, level float64, seed uint64) (lo, hi float64) {
	lo, hi, _ = BootstrapProportionContext(context.Background(), successes, n, resamples, level, seed)
	return lo, hi
}

// BootstrapProportionContext is BootstrapProportion, stopped when ctx is
// done: the error is then ctx's, and both bounds NaN.
func BootstrapProportionContext(ctx context.Context, successes, n, resamples int, level float64, seed uint64) (lo, hi float64, err error) {
	if n <= 0 || successes < 0 || successes > n || resamples < 1 {
		return math.NaN(), math.NaN(), nil
	}
	reps, err := proportionReplicatesContext(ctx, successes, n, resamples, seed)
	if err != nil {
		return math.NaN(), math.NaN(), fmt.Errorf("analysis: BootstrapProportion: %w", err)
	}
	lo, hi = percentileInterval(reps, level)
	return lo, hi, nil
}

// checkEvery is how many cheap replicates (a binomial draw or two each) are
// drawn between two looks at a context.
const checkEvery = 4096

func proportionReplicates(successes, n, resamples int, seed uint64) []float64 {
	reps, _ := proportionReplicatesContext(context.Background(), successes, n, resamples, seed)
	return reps
}

func proportionReplicatesContext(ctx context.Context, successes, n, resamples int, seed uint64) ([]float64, error) {
	r := newUniforms(seed, 0)
	s := newBinomial(n, float64(successes)/float64(n))
	reps := make([]float64, resamples)
	for i := range reps {
		if i%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		reps[i] = float64(s.draw(r)) / float64(n)
	}
	return reps, nil
}

// bootstrapChunkSize is how many item-resampling replicates share one PCG
// stream. Chunks, not goroutines, own the streams, so the result for a seed
// does not depend on GOMAXPROCS.
const bootstrapChunkSize = 256

// BootstrapMean is the percentile bootstrap interval of the mean of xs at
// the given level, from resamples resamples of the items with replacement,
// for scores that are not 0/1 (for 0/1 scores BootstrapProportion gives the
// same distribution far faster). It costs resamples·len(xs) draws, spread
// over the CPUs. The percentile is numpy's default, as in
// BootstrapProportion. Both bounds are NaN when xs is empty, resamples < 1
// or level is outside (0, 1).
func BootstrapMean(xs []float64, resamples int, level float64, seed uint64) (lo, hi float64) {
	lo, hi, _ = BootstrapMeanContext(context.Background(), xs, resamples, level, seed)
	return lo, hi
}

// BootstrapMeanContext is BootstrapMean, stopped when ctx is done: the
// error is then ctx's, and both bounds NaN. It looks at ctx before each
// resample, so that it stops within one resample's draws.
func BootstrapMeanContext(ctx context.Context, xs []float64, resamples int, level float64, seed uint64) (lo, hi float64, err error) {
	if len(xs) == 0 || resamples < 1 {
		return math.NaN(), math.NaN(), nil
	}
	reps, err := meanReplicatesContext(ctx, xs, resamples, seed)
	if err != nil {
		return math.NaN(), math.NaN(), fmt.Errorf("analysis: BootstrapMean: %w", err)
	}
	lo, hi = percentileInterval(reps, level)
	return lo, hi, nil
}

func meanReplicates(xs []float64, resamples int, seed uint64) []float64 {
	reps, _ := meanReplicatesContext(context.Background(), xs, resamples, seed)
	return reps
}

// meanReplicatesContext returns resamples bootstrap means of xs, or ctx's
// error when it is done first. Chunk j of bootstrapChunkSize replicates
// draws from stream j+1 of seed.
func meanReplicatesContext(ctx context.Context, xs []float64, resamples int, seed uint64) ([]float64, error) {
	reps := make([]float64, resamples)
	chunks := (resamples + bootstrapChunkSize - 1) / bootstrapChunkSize
	n := len(xs)
	done := ctx.Done()
	pl := planFor(n, resamples, seed)
	forChunks(chunks, n*resamples, func(j int) {
		end := min((j+1)*bootstrapChunkSize, resamples)
		if pl != nil {
			pl.means(xs, reps, j*bootstrapChunkSize, end, done)
			return
		}
		r := pcg{hi: seed, lo: uint64(j) + 1}
		for i := j * bootstrapChunkSize; i < end; i++ {
			select {
			case <-done:
				return
			default:
			}
			reps[i] = r.resampleSum(xs) / float64(n)
		}
	})
	return reps, ctx.Err()
}

// forChunks runs work(j) for every chunk j, spread over the CPUs when the
// draws, cost, are many.
func forChunks(chunks, cost int, work func(j int)) {
	workers := min(runtime.GOMAXPROCS(0), chunks)
	if workers <= 1 || cost < 1<<16 {
		for j := range chunks {
			work(j)
		}
		return
	}
	next := make(chan int, chunks)
	for j := range chunks {
		next <- j
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range next {
				work(j)
			}
		})
	}
	wg.Wait()
}

// mean and sampleSD are the plain two-pass formulas (numpy's mean and
// std(ddof=1) up to summation order). sampleSD is NaN below two values.
func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func sampleSD(xs []float64) float64 {
	n := len(xs)
	if n < 2 {
		return math.NaN()
	}
	m := mean(xs)
	ss := 0.0
	for _, x := range xs {
		d := x - m
		ss += d * d
	}
	return math.Sqrt(ss / float64(n-1))
}

// cltStderr is Miller's (and Inspect's, and lm-eval's) standard error of a
// mean: the sample standard deviation (n−1) over √n.
func cltStderr(xs []float64) float64 {
	return sampleSD(xs) / math.Sqrt(float64(len(xs)))
}

// ClusteredStderr is the cluster-robust standard error of the mean of xs
// (Miller 2024, Appendix A), for questions that are not independent: several
// questions on one passage, one template, one subject. clusters[i] names
// the cluster of xs[i].
//
//	SE = sqrt( Σ_c ( Σ_{i∈c} (x_i − x̄) )² ) / n
//
// With finiteCorrection the result is multiplied by sqrt(C/(C−1)) for C
// clusters, as Inspect's clustered_stderr does (the paper does not); it is
// NaN then when C < 2.
//
// With one question per cluster the formula reduces to
// sqrt(Σ(x_i − x̄)²)/n = sqrt(σ̂²/n) with the population variance σ̂² (divisor
// n), the CLT standard error without Bessel's correction; positive
// within-cluster correlation makes it larger, by 3× and more in the paper.
// It is NaN for empty xs and panics when the lengths differ.
func ClusteredStderr(xs []float64, clusters []string, finiteCorrection bool) float64 {
	if len(xs) != len(clusters) {
		panic(fmt.Sprintf("analysis: ClusteredStderr: %d values but %d cluster labels", len(xs), len(clusters)))
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	m := mean(xs)
	// Clusters in order of first appearance, so the sum below, and so the
	// last bits, do not depend on map iteration order.
	index := make(map[string]int)
	var sums []float64
	for i, x := range xs {
		c, ok := index[clusters[i]]
		if !ok {
			c = len(sums)
			index[clusters[i]] = c
			sums = append(sums, 0)
		}
		sums[c] += x - m
	}
	v := 0.0
	for _, s := range sums {
		v += s * s
	}
	se := math.Sqrt(v) / float64(len(xs))
	if finiteCorrection {
		c := float64(len(sums))
		if len(sums) < 2 {
			return math.NaN()
		}
		se *= math.Sqrt(c / (c - 1))
	}
	return se
}

// Averages is what MacroMicro returns: the two ways benchmarks with
// sub-tasks (MMLU's 57 subjects) are averaged, each with its standard error.
type Averages struct {
	K int `json:"k"` // clusters (subjects)
	N int `json:"n"` // items over all clusters
	// Macro is the unweighted mean of the cluster values, what model cards
	// usually report for MMLU; MacroStderr = sqrt(Σ_k SE_k²)/K.
	Macro       float64 `json:"macro"`
	MacroStderr float64 `json:"macro_stderr"` // the standard error of Macro, sqrt(Σ_k SE_k²)/K
	// Micro is the size-weighted mean, equal to the mean over all items;
	// MicroStderr = sqrt(Σ_k n_k² SE_k²)/N.
	Micro       float64 `json:"micro"`
	MicroStderr float64 `json:"micro_stderr"` // the standard error of Micro, sqrt(Σ_k n_k² SE_k²)/N
}

// MacroMicro averages per-cluster values (e.g. per-subject accuracies) with
// standard errors stderrs and sizes (items per cluster), both ways. The
// standard errors treat the clusters as fixed strata, as the benchmark's
// design does (MMLU has fixed subjects): only the sampling of items within
// each cluster varies. The micro standard error is then the stratified one,
// close to lm-eval's pooled_sample_stderr and a little below the naive CLT
// over all items, which would also count the spread between subjects. The
// macro one is larger than the micro one when sizes are unequal, because
// small subjects weigh as much as large ones.
//
// It fails when the slices differ in length, are empty, or a size is not
// positive.
func MacroMicro(values, stderrs []float64, sizes []int) (Averages, error) {
	k := len(values)
	if len(stderrs) != k || len(sizes) != k {
		return Averages{}, fmt.Errorf("analysis: MacroMicro: %d values, %d stderrs, %d sizes", k, len(stderrs), len(sizes))
	}
	if k == 0 {
		return Averages{}, errors.New("analysis: MacroMicro: no clusters")
	}
	av := Averages{K: k}
	var sumV, sumVar, sumW, sumWVar float64
	for i, v := range values {
		if sizes[i] <= 0 {
			return Averages{}, fmt.Errorf("analysis: MacroMicro: cluster %d has size %d", i, sizes[i])
		}
		nk := float64(sizes[i])
		av.N += sizes[i]
		sumV += v
		sumVar += stderrs[i] * stderrs[i]
		sumW += nk * v
		sumWVar += nk * nk * stderrs[i] * stderrs[i]
	}
	kf, nf := float64(k), float64(av.N)
	av.Macro = sumV / kf
	av.MacroStderr = math.Sqrt(sumVar) / kf
	av.Micro = sumW / nf
	av.MicroStderr = math.Sqrt(sumWVar) / nf
	return av, nil
}

// Interval is one uncertainty summary of a score, as ScoreIntervals lists
// them side by side.
//
// Its JSON names are those of the other commands' intervals: value,
// stderr, ci_low, ci_high, n, method.
type Interval struct {
	Value  float64 `json:"value"`   // the point estimate, the mean score
	Stderr float64 `json:"stderr"`  // the method's standard error (see ScoreIntervals)
	Lo     float64 `json:"ci_low"`  // the interval's lower bound
	Hi     float64 `json:"ci_high"` // the interval's upper bound
	N      int     `json:"n"`       // items
	Method string  `json:"method"`  // "clt", "wilson", "bootstrap"
}

// String renders one line, e.g. "clt        0.4443 [0.4175, 0.4711]  SE 0.0137  n=1319".
func (iv Interval) String() string {
	return fmt.Sprintf("%-10s %.4f [%.4f, %.4f]  SE %.4f  n=%d", iv.Method, iv.Value, iv.Lo, iv.Hi, iv.Stderr, iv.N)
}

// ScoreIntervals returns the intervals of the mean of per-doc scores xs at
// the given level, to be shown together, because they disagree exactly
// where it matters (small n, scores near 0 or 1):
//
//   - "clt": mean ± z·SE with SE = sample std (n−1)/√n, Miller's default;
//   - "wilson", only when every score is 0 or 1: the Wilson score interval,
//     with Stderr sqrt(p̂(1−p̂)/n), the binomial SE it is built on;
//   - "bootstrap": the percentile bootstrap from DefaultResamples resamples
//     (binomial resampling of the count for 0/1 scores, BootstrapProportion;
//     item resampling otherwise, BootstrapMean), with Stderr the standard
//     deviation of the resampled means.
//
// It returns nil for empty xs.
func ScoreIntervals(xs []float64, level float64, seed uint64) []Interval {
	n := len(xs)
	if n == 0 {
		return nil
	}
	m := mean(xs)
	se := cltStderr(xs)
	lo, hi := CLTInterval(m, se, level)
	out := []Interval{{Value: m, Stderr: se, Lo: lo, Hi: hi, N: n, Method: "clt"}}
	successes, binary := countOnes(xs)
	var reps []float64
	if binary {
		lo, hi := Wilson(successes, n, level)
		p := float64(successes) / float64(n)
		out = append(out, Interval{Value: m, Stderr: math.Sqrt(p * (1 - p) / float64(n)), Lo: lo, Hi: hi, N: n, Method: "wilson"})
		reps = proportionReplicates(successes, n, DefaultResamples, seed)
	} else {
		reps = meanReplicates(xs, DefaultResamples, seed)
	}
	bse := sampleSD(reps)
	lo, hi = percentileInterval(reps, level)
	return append(out, Interval{Value: m, Stderr: bse, Lo: lo, Hi: hi, N: n, Method: "bootstrap"})
}

// countOnes reports whether every x is 0 or 1, and how many are 1.
func countOnes(xs []float64) (ones int, binary bool) {
	for _, x := range xs {
		switch x {
		case 1:
			ones++
		case 0:
		default:
			return 0, false
		}
	}
	return ones, true
}

// Paired compares two runs, A and B, scored on the same documents: the
// comparison Miller recommends, since per-question scores of two models are
// positively correlated and the paired standard error is then much smaller
// than the unpaired one.
type Paired struct {
	N    int     // documents
	A, B float64 // mean scores
	// Delta is B − A, mean(b) − mean(a).
	Delta float64
	// PairedStderr is the sample standard deviation (n−1) of the per-doc
	// differences d_i = b_i − a_i over √n.
	PairedStderr float64
	// CILow and CIHigh are the paired percentile bootstrap interval of Delta
	// (see PairedStats).
	CILow, CIHigh float64
	// McNemarP is the exact McNemar test of "no difference" on 0/1 scores,
	// McNemarExact(AOnly, BOnly); NaN when the scores are not all 0/1.
	McNemarP float64
	// The 2×2 table: documents right in A only (a=1, b=0), in B only,
	// in both, in neither. For scores that are not 0/1, "right" is > 0.
	AOnly, BOnly, Both, Neither int
	// UnpairedCILow and UnpairedCIHigh are Delta ± z·sqrt(SE_A² + SE_B²)
	// with the CLT standard errors, what one would report without the
	// pairing; shown for contrast.
	UnpairedCILow, UnpairedCIHigh float64
	// MDE is the minimum detectable effect of this comparison: the true
	// |Delta| a two-sided test at α = 0.05 would detect with 80 % power,
	// (z_0.975 + z_0.80)·sd(d)/√n. It does not depend on the level passed
	// to PairedStats. A "no significant difference" means little when MDE
	// is larger than the effects one cares about.
	MDE float64
	// Correlation is the Pearson correlation of a and b, NaN when either is
	// constant.
	Correlation float64
	// Binary is true when every score of a and b is 0 or 1.
	Binary bool
}

// String renders a one-line summary.
// A value that cannot be computed (one document, a constant run) is "n/a";
// McNemar is shown for 0/1 scores only.
func (p Paired) String() string {
	f := func(format string, x float64) string {
		if math.IsNaN(x) {
			return "n/a"
		}
		return fmt.Sprintf(format, x)
	}
	s := fmt.Sprintf("n=%d  A %.4f  B %.4f  Δ %+.4f [%s, %s]  paired SE %s  unpaired [%s, %s]  MDE %s  r %s",
		p.N, p.A, p.B, p.Delta, f("%+.4f", p.CILow), f("%+.4f", p.CIHigh), f("%.4f", p.PairedStderr),
		f("%+.4f", p.UnpairedCILow), f("%+.4f", p.UnpairedCIHigh), f("%.4f", p.MDE), f("%.3f", p.Correlation))
	if p.Binary {
		s += fmt.Sprintf("  McNemar p %s (A only %d, B only %d)", f("%.4g", p.McNemarP), p.AOnly, p.BOnly)
	}
	return s
}

// PairedStats compares run B with run A on the same documents: a[i] and
// b[i] are the two runs' scores of document i.
//
// The interval CILow..CIHigh is a paired percentile bootstrap of Delta at
// the given level from resamples resamples (numpy's default percentile, as
// in BootstrapProportion). On 0/1 scores it never resamples documents: a
// resample of n documents with replacement is a multinomial draw of the
// four cell counts (A only, B only, both, neither) with the observed cell
// proportions, and its Delta is (B only − A only)/n, so it draws the two
// discordant counts exactly, A only* ~ Binomial(n, AOnly/n) and then
// B only* ~ Binomial(n − A only*, BOnly/(n − AOnly)); the concordant cells
// do not move Delta. That costs two binomial draws per resample instead of n
// index draws. Otherwise it resamples documents (BootstrapMean of the
// differences).
//
// It fails when the lengths differ, n is 0, a score is NaN, resamples < 1
// or level is outside (0, 1).
func PairedStats(a, b []float64, resamples int, level float64, seed uint64) (Paired, error) {
	return PairedStatsContext(context.Background(), a, b, resamples, level, seed)
}

// PairedStatsContext is PairedStats, stopped when ctx is done, with ctx's
// error.
func PairedStatsContext(ctx context.Context, a, b []float64, resamples int, level float64, seed uint64) (Paired, error) {
	n := len(a)
	switch {
	case len(b) != n:
		return Paired{}, fmt.Errorf("analysis: PairedStats: run A has %d scores, run B %d", n, len(b))
	case n == 0:
		return Paired{}, errors.New("analysis: PairedStats: no documents")
	case resamples < 1:
		return Paired{}, fmt.Errorf("analysis: PairedStats: %d resamples", resamples)
	case !(level > 0 && level < 1):
		return Paired{}, fmt.Errorf("analysis: PairedStats: level %v is not in (0, 1)", level)
	}
	p := Paired{N: n, Binary: true}
	d := make([]float64, n)
	for i := range n {
		x, y := a[i], b[i]
		if math.IsNaN(x) || math.IsNaN(y) {
			return Paired{}, fmt.Errorf("analysis: PairedStats: document %d has a NaN score", i)
		}
		if (x != 0 && x != 1) || (y != 0 && y != 1) {
			p.Binary = false
		}
		switch {
		case x > 0 && y > 0:
			p.Both++
		case x > 0:
			p.AOnly++
		case y > 0:
			p.BOnly++
		default:
			p.Neither++
		}
		d[i] = y - x
	}
	nf := float64(n)
	p.A, p.B = mean(a), mean(b)
	p.Delta = p.B - p.A
	sdD := sampleSD(d)
	p.PairedStderr = sdD / math.Sqrt(nf)
	z := twoSidedZ(level)
	half := z * math.Sqrt(square(cltStderr(a))+square(cltStderr(b)))
	p.UnpairedCILow, p.UnpairedCIHigh = p.Delta-half, p.Delta+half
	p.MDE = (NormalQuantile(0.975) + NormalQuantile(0.80)) * p.PairedStderr
	p.Correlation = pearson(a, b)

	var reps []float64
	var err error
	if p.Binary {
		p.McNemarP = McNemarExact(p.AOnly, p.BOnly)
		reps, err = pairedBinaryReplicates(ctx, n, p.AOnly, p.BOnly, resamples, seed)
	} else {
		p.McNemarP = math.NaN()
		reps, err = meanReplicatesContext(ctx, d, resamples, seed)
	}
	if err != nil {
		return Paired{}, fmt.Errorf("analysis: PairedStats: %w", err)
	}
	p.CILow, p.CIHigh = percentileInterval(reps, level)
	return p, nil
}

func square(x float64) float64 { return x * x }

// pairedBinaryReplicates draws the resampled Delta of 0/1 paired data with
// aOnly (1,0) and bOnly (0,1) discordant documents among n: the discordant
// cells of a Multinomial(n; aOnly/n, bOnly/n, rest) drawn as a binomial and
// a conditional binomial.
func pairedBinaryReplicates(ctx context.Context, n, aOnly, bOnly, resamples int, seed uint64) ([]float64, error) {
	r := newUniforms(seed, 0)
	nf := float64(n)
	first := newBinomial(n, float64(aOnly)/nf)
	rest := n - aOnly // documents that are not "A only"
	seconds := newConditionals(n, aOnly, float64(bOnly)/float64(rest))
	reps := make([]float64, resamples)
	for i := range reps {
		if i%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		x10 := first.draw(r)
		x01 := 0
		if bOnly > 0 {
			// bOnly > 0 implies rest > 0; the ratio is ≤ 1. The sampler
			// of Binomial(n − x10, ·) is set up once per x10 seen.
			x01 = seconds.of(x10).draw(r)
		}
		reps[i] = float64(x01-x10) / nf
	}
	return reps, nil
}

// conditionals are the samplers of Binomial(n − x, p) by x, each set up
// the first time x is drawn: in a slice over x's likely range (the mean of
// Binomial(n, mean/n) ± 8 standard deviations), in a map beyond it.
type conditionals struct {
	n       int
	p       float64
	lo      int
	near    []*binomial
	farther map[int]*binomial
}

func newConditionals(n, mean int, p float64) *conditionals {
	sd := math.Sqrt(float64(mean) * (1 - float64(mean)/float64(n)))
	w := int(8*sd) + 2
	lo, hi := max(0, mean-w), min(n, mean+w)
	return &conditionals{n: n, p: p, lo: lo, near: make([]*binomial, hi-lo+1)}
}

func (c *conditionals) of(x int) *binomial {
	if i := x - c.lo; i >= 0 && i < len(c.near) {
		if c.near[i] == nil {
			b := newBinomial(c.n-x, c.p)
			c.near[i] = &b
		}
		return c.near[i]
	}
	b, ok := c.farther[x]
	if !ok {
		if c.farther == nil {
			c.farther = map[int]*binomial{}
		}
		nb := newBinomial(c.n-x, c.p)
		b = &nb
		c.farther[x] = b
	}
	return b
}

// pearson is the Pearson correlation of x and y (same length), NaN when
// either is constant or there are fewer than two points.
func pearson(x, y []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	mx, my := mean(x), mean(y)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// McNemarExact is the exact (binomial) McNemar test for b and c discordant
// pairs (b = right in A only, c = right in B only): the two-sided p-value
// p = min(1, 2·P(X ≤ min(b, c))) for X ~ Binomial(b+c, 1/2), the value
// scipy.stats.binomtest(min(b, c), b+c, 0.5).pvalue gives. It is 1 when
// b + c = 0 and NaN when b or c is negative.
//
// It stays accurate where the naive Σ C(m, j)/2^m overflows: within 1e-13
// relative of a 45-digit reference for b + c up to 10^6 (scipy's binomtest
// itself is off by up to 2e-12 there). The probability at min(b, c) comes
// from Loader's saddle-point formula ("Fast and accurate computation of
// binomial probabilities", 2000, the one R's dbinom uses) in log space, the
// rest of the tail from the ratio recurrence P(j−1)/P(j) = j/(m−j+1),
// summed until the terms stop counting. A p-value below about 1e-308 comes
// out subnormal or 0.
func McNemarExact(b, c int) float64 {
	if b < 0 || c < 0 {
		return math.NaN()
	}
	m := b + c
	k := min(b, c)
	if 2*k == m { // includes m == 0: the observed count is the mode
		return 1
	}
	// S = P(X ≤ k)/P(X = k) = Σ_{j ≤ k} P(j)/P(k) ≥ 1, with Neumaier's
	// compensated sum since it can run over thousands of terms.
	sum, comp, t := 1.0, 0.0, 1.0
	mf := float64(m)
	for j := k; j > 0; j-- {
		t *= float64(j) / (mf - float64(j) + 1)
		if t < 0x1p-60*sum {
			break
		}
		s := sum + t
		if math.Abs(sum) >= math.Abs(t) {
			comp += (sum - s) + t
		} else {
			comp += (t - s) + sum
		}
		sum = s
	}
	logP := math.Ln2 + binomLogPMF(k, m, 0.5) + math.Log(sum+comp)
	return min(1, math.Exp(logP))
}

// binomLogPMF is log P(X = k) for X ~ Binomial(n, p), by Loader's method:
// Stirling-series remainders and the deviance bd0 keep it accurate to
// a few ulps of the probability even when n is in the millions.
func binomLogPMF(k, n int, p float64) float64 {
	q := 1 - p
	switch {
	case k < 0 || k > n:
		return math.Inf(-1)
	case p == 0:
		if k == 0 {
			return 0
		}
		return math.Inf(-1)
	case q == 0:
		if k == n {
			return 0
		}
		return math.Inf(-1)
	}
	nf, kf := float64(n), float64(k)
	// The deviation k − n·p with one rounding (FMA): the deviance terms
	// below are about its square over n·p, so rounding n·p first would
	// cost ~1e-16·n·p in absolute terms, 1e-10 at n = 10^6.
	d := math.FMA(-nf, p, kf)
	np := nf * p
	nq := (nf - np) - math.FMA(nf, p, -np) // n·(1−p) without rounding 1−p first
	if k == 0 {
		if p < 0.1 {
			return -bd0(nf, nq, -d) - nf*p
		}
		return nf * math.Log1p(-p)
	}
	if k == n {
		if q < 0.1 {
			return -bd0(nf, np, d) - nq
		}
		return nf * math.Log(p)
	}
	lc := stirlerr(n) - stirlerr(k) - stirlerr(n-k) - bd0(kf, np, d) - bd0(nf-kf, nq, -d)
	lf := math.Log(2*math.Pi) + math.Log(kf) + math.Log1p(-kf/nf)
	return lc - 0.5*lf
}

// stirlerr(n) = log(n!) − log(sqrt(2πn)·(n/e)^n), the error of Stirling's
// formula, for n ≥ 1: exactly through lgamma for small n (where the
// cancellation costs little in absolute terms), by its asymptotic series
// otherwise (the cut-offs of R's stirlerr).
func stirlerr(n int) float64 {
	nf := float64(n)
	if n <= 15 {
		lg, _ := math.Lgamma(nf + 1)
		return lg - (nf+0.5)*math.Log(nf) + nf - 0.5*math.Log(2*math.Pi)
	}
	const (
		s0 = 1.0 / 12
		s1 = 1.0 / 360
		s2 = 1.0 / 1260
		s3 = 1.0 / 1680
		s4 = 1.0 / 1188
	)
	nn := nf * nf
	switch {
	case n > 500:
		return (s0 - s1/nn) / nf
	case n > 80:
		return (s0 - (s1-s2/nn)/nn) / nf
	case n > 35:
		return (s0 - (s1-(s2-s3/nn)/nn)/nn) / nf
	}
	return (s0 - (s1-(s2-(s3-s4/nn)/nn)/nn)/nn) / nf
}

// bd0(x, np, d) = x·log(x/np) + np − x, the binomial deviance term, given
// d = x − np computed more precisely than np itself (Loader 2000): by its
// series in v = d/(x+np) when x is close to np, otherwise as
// −x·log1p(−d/x) − d; both are accurate relative to the result.
func bd0(x, np, d float64) float64 {
	if math.Abs(d) < 0.1*(x+np) {
		v := d / (x + np)
		s := d * v
		if math.Abs(s) < math.SmallestNonzeroFloat64 {
			return s
		}
		ej := 2 * x * v
		v *= v
		for j := 1; j < 1000; j++ {
			ej *= v
			s1 := s + ej/float64(2*j+1)
			if s1 == s {
				return s1
			}
			s = s1
		}
		return s
	}
	return -x*math.Log1p(-d/x) - d
}

// HolmAdjust returns Holm's step-down adjusted p-values, in the order of p:
// sorted ascending, the i-th smallest (from 0) of m becomes
// max over j ≤ i of min(1, (m−j)·p_(j)). Rejecting where the adjusted value
// is ≤ α controls the family-wise error rate at α for any dependence between
// the tests, which is what attributing a gap to one of several axes
// (prompt, few-shot, dtype, ...) at once needs. NaN p-values stay NaN and
// do not count in m.
func HolmAdjust(p []float64) []float64 {
	out := make([]float64, len(p))
	var idx []int
	for i, v := range p {
		if math.IsNaN(v) {
			out[i] = math.NaN()
			continue
		}
		idx = append(idx, i)
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case p[i] < p[j]:
			return -1
		case p[i] > p[j]:
			return 1
		}
		return 0
	})
	m := len(idx)
	running := 0.0
	for rank, i := range idx {
		running = max(running, min(1, float64(m-rank)*p[i]))
		out[i] = running
	}
	return out
}
