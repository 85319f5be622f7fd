package analysis

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// The inlined generator of the item-resampling bootstrap must give the
// numbers math/rand/v2 gives, so that intervals stay what they were.
func TestPCGMatchesRand(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 7, 64, 164, 817, 1000, 1319, 14042, 1 << 20, 1<<63 + 12345} {
		for _, seed := range [][2]uint64{{0, 1}, {1, 2}, {20260101, 7}, {^uint64(0), 3}} {
			want := rand.New(rand.NewPCG(seed[0], seed[1]))
			got := pcg{hi: seed[0], lo: seed[1]}
			for i := range 2000 {
				w, g := want.Uint64N(n), got.intN(n)
				if w != g {
					t.Fatalf("n %d, seed %v, draw %d: pcg gives %d, math/rand/v2 %d", n, seed, i, g, w)
				}
			}
		}
	}
}

// selectKth-based percentiles are the sorted ones, ties and all.
func TestPercentileIntervalMatchesSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 3, 10, 17, 100, 1001, 10000} {
		for _, distinct := range []int{1, 2, 5, 1 << 30} {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(r.IntN(distinct)) / 7
			}
			for _, level := range []float64{0.5, 0.9, 0.95, 0.99, 0.999, 1 - 0.05/6} {
				sorted := append([]float64(nil), x...)
				slices.Sort(sorted)
				qlo, qhi := percentileQ(level)
				wlo, whi := quantileSorted(sorted, qlo), quantileSorted(sorted, qhi)
				lo, hi := percentileInterval(append([]float64(nil), x...), level)
				if lo != wlo || hi != whi {
					t.Fatalf("n %d, %d values, level %v: [%v, %v], sorted gives [%v, %v]", n, distinct, level, lo, hi, wlo, whi)
				}
			}
		}
	}
}

// A replayed resample plan gives the replicates drawing does, bit for bit,
// the first time (drawn as summed), the second (the plan drawn) and after.
func TestResamplePlanReplaysDraws(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 3, 817, 1 << 16} {
		resamples := 1000 + 3 // a partial last chunk, rows not a multiple of 4
		if n == 1<<16 {
			resamples = 257
		}
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = r.NormFloat64()
		}
		want := make([]float64, resamples)
		for i := range want {
			g := rand.New(rand.NewPCG(42, uint64(i/bootstrapChunkSize)+1))
			if i%bootstrapChunkSize != 0 {
				continue
			}
			for k := i; k < min(i+bootstrapChunkSize, resamples); k++ {
				sum := 0.0
				for range n {
					sum += xs[g.IntN(n)]
				}
				want[k] = sum / float64(n)
			}
		}
		for round := range 3 {
			got := meanReplicates(xs, resamples, 42)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("n %d, round %d, replicate %d: %v, drawn %v", n, round, i, got[i], want[i])
				}
			}
		}
		if n > 1 {
			plans.mu.Lock()
			_, kept := plans.m[planKey{n, resamples, 42}]
			plans.mu.Unlock()
			if !kept {
				t.Errorf("n %d: no plan kept after three bootstraps", n)
			}
		}
	}
}

// The binomial draws' uniforms are math/rand/v2's Float64 of the same PCG.
func TestUniformsMatchRand(t *testing.T) {
	want := rand.New(rand.NewPCG(20260101, 0))
	got := newUniforms(20260101, 0)
	for i := range 10000 {
		if w, g := want.Float64(), got.Float64(); w != g {
			t.Fatalf("draw %d: %v, math/rand/v2 %v", i, g, w)
		}
	}
}

// Pairs bootstrapped at once share one plan and get what each gets alone.
func TestResamplePlanConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n, pairs, resamples = 300, 8, 2000
	a := make([]float64, n)
	for i := range a {
		a[i] = r.Float64()
	}
	bs := make([][]float64, pairs)
	for j := range bs {
		bs[j] = make([]float64, n)
		for i := range bs[j] {
			bs[j][i] = min(1, max(0, a[i]+0.1*r.NormFloat64()))
		}
	}
	want := make([]Paired, pairs)
	for j, b := range bs {
		p, err := PairedStats(a, b, resamples, 0.95, 99)
		if err != nil {
			t.Fatal(err)
		}
		want[j] = p
	}
	got := make([]Paired, pairs)
	var wg sync.WaitGroup
	for j, b := range bs {
		wg.Go(func() {
			got[j], _ = PairedStats(a, b, resamples, 0.95, 99)
		})
	}
	wg.Wait()
	for j := range bs {
		if got[j].CILow != want[j].CILow || got[j].CIHigh != want[j].CIHigh {
			t.Errorf("pair %d: [%v, %v] at once, [%v, %v] alone", j, got[j].CILow, got[j].CIHigh, want[j].CILow, want[j].CIHigh)
		}
	}
}
