package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
)

// side builds a one-task side of n binary documents, the first right ones
// right.
func side(name string, tasks map[string][2]int) *Side {
	s := &Side{Name: name, Tasks: map[string]*TaskValues{},
		Identity: Identity{HarnessVersion: "0.4.9.1", TaskHashes: map[string]string{}}}
	for task, nr := range tasks {
		docs := map[string]float64{}
		for i := range nr[0] {
			v := 0.0
			if i < nr[1] {
				v = 1
			}
			docs[strconv.Itoa(i)] = v
		}
		s.Tasks[task] = &TaskValues{Metrics: map[string]map[string]float64{"acc,none": docs}, Higher: map[string]bool{"acc,none": true}}
		s.Identity.TaskHashes[task] = "hash-" + task
	}
	return s
}

func find(t *testing.T, r *Result, task string) MetricResult {
	t.Helper()
	for _, m := range r.Metrics {
		if m.Task == task {
			return m
		}
	}
	t.Fatalf("no metric of %s in %+v", task, r.Metrics)
	return MetricResult{}
}

func TestEvaluateFindsThePlantedDrop(t *testing.T) {
	// Task a drops 4 points (40 of 1000 documents turn wrong), b gains 1,
	// c drops half a point: only a is a regression under either test.
	base := side("base", map[string][2]int{"a": {1000, 500}, "b": {1000, 500}, "c": {1000, 500}})
	cand := side("cand", map[string][2]int{"a": {1000, 460}, "b": {1000, 510}, "c": {1000, 495}})
	for _, test := range []string{NoSignificantDrop, NonInferiority} {
		p := DefaultPolicy()
		p.Test = test
		r, err := Evaluate(base, cand, p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != Regression {
			t.Errorf("%s: verdict %s, want regression", test, r.Verdict)
		}
		a, b := find(t, r, "a"), find(t, r, "b")
		if a.Verdict != Regression || b.Verdict != Pass {
			t.Errorf("%s: a %s (%s), b %s (%s)", test, a.Verdict, a.Reason, b.Verdict, b.Reason)
		}
		if math.Abs(a.Delta+4) > 1e-9 || a.Unit != "points" || a.N != 1000 {
			t.Errorf("%s: a: Δ %v %s n %d, want -4 points over 1000", test, a.Delta, a.Unit, a.N)
		}
		if test == NoSignificantDrop {
			c := find(t, r, "c")
			if c.Verdict != Pass {
				t.Errorf("c (-0.5 points, margin 1): %s %s", c.Verdict, c.Reason)
			}
			// a's p is McNemar's on its 40 discordant documents; Holm
			// multiplies the smallest of three p by 3.
			if want := analysis.McNemarExact(0, 40); a.P != want || a.PHolm != min(1, 3*want) {
				t.Errorf("a: p %v Holm %v, want %v and %v", a.P, a.PHolm, want, 3*want)
			}
			if a.Level != 1-0.05/3 {
				t.Errorf("a: level %v, want Holm's first step 1-0.05/3", a.Level)
			}
		}
	}
}

func TestEvaluateNonInferiorityNeedsEvidence(t *testing.T) {
	// 20 documents, no change: no drop, but no evidence either that the
	// candidate is not 10 points worse.
	base := side("base", map[string][2]int{"a": {20, 10}})
	cand := side("cand", map[string][2]int{"a": {20, 10}})
	p := DefaultPolicy()
	r, _ := Evaluate(base, cand, p)
	if r.Verdict != Pass {
		t.Errorf("no-significant-drop: %s", r.Verdict)
	}
	p.Test = NonInferiority
	p.Margin = 0.5
	r, _ = Evaluate(base, cand, p)
	// Identical values: the paired interval is [0, 0] above -0.5 points,
	// and the z-test of gain <= -margin with no spread rejects it.
	if r.Verdict != Pass {
		t.Errorf("non-inferiority, identical: %s %+v", r.Verdict, r.Metrics)
	}
	cand = side("cand", map[string][2]int{"a": {20, 9}})
	r, _ = Evaluate(base, cand, p)
	if m := find(t, r, "a"); m.Verdict != Regression {
		t.Errorf("non-inferiority, one of 20 documents lost: %s %s", m.Verdict, m.Reason)
	}
}

func TestEvaluateLowerIsBetter(t *testing.T) {
	base := side("base", map[string][2]int{"a": {1000, 500}})
	cand := side("cand", map[string][2]int{"a": {1000, 560}})
	for _, s := range []*Side{base, cand} {
		s.Tasks["a"].Higher["acc,none"] = false
	}
	r, _ := Evaluate(base, cand, nil)
	m := find(t, r, "a")
	if m.Verdict != Regression || math.Abs(m.Delta-6) > 1e-9 || !(m.CILow > 0) {
		t.Errorf("a lower-is-better metric up 6 points: %s Δ %v [%v, %v]", m.Verdict, m.Delta, m.CILow, m.CIHigh)
	}
}

func TestEvaluateRefusesChangedSettings(t *testing.T) {
	base := side("base", map[string][2]int{"a": {100, 50}, "b": {100, 50}})
	cand := side("cand", map[string][2]int{"a": {100, 50}, "b": {100, 50}})
	cand.Identity.TaskHashes["a"] = "other"
	r, _ := Evaluate(base, cand, nil)
	if r.Verdict != Refused || find(t, r, "a").Verdict != Refused || find(t, r, "b").Verdict != Pass {
		t.Fatalf("task hash of a changed: %s %+v", r.Verdict, r.Metrics)
	}
	if !strings.Contains(strings.Join(r.Refusals, "\n"), "task_hashes of a changed") {
		t.Errorf("refusals do not name the change: %q", r.Refusals)
	}
	p := DefaultPolicy()
	p.AllowChanged = []string{ChangeTaskHashes}
	if r, _ = Evaluate(base, cand, p); r.Verdict != Pass {
		t.Errorf("allowed task hash change: %s %q", r.Verdict, r.Refusals)
	}
	cand.Identity.HarnessVersion = "0.4.11"
	r, _ = Evaluate(base, cand, p)
	if r.Verdict != Refused || find(t, r, "b").Verdict != Refused {
		t.Fatalf("harness changed: %s", r.Verdict)
	}
	if !strings.Contains(r.Refusals[0], "harness_version changed (baseline 0.4.9.1, candidate 0.4.11)") {
		t.Errorf("refusal: %q", r.Refusals)
	}
}

func TestEvaluateNamesMissingDocuments(t *testing.T) {
	base := side("base", map[string][2]int{"a": {100, 50}})
	cand := side("cand", map[string][2]int{"a": {90, 45}})
	r, _ := Evaluate(base, cand, nil)
	m := find(t, r, "a")
	if m.Verdict != Refused || m.OnlyBaseline != 10 || m.OnlyCandidate != 0 || !strings.Contains(m.Reason, "baseline only: doc 90") {
		t.Fatalf("missing documents: %s %d/%d %q", m.Verdict, m.OnlyBaseline, m.OnlyCandidate, m.Reason)
	}
	p := DefaultPolicy()
	p.AllowChanged = []string{ChangeDocuments}
	r, _ = Evaluate(base, cand, p)
	if m := find(t, r, "a"); m.Verdict != Pass || m.N != 90 {
		t.Errorf("allowed: %s n %d", m.Verdict, m.N)
	}
	// A task the policy gates that the candidate lacks is refused.
	p.Tasks = map[string]TaskPolicy{"a": {Margin: math.NaN()}, "z": {Margin: 2}}
	r, _ = Evaluate(base, cand, p)
	if r.Verdict != Refused || find(t, r, "z").Reason != "task z is not in the baseline" {
		t.Errorf("missing task: %s %+v", r.Verdict, r.Metrics)
	}
}

func TestParsePolicy(t *testing.T) {
	p, err := ParsePolicy([]byte(`
test: non-inferiority
alpha: 0.01
margin: 2
metrics: [acc, "exact_match,strict-match"]
tasks:
  gsm8k: {margin: 3}
  mmlu:
allow_changed: [chat_template]
resamples: 2000
seed: 7
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Test != NonInferiority || p.Alpha != 0.01 || p.margin("gsm8k") != 3 || p.margin("mmlu") != 2 ||
		!p.Allowed(ChangeChatTemplate) || p.Resamples != 2000 || p.Seed != 7 {
		t.Errorf("policy: %+v", p)
	}
	if !p.gated("mmlu", "acc,none") || p.gated("mmlu", "acc_norm,none") || !p.gated("gsm8k", "exact_match,strict-match") || p.gated("gsm8k", "exact_match,flexible-extract") {
		t.Error("gated metrics wrong")
	}
	for text, want := range map[string]string{
		"test: x":                      "line 1: test: \"x\" is not a test",
		"alpha: 1.5":                   "line 1: alpha: 1.5 is not in (0, 1)",
		"margin: 1\nmargn: 2":          "line 2: margn: unknown field",
		"tasks:\n  a: {margin: -1}":    "line 2: tasks.a.margin: -1 is negative",
		"allow_changed: [model]":       "line 1: allow_changed: \"model\" is not a change",
		"tasks:\n  a: {metric: [acc]}": "line 2: tasks.a.metric: unknown field",
	} {
		_, err := ParsePolicy([]byte(text))
		if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

func TestResultOutputs(t *testing.T) {
	base := side("base", map[string][2]int{"a": {1000, 500}, "b\x1b[31m": {100, 50}})
	cand := side("cand", map[string][2]int{"a": {1000, 460}, "b\x1b[31m": {90, 45}})
	r, err := Evaluate(base, cand, nil)
	if err != nil {
		t.Fatal(err)
	}
	var text, mdown, junit bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	r.WriteMarkdown(&mdown)
	r.WriteJUnit(&junit)
	for name, b := range map[string]*bytes.Buffer{"text": &text, "markdown": &mdown, "junit": &junit} {
		if bytes.Contains(b.Bytes(), []byte("\x1b")) {
			t.Errorf("%s holds a raw escape:\n%s", name, b)
		}
	}
	if !strings.Contains(mdown.String(), "❌ regression") || !strings.Contains(junit.String(), `type="regression"`) {
		t.Errorf("markdown or junit lacks the regression:\n%s\n%s", mdown.String(), junit.String())
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Verdict string `json:"verdict"`
		Metrics []struct {
			Delta *float64 `json:"delta"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(js, &back); err != nil || back.Verdict != Regression || back.Metrics[0].Delta == nil || math.Abs(*back.Metrics[0].Delta+4) > 1e-9 || back.Metrics[1].Delta != nil {
		t.Errorf("json: %s", js)
	}
}

// TestDocumentedPolicyParses reads the example policy of docs/gate.md.
func TestDocumentedPolicyParses(t *testing.T) {
	b, err := os.ReadFile("../docs/gate.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(b), "## The policy file")
	_, block, ok := strings.Cut(after, "```yaml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/gate.md has no yaml block under \"The policy file\"")
	}
	p, err := ParsePolicy([]byte(block))
	if err != nil {
		t.Fatal(err)
	}
	if p.margin("gsm8k") != 2 || !p.Allowed(ChangeChatTemplate) || len(p.Tasks) != 3 || !p.gated("hellaswag", "acc,none") {
		t.Errorf("documented policy read as %+v", p)
	}
}

func TestEvaluateRefusesValuesThatDoNotRescore(t *testing.T) {
	base := side("base", map[string][2]int{"a": {100, 50}, "b": {100, 50}})
	cand := side("cand", map[string][2]int{"a": {100, 50}, "b": {100, 50}})
	cand.Differs = map[string]string{"a acc,none": "line 3 doc_id 2 acc: logged 1, recomputed 0"}
	r, _ := Evaluate(base, cand, nil)
	if m := find(t, r, "a"); m.Verdict != Refused || !strings.Contains(m.Reason, "cand: a acc,none does not re-score to what lm-eval reported (line 3") {
		t.Errorf("a: %s %q", m.Verdict, m.Reason)
	}
	if r.Verdict != Refused || find(t, r, "b").Verdict != Pass || len(r.Refusals) != 1 {
		t.Errorf("verdict %s, refusals %q", r.Verdict, r.Refusals)
	}
}

// TestEvaluateRefusesAGroupWhoseMemberChanged: a group's documents are its
// members'; a member whose prompts changed refuses the group, and says so.
func TestEvaluateRefusesAGroupWhoseMemberChanged(t *testing.T) {
	group := func(name string) *Side {
		s := side(name, nil)
		docs := map[string]float64{}
		for i := range 50 {
			docs["m1/"+strconv.Itoa(i)] = float64(i % 2)
			docs["m2/"+strconv.Itoa(i)] = float64(i % 3 % 2)
		}
		s.Tasks["g"] = &TaskValues{Metrics: map[string]map[string]float64{"acc,none": docs}}
		s.Identity.TaskHashes = map[string]string{"m1": "h1", "m2": "h2"}
		return s
	}
	base, cand := group("base"), group("cand")
	cand.Identity.TaskHashes["m2"] = "other"
	r, _ := Evaluate(base, cand, nil)
	if m := find(t, r, "g"); m.Verdict != Refused || !strings.Contains(m.Reason, "task_hashes of m2 changed") {
		t.Errorf("group: %s %q", m.Verdict, m.Reason)
	}
	if len(r.Refusals) != 1 || !strings.HasPrefix(r.Refusals[0], "task_hashes of m2 changed") {
		t.Errorf("refusals %q", r.Refusals)
	}
}
