package analysis

import (
	"bufio"
	"fmt"
	"os"
	"testing"
)

// pairedBenchEnv names a file BenchmarkPairedBootstrap writes its data and
// its result to, for bench/bootstrap.sh to run scipy.stats.bootstrap on the
// same documents.
const pairedBenchEnv = "CAPSULE_PAIRED_BOOTSTRAP_DATA"

// pairedBenchData is MMLU-sized paired 0/1 data: 14,042 documents, about
// 50 % correct, B one point better, correlated through a per-document
// difficulty (simulatePaired, seed 14042).
func pairedBenchData() (a, b []float64) {
	return simulatePaired(newRand(14042, 0), 14042, 0.5, 0.01, 0.7)
}

// BenchmarkPairedBootstrap times PairedStats with 10,000 resamples on
// pairedBenchData: the whole comparison (means, stderrs, McNemar, MDE,
// correlation) and the paired bootstrap, which on 0/1 data draws the
// discordant cell counts instead of resampling documents. Budget: well
// under 50 ms on a 2-core machine.
func BenchmarkPairedBootstrap(b *testing.B) {
	x, y := pairedBenchData()
	var p Paired
	for b.Loop() {
		var err error
		if p, err = PairedStats(x, y, 10000, 0.95, 1); err != nil {
			b.Fatal(err)
		}
	}
	if path := os.Getenv(pairedBenchEnv); path != "" {
		if err := writePairedBench(path, x, y, p); err != nil {
			b.Fatal(err)
		}
	}
}

// writePairedBench writes one "a b" line per document after a comment line
// with capsule's result, the format numpy.loadtxt reads.
func writePairedBench(path string, a, b []float64, p Paired) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "# capsule PairedStats n=%d delta=%.6f ci=[%.6f, %.6f] (10000 resamples, seed 1)\n", p.N, p.Delta, p.CILow, p.CIHigh)
	for i := range a {
		fmt.Fprintf(w, "%g %g\n", a[i], b[i])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// BenchmarkBootstrapMeanItems is the item-resampling path for scores that
// are not 0/1, at the same size: 10,000 × 14,042 index draws, spread over
// the CPUs.
func BenchmarkBootstrapMeanItems(b *testing.B) {
	x, _ := pairedBenchData()
	r := newRand(1, 1)
	for i := range x {
		x[i] *= r.Float64()
	}
	for b.Loop() {
		BootstrapMean(x, 10000, 0.95, 1)
	}
}
