package analysis_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/fixtures"
)

// lmEvalFixtures is the folder of real lm-eval outputs shared with the
// project; tests skip when it is missing, unless CI (internal/fixtures).
func lmEvalFixtures(t *testing.T) string {
	t.Helper()
	return fixtures.Dir(t, "lm-eval")
}

// reportedResult is what a results file says of metric,filter of a task.
func reportedResult(r *harness.Results, task, metric, filter string) (float64, bool) {
	t, ok := r.Task(task)
	if !ok {
		return 0, false
	}
	for _, m := range t.Metrics {
		if m.Metric == metric && m.Filter == filter && m.Value.Kind == harness.Number {
			return m.Value.Num, true
		}
	}
	return 0, false
}

// TestCounterfactualReproducesLoggedFilters: on real gsm8k runs, the
// counterfactual with the task's own strict-match regex (and its
// flexible-extract regex with group_select -1) reproduces the score lm-eval
// reported for that filter to the bit, with no document flipping; the
// strict regex against the flexible filter flips exactly the documents
// whose logged values differ between the two filters.
func TestCounterfactualReproducesLoggedFilters(t *testing.T) {
	dir := lmEvalFixtures(t)
	for _, path := range []string{
		filepath.Join(dir, "phi3mini-gsm8k-thesis", "gsm8k-phi-3-mini_2025-08-07T11-42-40.066002.json"),
		filepath.Join(dir, "..", "labelled", "labels-gsm8k-llada-8b-base", "results_2025-12-06T19-57-35.097823.json"),
	} {
		sc := load(t, path)
		res := sc.Run.Output.Results
		for _, c := range []struct {
			filter, regex string
			group         int
		}{
			{"strict-match", `#### (\-?[0-9\.\,]+)`, 0},
			{"flexible-extract", `(-?[$0-9.,]{2,})|(-?[0-9]+)`, -1},
		} {
			rep, err := analysis.CounterfactualScore(sc, analysis.CounterfactualOptions{Task: "gsm8k", Regex: c.regex, GroupSelect: c.group, Filter: c.filter})
			if err != nil {
				t.Fatalf("%s %s: %v", path, c.filter, err)
			}
			t.Logf("%s %s: logged %v, regex %v, reported %v", filepath.Base(path), c.filter, rep.Logged, rep.Counterfactual, rep.Reported)
			want, ok := reportedResult(res, "gsm8k", "exact_match", c.filter)
			if !ok {
				t.Fatalf("%s: no reported exact_match,%s", path, c.filter)
			}
			if rep.Counterfactual != want || rep.Logged != want || rep.Gained+rep.Lost != 0 || rep.Comparison.Delta != 0 {
				t.Errorf("%s %s: counterfactual %v, logged %v, lm-eval reported %v; flips %d/%d", path, c.filter, rep.Counterfactual, rep.Logged, want, rep.Gained, rep.Lost)
			}
		}
	}

	// The strict regex against the flexible filter: every document whose
	// logged values differ between the filters flips, and only those.
	path := filepath.Join(dir, "phi3mini-gsm8k-thesis", "gsm8k-phi-3-mini_2025-08-07T11-42-40.066002.json")
	sc := load(t, path)
	strict, _ := sc.Find("gsm8k", "exact_match", "strict-match")
	flex, _ := sc.Find("gsm8k", "exact_match", "flexible-extract")
	lost := 0
	for i := range flex.Values {
		if flex.Values[i] > strict.Values[i] {
			lost++
		}
	}
	rep, err := analysis.CounterfactualScore(sc, analysis.CounterfactualOptions{Task: "gsm8k", Regex: `#### (\-?[0-9\.\,]+)`, Filter: "flexible-extract", MaxFlips: 100})
	if err != nil {
		t.Fatal(err)
	}
	if lost == 0 || rep.Lost != lost || rep.Gained != 0 || len(rep.Flips) != lost || rep.Comparison.AOnly != lost {
		t.Errorf("strict regex vs flexible-extract: %d lost, %d gained, %d flips listed; the logged values give %d", rep.Lost, rep.Gained, len(rep.Flips), lost)
	}
	for _, f := range rep.Flips {
		if f.Gained || f.Regex != "[invalid]" && f.Regex == f.Logged {
			t.Errorf("flip %+v", f)
		}
	}
}

// TestCounterfactualRefusals: a pattern Python's re refuses names its
// position; a multiple-choice task (no text to extract from) is refused
// with why; an unknown filter lists the logged ones.
func TestCounterfactualRefusals(t *testing.T) {
	sc := load(t, filepath.Join(lmEvalFixtures(t), "phi3mini-gsm8k-thesis", "gsm8k-phi-3-mini_2025-08-07T11-42-40.066002.json"))
	_, err := analysis.CounterfactualScore(sc, analysis.CounterfactualOptions{Task: "gsm8k", Regex: `#### (\d+`})
	var re *analysis.RegexError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "position 5") {
		t.Errorf("unbalanced pattern: got %v", err)
	}
	_, err = analysis.CounterfactualScore(sc, analysis.CounterfactualOptions{Task: "gsm8k", Regex: `(\d+)`, Filter: "strict"})
	if !errors.Is(err, analysis.ErrNoSeries) || !strings.Contains(err.Error(), "strict-match, flexible-extract") {
		t.Errorf("unknown filter: got %v", err)
	}

	copa := load(t, writeCopa(t, nil))
	_, err = analysis.CounterfactualScore(copa, analysis.CounterfactualOptions{Task: "copa", Metric: "acc", Regex: `(\d+)`})
	if !errors.Is(err, analysis.ErrNotRecomputable) || !strings.Contains(err.Error(), "multiple_choice") || !strings.Contains(err.Error(), "log-likelihoods") {
		t.Errorf("copa: got %v", err)
	}
}
