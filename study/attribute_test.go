package study_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/study"
)

const demoStudy = `study: demo
model: {id: simulated/model-1b}
card:
  source: https://example.invalid/card
  claims:
    - {task: gsm8k, metric: exact_match, filter: strict-match, value: 0.45,
       settings: {num_fewshot: 8, apply_chat_template: true}}
harness: {version: 0.4.9.1}
runner: {kind: simulated}
baseline: {model: hf, tasks: [gsm8k], num_fewshot: 5, batch_size: 8, seed: [0, 1234, 1234, 1234], log_samples: true}
steps:
  - {name: "8-shot", set: {num_fewshot: 8}}
  - {name: "chat template on", set: {apply_chat_template: true}}
  - {name: "flexible extraction", rescore: {filter: flexible-extract}}
variants:
  - {num_fewshot: 0}
  - {apply_chat_template: true}
  - {model_args: {dtype: float16}}
`

// simulateStudy writes study.yaml and runs every planned run with the
// simulated backend (SIMULATED: no model is run).
func simulateStudy(t *testing.T, yaml string, seed int64, docs int) *study.Study {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "study.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range s.Plan() {
		o, err := simulate.OptionsFor(pr.Spec, seed, simulate.DefaultEffects())
		if err != nil {
			t.Fatal(err)
		}
		o.GSM8KDocs = docs
		if _, err := simulate.Generate(filepath.Join(s.RunDir(pr), "output"), o); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestAttributeRecoversPlantedSteps(t *testing.T) {
	s := simulateStudy(t, demoStudy, 7, 1319)
	att, err := study.Attribute(context.Background(), s, analysis.AttributionOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !att.Simulated || len(att.Claims) != 1 {
		t.Fatalf("%+v", att)
	}
	c := att.Claims[0]
	if len(c.Steps) != 3 || c.Steps[2].Kind != "rescore" {
		t.Fatalf("steps %+v", c.Steps)
	}
	// The planted strict-match effect of each run step follows from the
	// simulation's construction (see analysis' coverage test):
	// E[strict] = accuracy · (1 − truncated) · (1 − format miss) · 0.96.
	expected := func(name string) float64 {
		for _, pr := range s.Plan() {
			if pr.Name == name {
				o, _ := simulate.OptionsFor(pr.Spec, 0, simulate.DefaultEffects())
				return o.GSM8KAccuracy * (1 - o.GSM8KTruncated) * (1 - o.GSM8KFormatMiss) * 0.96
			}
		}
		t.Fatalf("no run %s", name)
		return 0
	}
	runs := []string{"baseline", "step-1-8-shot", "step-2-chat-template-on"}
	for i, st := range c.Steps[:2] {
		planted := expected(runs[i+1]) - expected(runs[i])
		if !(st.CILow <= planted && planted <= st.CIHigh) {
			t.Errorf("%s: planted Δ %.4f outside the CI [%.4f, %.4f] (Δ %.4f)", st.Name, planted, st.CILow, st.CIHigh, st.Delta)
		}
	}
	for _, st := range c.Steps {
		if !(st.CILow <= st.Delta && st.Delta <= st.CIHigh) {
			t.Errorf("%s: Δ %v outside its own CI [%v, %v]", st.Name, st.Delta, st.CILow, st.CIHigh)
		}
	}
	if c.Steps[2].Delta <= 0 || c.Steps[2].P > 0.05 {
		t.Errorf("flexible re-scoring: %+v", c.Steps[2])
	}
	last := c.Baseline
	for _, st := range c.Steps {
		if math.Abs(st.Value-(last+st.Delta)) > 1e-12 {
			t.Errorf("%s: value %v ≠ previous %v + Δ %v", st.Name, st.Value, last, st.Delta)
		}
		last = st.Value
	}
	if c.Final != last || math.Abs(c.Unexplained-(c.Card-c.Final)) > 1e-12 {
		t.Errorf("final %v, unexplained %v", c.Final, c.Unexplained)
	}
	if len(c.Sensitivity) != 3 || !strings.Contains(c.Sensitivity[2].Change, "dtype=float16") {
		t.Errorf("sensitivity %+v", c.Sensitivity)
	}
	if c.Statement == "" {
		t.Error("no statement")
	}
}

func TestAttributeShapleyFactorial(t *testing.T) {
	// Two run steps and a variant with the second alone: {∅, {1}, {2}, {1,2}}.
	yamlText := strings.Replace(demoStudy, "  - {num_fewshot: 0}\n", "", 1)
	s := simulateStudy(t, yamlText, 3, 400)
	att, err := study.Attribute(context.Background(), s, analysis.AttributionOptions{Seed: 1, Resamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	c := att.Claims[0]
	if c.Shapley == nil || c.Interaction == nil {
		t.Fatalf("no Shapley attribution for a full factorial: %+v", c)
	}
	total := c.Steps[1].Value - c.Baseline
	var phi float64
	for _, v := range c.Shapley {
		phi += v.Value
	}
	if math.Abs(phi-total) > 1e-9 {
		t.Errorf("Shapley values sum to %v, total effect %v", phi, total)
	}
}

func TestAttributeMissingRun(t *testing.T) {
	s := simulateStudy(t, demoStudy, 1, 20)
	os.RemoveAll(filepath.Join(s.Dir, "runs", "variant-1-num-fewshot-0"))
	_, err := study.Attribute(context.Background(), s, analysis.AttributionOptions{})
	if err == nil || !strings.Contains(err.Error(), "variant-1-num-fewshot-0") || !strings.Contains(err.Error(), "has not been run") {
		t.Fatalf("got %v", err)
	}
}

const mmluStudy = `study: mmlu
model: {id: simulated/model-1b}
card:
  source: https://example.invalid/card
  claims:
    - {task: mmlu, metric: acc, filter: none, value: 0.49, settings: {apply_chat_template: true}}
harness: {version: 0.4.9.1}
runner: {kind: simulated}
baseline: {model: hf, tasks: [mmlu], num_fewshot: 5, limit: 12, batch_size: 8, seed: [0, 1234, 1234, 1234], log_samples: true}
steps:
  - {name: "chat template on", set: {apply_chat_template: true}}
variants:
  - {num_fewshot: 0}
`

// readResults reads a run's results file as JSON.
func readResults(t *testing.T, s *study.Study, run string) (string, map[string]any) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(s.Dir, "runs", run, "output", "*", "results_*.json"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("results of %s: %v %v", run, paths, err)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return paths[0], doc
}

// A claim on a group (the card's MMLU number) is attributed over the
// documents of all its subjects, and the joined score is lm-eval's group
// score.
func TestAttributeGroupClaim(t *testing.T) {
	s := simulateStudy(t, mmluStudy, 5, 0)
	att, err := study.Attribute(context.Background(), s, analysis.AttributionOptions{Seed: 1, Resamples: 2000})
	if err != nil {
		t.Fatal(err)
	}
	c := att.Claims[0]
	for run, got := range map[string]float64{"baseline": c.Baseline, "step-1-chat-template-on": c.Final} {
		_, doc := readResults(t, s, run)
		want := doc["results"].(map[string]any)["mmlu"].(map[string]any)["acc,none"].(float64)
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: attributed mmlu acc %v, lm-eval reported %v", run, got, want)
		}
	}
	if len(c.Steps) != 1 || len(c.Sensitivity) != 1 {
		t.Fatalf("steps %+v, sensitivity %+v", c.Steps, c.Sensitivity)
	}
	if st := c.Steps[0]; !(st.CILow <= st.Delta && st.Delta <= st.CIHigh) || st.CIHigh-st.CILow <= 0 {
		t.Errorf("step %+v", st)
	}
}

// A group whose score is the plain mean of its members' scores
// (weight_by_size: false) is not the mean of its documents: attributing it
// over them would explain another number, so it is refused.
func TestAttributeGroupNotWeightedBySize(t *testing.T) {
	// Subjects of unequal sizes (100 to 150 questions), so that the two
	// averages differ.
	s := simulateStudy(t, strings.Replace(mmluStudy, "limit: 12", "limit: 150", 1), 5, 0)
	path, doc := readResults(t, s, "baseline")
	results := doc["results"].(map[string]any)
	groups := doc["group_subtasks"].(map[string]any)
	var sum float64
	var k int
	for name, v := range results {
		if _, isGroup := groups[name]; isGroup || !strings.HasPrefix(name, "mmlu_") {
			continue
		}
		sum += v.(map[string]any)["acc,none"].(float64)
		k++
	}
	// Edit the text in place: lm-eval's key order is what marks the file
	// as a results file.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, []byte(`"mmlu": {`))
	loc := regexp.MustCompile(`"acc,none": [^,\n]+`).FindIndex(b[at:])
	if at < 0 || loc == nil {
		t.Fatalf("no mmlu acc,none in %s", path)
	}
	edited := slices.Concat(b[:at+loc[0]], []byte(`"acc,none": `+strconv.FormatFloat(sum/float64(k), 'g', -1, 64)), b[at+loc[1]:])
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = study.Attribute(context.Background(), s, analysis.AttributionOptions{Seed: 1, Resamples: 200})
	if !errors.Is(err, analysis.ErrGroupNotJoinable) || !strings.Contains(err.Error(), "weight_by_size: false") || !strings.Contains(err.Error(), "baseline") {
		t.Fatalf("got %v", err)
	}
}

// The report compares the baseline and the last run on the claim's own
// documents: all of a group's members, not one of them.
func TestReportGroupClaimComparison(t *testing.T) {
	s := simulateStudy(t, mmluStudy, 5, 0)
	rep, err := study.BuildReport(context.Background(), s, study.ReportOptions{Attribution: analysis.AttributionOptions{Seed: 1, Resamples: 500}})
	if err != nil {
		t.Fatal(err)
	}
	rc := rep.Claims[0]
	if rc.Comparison == nil {
		t.Fatal("no comparison for the group claim")
	}
	c := rc.Comparison
	if c.Task != "mmlu" || c.N != 57*12 || c.A != rc.Baseline || c.B != rc.Final {
		t.Errorf("comparison %s n=%d A=%v B=%v; want mmlu over %d documents, A=%v, B=%v", c.Task, c.N, c.A, c.B, 57*12, rc.Baseline, rc.Final)
	}
	if c.AOnly+c.BOnly+c.Both+c.Neither != c.N {
		t.Errorf("flip table %d+%d+%d+%d ≠ n %d", c.AOnly, c.BOnly, c.Both, c.Neither, c.N)
	}
}

// The Markdown twin of the report carries the comparison and the misses
// too, each miss one table row whatever the model wrote.
func TestReportMarkdown(t *testing.T) {
	s := simulateStudy(t, demoStudy, 7, 300)
	rep, err := study.BuildReport(context.Background(), s, study.ReportOptions{Attribution: analysis.AttributionOptions{Seed: 1, Resamples: 500}})
	if err != nil {
		t.Fatal(err)
	}
	rc := &rep.Claims[0]
	if rc.Comparison == nil || rc.Failures == nil || len(rc.Failures.Samples) == 0 {
		t.Fatalf("comparison %v, failures %v", rc.Comparison, rc.Failures)
	}
	rc.Failures.Samples[0].OutputTail = "a | b\n<script>x</script>"
	mdPath, err := rep.WriteFiles(filepath.Join(t.TempDir(), "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	if want := fmt.Sprintf("| documents | %d |", rc.Comparison.N); !strings.Contains(md, want) {
		t.Errorf("no %q in\n%s", want, md)
	}
	if want := fmt.Sprintf("Misses of the last run (strict-match): %d of %d documents", rc.Failures.NMisses, rc.Failures.N); !strings.Contains(md, want) {
		t.Errorf("no %q in\n%s", want, md)
	}
	rows := 0
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, fmt.Sprintf("| %d | ", rc.Failures.Samples[0].DocID)) {
			continue
		}
		rows++
		// doc_id, class, target, final answer, extracted, end of the output
		if bars := strings.Count(line, "|") - strings.Count(line, `\|`); bars != 7 || strings.Contains(line, "<script>") {
			t.Errorf("miss row not one escaped row of 6 cells: %s", line)
		}
		if want := "| " + rc.Failures.Samples[0].Target[strings.LastIndex(rc.Failures.Samples[0].Target, "\n")+1:] + " |"; !strings.Contains(line, want) {
			t.Errorf("miss row without its target %q: %s", want, line)
		}
	}
	if rows != 1 {
		t.Errorf("%d rows for the first miss", rows)
	}
}
