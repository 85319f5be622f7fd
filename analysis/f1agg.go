package analysis

import (
	"math"
	"sort"
	"strings"
)

// Task-specific f1 aggregations (metric_list's aggregation: !function
// utils.weighted_f1_score, macro_f1_score, micro_f1_score: afrobench,
// kobest, aradice, basqueglue's micro_f1_score through evaluate's "f1")
// are sklearn.metrics.f1_score(golds, preds, average=…) of the logged
// (gold, prediction) pairs. lm-eval gives them no stderr ("N/A").

// sklearnF1Average recognises such a function by its name and, where
// lm-eval wrote its source, by the f1_score call it makes.
func sklearnF1Average(agg string) (string, bool) {
	var avg string
	switch customAggName(agg) {
	case "weighted_f1_score":
		avg = "weighted"
	case "macro_f1_score":
		avg = "macro"
	case "micro_f1_score":
		avg = "micro"
	default:
		return "", false
	}
	if strings.HasPrefix(agg, "def ") {
		calls := strings.Contains(agg, "f1_score(golds, preds, average=\""+avg+"\")") ||
			strings.Contains(agg, `load_metric("f1")`) && strings.Contains(agg, "references=golds, predictions=preds, average=\""+avg+"\")")
		if !calls || strings.Contains(agg, "labels=") {
			return "", false
		}
	}
	return avg, true
}

// aggCandidates lists the computations an aggregation may stand for: the
// averaged f1s changed formula in scikit-learn 1.4 (PR #27577), and which
// release a run had is not recorded.
func aggCandidates(agg string) []string {
	switch agg {
	case "f1_macro", "f1_micro", "f1_weighted":
		return []string{agg, agg + "_legacy"}
	}
	return []string{agg}
}

// F1Average is sklearn.metrics.f1_score(golds, preds, average=average) for
// "macro", "micro" or "weighted" over the sorted labels of golds and preds:
// per label (or, for micro, summed over labels) tp, predicted and true
// counts; f1 = 2·tp / (true + predicted) from scikit-learn 1.4, and
// 2·precision·recall / (precision + recall) before it (legacy), 0 where a
// denominator is 0; then np.average, weighted by the true counts for
// "weighted". It returns NaN for no pairs, where sklearn raises.
func F1Average(golds, preds []int, average string, legacy bool) float64 {
	if len(golds) == 0 {
		return math.NaN()
	}
	seen := map[int]bool{}
	for i := range golds {
		seen[golds[i]], seen[preds[i]] = true, true
	}
	labels := make([]int, 0, len(seen))
	for l := range seen {
		labels = append(labels, l)
	}
	sort.Ints(labels)
	at := map[int]int{}
	for i, l := range labels {
		at[l] = i
	}
	tp := make([]float64, len(labels))
	pred := make([]float64, len(labels))
	true_ := make([]float64, len(labels))
	for i := range golds {
		g, p := at[golds[i]], at[preds[i]]
		true_[g]++
		pred[p]++
		if g == p {
			tp[g]++
		}
	}
	if average == "micro" {
		tp = []float64{sumInts(tp)}
		pred = []float64{sumInts(pred)}
		true_ = []float64{sumInts(true_)}
	}
	f := make([]float64, len(tp))
	for i := range tp {
		if legacy {
			var prec, rec float64
			if pred[i] != 0 {
				prec = tp[i] / pred[i]
			}
			if true_[i] != 0 {
				rec = tp[i] / true_[i]
			}
			denom := prec + rec
			if denom == 0 {
				denom = 1
			}
			f[i] = 2 * prec * rec / denom
		} else if d := true_[i] + pred[i]; d != 0 {
			f[i] = 2 * tp[i] / d
		}
	}
	if average == "weighted" {
		// np.average(f, weights=true): (f*w).sum() / w.sum()
		w := make([]float64, len(f))
		for i := range f {
			w[i] = f[i] * true_[i]
		}
		return pairwiseSum(w) / pairwiseSum(true_)
	}
	return pairwiseSum(f) / float64(len(f))
}

func sumInts(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// f1AverageOf splits an aggregation name into F1Average's arguments.
func f1AverageOf(agg string) (average string, legacy bool) {
	s := strings.TrimPrefix(agg, "f1_")
	if strings.HasSuffix(s, "_legacy") {
		return strings.TrimSuffix(s, "_legacy"), true
	}
	return s, false
}

// reasonBrier: lm-eval logs brier_score's per-doc (gold, softmax) pair with
// the numpy array printed by str(), eight significant digits, so the mean
// cannot be re-aggregated exactly; recomputing the softmax from the
// log-likelihoods needs numpy's np.exp, whose SIMD implementation is not
// bit-reproducible in Go.
const reasonBrier = "brier_score's per-doc probabilities are logged as a numpy array printed with str(), which keeps 8 significant digits, and np.exp's SIMD results are not reproduced bit for bit: the aggregate cannot be recomputed exactly"
