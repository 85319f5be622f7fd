package analysis_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
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

// reportedValue is a score and stderr as lm-eval wrote them in a results
// file.
func reportedValue(t *testing.T, path, task, metric, filter string) (value, stderr float64) {
	t.Helper()
	r, err := harness.ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := r.Task(task)
	if !ok {
		t.Fatalf("%s: no task %s", path, task)
	}
	for _, m := range tr.Metrics {
		if m.Metric == metric && m.Filter == filter {
			return m.Value.Num, m.Stderr.Num
		}
	}
	t.Fatalf("%s: no %s %s,%s", path, task, metric, filter)
	return 0, 0
}

// noNaN fails when a rendering shows a number that is not one.
func noNaN(t *testing.T, what, s string) {
	t.Helper()
	for _, bad := range []string{"NaN", "Inf", "–"} {
		if strings.Contains(s, bad) {
			t.Errorf("%s shows %q:\n%s", what, bad, s)
		}
	}
}

// The real truthfulqa_gen run: bleu_max is on BLEU's 0-100 scale and is
// shown as lm-eval reported it (13.83, not 1382.77), bleu_acc in points,
// bleu_diff signed; Wilson is not computed for the non-binary metrics and
// says so; every interval lies in the metric's range.
func TestUncertaintyUnits(t *testing.T) {
	path := filepath.Join(fixturesDir(t), "harness-pr3032-truthfulqa-gen-gptneo125m", "results", "truthfulqa_gen_neo125_2025-05-31T13-51-32.759677.json")
	u := analysis.Uncertainty(load(t, path), 0.95, 1)
	rows := map[string]analysis.ScoreUncertainty{}
	for _, s := range u.Scores {
		rows[s.Metric] = s
		for _, iv := range s.Intervals {
			if iv.Lo < s.Scale.Lo || iv.Hi > s.Scale.Hi || !(iv.Lo <= iv.Value && iv.Value <= iv.Hi) {
				t.Errorf("%s %s: %v outside [%v, %v]", s.Metric, iv.Method, iv, s.Scale.Lo, s.Scale.Hi)
			}
		}
	}
	table := u.Table()
	for metric, unit := range map[string]string{"bleu_max": "as logged, 0 to 100", "bleu_acc": "points", "bleu_diff": "as logged, -100 to 100", "rouge1_max": "as logged, 0 to 100"} {
		want, _ := reportedValue(t, path, "truthfulqa_gen", metric, "none")
		s := rows[metric]
		if s.Scale.Unit != unit || math.Abs(s.Value-want) > 1e-12 {
			t.Errorf("%s: %v in %q, lm-eval reported %v, want unit %q", metric, s.Value, s.Scale.Unit, want, unit)
		}
		shown := fmt.Sprintf("%.4g", want)
		if unit == "points" {
			shown = fmt.Sprintf("%.2f", 100*want)
		}
		for _, r := range table.Rows {
			if r[1] == metric && (r[4] != unit || r[5] != shown) {
				t.Errorf("%s row %q, want unit %q and score %s", metric, r, unit, shown)
			}
			if r[1] == metric && unit != "points" && r[7] != "n/a: not 0/1" {
				t.Errorf("%s Wilson cell %q", metric, r[7])
			}
		}
	}
	noNaN(t, "scores text", u.String())
}

// A run of one document (real phi-3, limit 1) has no CLT stderr and no
// bootstrap spread: the cells say why, and the JSON names them with the
// reason instead of a null interval.
func TestUncertaintyOneDocument(t *testing.T) {
	u := analysis.Uncertainty(load(t, filepath.Join(fixturesDir(t), "phi3mini-gsm8k-thesis", "gsm8k-phi-3-mini_2025-08-11T10-06-10.578233.json")), 0.95, 1)
	s := u.String()
	noNaN(t, "scores text", s)
	noNaN(t, "scores HTML", u.HTML())
	if strings.Count(s, "n/a: 1 document") != 4 {
		t.Errorf("want CLT and bootstrap n/a for both filters:\n%s", s)
	}
	b, err := analysis.MarshalJSON(u)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "null") || !strings.Contains(string(b), `"unavailable":[{"method":"clt","why":"1 document"},{"method":"bootstrap","why":"1 document"}]`) {
		t.Errorf("JSON: %s", b)
	}
}

// Samples trimmed by hand (real gemma3 gsm8k: 3 logged of the 100 lm-eval
// scored, of 1319) are named with the counts of the results file; the CLT
// interval of three documents is clipped at 0 and its stderr kept.
func TestUncertaintyTrimmed(t *testing.T) {
	path := filepath.Join(fixturesDir(t), "gemma3-12b-gsm8k-pyfade", "results_2025-09-09T13-31-53.431753.json")
	r, err := harness.ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	ns := r.NSamples["gsm8k"]
	u := analysis.Uncertainty(load(t, path), 0.95, 1)
	if len(u.Trimmed) != 1 || u.Trimmed[0].Task != "gsm8k" || u.Trimmed[0].Filter != "strict-match" || u.Trimmed[0].Logged != 3 ||
		u.Trimmed[0].Evaluated != ns.Effective || u.Trimmed[0].TaskOriginal != ns.Original || u.Trimmed[0].Run != path {
		t.Fatalf("trimmed %+v, n-samples %+v", u.Trimmed, ns)
	}
	if !strings.Contains(u.String(), "warning: "+path+": gsm8k (strict-match): the samples log 3 of the 100 documents lm-eval scored (of the task's 1319)") {
		t.Errorf("no warning:\n%s", u)
	}
	for _, s := range u.Scores {
		if s.Filter != "strict-match" {
			continue
		}
		clt := s.Intervals[0]
		lo, _ := analysis.CLTInterval(clt.Value, clt.Stderr, 0.95)
		if clt.Method != "clt" || lo >= 0 || clt.Lo != 0 {
			t.Errorf("CLT %v: unclipped low bound %v", clt, lo)
		}
	}
}
