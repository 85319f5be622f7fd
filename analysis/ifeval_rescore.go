package analysis

import (
	"fmt"
	"github.com/evalcapsule/evalcapsule/harness"
	"strings"
)

// ifevalMetrics are the four metrics IFEval's process_results returns.
var ifevalMetrics = []string{"prompt_level_strict_acc", "inst_level_strict_acc", "prompt_level_loose_acc", "inst_level_loose_acc"}

// isIFEvalConfig recognises IFEval's process_results: lm-eval writes its
// source (inspect.getsource), which must call utils.py's two tests, or, when
// the source could not be read, "<function process_results at 0x…>", and
// then the metric_list naming only the four metrics identifies it. Only
// ifeval and leaderboard_ifeval: the multilingual ifeval_ca and ifeval_es
// have the same metrics and process_results over other checkers.
func isIFEvalConfig(task string, cfg harness.Value, ms []metricSpec) bool {
	if task != "ifeval" && task != "leaderboard_ifeval" {
		return false
	}
	if pr, ok := cfg.Get("process_results"); ok && pr.Kind == harness.String && strings.HasPrefix(pr.Str, "def ") &&
		!(strings.Contains(pr.Str, "test_instruction_following_strict(") && strings.Contains(pr.Str, "test_instruction_following_loose(")) {
		return false
	}
	seen := 0
	for _, m := range ms {
		if contains(ifevalMetrics, m.name) {
			seen++
		}
	}
	return seen > 0 && seen == len(ms)
}

// customAggName is the function name of an aggregation given as !function:
// lm-eval writes its source ("def agg_inst_level_acc(items):…") or, without
// one, its repr ("<function agg_inst_level_acc at 0x7f…>").
func customAggName(agg string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(agg, "<function "), "def ")
	if i := strings.IndexAny(s, " >("); i >= 0 {
		s = s[:i]
	}
	if j := strings.LastIndexByte(s, '.'); j >= 0 {
		s = s[j+1:]
	}
	return s
}

// rescoreIFEval recomputes IFEval's per-doc metrics from the response.
func (ts *taskScorer) rescoreIFEval(res lineResult, dc *docContext, response string, want []string) lineResult {
	doc, err := dc.value()
	if err != nil {
		res.unsupported = err.Error()
		return res
	}
	r, err := scoreIFEval(doc, response)
	if err != nil {
		res.err = err.Error()
		return res
	}
	flat := func(ts []ifTri) ([]float64, bool) {
		out := make([]float64, len(ts))
		for i, t := range ts {
			if t == ifUnknown {
				return nil, false
			}
			out[i] = float64(t)
		}
		return out, true
	}
	for _, name := range want {
		var v ifTri
		var list []ifTri
		switch name {
		case "prompt_level_strict_acc":
			v = r.promptStrict
		case "prompt_level_loose_acc":
			v = r.promptLoose
		case "inst_level_strict_acc":
			list = r.instStrict
		case "inst_level_loose_acc":
			list = r.instLoose
		default:
			res.unsupported = fmt.Sprintf("per-doc metric %q is not one IFEval's process_results returns", name)
			continue
		}
		if list != nil {
			l, ok := flat(list)
			if !ok {
				res.unsupported = "IFEval instruction not recomputable: " + r.why
				continue
			}
			res.values = append(res.values, perDoc{name: name, list: l, kind: PyInt})
			continue
		}
		if v == ifUnknown {
			res.unsupported = "IFEval instruction not recomputable: " + r.why
			continue
		}
		res.values = append(res.values, perDoc{name: name, value: float64(v), kind: PyInt})
	}
	return res
}

// numberList reads a logged list of bools or numbers; nil otherwise.
func numberList(v harness.Value) []float64 {
	if v.Kind != harness.List {
		return nil
	}
	out := make([]float64, 0, len(v.List))
	for _, e := range v.List {
		switch e.Kind {
		case harness.Bool:
			out = append(out, boolFloat(e.Bool))
		case harness.Number:
			out = append(out, e.Num)
		default:
			return nil
		}
	}
	return out
}

func flatten(ls [][]float64) []float64 {
	out := []float64{}
	for _, l := range ls {
		out = append(out, l...)
	}
	return out
}

// isInstLevelAgg recognises utils.agg_inst_level_acc (the mean of the
// flattened per-doc lists), by its source where lm-eval wrote it.
func isInstLevelAgg(agg string) bool {
	if customAggName(agg) != "agg_inst_level_acc" {
		return false
	}
	if strings.HasPrefix(agg, "def ") {
		return strings.Contains(agg, "for sublist in items for item in sublist") && strings.Contains(agg, "sum(flat_items) / len(flat_items)")
	}
	return true
}
