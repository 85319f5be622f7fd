package analysis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/internal/fixtures"
	"github.com/evalcapsule/evalcapsule/internal/htmltest"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

func load(t *testing.T, path string) *analysis.Scores {
	t.Helper()
	run, err := harness.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := analysis.Load(context.Background(), run, analysis.RescoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestFailuresPhi3 reads the misses of the real phi-3 run (10 docs): the
// strict-match misses whose flexible extraction is right are format misses.
func TestFailuresPhi3(t *testing.T) {
	dir := filepath.Join(fixturesDir(t), "phi3mini-gsm8k-thesis", "gsm8k-phi-3-mini_2025-08-07T11-42-40.066002.json")
	sc := load(t, dir)
	rep, err := analysis.Failures(sc, "gsm8k", analysis.FailureOptions{Filter: "strict-match", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// strict 0.1 over 10 docs: 9 misses; flexible 0.8: 7 of them flexible-right.
	if rep.NMisses != 9 || rep.Classes[analysis.Format] != 7 {
		t.Fatalf("misses %d classes %v", rep.NMisses, rep.Classes)
	}
	for _, s := range rep.Samples {
		if s.Class == analysis.Format && s.Extracted["strict-match"] == s.Extracted["flexible-extract"] {
			t.Errorf("doc %d: format miss with equal extractions %v", s.DocID, s.Extracted)
		}
		// The other two, read by hand: doc 5 ends "The total cost for all 16
		// glasses is $40 + $24 = $64\nKylar needs to pay $64 for the 16
		// glasses." (target 64; flexible-extract takes the last number, 16);
		// doc 8 ends "John is 75 miles away from home ..." (target 45).
		switch s.DocID {
		case 5:
			if s.Class != analysis.Extraction || s.FinalAnswer != "$64" || s.Extracted["flexible-extract"] != "16" {
				t.Errorf("doc 5: %s, final answer %q, extracted %v", s.Class, s.FinalAnswer, s.Extracted)
			}
		case 8:
			if s.Class != analysis.Reasoning || s.FinalAnswer != "75" {
				t.Errorf("doc 8: %s, final answer %q", s.Class, s.FinalAnswer)
			}
		}
	}
}

func TestFailuresSimulated(t *testing.T) {
	out, err := simulate.Generate(filepath.Join(t.TempDir(), "run"), simulate.Options{Seed: 2, Tasks: []string{"gsm8k"}, GSM8KDocs: 400})
	if err != nil {
		t.Fatal(err)
	}
	sc := load(t, out.Dir)
	rep, err := analysis.Failures(sc, "gsm8k", analysis.FailureOptions{Filter: "strict-match", N: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Samples) != 50 {
		t.Fatalf("%d samples", len(rep.Samples))
	}
	for _, c := range analysis.FailureClasses {
		if rep.Classes[c] == 0 {
			t.Errorf("no %s miss among %d: %v", c, rep.NMisses, rep.Classes)
		}
	}
	// The same seed gives the same sample.
	again, _ := analysis.Failures(sc, "gsm8k", analysis.FailureOptions{Filter: "strict-match", N: 50, Seed: 1})
	for i := range rep.Samples {
		if rep.Samples[i].DocID != again.Samples[i].DocID {
			t.Fatal("sample not reproducible")
		}
	}
	// Hand labels beside the run are compared with the classes.
	os.MkdirAll(filepath.Join(sc.Run.Dir, "labels"), 0o755)
	first := rep.Samples[0]
	os.WriteFile(filepath.Join(sc.Run.Dir, "labels", "gsm8k.csv"), []byte("doc_id,class,note\n"+strconv.Itoa(first.DocID)+","+string(first.Class)+",agreed\n"), 0o644)
	labels, err := analysis.ReadLabels(sc.Run.Dir, "gsm8k")
	if err != nil {
		t.Fatal(err)
	}
	rep, _ = analysis.Failures(sc, "gsm8k", analysis.FailureOptions{Filter: "strict-match", Labels: labels})
	if rep.Agreement == nil || rep.Agreement.Labelled != 1 || rep.Agreement.Agree != 1 {
		t.Errorf("agreement %+v", rep.Agreement)
	}
}

func fixturesDir(t *testing.T) string {
	t.Helper()
	return fixtures.Dir(t, "lm-eval")
}

// A group's misses are its members' (real gemma3 mmlu_pro_plus run, whose
// samples were trimmed to three subjects): counted over the members with
// samples, the others named, each sampled miss naming its subject.
func TestFailuresGroup(t *testing.T) {
	sc := load(t, filepath.Join(fixturesDir(t), "gemma3-12b-mmlu-pro-plus-pyfade", "results_2025-10-14T14-44-39.372006.json"))
	rep, err := analysis.Failures(sc, "mmlu_pro_plus", analysis.FailureOptions{Seed: 1, N: 100})
	if err != nil {
		t.Fatal(err)
	}
	leaves := sc.Run.Output.Results.Leaves("mmlu_pro_plus")
	n, misses, classes := 0, 0, map[analysis.FailureClass]int{}
	read := 0
	for _, leaf := range leaves {
		m, err := analysis.Failures(sc, leaf, analysis.FailureOptions{Metric: rep.Metric, Filter: rep.Filter, Seed: 1, N: 100})
		if err != nil {
			continue // no samples of this subject
		}
		read++
		n, misses = n+m.N, misses+m.NMisses
		for c, k := range m.Classes {
			classes[c] += k
		}
		for _, s := range m.Samples {
			found := false
			for _, g := range rep.Samples {
				found = found || (g.Task == leaf && g.DocID == s.DocID && g.Class == s.Class)
			}
			if !found {
				t.Errorf("%s doc %d (%s) not among the group's misses", leaf, s.DocID, s.Class)
			}
		}
	}
	if read != 3 || rep.N != n || rep.NMisses != misses || len(rep.Samples) != misses || len(rep.Unread) != len(leaves)-read {
		t.Errorf("group: %d documents, %d misses, %d sampled, %d unread; members: %d read, %d documents, %d misses of %d leaves",
			rep.N, rep.NMisses, len(rep.Samples), len(rep.Unread), read, n, misses, len(leaves))
	}
	for c, k := range classes {
		if rep.Classes[c] != k {
			t.Errorf("class %s: group %d, members %d", c, rep.Classes[c], k)
		}
	}
}

// labelledDir is the folder of hand-labelled real runs shared with the
// project; like the lm-eval fixtures, skipped when missing unless CI.
func labelledDir(t *testing.T) string {
	t.Helper()
	return fixtures.Dir(t, "labelled")
}

// labelKappaFloor is the agreement measured on the hand-labelled LLaDA run
// (18 strict-match misses, every one labelled): all 18 agree, κ 1. The
// classifier that counted every number of the output as an answer agreed on
// 14 (κ −0.04): a regression to it, or any new disagreement, fails.
const labelKappaFloor = 1.0

// The automatic classes agree with the hand labels of a real run, and the
// kappa is what scikit-learn computes from the same pairs.
func TestFailuresHandLabels(t *testing.T) {
	dir := filepath.Join(labelledDir(t), "labels-gsm8k-llada-8b-base")
	if _, err := os.Stat(filepath.Join(dir, "labels", "gsm8k.csv")); err != nil {
		testenv.Lack(t, "the hand labels", "they come with ../shared/fixtures, not from scripts/fetch-fixtures",
			fmt.Sprintf("the hand labels are missing (%v): they come with the shared fixtures, not from scripts/fetch-fixtures", err))
	}
	sc := load(t, dir)
	labels, err := analysis.ReadLabels(dir, "gsm8k")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Failures(sc, "gsm8k", analysis.FailureOptions{Filter: "strict-match", N: 1000, TailBytes: 1 << 20, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Agreement
	if a == nil || a.Labelled != len(labels) || rep.NMisses != len(labels) {
		t.Fatalf("%d labels, %d misses, agreement %+v: every miss of this run is labelled", len(labels), rep.NMisses, a)
	}
	var pairs []string
	for _, f := range rep.Samples {
		if f.Label != f.Class {
			t.Errorf("doc %d: class %s, hand label %s (final answer %q, target %q)", f.DocID, f.Class, f.Label, f.FinalAnswer, gsm8kAnswer(f.Target))
		}
		pairs = append(pairs, string(f.Label)+","+string(f.Class))
	}
	if a.Kappa < labelKappaFloor {
		t.Errorf("Cohen's κ %.3f below the floor %.2f (%d of %d agree)", a.Kappa, labelKappaFloor, a.Agree, a.Labelled)
	}
	// The three misses whose target is in the output only as an operand or
	// an intermediate result (the notes name 15, 20 and 28): found here from
	// the text, not from the notes, and none of them is extraction.
	operand := 0
	for _, f := range rep.Samples {
		standalone := regexp.MustCompile(`(^|[^0-9.,])` + gsm8kAnswer(f.Target) + `([^0-9]|$)`)
		if f.Class == analysis.Reasoning && standalone.MatchString(strings.ReplaceAll(f.OutputTail, ",", "")) {
			operand++
		}
	}
	if operand < 3 {
		t.Errorf("%d reasoning misses with the target in the output, want the 3 the labels note", operand)
	}
	// An independent kappa, when Debian's Python has scikit-learn.
	testenv.Python(t, "sklearn")
	script := `import sys
from sklearn.metrics import cohen_kappa_score
rows = [l.split(",") for l in sys.argv[1:]]
print(repr(float(cohen_kappa_score([r[0] for r in rows], [r[1] for r in rows]))))`
	out, err := exec.Command("/usr/bin/python3", append([]string{"-c", script}, pairs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("sklearn: %v\n%s", err, out)
	}
	want, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil || math.Abs(want-a.Kappa) > 1e-12 {
		t.Errorf("κ %v, scikit-learn %s", a.Kappa, out)
	}
}

// gsm8kAnswer is the number after a GSM8K target's "#### ", without
// thousands separators.
func gsm8kAnswer(target string) string {
	i := strings.LastIndex(target, "#### ")
	return strings.ReplaceAll(strings.TrimSpace(target[i+len("#### "):]), ",", "")
}

// mcLine is what the tests read of a multiple-choice samples line, by
// themselves: lm-eval logs each choice's [log-likelihood, is_greedy] as
// strings in filtered_resps.
type mcLine struct {
	DocID    int        `json:"doc_id"`
	Target   any        `json:"target"`
	Filtered [][]string `json:"filtered_resps"`
	Acc      *float64   `json:"acc"`
	AccNorm  *float64   `json:"acc_norm"`
	Doc      struct {
		Choices []string `json:"choices"`
	} `json:"doc"`
}

func readMCLines(t *testing.T, path string) map[int]mcLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]mcLine{}
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m mcLine
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		out[i+1] = m
	}
	return out
}

// expectChoice classifies a multiple-choice miss as the FailureClass
// constants define it, from the logged values alone: scores are the
// log-likelihoods (acc) or over the choices' lengths (acc_norm).
func expectChoice(lls, lengths []float64, gold int, norm bool) (class analysis.FailureClass, pred int, margin float64) {
	raw := lls
	normed := make([]float64, len(lls))
	for i := range lls {
		normed[i] = lls[i] / lengths[i]
	}
	score, other := raw, normed
	if norm {
		score, other = normed, raw
	}
	first := func(xs []float64) int {
		best := 0
		for i := range xs {
			if xs[i] > xs[best] {
				best = i
			}
		}
		return best
	}
	pred = first(score)
	var z float64
	for _, s := range score {
		z += math.Exp(s)
	}
	margin = (math.Exp(score[pred]) - math.Exp(score[gold])) / z
	above := 0
	for i, s := range score {
		if s > score[gold] || (s == score[gold] && i < gold) {
			above++
		}
	}
	switch {
	case first(other) == gold:
		return analysis.NormFlip, pred, margin
	case margin >= analysis.ConfidentMargin:
		return analysis.ConfidentWrong, pred, margin
	case above == 1:
		return analysis.NearMiss, pred, margin
	}
	return analysis.Wrong, pred, margin
}

func parseLLs(t *testing.T, pairs [][]string) []float64 {
	t.Helper()
	lls := make([]float64, len(pairs))
	for i, p := range pairs {
		x, err := strconv.ParseFloat(p[0], 64)
		if err != nil {
			t.Fatal(err)
		}
		lls[i] = x
	}
	return lls
}

// The misses of a simulated MMLU run (lm-eval's multiple_choice format:
// choices " A" … " D", gold an index) are read over the 57 subjects, each
// classified as the logged log-likelihoods say, with the gold and chosen
// choice shown.
func TestFailuresMultipleChoiceMMLU(t *testing.T) {
	out, err := simulate.Generate(filepath.Join(t.TempDir(), "run"), simulate.Options{Seed: 3, Tasks: []string{"mmlu"}, MMLUDocsPerSubject: 6})
	if err != nil {
		t.Fatal(err)
	}
	sc := load(t, out.Dir)
	rep, err := analysis.Failures(sc, "mmlu", analysis.FailureOptions{N: 10000})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.MultipleChoice || rep.Metric != "acc" || len(rep.Samples) != rep.NMisses {
		t.Fatalf("multiple choice %v, metric %s, %d samples of %d misses", rep.MultipleChoice, rep.Metric, len(rep.Samples), rep.NMisses)
	}
	lines := map[string]map[int]mcLine{}
	misses, counts := 0, map[analysis.FailureClass]int{}
	for _, leaf := range sc.Run.Output.Results.Leaves("mmlu") {
		s, ok := sc.Find(leaf, "acc", "none")
		if !ok {
			t.Fatalf("no acc of %s", leaf)
		}
		lines[leaf] = readMCLines(t, s.File.Path)
		for _, m := range lines[leaf] {
			if *m.Acc == 0 {
				misses++
			}
		}
	}
	for _, f := range rep.Samples {
		m := lines[f.Task][f.Line]
		if m.DocID != f.DocID || *m.Acc != 0 {
			t.Fatalf("%s line %d: doc %d acc %v, not the miss %d", f.Task, f.Line, m.DocID, *m.Acc, f.DocID)
		}
		gold := goldIndex(t, m.Target)
		lls := parseLLs(t, m.Filtered)
		want, pred, margin := expectChoice(lls, []float64{1, 1, 1, 1}, gold, false)
		counts[want]++
		if f.Class != want || f.Gold == nil || f.Gold.Index != gold || f.Gold.Text != "ABCD"[gold:gold+1] || f.Gold.LogLikelihood != lls[gold] ||
			f.Chosen.Index != pred || f.Chosen.Rank != 1 || math.Abs(f.Chosen.Probability-f.Gold.Probability-margin) > 1e-12 {
			t.Errorf("%s doc %d: %s gold %+v chosen %+v; want %s, gold %d, chosen %d, margin %.3f (lls %v)", f.Task, f.DocID, f.Class, f.Gold, f.Chosen, want, gold, pred, margin, lls)
		}
	}
	if rep.NMisses != misses {
		t.Errorf("%d misses, the samples have %d with acc 0", rep.NMisses, misses)
	}
	for c, n := range counts {
		if rep.Classes[c] != n {
			t.Errorf("%s: %d, want %d", c, rep.Classes[c], n)
		}
	}
	// One-letter choices have one length: acc_norm never flips on MMLU.
	if rep.Classes[analysis.NormFlip] != 0 || counts[analysis.ConfidentWrong] == 0 || counts[analysis.NearMiss] == 0 {
		t.Errorf("classes %v", rep.Classes)
	}
	// The text shows the gold and the chosen choice.
	if s := rep.String(); !strings.Contains(s, "\n  gold: ") || !strings.Contains(s, "\n  chosen: ") || strings.Contains(s, "output tail") {
		t.Errorf("multiple-choice text:\n%s", s[:min(len(s), 2000)])
	}
	tb := rep.SampleTable()
	if tb.Head[0] != "task" || tb.Head[3] != "gold" || tb.Head[5] != "chosen" {
		t.Errorf("sample table head %q", tb.Head)
	}
}

// A HellaSwag-like task logs acc and acc_norm on each line: the classes
// follow from the logged log-likelihoods and choice lengths, and a miss of
// acc that acc_norm gets right is a norm-flip.
func TestFailuresMultipleChoiceNorm(t *testing.T) {
	dir := t.TempDir()
	results := `{"results": {"hs": {"acc,none": 0.0, "acc_stderr,none": 0.0, "acc_norm,none": 0.2, "acc_norm_stderr,none": 0.0, "alias": "hs"}},
		"configs": {"hs": {"task": "hs", "output_type": "multiple_choice", "doc_to_target": "{{label}}", "doc_to_choice": "{{choices}}",
			"target_delimiter": " ", "metric_list": [{"metric": "acc"}, {"metric": "acc_norm"}]}},
		"lm_eval_version": "0.4.9.1"}`
	docs := []struct {
		choices []string
		lls     []float64
		gold    int
	}{
		{[]string{"a long and likely ending", "no"}, []float64{-30, -5}, 0},         // acc picks 1, acc_norm 0: flip
		{[]string{"yes", "nope", "maybe"}, []float64{-1, -9, -8}, 2},                // confident wrong
		{[]string{"one", "two", "six"}, []float64{-1.0, -1.2, -3}, 1},               // near miss
		{[]string{"red", "tan", "sky", "ink"}, []float64{-1, -1.5, -1.6, -1.55}, 2}, // wrong: gold third
		{[]string{"tie", "tie"}, []float64{-2, -2}, 1},                              // argmax takes the first: near miss
	}
	var b strings.Builder
	for id, d := range docs {
		var args, resps, filt []string
		for i, c := range d.choices {
			args = append(args, fmt.Sprintf(`"gen_args_%d": {"arg_0": "ctx", "arg_1": %q}`, i, " "+c))
			p := fmt.Sprintf(`["%v", "False"]`, d.lls[i])
			resps, filt = append(resps, "["+p+"]"), append(filt, p)
		}
		choices, _ := json.Marshal(d.choices)
		_, pred, _ := expectChoice(d.lls, choiceLengths(d.choices), d.gold, false)
		_, npred, _ := expectChoice(d.lls, choiceLengths(d.choices), d.gold, true)
		acc, norm := 0.0, 0.0
		if pred == d.gold {
			acc = 1
		}
		if npred == d.gold {
			norm = 1
		}
		fmt.Fprintf(&b, `{"doc_id": %d, "doc": {"choices": %s, "label": %d}, "target": %d, "arguments": {%s}, "resps": [%s], "filtered_resps": [%s], "filter": "none", "metrics": ["acc", "acc_norm"], "acc": %v, "acc_norm": %v}`+"\n",
			id, choices, d.gold, d.gold, strings.Join(args, ", "), strings.Join(resps, ", "), strings.Join(filt, ", "), acc, norm)
	}
	os.WriteFile(filepath.Join(dir, "results_2025-01-01T00-00-00.000000.json"), []byte(results), 0o644)
	os.WriteFile(filepath.Join(dir, "samples_hs_2025-01-01T00-00-00.000000.jsonl"), []byte(b.String()), 0o644)
	sc := load(t, dir)
	lines := readMCLines(t, filepath.Join(dir, "samples_hs_2025-01-01T00-00-00.000000.jsonl"))
	for _, metric := range []string{"acc", "acc_norm"} {
		rep, err := analysis.Failures(sc, "hs", analysis.FailureOptions{Metric: metric})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]analysis.FailureClass{}
		for _, m := range lines {
			logged := *m.Acc
			if metric == "acc_norm" {
				logged = *m.AccNorm
			}
			if logged != 0 {
				continue
			}
			lls := parseLLs(t, m.Filtered)
			want[m.DocID], _, _ = expectChoice(lls, choiceLengths(m.Doc.Choices), goldIndex(t, m.Target), metric == "acc_norm")
		}
		if rep.NMisses != len(want) {
			t.Errorf("%s: %d misses, want %d", metric, rep.NMisses, len(want))
		}
		for _, f := range rep.Samples {
			if f.Class != want[f.DocID] || f.Gold.Text != docs[f.DocID].choices[f.Gold.Index] {
				t.Errorf("%s doc %d: %s (gold %+v), want %s", metric, f.DocID, f.Class, f.Gold, want[f.DocID])
			}
		}
		if metric == "acc" {
			for id, c := range []analysis.FailureClass{analysis.NormFlip, analysis.ConfidentWrong, analysis.NearMiss, analysis.Wrong, analysis.NearMiss} {
				if want[id] != c {
					t.Errorf("doc %d: the test's own reading is %s, built as %s", id, want[id], c)
				}
			}
		}
	}
	if _, err := analysis.Failures(sc, "hs", analysis.FailureOptions{N: -1}); err == nil {
		t.Error("a negative sample size is no error")
	}
}

// choiceLengths is the lengths acc_norm divides by: characters of each choice.
func choiceLengths(choices []string) []float64 {
	out := make([]float64, len(choices))
	for i, c := range choices {
		out[i] = float64(len([]rune(c)))
	}
	return out
}

// goldIndex reads a logged multiple-choice target: an int, or (lm-eval
// v0.4.4+) its digits as a string.
func goldIndex(t *testing.T, v any) int {
	t.Helper()
	switch x := v.(type) {
	case float64:
		return int(x)
	case string:
		i, err := strconv.Atoi(x)
		if err == nil {
			return i
		}
	}
	t.Fatalf("target %v is not an index", v)
	return 0
}

// A multiple-choice miss shows its gold and chosen choice as text, whatever
// they hold, with the classes of multiple choice.
func TestFailuresHTMLMultipleChoice(t *testing.T) {
	fr := &analysis.FailureReport{Task: "hs", Metric: "acc", Filter: "none", N: 4, NMisses: 2, MultipleChoice: true,
		Classes: map[analysis.FailureClass]int{analysis.NearMiss: 1, analysis.Wrong: 1},
		Samples: []analysis.Failure{
			{DocID: 3, Class: analysis.NearMiss, Label: analysis.NearMiss,
				Gold:   &analysis.ChoiceScore{Index: 1, Text: "</td><script>x</script>", LogLikelihood: -2.5, Probability: 0.25, Rank: 2},
				Chosen: &analysis.ChoiceScore{Index: 0, Text: "plain", LogLikelihood: -1.25, Probability: 0.7, Rank: 1}},
			{DocID: 4, Class: analysis.Wrong, Chosen: &analysis.ChoiceScore{Index: 2, Text: "c", LogLikelihood: -0.5, Probability: 0.9, Rank: 1}},
		}}
	tables := htmltest.Parse(t, fr.HTML())
	if len(tables) != 2 {
		t.Fatalf("%d tables", len(tables))
	}
	classes, sample := tables[0], tables[1]
	var names []string
	for _, r := range classes.Rows {
		names = append(names, r[0])
	}
	if strings.Join(names, ",") != "norm-flip,confident-wrong,near-miss,wrong" {
		t.Errorf("classes %v", names)
	}
	r := sample.Rows[0]
	if r[htmltest.Column(t, sample, "gold")] != `1 "</td><script>x</script>"` || r[htmltest.Column(t, sample, "gold log-likelihood")] != "-2.5" ||
		r[htmltest.Column(t, sample, "chosen")] != `0 "plain"` || r[htmltest.Column(t, sample, "chosen log-likelihood")] != "-1.25" ||
		r[htmltest.Column(t, sample, "p(chosen) − p(gold)")] != "0.450" || r[htmltest.Column(t, sample, "hand label")] != "near-miss" {
		t.Errorf("row %q", r)
	}
	if r := sample.Rows[1]; r[htmltest.Column(t, sample, "gold")] != "–" || r[htmltest.Column(t, sample, "p(chosen) − p(gold)")] != "–" {
		t.Errorf("a gold outside the choices: %q", r)
	}
	s := fr.String()
	if !strings.Contains(s, "\ndoc_id 3: near-miss, hand label near-miss\n  gold: 1 \"</td><script>x</script>\", log-likelihood -2.5, p 0.250, rank 2\n  chosen: 0 \"plain\", log-likelihood -1.25, p 0.700, rank 1\n") ||
		!strings.Contains(s, "\n  gold: not among the choices\n") {
		t.Errorf("text:\n%s", s)
	}
}
