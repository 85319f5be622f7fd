package analysis_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// independentCompare computes a comparison in Debian's Python, reading the
// two samples files itself: pairing by doc_id, the paired stderr from its
// definition, the McNemar p from scipy's exact binomial test, the unpaired
// CI and the MDE from their formulas.
const independentCompare = `
import json, sys, math
import numpy as np
from scipy.stats import binomtest, norm
fa, fb, flt, metric = sys.argv[1:5]
def read(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        if d.get("filter", "none") == flt:
            out[d["doc_id"]] = (float(d[metric]), d.get("prompt_hash"))
    return out
A, B = read(fa), read(fb)
ids = [i for i in A if i in B]
a = np.array([A[i][0] for i in ids]); b = np.array([B[i][0] for i in ids])
n = len(ids); d = b - a
z = norm.ppf(0.975)
sd = lambda x: float(np.std(x, ddof=1)) if n > 1 else float("nan")
ao = int(((a == 1) & (b == 0)).sum()); bo = int(((a == 0) & (b == 1)).sum())
print(json.dumps({
  "n": n, "a": float(a.mean()), "b": float(b.mean()), "delta": float(b.mean() - a.mean()),
  "paired_stderr": sd(d) / math.sqrt(n),
  "mcnemar_p": binomtest(min(ao, bo), ao + bo, 0.5).pvalue if ao + bo > 0 else 1.0,
  "a_only": ao, "b_only": bo, "both": int(((a == 1) & (b == 1)).sum()), "neither": int(((a == 0) & (b == 0)).sum()),
  "unpaired_ci_low": float(b.mean() - a.mean()) - z * math.hypot(sd(a) / math.sqrt(n), sd(b) / math.sqrt(n)),
  "unpaired_ci_high": float(b.mean() - a.mean()) + z * math.hypot(sd(a) / math.sqrt(n), sd(b) / math.sqrt(n)),
  "mde": (norm.ppf(0.975) + norm.ppf(0.8)) * sd(d) / math.sqrt(n),
  "prompts_changed": sum(1 for i in ids if A[i][1] != B[i][1]),
}).replace("NaN", "null"))
`

func checkAgainstPython(t *testing.T, pathA, pathB string) {
	t.Helper()
	a, b := load(t, pathA), load(t, pathB)
	cs, err := analysis.Compare(a, b, analysis.CompareOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Comparisons {
		sa, _ := a.Find(c.Task, c.Metric, c.Filter)
		sb, _ := b.Find(c.Task, c.Metric, c.Filter)
		cmd := exec.Command(testenv.Python(t, "numpy", "scipy"), "-c", independentCompare, sa.File.Path, sb.File.Path, c.Filter, c.Metric)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("python: %v\n%s", err, out)
		}
		var want map[string]any
		if err := json.Unmarshal(out, &want); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		gotJSON, _ := analysis.MarshalJSON(c)
		var got map[string]any
		json.Unmarshal(gotJSON, &got)
		for k, w := range want {
			g := got[k]
			if w == nil || g == nil {
				if w != g {
					t.Errorf("%s %s: %s = %v, Python %v", c.Task, c.Filter, k, g, w)
				}
				continue
			}
			wf, gf := w.(float64), g.(float64)
			if math.Abs(wf-gf) > 1e-12*math.Max(1, math.Abs(wf)) {
				t.Errorf("%s %s: %s = %v, Python %v", c.Task, c.Filter, k, gf, wf)
			}
		}
		// The bootstrap CI cannot be reproduced outside; it must hold Δ
		// and, at large n, be close to the CLT interval of the paired
		// differences.
		if c.N > 1 && !(c.CILow <= c.Delta && c.Delta <= c.CIHigh) {
			t.Errorf("%s %s: Δ %v outside its CI [%v, %v]", c.Task, c.Filter, c.Delta, c.CILow, c.CIHigh)
		}
		if c.N >= 1000 {
			half := 1.959964 * c.PairedStderr
			if math.Abs((c.CIHigh-c.CILow)/2-half) > 0.15*half {
				t.Errorf("%s %s: bootstrap CI half-width %v, CLT %v", c.Task, c.Filter, (c.CIHigh-c.CILow)/2, half)
			}
		}
	}
}

// TestCompareFixturePair compares the real Phi-3 (chat template) run with
// the real gpt2 run (no chat template) on GSM8K doc 0.
func TestCompareFixturePair(t *testing.T) {
	dir := filepath.Join(fixturesDir(t), "phi3mini-gsm8k-thesis")
	checkAgainstPython(t, filepath.Join(dir, "gsm8k-phi-3-mini_2025-08-11T10-11-40.673087.json"), filepath.Join(dir, "gsm8k-phi-3-mini_2025-08-11T10-35-08.100989.json"))
}

