package analysis_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
)

func ExampleMetricScale() {
	for _, m := range []string{"exact_match", "bleu_max", "mcc", "perplexity", "llm_judge"} {
		s := analysis.MetricScale(m)
		lo, hi := s.Clip(-0.5, 140)
		fmt.Printf("%s: %s; 0.4512 shows as %s; [-0.5, 140] clipped to [%g, %g]\n", m, s.Unit, s.Format(0.4512), lo, hi)
	}
	// Output:
	// exact_match: points; 0.4512 shows as 45.12; [-0.5, 140] clipped to [0, 1]
	// bleu_max: as logged, 0 to 100; 0.4512 shows as 0.4512; [-0.5, 140] clipped to [0, 100]
	// mcc: as logged, -1 to 1; 0.4512 shows as 0.4512; [-0.5, 140] clipped to [-0.5, 1]
	// perplexity: as logged, 1 or more; 0.4512 shows as 0.4512; [-0.5, 140] clipped to [1, 140]
	// llm_judge: as logged; 0.4512 shows as 0.4512; [-0.5, 140] clipped to [-0.5, 140]
}

// A metric whose values contradict the range its name implies (f1 on
// SQuAD's 0-100 scale) is shown as logged and never clipped; a difference
// of two [0, 1] metrics lies in [-1, 1] and stays in points.
func TestScaleOf(t *testing.T) {
	if s := analysis.ScaleOf("f1", 0.3, 0.9); !s.Points() {
		t.Errorf("f1 in [0, 1]: %+v", s)
	}
	s := analysis.ScaleOf("f1", 0.3, 87.5)
	if s.Known || s.Points() || s.Format(87.5) != "87.5" {
		t.Errorf("f1 with a value 87.5: %+v, shown %s", s, s.Format(87.5))
	}
	if lo, hi := s.Clip(-3, 120); lo != -3 || hi != 120 {
		t.Errorf("unknown scale clipped to [%v, %v]", lo, hi)
	}
	d := analysis.MetricScale("acc").Diff()
	if lo, hi := d.Clip(-1.4, 1.2); lo != -1 || hi != 1 || !d.Points() || d.FormatDelta(-0.061) != "-6.10" {
		t.Errorf("acc difference: %+v clips to [%v, %v], shows %s", d, lo, hi, d.FormatDelta(-0.061))
	}
	if lo, hi := analysis.MetricScale("bleu_diff").Diff().Clip(-300, 300); lo != -200 || hi != 200 {
		t.Errorf("bleu_diff difference clipped to [%v, %v]", lo, hi)
	}
	if got := analysis.MetricScale("acc").Format(math.NaN()); got != "n/a" {
		t.Errorf("NaN shows as %q", got)
	}
}

// A scale written as JSON reads back the same, an unbounded side as null.
func TestScaleJSON(t *testing.T) {
	for _, m := range []string{"acc", "perplexity", "llm_judge", "bleu_diff"} {
		s := analysis.MetricScale(m)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var got analysis.Scale
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got != s {
			t.Errorf("%s: %s reads back as %+v, want %+v", m, b, got, s)
		}
	}
	b, _ := json.Marshal(analysis.MetricScale("perplexity"))
	if string(b) != `{"unit":"as logged, 1 or more","factor":1,"lo":1,"hi":null,"known":true}` {
		t.Errorf("perplexity scale: %s", b)
	}
}
