package simulate_test

import (
	"github.com/evalcapsule/evalcapsule/internal/fixtures"

	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

// releases are the lm-eval releases the simulator writes.
var releases = []string{"0.4.3", "0.4.4", "0.4.5", "0.4.6", "0.4.7", "0.4.8", "0.4.9", "0.4.9.1", "0.4.9.2", "0.4.10", "0.4.11"}

// TestRescore_EveryVersion re-scores a small simulated run of every release
// the simulator writes with the project's re-scorer, which re-derives each
// number the way that release computes it: every check must be exact, at
// the level the release's files allow, and the release must be one the
// re-scorer's version evidence admits.
func TestRescore_EveryVersion(t *testing.T) {
	for _, v := range releases {
		t.Run(v, func(t *testing.T) {
			for _, py := range []string{"3.10.12", "3.12.3"} {
				out, err := simulate.Generate(t.TempDir(), simulate.Options{Seed: 21, GSM8KDocs: 40, MMLUDocsPerSubject: 6, LMEvalVersion: v, PythonVersion: py})
				if err != nil {
					t.Fatal(err)
				}
				outs, err := harness.Find(out.Dir)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{})
				if err != nil {
					t.Fatal(err)
				}
				exact, differs, nr := rep.Counts()
				if differs+nr != 0 || exact != 2+57+5 {
					t.Fatalf("Python %s: %d exact, %d differ, %d not recomputable:\n%s", py, exact, differs, nr, rep)
				}
				run := rep.Runs[0]
				ver := harness.MustVersion(v)
				if ver.AtLeast(harness.Version{0, 4, 9}) {
					if run.LMEvalVersion != v {
						t.Errorf("re-scorer reads lm-eval %s, want %s", run.LMEvalVersion, v)
					}
				} else {
					// No lm_eval_version: the keys, the samples and (for
					// v0.4.3) the group rule narrow the range.
					lo, hi, ok := strings.Cut(run.LMEvalVersion, "–")
					if !ok {
						hi = lo
					}
					if ver.Less(harness.MustVersion(lo)) || harness.MustVersion(hi).Less(ver) {
						t.Errorf("re-scorer's range %s excludes %s", run.LMEvalVersion, v)
					}
				}
				for _, c := range run.Checks {
					switch {
					case c.Task == "mmlu" || strings.HasPrefix(c.Reason, "size-weighted"):
						want := "leaf tasks"
						if ver == (harness.Version{0, 4, 3}) {
							want = "direct members"
						}
						if c.Level != analysis.LevelGroup || !strings.Contains(c.Reason, want) {
							t.Errorf("%s: group check %s: %s", v, c.Task, c.Reason)
						}
					case c.Level != analysis.LevelRescored:
						t.Errorf("%s: %s %s,%s only %s: %s", v, c.Task, c.Metric, c.Filter, c.Level, c.Reason)
					}
				}
				if g := find(t, rep, "mmlu"); g.N != 57*6 {
					t.Errorf("mmlu over %d documents", g.N)
				}
			}
		})
	}
}

func find(t *testing.T, rep *analysis.RescoreReport, task string) analysis.Check {
	t.Helper()
	for _, c := range rep.Runs[0].Checks {
		if c.Task == task {
			return c
		}
	}
	t.Fatalf("no check of %s", task)
	return analysis.Check{}
}

// TestExecutor_PinnedVersion runs a planned record that pins lm-eval 0.4.3
// through the Executor: the output is in 0.4.3's format and carries the
// planted harness effect; a release the simulator does not write fails the
// run, naming it, before anything is written.
func TestExecutor_PinnedVersion(t *testing.T) {
	five := 5
	limit := 200.0
	rec := &harness.RunRecord{
		Spec:    harness.RunSpec{Tasks: []string{"gsm8k"}, NumFewshot: &five, Limit: &limit},
		Harness: harness.HarnessInfo{Version: "0.4.3"},
		Model:   harness.ModelInfo{ID: "org/model"},
	}
	ex := simulate.Executor{Effects: simulate.DefaultEffects()}
	scores := map[string]float64{}
	for _, v := range []string{"0.4.3", "0.4.9.1"} {
		rec.Harness.Version = v
		dir := t.TempDir()
		if err := ex.Execute(context.Background(), rec, dir, func(harness.Progress) {}); err != nil {
			t.Fatal(err)
		}
		outs, err := harness.Find(dir)
		if err != nil || len(outs) != 1 {
			t.Fatal(outs, err)
		}
		var res map[string]any
		b, _ := os.ReadFile(outs[0].Path())
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		if _, ok := res["lm_eval_version"]; ok != (v == "0.4.9.1") {
			t.Errorf("%s: lm_eval_version %v", v, res["lm_eval_version"])
		}
		scores[v] = res["results"].(map[string]any)["gsm8k"].(map[string]any)["exact_match,flexible-extract"].(float64)
	}
	if !(scores["0.4.3"] < scores["0.4.9.1"]) {
		t.Errorf("planted harness effect missing: %v", scores)
	}

	rec.Harness.Version = "0.4.12"
	dir := t.TempDir()
	err := ex.Execute(context.Background(), rec, dir, func(harness.Progress) {})
	if err == nil || !strings.Contains(err.Error(), "0.4.12") {
		t.Fatalf("a run pinning 0.4.12: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused run wrote %v", entries)
	}
}