// TestComparePlantedEffect compares two simulated runs (SIMULATED: no model
// is run) that differ by a planted chat-template effect.
func TestComparePlantedEffect(t *testing.T) {
	dir := t.TempDir()
	base, _ := simulate.OptionsFor(harness.RunSpec{Tasks: []string{"gsm8k"}}, 11, simulate.DefaultEffects())
	chat, _ := simulate.OptionsFor(harness.RunSpec{Tasks: []string{"gsm8k"}, ApplyChatTemplate: "true"}, 11, simulate.DefaultEffects())
	oa, err := simulate.Generate(filepath.Join(dir, "a"), base)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := simulate.Generate(filepath.Join(dir, "b"), chat)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstPython(t, oa.Dir, ob.Dir)
}

func TestCompareRefusesDifferentDocuments(t *testing.T) {
	dir := t.TempDir()
	oa, _ := simulate.Generate(filepath.Join(dir, "a"), simulate.Options{Tasks: []string{"gsm8k"}, GSM8KDocs: 30})
	ob, _ := simulate.Generate(filepath.Join(dir, "b"), simulate.Options{Tasks: []string{"gsm8k"}, GSM8KDocs: 30, DataSeed: 9})
	_, err := analysis.Compare(load(t, oa.Dir), load(t, ob.Dir), analysis.CompareOptions{})
	if err == nil || !strings.Contains(err.Error(), "is a different document in the two runs") {
		t.Fatalf("got %v", err)
	}
	oc, _ := simulate.Generate(filepath.Join(dir, "c"), simulate.Options{Tasks: []string{"gsm8k"}, GSM8KDocs: 20})
	_, err = analysis.Compare(load(t, oa.Dir), load(t, oc.Dir), analysis.CompareOptions{})
	if err == nil || !strings.Contains(err.Error(), "--intersect") {
		t.Fatalf("got %v", err)
	}
	if _, err := analysis.Compare(load(t, oa.Dir), load(t, oc.Dir), analysis.CompareOptions{Intersect: true}); err != nil {
		t.Fatal(err)
	}
}

