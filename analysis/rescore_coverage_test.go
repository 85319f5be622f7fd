package analysis

import (
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
)

// TestCoverageFollowsRescore checks the coverage probe against the
// re-scorer itself on every fixture with complete samples: each check that
// reached rescored or reaggregated must be predicted at that level from
// the configuration alone, so that the coverage counts what the dispatch
// does, and no more.
func TestCoverageFollowsRescore(t *testing.T) {
	outs, err := harness.Find(fixtures(t))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Rescore(t.Context(), outs, RescoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cov := CoverageOf(outs)
	type key struct{ path, task, metric, filter string }
	predicted := map[key]Level{}
	for _, e := range cov.Entries {
		predicted[key{e.Path, e.Task, e.Metric, e.Filter}] = e.Level
	}
	compared := 0
	for _, run := range rep.Runs {
		if isTrimmed(run.Path) {
			continue
		}
		for _, c := range run.Checks {
			if c.Level != LevelRescored && c.Level != LevelReaggregated {
				continue
			}
			p, ok := predicted[key{run.Path, c.Task, c.Metric, c.Filter}]
			if !ok {
				continue // a metric only the samples hold
			}
			compared++
			if p != c.Level {
				t.Errorf("%s: %s %s,%s: coverage says %s, rescore reached %s (%s)", run.Path, c.Task, c.Metric, c.Filter, p, c.Level, c.Reason)
			}
		}
	}
	if compared < 35 {
		t.Errorf("only %d checks compared", compared)
	}
}

// TestCoverageIssue19Tasks: on the fixtures, every entry of the tasks of
// issue 19 they contain (truthfulqa_gen) is re-scorable from the raw
// responses, and an unknown process_results or a custom aggregation is
// not counted as such.
func TestCoverageIssue19Tasks(t *testing.T) {
	outs, err := harness.Find(fixtures(t))
	if err != nil {
		t.Fatal(err)
	}
	cov := CoverageOf(outs)
	n := 0
	for _, e := range cov.Entries {
		if e.Task == "truthfulqa_gen" {
			n++
			if e.Level != LevelRescored {
				t.Errorf("%s: %s %s: %s (%s)", e.Path, e.Task, e.Metric, e.Level, e.Reason)
			}
		}
	}
	if n != 24 {
		t.Errorf("%d truthfulqa_gen entries, want 2 files × 12", n)
	}
	if cov.Share <= 0 || cov.Share > 1 || cov.Rescored+cov.Reaggregated+cov.None+cov.Group != len(cov.Entries) {
		t.Errorf("inconsistent counts: %+v", cov)
	}

	cfg := func(src string) harness.Value {
		v, err := harness.ParseJSON([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		cfg, metric string
		want        Level
	}{
		{`{"output_type": "generate_until", "process_results": "def process_results(doc, results):\n    return {\"acc\": 1}\n", "metric_list": [{"metric": "acc"}]}`, "acc", LevelReaggregated},
		{`{"output_type": "multiple_choice", "metric_list": [{"metric": "f1", "aggregation": "<function macro_f1 at 0x7f>"}]}`, "f1", LevelNone},
		{`{"output_type": "generate_until", "metric_list": [{"metric": "bleu"}]}`, "bleu", LevelRescored},
		{`{"output_type": "generate_until", "metric_list": [{"metric": "chrf"}]}`, "chrf", LevelRescored},
		{`{"output_type": "generate_until", "metric_list": [{"metric": "ter"}]}`, "ter", LevelRescored},
		{`{"output_type": "generate_until", "metric_list": [{"metric": "brier_score"}]}`, "brier_score", LevelNone},
		{`{"output_type": "multiple_choice", "metric_list": [{"metric": "acc"}]}`, "acc", LevelRescored},
	} {
		ts := newTaskScorer("t", cfg(c.cfg), versionRules{emptyTupleFallback: true})
		if got, why := ts.probe(c.metric, "none"); got != c.want {
			t.Errorf("%s: %s, want %s (%s)", c.cfg, got, c.want, why)
		}
	}
}

// TestLevelsReadBack: a --json document written before the level counts
// existed reads with the counts of its checks; one that has them keeps
// them as written.
func TestLevelsReadBack(t *testing.T) {
	checks := `{"runs": [{"path": "p", "checks": [{"task": "t", "metric": "acc", "level": "rescored", "status": "exact"}, {"task": "g", "metric": "acc", "level": "group", "status": "exact"}]}]`
	for _, c := range []struct {
		doc  string
		want LevelCounts
	}{
		{checks + `}`, LevelCounts{Rescored: 1, Group: 1}},
		{checks + `, "levels": {"rescored": 9}}`, LevelCounts{Rescored: 9}},
	} {
		var r RescoreReport
		if err := r.UnmarshalJSON([]byte(c.doc)); err != nil {
			t.Fatal(err)
		}
		if r.Levels != c.want {
			t.Errorf("%s: levels %+v, want %+v", c.doc, r.Levels, c.want)
		}
	}
}
