package gate

import (
	"context"
	"fmt"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

// linePolicy gates each task of the simulated line on its primary metric.
const linePolicy = `
test: no-significant-drop
alpha: 0.05
margin: 1
tasks:
  gsm8k: {metrics: ["exact_match,strict-match"]}
  gsm8k_cot_llama: {metrics: ["exact_match,strict-match"]}
  gsm8k_llama: {metrics: ["exact_match,strict_match"]}
  mmlu: {metrics: ["acc,none"]}
`

// lineSides writes the simulated line and reads every checkpoint.
func lineSides(t testing.TB) []*Side {
	dir := t.TempDir()
	cps, outs, err := simulate.WriteLine(dir, simulate.LineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sides := make([]*Side, len(cps))
	for i, o := range outs {
		run, err := harness.Read(o.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if sides[i], err = SideFromRun(context.Background(), run, cps[i].Name); err != nil {
			t.Fatal(err)
		}
	}
	return sides
}

// TestGateFindsThePlantedRegressionOfTheLine gates each checkpoint of the
// simulated model line against checkpoint 0 under both tests: exactly
// the planted (checkpoint, task) fails.
func TestGateFindsThePlantedRegressionOfTheLine(t *testing.T) {
	sides := lineSides(t)
	for _, test := range []string{NoSignificantDrop, NonInferiority} {
		p, err := ParsePolicy([]byte(linePolicy))
		if err != nil {
			t.Fatal(err)
		}
		p.Test = test
		for i, cand := range sides[1:] {
			r, err := Evaluate(sides[0], cand, p)
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			gated := 0
			var regressed MetricResult
			for _, m := range r.Metrics {
				if m.Verdict == NotGated {
					continue
				}
				gated++
				if m.Verdict != Pass {
					regressed = m
					failed = append(failed, m.Task+" "+m.Verdict+": "+m.Reason)
				}
			}
			want := 0
			if i+1 == simulate.LineRegressionCheckpoint {
				want = 1
				if len(failed) != 1 || regressed.Task != simulate.LineRegressionTask || regressed.Verdict != Regression {
					t.Errorf("%s: checkpoint %d: %q, want %s to regress", test, i+1, failed, simulate.LineRegressionTask)
				}
			}
			if len(failed) != want || (want == 0) != r.Passed() {
				t.Errorf("%s: checkpoint %d: verdict %s, failed %q", test, i+1, r.Verdict, failed)
			}
			if gated != 4 {
				t.Errorf("%s: checkpoint %d: %d metrics gated, want 4", test, i+1, gated)
			}
		}
	}
}

// BenchmarkEvaluate gates 50 checkpoints × 4 tasks of the simulated line
// (cycled) against the baseline, from sides already read.
func BenchmarkEvaluate(b *testing.B) {
	sides := lineSides(b)
	p, err := ParsePolicy([]byte(linePolicy))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for i := range 50 {
			if _, err := Evaluate(sides[0], sides[1+i%(len(sides)-1)], p); err != nil {
				b.Fatal(fmt.Sprint(i, err))
			}
		}
	}
}