// A group is compared over all its members' documents (SIMULATED runs, no
// model is run): its scores are lm-eval's group scores, its flips the sum of
// the members' flips, its paired stderr that of the joined differences.
func TestCompareGroups(t *testing.T) {
	dir := t.TempDir()
	gen := func(name string, spec harness.RunSpec) *analysis.Scores {
		o, err := simulate.OptionsFor(spec, 4, simulate.DefaultEffects())
		if err != nil {
			t.Fatal(err)
		}
		o.MMLUDocsPerSubject = 40
		out, err := simulate.Generate(filepath.Join(dir, name), o)
		if err != nil {
			t.Fatal(err)
		}
		return load(t, out.Dir)
	}
	a := gen("a", harness.RunSpec{Tasks: []string{"mmlu"}})
	b := gen("b", harness.RunSpec{Tasks: []string{"mmlu"}, ApplyChatTemplate: "true"})
	cs, err := analysis.Compare(a, b, analysis.CompareOptions{Seed: 1, Resamples: 1000, Groups: true})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, c := range cs.Comparisons {
		if !a.Run.Output.Results.IsGroup(c.Task) {
			continue
		}
		found[c.Task] = true
		leaves := a.Run.Output.Results.Leaves(c.Task)
		var n, aOnly, bOnly int
		var diffs []float64
		for _, leaf := range leaves {
			for _, lc := range cs.Comparisons {
				if lc.Task == leaf && lc.Metric == c.Metric && lc.Filter == c.Filter {
					n, aOnly, bOnly = n+lc.N, aOnly+lc.AOnly, bOnly+lc.BOnly
				}
			}
			sa, _ := a.Find(leaf, c.Metric, c.Filter)
			sb, _ := b.Find(leaf, c.Metric, c.Filter)
			for i := range sa.Values {
				diffs = append(diffs, sb.Values[i]-sa.Values[i])
			}
		}
		if c.N != n || c.AOnly != aOnly || c.BOnly != bOnly || c.AOnly+c.BOnly+c.Both+c.Neither != c.N {
			t.Errorf("%s: n %d flips %d/%d, members' n %d flips %d/%d", c.Task, c.N, c.AOnly, c.BOnly, n, aOnly, bOnly)
		}
		for run, got := range map[*analysis.Scores]float64{a: c.A, b: c.B} {
			tr, _ := run.Run.Output.Results.Task(c.Task)
			for _, m := range tr.Metrics {
				if m.Metric == c.Metric && m.Filter == c.Filter && math.Abs(m.Value.Num-got) > 1e-12 {
					t.Errorf("%s %s: compared score %v, lm-eval's group score %v", run.Run.Name, c.Task, got, m.Value.Num)
				}
			}
		}
		var mean, ss float64
		for _, d := range diffs {
			mean += d
		}
		mean /= float64(len(diffs))
		for _, d := range diffs {
			ss += (d - mean) * (d - mean)
		}
		if want := math.Sqrt(ss/float64(len(diffs)-1)) / math.Sqrt(float64(len(diffs))); math.Abs(c.PairedStderr-want) > 1e-12 {
			t.Errorf("%s: paired stderr %v, from its definition %v", c.Task, c.PairedStderr, want)
		}
	}
	for _, g := range []string{"mmlu", "mmlu_stem", "mmlu_humanities", "mmlu_social_sciences", "mmlu_other"} {
		if !found[g] {
			t.Errorf("group %s not compared (skipped: %v)", g, cs.Skipped)
		}
	}
	plain, err := analysis.Compare(a, b, analysis.CompareOptions{Seed: 1, Resamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Comparisons) != len(cs.Comparisons)-len(found) {
		t.Errorf("without Groups: %d comparisons, want the %d tasks'", len(plain.Comparisons), len(cs.Comparisons)-len(found))
	}
}

// loadReported reads a run as scores and compare do: a results file
// without samples too.
func loadReported(t *testing.T, path string) *analysis.Scores {
	t.Helper()
	run, err := harness.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := analysis.LoadReported(context.Background(), run, analysis.RescoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// Two real results-only folders (MMLU and more, no samples) are compared
// unpaired from their results files, saying so: the values and the CLT
// interval of the two stderrs are lm-eval's, the paired statistics n/a.
// Load, which needs samples, still refuses them.
func TestCompareResultsOnly(t *testing.T) {
	dir := filepath.Join(fixturesDir(t), "harness-pr2809-mmlu-groups", "results")
	pa := filepath.Join(dir, "meta-llama__Llama-3.2-1B", "results_2025-03-03T00-05-19.750676.json")
	pb := filepath.Join(dir, "google__gemma-2-2b", "results_2025-03-03T20-58-19.132054.json")
	run, err := harness.Read(pa)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.Load(context.Background(), run, analysis.RescoreOptions{}); !errors.Is(err, harness.ErrNoOutput) {
		t.Fatalf("Load of a results-only file: %v", err)
	}
	a, b := loadReported(t, pa), loadReported(t, pb)
	if !a.ResultsOnly() || !b.ResultsOnly() {
		t.Fatal("series from a folder without samples")
	}
	cs, err := analysis.Compare(a, b, analysis.CompareOptions{Unpaired: true, Groups: true})
	if err != nil {
		t.Fatal(err)
	}
	var mmlu *analysis.Comparison
	for i, c := range cs.Comparisons {
		if c.Unpaired == "" || c.N != 0 {
			t.Errorf("%s %s: paired without samples (%q, n %d)", c.Task, c.Metric, c.Unpaired, c.N)
		}
		if c.Task == "mmlu" {
			mmlu = &cs.Comparisons[i]
		}
	}
	if mmlu == nil {
		t.Fatalf("mmlu not compared: %v", cs.Skipped)
	}
	va, sa := reportedValue(t, pa, "mmlu", "acc", "none")
	vb, sb := reportedValue(t, pb, "mmlu", "acc", "none")
	half := 1.959963984540054 * math.Hypot(sa, sb)
	if mmlu.A != va || mmlu.B != vb || mmlu.Delta != vb-va || math.Abs(mmlu.UnpairedCILow-(vb-va-half)) > 1e-15 || mmlu.NA != 14042 || mmlu.NB != 14042 {
		t.Errorf("mmlu %+v; lm-eval %v ± %v, %v ± %v", *mmlu, va, sa, vb, sb)
	}
	if !math.IsNaN(mmlu.McNemarP) || !math.IsNaN(mmlu.CILow) {
		t.Errorf("paired statistics without samples: %+v", *mmlu)
	}
	s := cs.String()
	noNaN(t, "compare text", s)
	if !strings.Contains(s, "from results file, no samples: no paired statistics") || !strings.Contains(s, "n/a: unpaired (A 14042, B 14042)") {
		t.Errorf("unpaired rows not said so:\n%s", s)
	}
	b2, err := analysis.MarshalJSON(mmlu)
	if err != nil || !strings.Contains(string(b2), `"unpaired":"from results file, no samples: no paired statistics"`) || !strings.Contains(string(b2), `{"method":"mcnemar_p","why":"no samples"}`) {
		t.Errorf("JSON %s (%v)", b2, err)
	}
	if _, err := analysis.Compare(a, b, analysis.CompareOptions{}); !errors.Is(err, analysis.ErrNotPaired) {
		t.Errorf("without Unpaired: %v", err)
	}
}

// Real truthfulqa_gen runs (817 and 20 documents): McNemar is n/a for the
// non-binary metrics and says why, in the table and the JSON; BLEU rows
// are on BLEU's scale; the paired CI of a 0/1 metric lies in [-1, 1].
func TestCompareNonBinary(t *testing.T) {
	dir := filepath.Join(fixturesDir(t), "harness-pr3032-truthfulqa-gen-gptneo125m", "results")
	a := load(t, filepath.Join(dir, "truthfulqa_gen_neo125_2025-05-31T13-51-32.759677.json"))
	b := load(t, filepath.Join(dir, "truthfulqa_gen_neo125_2025-05-31T14-30-51.983293.json"))
	cs, err := analysis.Compare(a, b, analysis.CompareOptions{Intersect: true, Seed: 1, Resamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	tb := cs.Table()
	for i, c := range cs.Comparisons {
		binary := strings.HasSuffix(c.Metric, "_acc")
		cell := tb.Rows[i][10]
		if binary != !math.IsNaN(c.McNemarP) || binary == (cell == "n/a: not 0/1") {
			t.Errorf("%s: McNemar %v, cell %q", c.Metric, c.McNemarP, cell)
		}
		d := c.Scale.Diff()
		if c.UnpairedCILow < d.Lo || c.UnpairedCIHigh > d.Hi {
			t.Errorf("%s: unpaired CI [%v, %v] outside [%v, %v]", c.Metric, c.UnpairedCILow, c.UnpairedCIHigh, d.Lo, d.Hi)
		}
		if c.Metric == "bleu_max" && (tb.Rows[i][5] != fmt.Sprintf("%.4g", c.A) || c.Scale.Points()) {
			t.Errorf("bleu_max shown %q for %v", tb.Rows[i][5], c.A)
		}
		js, _ := analysis.MarshalJSON(c)
		if !binary && !strings.Contains(string(js), `"mcnemar_p":null`) || !binary && !strings.Contains(string(js), `{"method":"mcnemar_p","why":"not 0/1"}`) {
			t.Errorf("%s JSON %s", c.Metric, js)
		}
	}
	noNaN(t, "compare text", cs.String())
}

// Real gemma3 runs whose samples were trimmed to 3 of the 100 documents
// lm-eval scored: the comparison warns, naming both runs, and n is the 3
// common documents; the filter without samples is compared unpaired.
func TestCompareTrimmed(t *testing.T) {
	dir := filepath.Join(fixturesDir(t), "gemma3-12b-gsm8k-pyfade")
	pa, pb := filepath.Join(dir, "results_2025-09-09T13-31-53.431753.json"), filepath.Join(dir, "results_2025-09-09T13-42-42.857006.json")
	cs, err := analysis.Compare(loadReported(t, pa), loadReported(t, pb), analysis.CompareOptions{Unpaired: true, Seed: 1, Resamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Trimmed) != 2 || cs.Trimmed[0].Run != pa || cs.Trimmed[1].Run != pb || cs.Trimmed[0].Logged != 3 || cs.Trimmed[0].Evaluated != 100 {
		t.Fatalf("trimmed %+v", cs.Trimmed)
	}
	s := cs.String()
	for _, p := range []string{pa, pb} {
		if !strings.Contains(s, "warning: "+p+": gsm8k (strict-match): the samples log 3 of the 100 documents") {
			t.Errorf("no warning for %s:\n%s", p, s)
		}
	}
	for _, c := range cs.Comparisons {
		switch c.Filter {
		case "strict-match":
			if c.N != 3 || c.Unpaired != "" || c.CILow < -1 || c.CIHigh > 1 || c.UnpairedCIHigh != 1 {
				t.Errorf("strict-match %+v", c)
			}
		case "flexible-extract":
			va, _ := reportedValue(t, pa, "gsm8k", "exact_match", "flexible-extract")
			if c.Unpaired == "" || c.A != va || c.NA != 100 {
				t.Errorf("flexible-extract %+v, lm-eval %v", c, va)
			}
		}
	}
}
