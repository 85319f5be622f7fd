package simulate

import "math/bits"

// rng is a small SplitMix64 generator. The package carries its own instead
// of math/rand so that a seed gives the same bytes on every Go release: the
// output of a simulation is a fixture that tests and capsules pin by digest.
type rng struct{ s uint64 }

// stream returns the generator for one named part of the simulation (a task,
// a document, a few-shot pool). Deriving every part from (seed, name, index)
// instead of drawing from one shared sequence lets files be written in
// parallel and lets a document be regenerated for its second filter block
// without holding the first in memory.
func stream(seed int64, name string, index int) *rng {
	h := uint64(14695981039346656037) // FNV-1a over the name
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	r := &rng{s: uint64(seed)*0x9e3779b97f4a7c15 ^ h}
	r.s ^= mix64(uint64(index) + 0x632be59bd9b4e019)
	r.next()
	return r
}

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

// float64 returns a uniform value in [0, 1) with 53 random bits.
func (r *rng) float64() float64 {
	return float64(r.next()>>11) / (1 << 53)
}

// intn returns a uniform value in [0, n); n must be positive.
func (r *rng) intn(n int) int {
	// Multiply-shift (Lemire) without the rejection step: the bias is at
	// most n/2^64, far under anything a test can see.
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

// between returns a uniform integer in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// chance reports true with probability p.
func (r *rng) chance(p float64) bool { return r.float64() < p }

// pick returns a uniformly chosen element of xs.
func pick(r *rng, xs []string) string { return xs[r.intn(len(xs))] }
