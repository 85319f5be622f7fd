package pyrand

// MT19937 parameters, as in Modules/_randommodule.c.
const (
	stateLen  = 624
	shift     = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// Random is the state of one CPython random.Random instance. The zero value
// is an unseeded generator that only returns zeros: create one with [New],
// or call [Random.Seed] before drawing.
type Random struct {
	mt    [stateLen]uint32
	index int
}

// New returns a generator in the state of random.Random(seed).
func New(seed int64) *Random {
	r := new(Random)
	r.Seed(seed)
	return r
}

// Seed resets r to the state of random.Random(seed), which is also the state
// after rnd.seed(seed) on an existing instance.
func (r *Random) Seed(seed int64) {
	// abs(seed) as an unsigned number; two's complement negation gets
	// math.MinInt64 right too (its magnitude 2^63 fits in a uint64).
	mag := uint64(seed)
	if seed < 0 {
		mag = -mag
	}
	// CPython's key is the magnitude in 32-bit words, least significant
	// first, with as many words as it has significant bits (at least one).
	key := [2]uint32{uint32(mag), uint32(mag >> 32)}
	if key[1] == 0 {
		r.initByArray(key[:1])
	} else {
		r.initByArray(key[:])
	}
}

// initGenrand is init_genrand.
func (r *Random) initGenrand(s uint32) {
	mt := &r.mt
	mt[0] = s
	for i := 1; i < stateLen; i++ {
		mt[i] = 1812433253*(mt[i-1]^(mt[i-1]>>30)) + uint32(i)
	}
	r.index = stateLen
}

// initByArray is init_by_array.
func (r *Random) initByArray(key []uint32) {
	r.initGenrand(19650218)
	mt := &r.mt
	i, j := 1, 0
	k := max(stateLen, len(key))
	for ; k > 0; k-- {
		mt[i] = (mt[i] ^ ((mt[i-1] ^ (mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= stateLen {
			mt[0] = mt[stateLen-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = stateLen - 1; k > 0; k-- {
		mt[i] = (mt[i] ^ ((mt[i-1] ^ (mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= stateLen {
			mt[0] = mt[stateLen-1]
			i = 1
		}
	}
	mt[0] = 0x80000000 // MSB is 1, assuring a non-zero initial array
}

// twist regenerates all 624 words at once, as genrand_uint32 does when the
// previous batch is used up.
func (r *Random) twist() {
	mt := &r.mt
	var kk int
	for kk = 0; kk < stateLen-shift; kk++ {
		y := (mt[kk] & upperMask) | (mt[kk+1] & lowerMask)
		mt[kk] = mt[kk+shift] ^ (y >> 1) ^ (-(y & 1) & matrixA)
	}
	for ; kk < stateLen-1; kk++ {
		y := (mt[kk] & upperMask) | (mt[kk+1] & lowerMask)
		mt[kk] = mt[kk+shift-stateLen] ^ (y >> 1) ^ (-(y & 1) & matrixA)
	}
	y := (mt[stateLen-1] & upperMask) | (mt[0] & lowerMask)
	mt[stateLen-1] = mt[shift-1] ^ (y >> 1) ^ (-(y & 1) & matrixA)
	r.index = 0
}

// Uint32 returns the next 32-bit output of the generator (genrand_uint32,
// which is also what getrandbits(32) returns).
func (r *Random) Uint32() uint32 {
	if r.index >= stateLen {
		r.twist()
	}
	y := r.mt[r.index]
	r.index++
	return temper(y)
}

// temper is MT19937's output transformation of one state word.
func temper(y uint32) uint32 {
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// Random returns the next float in [0, 1), exactly as random.random() does.
func (r *Random) Random() float64 {
	a := r.Uint32()
	b := r.Uint32()
	return toFloat(a, b)
}

// toFloat is random_random's arithmetic on two consecutive outputs: 27 bits
// of the first and 26 of the second make a 53-bit integer, scaled by 2^-53.
// a*2^26 + b is an integer below 2^53, so every step is exact and the result
// does not depend on whether the compiler fuses the multiply-add.
func toFloat(a, b uint32) float64 {
	return (float64(a>>5)*67108864.0 + float64(b>>6)) * (1.0 / 9007199254740992.0)
}

// Choices returns the indices that random.choices(population, k=k) picks
// from a population of n items, without weights: k draws of
// floor(random() * n). The result reuses dst's storage (dst[:0] grows to k),
// so a caller that resamples repeatedly allocates nothing after the first
// call. A k of zero or less gives an empty slice; it panics when k > 0 and
// n <= 0, where Python raises IndexError.
func (r *Random) Choices(n, k int, dst []int) []int {
	if k <= 0 {
		return dst[:0]
	}
	if n <= 0 {
		panic("pyrand: Choices from an empty population")
	}
	if cap(dst) < k {
		dst = make([]int, k)
	}
	dst = dst[:k]
	fn := float64(n)
	// The loop reads the state directly while two words are left in the
	// current batch and goes through Uint32 only around a regeneration;
	// either way each draw is random_random on the next two outputs.
	mt, idx := &r.mt, r.index
	for i := range dst {
		var a, b uint32
		if idx < stateLen-1 {
			a, b = temper(mt[idx]), temper(mt[idx+1])
			idx += 2
		} else {
			r.index = idx
			a = r.Uint32()
			b = r.Uint32()
			idx = r.index
		}
		dst[i] = int(toFloat(a, b) * fn)
	}
	r.index = idx
	return dst
}
