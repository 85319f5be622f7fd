package analysis_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/htmltest"
)

// pointsCell parses a cell in points ("+1.23", "44.40").
func pointsCell(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("cell %q: %v", s, err)
	}
	return f / 100
}

// The comparison of the real Phi-3 and gpt2 runs renders as one table whose
// cells are the comparison's numbers.
func TestComparisonsHTML(t *testing.T) {
	dir := filepath.Join(fixturesDir(t), "phi3mini-gsm8k-thesis")
	a := load(t, filepath.Join(dir, "gsm8k-phi-3-mini_2025-08-11T10-11-40.673087.json"))
	b := load(t, filepath.Join(dir, "gsm8k-phi-3-mini_2025-08-11T10-35-08.100989.json"))
	cs, err := analysis.Compare(a, b, analysis.CompareOptions{Seed: 1, Resamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	tables := htmltest.Parse(t, cs.HTML())
	if len(tables) != 1 || len(tables[0].Rows) != len(cs.Comparisons) {
		t.Fatalf("%d tables, want one with %d rows:\n%s", len(tables), len(cs.Comparisons), cs.HTML())
	}
	tb := tables[0]
	for i, c := range cs.Comparisons {
		r := tb.Rows[i]
		if r[htmltest.Column(t, tb, "task")] != c.Task || r[htmltest.Column(t, tb, "filter")] != c.Filter || r[htmltest.Column(t, tb, "n (common docs)")] != strconv.Itoa(c.N) || r[htmltest.Column(t, tb, "unit")] != "points" {
			t.Errorf("row %d %v, comparison %s %s n=%d", i, r, c.Task, c.Filter, c.N)
		}
		for col, want := range map[string]float64{"A": c.A, "B": c.B, "Δ": c.Delta} {
			if got := pointsCell(t, r[htmltest.Column(t, tb, col)]); math.Abs(got-want) > 0.00005 {
				t.Errorf("row %d %s: cell %v, value %v", i, col, got, want)
			}
		}
		if r[htmltest.Column(t, tb, "right in A only")] != strconv.Itoa(c.AOnly) || r[htmltest.Column(t, tb, "right in B only")] != strconv.Itoa(c.BOnly) {
			t.Errorf("row %d flips %v, want %d / %d", i, r, c.AOnly, c.BOnly)
		}
	}
}

// A model's output is text in a cell, never markup.
func TestFailuresHTMLEscapes(t *testing.T) {
	out := `The answer is <script>alert("x")</script> & 42 </td></tr>`
	fr := &analysis.FailureReport{Task: "gsm8k", Metric: "exact_match", Filter: "strict-match", N: 3, NMisses: 1,
		Classes: map[analysis.FailureClass]int{analysis.Reasoning: 1},
		Samples: []analysis.Failure{{DocID: 7, Class: analysis.Reasoning, Target: "step\n#### 42",
			Extracted: map[string]string{"strict-match": "[invalid]", "flexible-extract": "<b>41</b>"}, OutputTail: out}}}
	tables := htmltest.Parse(t, fr.HTML())
	if len(tables) != 2 {
		t.Fatalf("%d tables, want the classes and the sample", len(tables))
	}
	classes, sample := tables[0], tables[1]
	if len(classes.Rows) != len(analysis.FailureClasses) || classes.Rows[3][0] != "reasoning" || classes.Rows[3][1] != "1" || classes.Rows[3][2] != "100.0 %" {
		t.Errorf("classes %v", classes.Rows)
	}
	if len(sample.Rows) != 1 {
		t.Fatalf("sample rows %v", sample.Rows)
	}
	r := sample.Rows[0]
	if slices.Contains(sample.Head, "hand label") {
		t.Errorf("a hand-label column without hand labels: %q", sample.Head)
	}
	if !strings.Contains(fr.HTML(), "<p>gsm8k exact_match (strict-match): 1 misses of 3 documents</p>") {
		t.Errorf("no summary in %s", fr.HTML())
	}
	if r[htmltest.Column(t, sample, "end of the output")] != "…"+out || r[htmltest.Column(t, sample, "target (last line)")] != "#### 42" ||
		r[htmltest.Column(t, sample, "extracted by each filter")] != "flexible-extract: <b>41</b>; strict-match: [invalid]" {
		t.Errorf("row %q", r)
	}
	fr.Samples[0].Task = "mmlu_pro_plus_health"
	if grouped := fr.SampleTable(); grouped.Head[0] != "task" || grouped.Rows[0][0] != "mmlu_pro_plus_health" {
		t.Errorf("a group's miss without its task: %q %q", grouped.Head, grouped.Rows[0])
	}
	fr.Samples[0].Label = analysis.Format
	labelled := fr.SampleTable()
	if got := labelled.Rows[0][slices.Index(labelled.Head, "hand label")]; got != "format" {
		t.Errorf("hand label cell %q in %q", got, labelled.Head)
	}
}

// The attribution table runs card, baseline, each step, final and the
// unexplained rest, and each step's numbers are the step's.
func TestClaimAttributionHTML(t *testing.T) {
	ca := analysis.ClaimAttribution{Task: "gsm8k", Metric: "exact_match", Filter: "strict-match", Card: 0.444, Baseline: 0.30, Final: 0.41,
		Unexplained: 0.034, UnexplainedCILow: 0.01, UnexplainedCIHigh: 0.06, Statement: "3.4 pts <unexplained>.",
		Steps: []analysis.AttributionStep{
			{Name: "8-shot", Kind: "run", Value: 0.32, Delta: 0.02, CILow: 0.001, CIHigh: 0.039, P: 0.04},
			{Name: "flexible", Kind: "rescore", Value: 0.41, Delta: 0.09, CILow: 0.07, CIHigh: 0.11, P: 1e-9},
		},
		Sensitivity: []analysis.Sensitivity{{Change: "num_fewshot=0", Value: 0.25, Delta: -0.05, CILow: -0.08, CIHigh: -0.02, P: 0.001}},
	}
	tables := htmltest.Parse(t, ca.HTML())
	if len(tables) != 2 {
		t.Fatalf("%d tables", len(tables))
	}
	steps := tables[0]
	var names []string
	for _, r := range steps.Rows {
		names = append(names, r[0])
	}
	if got := strings.Join(names, "|"); got != "card|baseline|8-shot|flexible|final|unexplained (card − final)" {
		t.Fatalf("rows %s", got)
	}
	if r := steps.Rows[3]; r[1] != "rescore" || r[2] != "41.00" || r[3] != "+9.00" || r[4] != "[+7.00, +11.00]" || r[5] != "1e-09" {
		t.Errorf("rescore step %q", r)
	}
	if r := steps.Rows[5]; r[3] != "+3.40" || r[4] != "[+1.00, +6.00]" {
		t.Errorf("unexplained %q", r)
	}
	if r := tables[1].Rows[0]; r[0] != "num_fewshot=0" || r[2] != "-5.00" {
		t.Errorf("sensitivity %q", r)
	}
	// The text twin has the same rows, one a line, columns aligned.
	if !strings.HasPrefix(ca.HTML(), "<p>3.4 pts &lt;unexplained&gt;.</p>") {
		t.Errorf("statement not first: %.80s", ca.HTML())
	}
	lines := strings.Split(ca.String(), "\n")
	if len(lines) < 9 || lines[0] != ca.Statement || !strings.HasPrefix(lines[2], "step ") || !strings.HasPrefix(lines[6], "flexible ") ||
		strings.Index(lines[5], "32.00") != strings.Index(lines[6], "41.00") {
		t.Errorf("text:\n%s", ca.String())
	}
}

// The re-scoring report of real runs is a table per run with a row per
// check, the numbers in full precision.
func TestReportHTML(t *testing.T) {
	outs, err := harness.Find(filepath.Join(fixturesDir(t), "phi3mini-gsm8k-thesis"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := rep.HTML()
	tables := htmltest.Parse(t, h)
	if len(tables) != len(rep.Runs) {
		t.Fatalf("%d tables for %d runs", len(tables), len(rep.Runs))
	}
	for i, run := range rep.Runs {
		tb := tables[i]
		if !strings.HasPrefix(tb.Caption, run.Path+": lm-eval "+run.LMEvalVersion) || len(tb.Rows) != len(run.Checks) {
			t.Errorf("table %d: caption %q, %d rows; run %s, %d checks", i, tb.Caption, len(tb.Rows), run.Path, len(run.Checks))
			continue
		}
		for j, c := range run.Checks {
			r := tb.Rows[j]
			if r[htmltest.Column(t, tb, "metric")] != c.Metric || r[htmltest.Column(t, tb, "filter")] != c.Filter || r[htmltest.Column(t, tb, "status")] != string(c.Status) {
				t.Errorf("row %q, check %s %s %s", r, c.Metric, c.Filter, c.Status)
			}
			if c.Recomputed.Set && !c.Recomputed.NA && c.Recomputed.Text == "" {
				if f, err := strconv.ParseFloat(r[htmltest.Column(t, tb, "recomputed")], 64); err != nil || f != c.Recomputed.Value {
					t.Errorf("recomputed cell %q, value %v (full precision)", r[htmltest.Column(t, tb, "recomputed")], c.Recomputed.Value)
				}
			}
		}
	}
	exact, _, _ := rep.Counts()
	if !strings.Contains(h, strconv.Itoa(exact)+" numbers recomputed exactly") {
		t.Errorf("no counts in %.300s", h)
	}
}
