package analysis

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	testfixtures "github.com/evalcapsule/evalcapsule/internal/fixtures"
)

// fixtures is the folder of real lm-eval outputs shared with the project.
// Tests skip when it is missing, unless CI (see package internal/fixtures).
func fixtures(t testing.TB) string {
	t.Helper()
	return testfixtures.Dir(t, "lm-eval")
}

func rescorePaths(t *testing.T, paths ...string) *RescoreReport {
	t.Helper()
	outs, err := harness.Find(paths...)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Rescore(context.Background(), outs, RescoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// trimmed lists the fixture runs whose samples their authors cut down to a
// few lines: their per-doc values must re-score exactly, but lm-eval's
// aggregate over the full run cannot be recomputed from them.
var trimmed = []string{"gemma3-12b-gsm8k-pyfade", "gemma3-12b-mmlu-pro-plus-pyfade", "tinyllama-gsm8k-olot"}

func isTrimmed(path string) bool {
	for _, t := range trimmed {
		if strings.Contains(path, "/"+t+"/") {
			return true
		}
	}
	return false
}

// TestFixturesAcceptance is the acceptance criterion: every results
// file with samples has every metric and stderr recomputed exactly, at level
// rescored or reaggregated; every group aggregate is recomputed exactly from
// member values; nothing differs anywhere.
func TestFixturesAcceptance(t *testing.T) {
	rep := rescorePaths(t, fixtures(t))
	if len(rep.Runs) < 30 {
		t.Fatalf("only %d runs found", len(rep.Runs))
	}
	var withSamples, tasksExact, groupsExact int
	for _, run := range rep.Runs {
		hasSamples := false
		for _, c := range run.Checks {
			if c.Level == LevelRescored || c.Level == LevelReaggregated {
				hasSamples = true
			}
		}
		if hasSamples {
			withSamples++
		}
		for _, c := range run.Checks {
			where := run.Path + ": " + c.Task + " " + c.Metric + "," + c.Filter
			if c.Status == StatusDiffers {
				t.Errorf("%s differs: %s", where, c.Reason)
				continue
			}
			switch {
			case c.Level == LevelGroup:
				if c.Status != StatusExact {
					t.Errorf("%s: group %s", where, c.Status)
				}
				groupsExact++
			case c.Reason == reasonNoSamples:
			case isTrimmed(run.Path):
				// Per-doc values re-scored, all identical; aggregate out of
				// reach, and the reason must say why.
				if c.Level == LevelRescored && (!strings.Contains(c.Reason, "n-samples says") || !strings.Contains(c.Reason, "every logged line re-scores")) {
					t.Errorf("%s: trimmed samples not reported as incomplete: %s", where, c.Reason)
				}
				if len(c.DocDiffs) > 0 {
					t.Errorf("%s: per-doc differences %+v", where, c.DocDiffs)
				}
			case hasSamples:
				if c.Status != StatusExact || (c.Level != LevelRescored && c.Level != LevelReaggregated) {
					t.Errorf("%s: %s at level %s: %s", where, c.Status, c.Level, c.Reason)
				}
				tasksExact++
			}
		}
	}
	// 5 phi-3 runs × 2 filters, truthfulqa 12 × 2, nugen aibe 1.
	if tasksExact != 35 {
		t.Errorf("%d task metrics exact from samples, want 35", tasksExact)
	}
	// 7 "0.4.3" files × 5 MMLU groups, 3 v0.4.7+ files × 5 (+ xnli etc.),
	// the two mmlu_pro_plus groups, the two steer groups.
	if groupsExact < 60 {
		t.Errorf("only %d group aggregates exact", groupsExact)
	}
	if withSamples < 10 {
		t.Errorf("only %d runs with samples", withSamples)
	}
}

// TestGroupRulePerVersion checks that each fixture's group stderr is matched
// by the rule of its release and not by the other: pooled over the four
// categories for the "0.4.3" files, over the 57 leaves for the v0.4.7+ ones.
func TestGroupRulePerVersion(t *testing.T) {
	dir := filepath.Join(fixtures(t), "harness-pr2809-mmlu-groups")
	for _, c := range []struct {
		path, version, rule string
	}{
		{"results-0.4.3/google__gemma-2-2b", "0.4.3", "over 4 direct members"},
		{"results/meta-llama__Llama-3.2-1B", "0.4.4–0.4.8", "over 57 leaf tasks"},
	} {
		rep := rescorePaths(t, filepath.Join(dir, c.path))
		run := rep.Runs[0]
		if run.LMEvalVersion != c.version {
			t.Errorf("%s: version %s, want %s", c.path, run.LMEvalVersion, c.version)
		}
		for _, ch := range run.Checks {
			if ch.Task == "mmlu" && (!strings.Contains(ch.Reason, c.rule) || ch.Status != StatusExact) {
				t.Errorf("%s: mmlu %s: %s", c.path, ch.Status, ch.Reason)
			}
		}
	}
}
