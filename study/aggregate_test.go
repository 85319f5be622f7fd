package study_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/examples"
	"github.com/evalcapsule/evalcapsule/study"
)

// llamaMMLUSimulated is the Llama MMLU example as the simulated backend
// can run it: the backend writes lm-eval's mmlu (57 subjects, acc), not
// mmlu_llama, so the claim's task, metric and filter are mmlu's; the
// claim, its aggregate and settings, the baseline, steps and variants are
// the example's. A limit of 150 questions keeps the subjects of unequal
// sizes (100 to 150), so that the macro and micro means differ.
func llamaMMLUSimulated(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../examples/llama-3.2-1b-instruct-mmlu/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, r := range [][2]string{
		{"task: mmlu_llama", "task: mmlu"}, {"tasks: [mmlu_llama]", "tasks: [mmlu]"},
		{"metric: exact_match", "metric: acc"}, {"filter: strict_match", "filter: none"},
		{"runner: {kind: local}", "runner: {kind: simulated}"},
		{"model: {id: meta-llama/Llama-3.2-1B-Instruct}", "model: {id: simulated/model-1b}"},
		{"  num_fewshot: 5\n", "  num_fewshot: 5\n  limit: 150\n"},
	} {
		if !strings.Contains(s, r[0]) {
			t.Fatalf("the example no longer has %q", r[0])
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	return s
}

// subjectMeans is lm-eval's acc,none of every mmlu subject of a run, from
// its results file.
func subjectMeans(t *testing.T, s *study.Study, run string) (macro, micro float64, k int) {
	t.Helper()
	_, doc := readResults(t, s, run)
	results := doc["results"].(map[string]any)
	groups := doc["group_subtasks"].(map[string]any)
	sum := 0.0
	for name, v := range results {
		if _, isGroup := groups[name]; isGroup || !strings.HasPrefix(name, "mmlu_") {
			continue
		}
		sum += v.(map[string]any)["acc,none"].(float64)
		k++
	}
	return sum / float64(k), results["mmlu"].(map[string]any)["acc,none"].(float64), k
}

// The Llama MMLU example states the card's macro aggregate, and its
// attribution is the mean of the subject means throughout: baseline and
// final equal the mean of lm-eval's per-subject scores, not its group
// score.
func TestAttributeLlamaMMLUMacro(t *testing.T) {
	s := simulateStudy(t, llamaMMLUSimulated(t), 5, 0)
	if got := s.Card.Claims[0].Aggregate; got != "macro" {
		t.Fatalf("the example's claim has aggregate %q, want macro (the card's macro_avg/acc)", got)
	}
	att, err := study.Attribute(context.Background(), s, analysis.AttributionOptions{Seed: 1, Resamples: 500})
	if err != nil {
		t.Fatal(err)
	}
	c := att.Claims[0]
	if c.Aggregate != analysis.Macro || !c.AggregateStated || c.Members != 57 {
		t.Fatalf("aggregate %q (stated %v) over %d members, want macro over 57", c.Aggregate, c.AggregateStated, c.Members)
	}
	for run, got := range map[string]float64{"baseline": c.Baseline, "step-1-chat-template-few-shot-as-turns": c.Final} {
		macro, micro, k := subjectMeans(t, s, run)
		if k != 57 {
			t.Fatalf("%s: %d subjects", run, k)
		}
		if math.Abs(macro-micro) < 1e-4 {
			t.Fatalf("%s: macro %v and micro %v too close to tell apart", run, macro, micro)
		}
		if math.Abs(got-macro) > 1e-12 {
			t.Errorf("%s: attributed %v, the mean of the 57 subject scores is %v (lm-eval's micro group score %v)", run, got, macro, micro)
		}
	}
	st := c.Steps[0]
	if math.Abs(st.Value-c.Final) > 1e-12 || math.Abs(st.Delta-(c.Final-c.Baseline)) > 1e-12 || !(st.CILow <= st.Delta && st.Delta <= st.CIHigh) {
		t.Errorf("step %+v, baseline %v, final %v", st, c.Baseline, c.Final)
	}
	for _, v := range c.Sensitivity {
		if !(v.CILow <= v.Delta && v.Delta <= v.CIHigh) {
			t.Errorf("variant %+v", v)
		}
	}
	if !strings.Contains(c.Statement, "macro mean over 57 members") || strings.Contains(c.Statement, "states no aggregate") {
		t.Errorf("statement %q", c.Statement)
	}
}

// A group claim that states no aggregate is attributed as lm-eval's micro
// mean, and the statement says so with the macro mean beside it.
func TestAttributeGroupAggregateNotStated(t *testing.T) {
	s := simulateStudy(t, strings.Replace(mmluStudy, "limit: 12", "limit: 150", 1), 5, 0)
	att, err := study.Attribute(context.Background(), s, analysis.AttributionOptions{Seed: 1, Resamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	c := att.Claims[0]
	macro, micro, _ := subjectMeans(t, s, "step-1-chat-template-on")
	if c.Aggregate != analysis.Micro || c.AggregateStated || math.Abs(c.Final-micro) > 1e-12 {
		t.Errorf("aggregate %q stated %v final %v, want micro %v", c.Aggregate, c.AggregateStated, c.Final, micro)
	}
	want := fmt.Sprintf("the claim states no aggregate: these are lm-eval's micro means over the documents of 57 members (the final run's macro mean, over members, is %.1f)", 100*macro)
	if !strings.Contains(c.Statement, want) {
		t.Errorf("statement %q\nwant it to contain %q", c.Statement, want)
	}
}

// A claim's aggregate and a study's factorial are checked when the file is
// read, each error naming its line.
func TestParseAggregateAndFactorial(t *testing.T) {
	withFactorial := func(f string) string { return demoStudy + "factorial: " + f + "\n" }
	for _, c := range []struct{ yaml, want string }{
		{strings.Replace(demoStudy, "value: 0.45,", "value: 0.45, aggregate: mean,", 1), `:6: card.claims[0].aggregate: expected micro`},
		{withFactorial(`["8-shot", "no such step"]`), `:19: factorial[1]: unknown step "no such step" (the run steps are "8-shot", "chat template on")`},
		{withFactorial(`["flexible extraction"]`), `:19: factorial[0]: step "flexible extraction" re-scores the previous run`},
		{withFactorial(`["8-shot", "8-shot"]`), `:19: factorial[1]: step "8-shot" named twice`},
		{withFactorial(`[a, b, c, d, e]`), `:19: factorial: a factorial of 5 steps needs 32 runs; at most 4 steps`},
		{withFactorial(`8-shot`), `:19: factorial: expected a list of step names`},
	} {
		_, err := study.Parse("study.yaml", []byte(c.yaml))
		if !errors.Is(err, study.ErrStudy) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v\nwant an error containing %q", err, c.want)
		}
	}
	s, err := study.Parse("study.yaml", []byte(strings.Replace(demoStudy, "value: 0.45,", "value: 0.45, aggregate: macro,", 1)))
	if err != nil || s.Card.Claims[0].Aggregate != "macro" {
		t.Fatalf("%v %+v", err, s)
	}
}

// factorialStudy has three run steps and names two of them as a
// factorial: of its four corners the baseline and the first step are runs
// already, the other two are planned.
const factorialStudy = `study: factorial
model: {id: simulated/model-1b}
card:
  claims:
    - {task: gsm8k, metric: exact_match, filter: strict-match, value: 0.45,
       settings: {num_fewshot: 8, apply_chat_template: true, fewshot_as_multiturn: true}}
harness: {version: 0.4.9.1}
runner: {kind: simulated}
baseline: {model: hf, tasks: [gsm8k], num_fewshot: 5, batch_size: 8, seed: [0, 1234, 1234, 1234], log_samples: true}
steps:
  - {name: "8-shot", set: {num_fewshot: 8}}
  - {name: "float16", set: {model_args: {dtype: float16}}}
  - {name: "chat template on", set: {apply_chat_template: true}}
variants:
  - {num_fewshot: 0}
factorial: ["8-shot", "chat template on"]
`

// The planner adds the factorial's missing corners, named by their bits,
// and the attribution computes the Shapley values over them, each with a
// paired bootstrap CI.
func TestFactorialPlannedAndAttributed(t *testing.T) {
	s := simulateStudy(t, factorialStudy, 3, 400)
	var corners []string
	for _, pr := range s.Plan() {
		if pr.Role == "factorial" {
			corners = append(corners, pr.Name+" "+pr.Label)
		}
	}
	if want := []string{"factorial-01 factorial: chat template on", "factorial-11 factorial: 8-shot + chat template on"}; strings.Join(corners, "|") != strings.Join(want, "|") {
		t.Fatalf("planned corners %q, want %q", corners, want)
	}
	opts := analysis.AttributionOptions{Seed: 1, Resamples: 1000}
	att, err := study.Attribute(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := att.Claims[0]
	if len(c.Shapley) != 2 || c.Interaction == nil || c.Shapley[0].Setting != "8-shot" || c.Shapley[1].Setting != "chat template on" {
		t.Fatalf("Shapley %+v", c.Shapley)
	}
	// The values add up to the full corner's score minus the baseline's.
	runs, err := study.LoadRuns(context.Background(), s, analysis.RescoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	full, _ := runs["factorial-11"].Lookup("gsm8k", "exact_match", "strict-match")
	total := full.Mean() - c.Baseline
	phi := c.Shapley[0].Value + c.Shapley[1].Value
	if math.Abs(phi-total) > 1e-9 {
		t.Errorf("Shapley values sum to %v, the full corner's effect is %v", phi, total)
	}
	for _, v := range c.Shapley {
		if !(v.CILow < v.Value && v.Value < v.CIHigh) {
			t.Errorf("%s: value %v outside its CI [%v, %v]", v.Setting, v.Value, v.CILow, v.CIHigh)
		}
	}
	again, err := study.Attribute(context.Background(), s, opts)
	if err != nil || again.Claims[0].Shapley[0] != c.Shapley[0] {
		t.Errorf("not reproducible with the seed: %+v, then %+v (%v)", c.Shapley[0], again.Claims[0].Shapley[0], err)
	}
	// Holm over the claim's four tests (three steps, one variant).
	var ps []float64
	for _, st := range c.Steps {
		ps = append(ps, st.P)
	}
	ps = append(ps, c.Sensitivity[0].P)
	adj := analysis.HolmAdjust(ps)
	for i, st := range c.Steps {
		if st.PHolm != adj[i] || st.PHolm < st.P {
			t.Errorf("%s: Holm p %v, want %v (raw %v)", st.Name, st.PHolm, adj[i], st.P)
		}
	}
	if c.Sensitivity[0].PHolm != adj[3] || c.HolmFamily != "Holm over this claim's 4 McNemar tests (3 steps, 1 variant)" {
		t.Errorf("variant Holm p %v, want %v; family %q", c.Sensitivity[0].PHolm, adj[3], c.HolmFamily)
	}
	// fewshot_as_multiturn is stated by the card and run by no step.
	rows := map[string]analysis.SettingRow{}
	for _, r := range c.Settings {
		rows[r.Setting] = r
	}
	if r := rows["num_fewshot"]; r.Card != "8" || r.Baseline != "5" || r.Final != "8" || !r.Match {
		t.Errorf("num_fewshot row %+v", r)
	}
	if r := rows["fewshot_as_multiturn"]; r.Card != "true" || r.Final != "false" || r.Match {
		t.Errorf("fewshot_as_multiturn row %+v", r)
	}
	if want := "(card: few-shot as turns; final run: few-shot in one turn)"; !strings.Contains(c.Statement, want) {
		t.Errorf("statement %q does not name the unmatched setting %s", c.Statement, want)
	}
}

// The demo's report shows the settings table; read back from the HTML, it
// is the attribution's.
func TestDemoReportSettingsTable(t *testing.T) {
	s := simulateStudy(t, string(examples.DemoStudy), 1, 200)
	rep, err := study.BuildReport(context.Background(), s, study.ReportOptions{Attribution: analysis.AttributionOptions{Seed: 1, Resamples: 200}})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	if _, err := rep.WriteFiles(out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	table := regexp.MustCompile(`(?s)<table class="settings" data-claim="0">.*?</table>`).Find(b)
	if table == nil {
		t.Fatal("no settings table in the report")
	}
	row := regexp.MustCompile(`<tr data-setting="([^"]+)"><td><code>[^<]*</code></td><td data-field="card">([^<]*)</td><td data-field="baseline">([^<]*)</td><td data-field="final">([^<]*)</td><td data-field="match"[^>]*>(yes|NO)</td></tr>`)
	got := row.FindAllSubmatch(table, -1)
	want := rep.Claims[0].Settings
	if len(want) != 3 || len(got) != len(want) {
		t.Fatalf("%d rows in the HTML, %d in the attribution (want 3):\n%s", len(got), len(want), table)
	}
	dash := func(s string) string {
		if s == "" {
			return "–"
		}
		return s
	}
	for i, g := range got {
		w := want[i]
		match := "NO"
		if w.Match {
			match = "yes"
		}
		if string(g[1]) != w.Setting || html.UnescapeString(string(g[2])) != dash(w.Card) || html.UnescapeString(string(g[3])) != dash(w.Baseline) ||
			html.UnescapeString(string(g[4])) != dash(w.Final) || string(g[5]) != match {
			t.Errorf("row %d: HTML %q, attribution %+v", i, g[1:], w)
		}
	}
	// The demo's card: 8-shot, chat template, 1024-token generations; its
	// baseline has none of them and its last run step all.
	if r := want[0]; r.Setting != "num_fewshot" || r.Card != "8" || r.Baseline != "5" || r.Final != "8" || !r.Match {
		t.Errorf("num_fewshot row %+v", r)
	}
	if r := want[2]; r.Setting != "gen_kwargs.max_gen_toks" || r.Baseline != "" || r.Final != "1024" || !r.Match {
		t.Errorf("max_gen_toks row %+v", r)
	}
}
