package analysis_test

import (
	"math"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

func TestUncertainty(t *testing.T) {
	out := small(t, simulate.Options{Seed: 12, MMLUDocsPerSubject: 20})
	sc := load(t, out.Dir)
	u := analysis.Uncertainty(sc, 0.95, 1)
	var mmlu *analysis.ScoreUncertainty
	for i := range u.Scores {
		s := &u.Scores[i]
		if s.Task == "mmlu" {
			mmlu = s
		}
		for _, iv := range s.Intervals {
			if !(iv.Lo <= iv.Value && iv.Value <= iv.Hi) {
				t.Errorf("%s %s: %v outside its interval", s.Task, iv.Method, iv)
			}
		}
	}
	if mmlu == nil || mmlu.Group == nil {
		t.Fatal("no mmlu group")
	}
	g := mmlu.Group
	// The micro average is the mean over all questions, which lm-eval
	// reports for mmlu (its group is weighted by size).
	var reported float64
	for _, s := range out.Scores {
		if s.Task == "mmlu" {
			reported = s.Value
		}
	}
	if g.K != 57 || g.N != 57*20 || math.Abs(g.Micro-reported) > 1e-12 || math.Abs(mmlu.Intervals[0].Value-reported) > 1e-12 {
		t.Errorf("mmlu: %+v, reported %v", g, reported)
	}
	if !(g.ClusteredCorrected > g.Clustered && g.MacroStderr > 0) {
		t.Errorf("mmlu: %+v", g)
	}
	if !strings.Contains(u.String(), "macro") {
		t.Error("the table does not show the macro average")
	}
}