// TestVersion043_MatchesRealFile compares the structure of a simulated
// 0.4.3 MMLU run with a results file lm-eval 0.4.3 wrote (5-shot MMLU; shared
// fixtures): the same top-level keys, results, groups, group_subtasks,
// n-shot, versions and n-samples keys in the same order, the same entry
// and config key orders, and the same config values where they do not
// depend on the model or the dataset copy.
func TestVersion043_MatchesRealFile(t *testing.T) {
	real := filepath.Join(fixtures.Dir(t, "lm-eval"), "harness-pr2809-mmlu-groups",
		"results-0.4.3", "google__gemma-2-2b", "results_2025-03-06T19-20-09.274097.json")
	out, err := simulate.Generate(t.TempDir(), simulate.Options{Tasks: []string{"mmlu"}, MMLUDocsPerSubject: 2, LMEvalVersion: "0.4.3"})
	if err != nil {
		t.Fatal(err)
	}
	load := func(path string) (map[string]json.RawMessage, []byte) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m, b
	}
	ours, oursRaw := load(out.ResultsPath)
	theirs, theirsRaw := load(real)
	if a, b := orderedKeys(t, oursRaw), orderedKeys(t, theirsRaw); !slices.Equal(a, b) {
		t.Errorf("top-level keys\n ours   %v\n theirs %v", a, b)
	}
	for _, k := range []string{"results", "groups", "group_subtasks", "configs", "versions", "n-shot", "higher_is_better", "n-samples"} {
		if a, b := orderedKeys(t, ours[k]), orderedKeys(t, theirs[k]); !slices.Equal(a, b) {
			t.Errorf("%s keys\n ours   %v\n theirs %v", k, a, b)
		}
	}
	sub := func(m map[string]json.RawMessage, k string) map[string]json.RawMessage {
		var x map[string]json.RawMessage
		if err := json.Unmarshal(m[k], &x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, k := range []string{"mmlu", "mmlu_stem", "mmlu_social_sciences", "mmlu_anatomy"} {
		for _, where := range []string{"results", "groups"} {
			o, th := sub(ours, where), sub(theirs, where)
			if _, ok := th[k]; !ok {
				continue
			}
			if a, b := orderedKeys(t, o[k]), orderedKeys(t, th[k]); !slices.Equal(a, b) {
				t.Errorf("%s[%s] keys ours %v theirs %v", where, k, a, b)
			}
			var ao, at map[string]any
			json.Unmarshal(o[k], &ao)
			json.Unmarshal(th[k], &at)
			if ao["alias"] != at["alias"] {
				t.Errorf("%s[%s] alias %q, theirs %q", where, k, ao["alias"], at["alias"])
			}
		}
	}
	if a, b := string(sub(ours, "group_subtasks")["mmlu_stem"]), string(sub(theirs, "group_subtasks")["mmlu_stem"]); a != b {
		t.Errorf("group_subtasks[mmlu_stem]\n ours   %s\n theirs %s", a, b)
	}
	for _, k := range []string{"n-shot", "versions", "higher_is_better"} {
		if a, b := string(ours[k]), string(theirs[k]); a != b {
			t.Errorf("%s\n ours   %s\n theirs %s", k, a, b)
		}
	}
	oc, tc := sub(sub(ours, "configs"), "mmlu_anatomy"), sub(sub(theirs, "configs"), "mmlu_anatomy")
	if a, b := orderedKeys(t, sub(ours, "configs")["mmlu_anatomy"]), orderedKeys(t, sub(theirs, "configs")["mmlu_anatomy"]); !slices.Equal(a, b) {
		t.Errorf("config keys\n ours   %v\n theirs %v", a, b)
	}
	for k, v := range tc {
		if k != "metadata" && string(oc[k]) != string(v) {
			t.Errorf("configs[mmlu_anatomy][%s] = %s, theirs %s", k, oc[k], v)
		}
	}
	for _, k := range []string{"tokenizer_pad_token", "eot_token_id"} {
		var a, b []any
		json.Unmarshal(ours[k], &a)
		json.Unmarshal(theirs[k], &b)
		if len(a) == 2 && len(b) == 2 {
			if _, ok := a[1].(float64); !ok {
				t.Errorf("%s %s: the token id is a number in 0.4.3 (theirs %s)", k, ours[k], theirs[k])
			}
		}
	}
}

// orderedKeys returns the keys of a JSON object in file order.
func orderedKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
