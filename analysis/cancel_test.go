package analysis

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"
)

// TestBootstrapCancel: the bootstrap functions stop when their context is
// done, with its error, and give what the functions without one give when
// it is not.
func TestBootstrapCancel(t *testing.T) {
	xs := make([]float64, 500)
	bin := make([]float64, 500)
	for i := range xs {
		xs[i] = float64(i%7) / 3
		bin[i] = float64(i % 2)
	}
	ys := append([]float64{}, xs[1:]...)
	ys = append(ys, 0)
	binY := append([]float64{}, bin[3:]...)
	binY = append(binY, 1, 0, 1)

	lo, hi, err := BootstrapMeanContext(context.Background(), xs, 2000, 0.95, 7)
	wantLo, wantHi := BootstrapMean(xs, 2000, 0.95, 7)
	if err != nil || lo != wantLo || hi != wantHi {
		t.Errorf("BootstrapMeanContext: [%v, %v] %v, want BootstrapMean's [%v, %v]", lo, hi, err, wantLo, wantHi)
	}
	lo, hi, err = BootstrapProportionContext(context.Background(), 130, 500, 2000, 0.95, 7)
	wantLo, wantHi = BootstrapProportion(130, 500, 2000, 0.95, 7)
	if err != nil || lo != wantLo || hi != wantHi {
		t.Errorf("BootstrapProportionContext: [%v, %v] %v, want BootstrapProportion's [%v, %v]", lo, hi, err, wantLo, wantHi)
	}
	for _, pair := range [][2][]float64{{xs, ys}, {bin, binY}} {
		p, err := PairedStatsContext(context.Background(), pair[0], pair[1], 2000, 0.95, 7)
		want, werr := PairedStats(pair[0], pair[1], 2000, 0.95, 7)
		if err != nil || werr != nil || p.CILow != want.CILow || p.CIHigh != want.CIHigh || p.Delta != want.Delta {
			t.Errorf("PairedStatsContext: %+v %v, want PairedStats's %+v %v", p, err, want, werr)
		}
	}

	done, cancel := context.WithCancel(context.Background())
	cancel()
	check := func(name string, lo, hi float64, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) || !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("%s with a cancelled context: [%v, %v] %v, want NaN and context.Canceled", name, lo, hi, err)
		}
	}
	lo, hi, err = BootstrapMeanContext(done, xs, 2000, 0.95, 7)
	check("BootstrapMeanContext", lo, hi, err)
	lo, hi, err = BootstrapProportionContext(done, 130, 500, 2000, 0.95, 7)
	check("BootstrapProportionContext", lo, hi, err)
	for _, pair := range [][2][]float64{{xs, ys}, {bin, binY}} {
		if _, err := PairedStatsContext(done, pair[0], pair[1], 2000, 0.95, 7); !errors.Is(err, context.Canceled) {
			t.Errorf("PairedStatsContext with a cancelled context: %v", err)
		}
	}
}

// TestBootstrapMeanStops: a bootstrap that would draw for minutes stops
// when its context is cancelled half-way.
func TestBootstrapMeanStops(t *testing.T) {
	xs := make([]float64, 20000)
	for i := range xs {
		xs[i] = float64(i % 5)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	// 2·10^10 draws: minutes on any machine.
	if _, _, err := BootstrapMeanContext(ctx, xs, 1_000_000, 0.95, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("BootstrapMeanContext went on to the end: %v", err)
	}
}

// TestBootstrapStderrCancel: lm-eval's bootstrap stops at the replicate
// that follows the cancel (one per worker at most), cancelled here from
// inside the statistic.
func TestBootstrapStderrCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int64
	stat := func(idx []int) float64 {
		if calls.Add(1) == 10 {
			cancel()
		}
		return float64(len(idx))
	}
	const iters = 100000
	se, err := BootstrapStderrContext(ctx, 50, stat, iters, PyFloat, SummationFor(3, 11))
	if !errors.Is(err, context.Canceled) || !math.IsNaN(se) {
		t.Fatalf("got %v %v, want NaN and context.Canceled", se, err)
	}
	if n := calls.Load(); n >= iters/10 {
		t.Errorf("the statistic ran %d times of %d after the cancel at the 10th", n, iters)
	}
	want := BootstrapStderr(50, func(idx []int) float64 { return float64(len(idx)) }, 2000, PyFloat, SummationFor(3, 11))
	if got, err := BootstrapStderrContext(context.Background(), 50, func(idx []int) float64 { return float64(len(idx)) }, 2000, PyFloat, SummationFor(3, 11)); err != nil || got != want {
		t.Errorf("BootstrapStderrContext: %v %v, want BootstrapStderr's %v", got, err, want)
	}
}
