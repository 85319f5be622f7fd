package analysis

import (
	"sync"
	"time"
)

// A resample plan is the documents an item-resampling bootstrap of n items
// draws, for one number of resamples and one seed: which items they are
// does not depend on the values, only on (n, resamples, seed), so a
// baseline gated or compared against many candidates (the same documents,
// the same policy) draws them once and replays them, instead of spending
// a PCG draw per item of every resample of every pair. The replayed
// bootstrap is the drawn one bit for bit: the same items, summed in the
// same order.
//
// Plans are kept from the second bootstrap of a (n, resamples, seed) on
// (a one-off bootstrap draws as it sums), up to maxPlanBytes in all, and
// let go after planIdle without use.
const (
	maxPlanBytes = 64 << 20
	planIdle     = time.Minute
)

type planKey struct {
	n, resamples int
	seed         uint64
}

// resamplePlan holds resamples rows of n item indices, row i the items of
// replicate i, drawn as meanReplicatesContext draws them.
type resamplePlan struct {
	once sync.Once
	n    int
	idx  []uint16
	used time.Time // under plans.mu
}

var plans struct {
	mu    sync.Mutex
	m     map[planKey]*resamplePlan
	seen  map[planKey]bool
	bytes int
	timer *time.Timer
}

// planFor is the plan of (n, resamples, seed), drawn on first use, or nil
// when there is none: the first time the key is asked for, or when n does
// not fit 16 bits or the plan would not fit maxPlanBytes.
func planFor(n, resamples int, seed uint64) *resamplePlan {
	size := 2 * n * resamples
	if n < 1 || n > 1<<16 || size > maxPlanBytes || size/2/n != resamples {
		return nil
	}
	k := planKey{n, resamples, seed}
	plans.mu.Lock()
	pl := plans.m[k]
	if pl == nil {
		if !plans.seen[k] {
			if plans.seen == nil || len(plans.seen) > 1024 {
				plans.seen = map[planKey]bool{}
			}
			plans.seen[k] = true
			plans.mu.Unlock()
			return nil
		}
		for plans.bytes+size > maxPlanBytes {
			evictOldest()
		}
		if plans.m == nil {
			plans.m = map[planKey]*resamplePlan{}
		}
		pl = &resamplePlan{n: n}
		plans.m[k] = pl
		plans.bytes += size
		if plans.timer == nil {
			plans.timer = time.AfterFunc(planIdle, releaseIdle)
		}
	}
	pl.used = time.Now()
	plans.mu.Unlock()
	pl.once.Do(func() { pl.draw(resamples, seed) })
	return pl
}

// evictOldest drops the least recently used plan; plans.mu is held.
func evictOldest() {
	var oldest planKey
	var at time.Time
	for k, pl := range plans.m {
		if at.IsZero() || pl.used.Before(at) {
			oldest, at = k, pl.used
		}
	}
	plans.bytes -= 2 * oldest.n * oldest.resamples
	delete(plans.m, oldest)
}

// releaseIdle drops the plans not used for planIdle, and looks again
// later while any are left.
func releaseIdle() {
	plans.mu.Lock()
	defer plans.mu.Unlock()
	for k, pl := range plans.m {
		if time.Since(pl.used) >= planIdle {
			plans.bytes -= 2 * k.n * k.resamples
			delete(plans.m, k)
		}
	}
	if len(plans.m) > 0 {
		plans.timer.Reset(planIdle)
	} else {
		plans.timer = nil
	}
}

// draw fills the plan: chunk j of bootstrapChunkSize rows from PCG stream
// j+1 of seed, as meanReplicatesContext draws its replicates.
func (pl *resamplePlan) draw(resamples int, seed uint64) {
	n := pl.n
	pl.idx = make([]uint16, n*resamples)
	chunks := (resamples + bootstrapChunkSize - 1) / bootstrapChunkSize
	forChunks(chunks, n*resamples, func(j int) {
		r := pcg{hi: seed, lo: uint64(j) + 1}
		end := min((j+1)*bootstrapChunkSize, resamples)
		row := pl.idx[j*bootstrapChunkSize*n : end*n]
		for i := range row {
			row[i] = uint16(r.intN(uint64(n)))
		}
	})
}

// means sets reps[i] for i in [from, to) to the mean of xs over row i's
// items, summed in draw order; it stops early when done is closed. Four
// rows are summed side by side, each in its own order, so that the
// additions of one row do not wait on one another's.
func (pl *resamplePlan) means(xs, reps []float64, from, to int, done <-chan struct{}) {
	n := pl.n
	xs = xs[:n]
	nf := float64(n)
	i := from
	for ; i+4 <= to; i += 4 {
		select {
		case <-done:
			return
		default:
		}
		r0 := pl.idx[i*n : (i+1)*n]
		r1 := pl.idx[(i+1)*n : (i+2)*n]
		r2 := pl.idx[(i+2)*n : (i+3)*n]
		r3 := pl.idx[(i+3)*n : (i+4)*n]
		var s0, s1, s2, s3 float64
		for k := range r0 {
			s0 += xs[r0[k]]
			s1 += xs[r1[k]]
			s2 += xs[r2[k]]
			s3 += xs[r3[k]]
		}
		reps[i], reps[i+1], reps[i+2], reps[i+3] = s0/nf, s1/nf, s2/nf, s3/nf
	}
	for ; i < to; i++ {
		s := 0.0
		for _, k := range pl.idx[i*n : (i+1)*n] {
			s += xs[k]
		}
		reps[i] = s / nf
	}
}
