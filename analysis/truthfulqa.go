package analysis

import (
	"fmt"
	"strings"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// knownProcess is a task-specific process_results of lm-eval that the
// re-scorer re-implements, recognised from the source lm-eval prints into
// configs[task].process_results.
type knownProcess int

const (
	processUnknown knownProcess = iota
	// processTruthfulQAGen is truthfulqa's process_results_gen: sacrebleu
	// BLEU and rouge-score ROUGE-1/2/Lsum of the completion against every
	// correct and incorrect answer; max over the correct ones, difference
	// with the best incorrect one, and whether the correct one wins.
	processTruthfulQAGen
	// processTruthfulQAMC2 is process_results_mc2 since lm-eval PR #2768
	// (task version 3.0, March 2025): exp of the log-likelihoods,
	// normalised by np.sum, np.sum of the mass where labels == 1.
	processTruthfulQAMC2
	// processTruthfulQAMC2Split is the earlier process_results_mc2 (task
	// version 2.0 and before): the choices before the first label 0 are
	// the true ones; Python's sum() over numpy scalars.
	processTruthfulQAMC2Split
)

// processOf recognises a printed process_results. Whitespace is ignored so
// that a re-indented print still matches; the fingerprints are the lines
// that decide the numbers.
func processOf(src string) knownProcess {
	s := strings.Join(strings.Fields(src), " ")
	switch {
	case strings.HasPrefix(s, "def process_results_gen(doc, results):") &&
		strings.Contains(s, `bleu_scores = [bleu([[ref]], [completion]) for ref in all_refs]`) &&
		strings.Contains(s, `rouge_scores = [rouge([ref], [completion]) for ref in all_refs]`) &&
		strings.Contains(s, `rougeL_scores = [score["rougeLsum"] for score in rouge_scores]`) &&
		strings.Contains(s, `true_refs, false_refs = doc["correct_answers"], doc["incorrect_answers"]`):
		return processTruthfulQAGen
	case strings.HasPrefix(s, "def process_results_mc2(doc, results):") &&
		strings.Contains(s, "probs_norm = probs / np.sum(probs)") &&
		strings.Contains(s, `labels = np.array(doc["mc2_targets"]["labels"])`) &&
		strings.Contains(s, "pm_true = np.sum(probs_norm[labels == 1])") &&
		strings.Contains(s, `return {"acc": pm_true}`):
		return processTruthfulQAMC2
	case strings.HasPrefix(s, "def process_results_mc2(doc, results):") &&
		strings.Contains(s, `split_idx = list(doc["mc2_targets"]["labels"]).index(0)`) &&
		strings.Contains(s, "p_true = p_true / (sum(p_true) + sum(p_false))") &&
		strings.Contains(s, `return {"acc": sum(p_true)}`):
		return processTruthfulQAMC2Split
	}
	return processUnknown
}

// truthfulQAGenMetrics are the names process_results_gen returns.
var truthfulQAGenMetrics = []string{
	"bleu_max", "bleu_acc", "bleu_diff",
	"rouge1_max", "rouge1_acc", "rouge1_diff",
	"rouge2_max", "rouge2_acc", "rouge2_diff",
	"rougeL_max", "rougeL_acc", "rougeL_diff",
}

// docStrings reads a doc field that is a list of strings.
func docStrings(dc *docContext, key string) ([]string, error) {
	v, ok := dc.field(key)
	if !ok || v.Kind != harness.List {
		return nil, fmt.Errorf("doc.%s is not a list", key)
	}
	out := make([]string, len(v.List))
	for i, e := range v.List {
		t, ok := e.Text()
		if !ok || e.Kind != harness.String {
			return nil, fmt.Errorf("doc.%s[%d] is not a string", key, i)
		}
		out[i] = t
	}
	return out, nil
}

// nanmaxSplit is np.nanmax of xs[:k] and of xs[k:]. An empty side is
// lm-eval's ValueError; an all-NaN side is NaN, as numpy returns.
func nanmax(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	best := xs[0]
	for _, x := range xs[1:] {
		if isNaN(best) || x > best {
			best = x
		}
	}
	return best, true
}

// truthfulQAGen scores one completion as process_results_gen does.
func truthfulQAGen(completion string, dc *docContext, rule Summation, want []string) ([]perDoc, error) {
	trues, err := docStrings(dc, "correct_answers")
	if err != nil {
		return nil, err
	}
	falses, err := docStrings(dc, "incorrect_answers")
	if err != nil {
		return nil, err
	}
	if len(trues) == 0 || len(falses) == 0 {
		return nil, fmt.Errorf("doc has %d correct and %d incorrect answers; np.nanmax of an empty list raises", len(trues), len(falses))
	}
	all := append(append([]string{}, trues...), falses...)
	var bleu, r1, r2, rl []float64
	hyp := newIntlHyp(completion)
	for _, ref := range all {
		bleu = append(bleu, hyp.bleu([]string{ref}, rule))
		a, b, c := truthfulQARouge(ref, completion)
		r1, r2, rl = append(r1, a), append(r2, b), append(rl, c)
	}
	vals := map[string]float64{}
	kinds := map[string]PyKind{}
	tols := map[string]float64{}
	for _, m := range []struct {
		prefix string
		xs     []float64
	}{{"bleu", bleu}, {"rouge1", r1}, {"rouge2", r2}, {"rougeL", rl}} {
		good, _ := nanmax(m.xs[:len(trues)])
		bad, _ := nanmax(m.xs[len(trues):])
		vals[m.prefix+"_max"], kinds[m.prefix+"_max"] = good, NumpyFloat
		vals[m.prefix+"_diff"], kinds[m.prefix+"_diff"] = good-bad, NumpyFloat
		if m.prefix == "bleu" { // exp and log; ROUGE is int ratios only
			tols["bleu_max"] = ulp(good)
			tols["bleu_diff"] = ulp(good) + ulp(bad)
		}
		acc := 0.0
		if good > bad {
			acc = 1
		}
		vals[m.prefix+"_acc"], kinds[m.prefix+"_acc"] = acc, PyInt
	}
	var out []perDoc
	for _, name := range want {
		if v, ok := vals[name]; ok {
			out = append(out, perDoc{name: name, value: v, kind: kinds[name], libmTol: tols[name]})
		}
	}
	return out, nil
}

// mc2Tol is how far process_results_mc2's value may move when np.exp
// rounds otherwise than the C library's exp: numpy has its own SIMD exp on
// AVX512F machines, which differs in the last bit for about a quarter of
// the arguments. Each probability then moves by an ulp; their normalised
// sum by about an ulp per choice.
func mc2Tol(v float64, choices int) float64 { return float64(choices+1) * ulp(v) }

// truthfulQAMC2 is process_results_mc2's acc from the log-likelihoods of
// the choices: the probability mass of the true answers, normalised over
// all choices. np.exp is taken as the C library's exp, as numpy calls it
// on machines without AVX512F; see mc2Tol for the others.
func truthfulQAMC2(lls []float64, dc *docContext, split bool) (float64, error) {
	v, ok := dc.field("mc2_targets")
	if !ok || v.Kind != harness.Object {
		return 0, fmt.Errorf("doc.mc2_targets is not an object")
	}
	lv, ok := v.Get("labels")
	if !ok || lv.Kind != harness.List {
		return 0, fmt.Errorf("doc.mc2_targets.labels is not a list")
	}
	labels := make([]int, len(lv.List))
	for i, e := range lv.List {
		f, ok := e.Float()
		if !ok || e.Kind != harness.Number || !e.IsInt {
			return 0, fmt.Errorf("doc.mc2_targets.labels[%d] is not an int", i)
		}
		labels[i] = int(f)
	}
	if len(labels) != len(lls) {
		return 0, fmt.Errorf("%d labels for %d log-likelihoods", len(labels), len(lls))
	}
	probs := make([]float64, len(lls))
	for i, ll := range lls {
		probs[i] = pynum.Exp(ll)
	}
	if split {
		k := -1
		for i, l := range labels {
			if l == 0 {
				k = i
				break
			}
		}
		if k < 0 {
			return 0, fmt.Errorf("doc.mc2_targets.labels has no 0: list.index(0) raises")
		}
		// Python's sum() of numpy scalars starts at int 0 and adds in
		// order.
		var st, sf float64
		for _, p := range probs[:k] {
			st += p
		}
		for _, p := range probs[k:] {
			sf += p
		}
		den := st + sf
		var acc float64
		for _, p := range probs[:k] {
			acc += p / den
		}
		return acc, nil
	}
	total := NumpySum(probs, NumpyBuffered)
	var trues []float64
	for i, p := range probs {
		if labels[i] == 1 {
			trues = append(trues, p/total)
		}
	}
	return NumpySum(trues, NumpyBuffered), nil
}

// rescoreProcessGen is rescoreGenerate's end for process_results_gen:
// completion = results[0], the first request's filtered response.
func (ts *taskScorer) rescoreProcessGen(res lineResult, first responses, dc *docContext, want []string) lineResult {
	if !first.single {
		res.unsupported = "the filter pipeline does not end in a single response"
		return res
	}
	vals, err := truthfulQAGen(first.list[0], dc, ts.sumRule, want)
	if err != nil {
		res.err = err.Error()
		return res
	}
	res.values = vals
	for _, n := range want {
		if _, ok := findPerDoc(vals, n); !ok {
			res.unsupported = fmt.Sprintf("per-doc metric %q is not one process_results_gen returns", n)
		}
	}
	return res
}

// rescoreProcessMC2 is rescoreLoglikelihood's end for process_results_mc2.
func (ts *taskScorer) rescoreProcessMC2(res lineResult, lls []float64, dc *docContext, want []string) lineResult {
	for _, n := range want {
		if n != "acc" {
			res.unsupported = fmt.Sprintf("per-doc metric %q is not one process_results_mc2 returns", n)
			continue
		}
		v, err := truthfulQAMC2(lls, dc, ts.process == processTruthfulQAMC2Split)
		if err != nil {
			res.err = err.Error()
			return res
		}
		res.values = append(res.values, perDoc{name: n, value: v, kind: NumpyFloat, libmTol: mc2Tol(v, len(lls)), anyPlatform: true})
	}
	return res
}
