package pynum

import "testing"

// TestSumKinds checks the transitions of CPython's sum() between its int,
// float and generic paths on hand-worked cases where they matter.
func TestSumKinds(t *testing.T) {
	big, one := 1e16, 1.0
	xs := []float64{big, one, one, -big}
	// Compensated: 2; plain: 0 (1e16 + 1 rounds back to 1e16 twice).
	if got := SumKinds(xs, []Kind{Float, Float, Float, Float}, Neumaier); got != 2 {
		t.Errorf("all floats, 3.12: %v, want 2", got)
	}
	if got := SumKinds(xs, []Kind{Float, Float, Float, Float}, Naive); got != 0 {
		t.Errorf("all floats, 3.11: %v, want 0", got)
	}
	// A numpy scalar drops sum() to the generic path for the rest: the
	// compensation gathered so far is added once, then plain addition.
	if got := SumKinds(xs, []Kind{Float, Numpy, Float, Float}, Neumaier); got != 0 {
		t.Errorf("numpy second: %v, want 0", got)
	}
	if got := SumKinds(xs, []Kind{Float, Float, Float, Numpy}, Neumaier); got != 2 {
		t.Errorf("numpy last: %v, want 2", got)
	}
	if got := Sum(xs, Numpy, Neumaier); got != 0 {
		t.Errorf("numpy items: %v, want 0", got)
	}
	// One kind throughout: SumKinds agrees with Sum.
	for _, k := range []Kind{Float, Int, Numpy} {
		for _, rule := range []Summation{Naive, Neumaier} {
			kinds := []Kind{k, k, k, k}
			if got, want := SumKinds(xs, kinds, rule), Sum(xs, k, rule); got != want {
				t.Errorf("%v items, %v: SumKinds %v, Sum %v", k, rule, got, want)
			}
		}
	}
}

func TestSummationFor(t *testing.T) {
	for _, c := range []struct {
		major, minor int
		want         Summation
	}{
		{2, 7, Naive}, {3, 10, Naive}, {3, 11, Naive}, {3, 12, Neumaier}, {3, 13, Neumaier}, {4, 0, Neumaier},
	} {
		if got := SummationFor(c.major, c.minor); got != c.want {
			t.Errorf("SummationFor(%d, %d) = %v, want %v", c.major, c.minor, got, c.want)
		}
	}
	if Naive.String() != "naive" || Neumaier.String() != "neumaier" {
		t.Errorf("summation names %q %q", Naive, Neumaier)
	}
	if Float.String() != "float" || Int.String() != "int" || Numpy.String() != "numpy.float64" {
		t.Errorf("kind names %q %q %q", Float, Int, Numpy)
	}
}
