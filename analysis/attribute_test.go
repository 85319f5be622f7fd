package analysis_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
)

// groupSeries is a group's joined series: members of the given sizes, each
// document right with the member's rate p, drawn from r.
func groupSeries(r *rand.Rand, sizes []int, p []float64) *analysis.Series {
	s := &analysis.Series{Task: "grp", Metric: "acc", Filter: "none", Kind: analysis.PyFloat}
	for m, n := range sizes {
		for id := range n {
			v := 0.0
			if r.Float64() < p[m] {
				v = 1
			}
			s.Docs = append(s.Docs, analysis.DocRef{Task: string(rune('a' + m)), DocID: id})
			s.Values = append(s.Values, v)
		}
	}
	return s
}

// memberMeans is the mean of the member means, computed here on its own.
func memberMeans(s *analysis.Series) float64 {
	sum, count := map[string]float64{}, map[string]int{}
	var order []string
	for i, d := range s.Docs {
		if count[d.Task] == 0 {
			order = append(order, d.Task)
		}
		sum[d.Task] += s.Values[i]
		count[d.Task]++
	}
	total := 0.0
	for _, t := range order {
		total += sum[t] / float64(count[t])
	}
	return total / float64(len(order))
}

// Under macro, every score is the mean of the member means and every Δ its
// change; a plain task's macro attribution is its micro one, number for
// number.
func TestAttributeClaimMacro(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{40, 400, 120}
	base := groupSeries(r, sizes, []float64{0.9, 0.3, 0.5})
	step := groupSeries(r, sizes, []float64{0.95, 0.35, 0.6})
	opts := analysis.AttributionOptions{Seed: 3, Resamples: 2000}
	path := []analysis.PathPoint{{Name: "baseline", Kind: "run", Series: base}, {Name: "step", Kind: "run", Series: step}}
	macro, err := analysis.AttributeClaim(analysis.ClaimSpec{Task: "grp", Metric: "acc", Filter: "none", Card: 0.7, Aggregate: analysis.Macro}, path, nil, nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	micro, err := analysis.AttributeClaim(analysis.ClaimSpec{Task: "grp", Metric: "acc", Filter: "none", Card: 0.7}, path, nil, nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	wantBase, wantFinal := memberMeans(base), memberMeans(step)
	if math.Abs(macro.Baseline-wantBase) > 1e-15 || math.Abs(macro.Final-wantFinal) > 1e-15 || macro.Members != 3 {
		t.Fatalf("macro baseline %v final %v over %d members, want %v, %v over 3", macro.Baseline, macro.Final, macro.Members, wantBase, wantFinal)
	}
	if math.Abs(micro.Baseline-base.Mean()) > 0 || math.Abs(micro.Baseline-macro.Baseline) < 0.05 || micro.AggregateStated {
		t.Fatalf("micro baseline %v (stated %v), the documents' mean %v, macro %v", micro.Baseline, micro.AggregateStated, base.Mean(), macro.Baseline)
	}
	st := macro.Steps[0]
	if math.Abs(st.Delta-(wantFinal-wantBase)) > 1e-15 || !(st.CILow < st.Delta && st.Delta < st.CIHigh) {
		t.Errorf("macro step %+v, want Δ %v inside its CI", st, wantFinal-wantBase)
	}
	if !(macro.UnexplainedCILow < macro.Unexplained && macro.Unexplained < macro.UnexplainedCIHigh) {
		t.Errorf("macro residual %v outside its CI [%v, %v]", macro.Unexplained, macro.UnexplainedCILow, macro.UnexplainedCIHigh)
	}
	// A plain task: one member, the same numbers either way.
	plain := func(s *analysis.Series) *analysis.Series {
		c := *s
		c.Docs = nil
		for i := range s.Values {
			c.Docs = append(c.Docs, analysis.DocRef{DocID: i})
		}
		return &c
	}
	pp := []analysis.PathPoint{{Name: "baseline", Kind: "run", Series: plain(base)}, {Name: "step", Kind: "run", Series: plain(step)}}
	a, err := analysis.AttributeClaim(analysis.ClaimSpec{Task: "t", Card: 0.7, Aggregate: analysis.Macro}, pp, nil, nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := analysis.AttributeClaim(analysis.ClaimSpec{Task: "t", Card: 0.7, Aggregate: analysis.Micro}, pp, nil, nil, nil, opts)
	if a.Baseline != b.Baseline || a.Steps[0] != b.Steps[0] || a.UnexplainedCILow != b.UnexplainedCILow || a.Members != 0 {
		t.Errorf("plain task: macro %+v, micro %+v", a, b)
	}
	if _, err := analysis.AttributeClaim(analysis.ClaimSpec{Task: "t", Aggregate: "mean"}, pp, nil, nil, nil, opts); err == nil {
		t.Error("an unknown aggregate was accepted")
	}
}

// The Shapley values of a 2×2 factorial add up to the total effect, each
// inside its paired bootstrap CI; under macro they are the macro means'.
func TestAttributeClaimShapleyCI(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sizes := []int{50, 300}
	corners := []*analysis.Series{
		groupSeries(r, sizes, []float64{0.5, 0.3}),
		groupSeries(r, sizes, []float64{0.6, 0.35}),
		groupSeries(r, sizes, []float64{0.55, 0.5}),
		groupSeries(r, sizes, []float64{0.7, 0.55}),
	}
	var fac []analysis.FactorialPoint
	for m, s := range corners {
		fac = append(fac, analysis.FactorialPoint{Mask: uint(m), Series: s})
	}
	path := []analysis.PathPoint{{Name: "baseline", Kind: "run", Series: corners[0]}, {Name: "a", Kind: "run", Series: corners[1]}, {Name: "b", Kind: "run", Series: corners[3]}}
	for _, agg := range []analysis.Aggregate{analysis.Micro, analysis.Macro} {
		ca, err := analysis.AttributeClaim(analysis.ClaimSpec{Task: "grp", Card: 0.7, Aggregate: agg}, path, nil, []string{"a", "b"}, fac, analysis.AttributionOptions{Seed: 1, Resamples: 2000})
		if err != nil {
			t.Fatal(err)
		}
		mean := func(s *analysis.Series) float64 {
			if agg == analysis.Macro {
				return memberMeans(s)
			}
			return s.Mean()
		}
		total := mean(corners[3]) - mean(corners[0])
		if len(ca.Shapley) != 2 || math.Abs(ca.Shapley[0].Value+ca.Shapley[1].Value-total) > 1e-12 {
			t.Fatalf("%s: Shapley %+v, total %v", agg, ca.Shapley, total)
		}
		// Shapley of a: half its effect alone plus half its effect after b.
		wantA := 0.5*(mean(corners[1])-mean(corners[0])) + 0.5*(mean(corners[3])-mean(corners[2]))
		if math.Abs(ca.Shapley[0].Value-wantA) > 1e-12 {
			t.Errorf("%s: Shapley of a %v, want %v", agg, ca.Shapley[0].Value, wantA)
		}
		for _, v := range ca.Shapley {
			if !(v.CILow < v.Value && v.Value < v.CIHigh) {
				t.Errorf("%s: %+v outside its CI", agg, v)
			}
		}
	}
}
