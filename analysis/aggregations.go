package analysis

import (
	"fmt"
	"math"
	"strings"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// aggContext is what decides the last bits of an aggregate besides the items:
// the Python and numpy that ran lm-eval, its version and bootstrap_iters.
type aggContext struct {
	rule   Summation
	numpy  NumpyReduce
	iters  int // config.bootstrap_iters
	patch  int // lm-eval 0.4.<patch>
	metric string
}

// aggregateWith computes lm-eval's value and stderr of one metric. items are
// the per-doc values; pairs the per-doc tuples of the aggregations that take
// them (f1, mcc: (gold, pred); weighted_perplexity, bits_per_byte:
// (loglikelihood, length)).
//
// why names the aggregation, the stderr and the summation each sum used:
// the rule of ac where CPython's sum() follows it (Python floats), naive
// where it does not (numpy scalars, exact ints). ruleMatters reports
// whether ac.rule changed any sum, that is whether another rule could give
// other bits.
func aggregateWith(agg string, items []float64, pairs [][]float64, kind PyKind, ac aggContext) (val, se Number, why string, ruleMatters bool, err error) {
	val, se, why, err = aggregateItems(agg, items, pairs, kind, ac)
	if err != nil {
		return val, se, "", false, err
	}
	n := len(items)
	if pairs != nil {
		n = len(pairs)
	}
	var notes []string
	note := func(what string, k PyKind) {
		s := summationOf(k, ac.rule)
		if s == ac.rule && k == PyFloat {
			ruleMatters = true
		}
		if k == PyInt {
			notes = append(notes, what+": exact sum of int")
			return
		}
		notes = append(notes, fmt.Sprintf("%s: %s summation of %s", what, s, k))
	}
	switch agg {
	case "mean", "agg_inst_level_acc":
		note("value", kind)
	case "perplexity":
		note("value", kind)
	case "nanmean":
		notes = append(notes, "value: numpy's nanmean")
	case "weighted_perplexity", "bits_per_byte":
		note("value", PyFloat)
	}
	switch StderrFor(ac.metric, agg, ac.iters, n, ac.patch).Method {
	case StderrMean:
		dev := PyFloat
		if kind == NumpyFloat {
			dev = NumpyFloat
		}
		note("stderr", dev)
	case StderrBootstrap:
		note("stderr", bootstrapKind(agg, kind))
	}
	if len(notes) > 0 {
		why += " (" + strings.Join(notes, "; ") + ")"
	}
	return val, se, why, ruleMatters, nil
}

// summationOf is the summation CPython's sum() applies to items of kind k
// under rule: compensated only for Python floats from 3.12; ints add
// exactly and numpy scalars take the generic, plain path.
func summationOf(k PyKind, rule Summation) Summation {
	if k == PyFloat {
		return rule
	}
	return Naive
}

// bootstrapKind is the Python type of the bootstrap replicates of agg, as
// aggregateItems passes it to BootstrapStderr.
func bootstrapKind(agg string, kind PyKind) PyKind {
	switch agg {
	case "perplexity", "matthews_corrcoef":
		return PyFloat
	case "nanmean", "f1":
		return NumpyFloat
	}
	return kind
}

func aggregateItems(agg string, items []float64, pairs [][]float64, kind PyKind, ac aggContext) (val, se Number, why string, err error) {
	n := len(items)
	if pairs != nil {
		n = len(pairs)
	}
	if n == 0 {
		return Number{}, Number{}, "", fmt.Errorf("no per-doc values to aggregate")
	}
	rule := StderrFor(ac.metric, agg, ac.iters, n, ac.patch)
	stderr := func(stat func(idx []int) float64, repKind PyKind) Number {
		switch rule.Method {
		case StderrMean:
			return Num(MeanStderr(items, kind, ac.rule))
		case StderrBootstrap:
			return Num(BootstrapStderr(n, stat, rule.Iters, repKind, ac.rule))
		}
		return NA
	}
	why = agg
	switch rule.Method {
	case StderrMean:
		why += ", mean_stderr"
	case StderrBootstrap:
		why += fmt.Sprintf(", bootstrap stderr (%d resamples)", rule.Iters)
	default:
		why += ", no stderr"
	}
	needItems := func() error {
		if items == nil || pairs != nil {
			return fmt.Errorf("aggregation %s needs one number per document", agg)
		}
		return nil
	}
	needPairs := func() error {
		if pairs == nil {
			return fmt.Errorf("aggregation %s needs a (gold, prediction) pair per document", agg)
		}
		return nil
	}
	switch agg {
	case "mean", "agg_inst_level_acc": // IFEval's: the mean of the flattened lists
		if err := needItems(); err != nil {
			return val, se, "", err
		}
		return Num(Mean(items, kind, ac.rule)), stderr(nil, kind), why, nil
	case "median":
		if err := needItems(); err != nil {
			return val, se, "", err
		}
		return Num(Median(items, nil)), stderr(MedianOf(items), kind), why, nil
	case "perplexity":
		if err := needItems(); err != nil {
			return val, se, "", err
		}
		stat := func(idx []int) float64 { return Perplexity(items, idx, kind, ac.rule) }
		return Num(Perplexity(items, nil, kind, ac.rule)), stderr(stat, PyFloat), why, nil
	case "nanmean":
		if err := needItems(); err != nil {
			return val, se, "", err
		}
		stat := func(idx []int) float64 { return NanMean(items, idx, ac.numpy) }
		return Num(NanMean(items, nil, ac.numpy)), stderr(stat, NumpyFloat), why, nil
	case "f1_macro", "f1_micro", "f1_weighted", "f1_macro_legacy", "f1_micro_legacy", "f1_weighted_legacy":
		if err := needPairs(); err != nil {
			return val, se, "", err
		}
		golds := make([]int, n)
		preds := make([]int, n)
		for i, p := range pairs {
			golds[i], preds[i] = int(p[0]), int(p[1])
		}
		avg, legacy := f1AverageOf(agg)
		v := F1Average(golds, preds, avg, legacy)
		why = "sklearn f1_score(average=\"" + avg + "\")"
		switch {
		case v == F1Average(golds, preds, avg, !legacy):
			why += " (scikit-learn's formulas before and from 1.4 agree here)"
		case legacy:
			why += " as scikit-learn before 1.4 computes it"
		default:
			why += " as scikit-learn 1.4 and later compute it"
		}
		return Num(v), NA, why + ", no stderr", nil
	case "f1", "matthews_corrcoef":
		if err := needPairs(); err != nil {
			return val, se, "", err
		}
		golds := make([]int, n)
		preds := make([]int, n)
		for i, p := range pairs {
			golds[i], preds[i] = int(p[0]), int(p[1])
		}
		if agg == "f1" {
			stat := func(idx []int) float64 { return F1Binary(golds, preds, idx) }
			return Num(F1Binary(golds, preds, nil)), stderr(stat, NumpyFloat), why, nil
		}
		stat := func(idx []int) float64 { return MatthewsCorrcoef(golds, preds, idx) }
		return Num(MatthewsCorrcoef(golds, preds, nil)), stderr(stat, PyFloat), why, nil
	case "weighted_perplexity", "bits_per_byte":
		if err := needPairs(); err != nil {
			return val, se, "", err
		}
		a := make([]float64, n)
		b := make([]float64, n)
		for i, p := range pairs {
			a[i], b[i] = p[0], p[1]
		}
		// weighted_mean: sum(a) / sum(b), float log-likelihoods over int
		// counts.
		wm := pynum.Sum(a, PyFloat, ac.rule) / pynum.Sum(b, PyInt, ac.rule)
		if agg == "weighted_perplexity" {
			return Num(pynum.Exp(-wm)), NA, why, nil
		}
		return Num(-wm / math.Ln2), NA, why, nil
	case "bleu", "chrf", "ter":
		return val, se, "", fmt.Errorf("aggregation %s is sacrebleu's corpus score of (reference, prediction) items; the per-doc values are not such items", agg)
	case "bypass":
		return Num(999), NA, why, nil
	}
	return val, se, "", fmt.Errorf("aggregation %q is not re-implemented", agg)
}
