package analysis_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// mathHardRows is a constructed leaderboard_math_hard run in lm-eval
// v0.4.8's format: a response, doc.answer (the gold process_docs
// extracts) and the exact_match lm-eval logged.
var mathHardRows = []struct {
	response, gold string
	logged         int
}{
	{"The area is 12.\nFinal Answer: The final answer is $12$. I hope it is correct.", "12", 1},
	{"I could not finish.", "7", 0}, // no final line: [invalidanswer] → 0
	{"Final Answer: The final answer is $\\frac{1}{2}$. I hope it is correct.", "0.5", 1}, // sympy decides
	{"Final Answer: The final answer is $x=5$ units. I hope it is correct.", "5", 1},
	{"Final Answer: The final answer is $3$. I hope it is correct.", "4", 0}, // sympy decides
}

func writeMathHard(t *testing.T, py string, edit func(i int, logged *int)) string {
	t.Helper()
	dir := t.TempDir()
	const ts = "2026-10-04T08-00-00.000000"
	var b strings.Builder
	var vals []int
	for i, r := range mathHardRows {
		v := r.logged
		if edit != nil {
			edit(i, &v)
		}
		vals = append(vals, v)
		line, _ := json.Marshal(map[string]any{"doc_id": i, "doc": map[string]any{"problem": "p", "solution": "s", "answer": r.gold},
			"target": r.gold, "arguments": map[string]any{"gen_args_0": map[string]any{"arg_0": "Problem:\np\n\nSolution:", "arg_1": map[string]any{"until": []string{"Problem:"}}}},
			"resps": [][]string{{r.response}}, "filtered_resps": []string{r.response}, "filter": "none", "metrics": []string{"exact_match"}, "exact_match": v})
		b.Write(line)
		b.WriteByte('\n')
	}
	mean, stderr := pyMeanStderr(t, py, vals)
	pr, _ := json.Marshal("def process_results(doc: dict, results: List[str]) -> Dict[str, int]:\n    candidates = results[0]\n\n    unnormalized_answer = get_unnormalized_answer(candidates)\n    answer = normalize_final_answer(unnormalized_answer)\n\n    if answer == INVALID_ANSWER:\n        return {\"exact_match\": 0}\n\n    if answer.strip() == doc[\"answer\"].strip() or is_equiv(answer, doc[\"answer\"]):\n        retval = 1\n    else:\n        retval = 0\n")
	results := fmt.Sprintf(`{
  "results": {"leaderboard_math_algebra_hard": {"alias": "leaderboard_math_algebra_hard", "exact_match,none": %s, "exact_match_stderr,none": %s}},
  "configs": {"leaderboard_math_algebra_hard": {"task": "leaderboard_math_algebra_hard", "output_type": "generate_until", "process_results": %s,
    "doc_to_target": "{{answer if few_shot is undefined else solution}}",
    "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": true}],
    "filter_list": [{"name": "none", "filter": [{"function": "take_first"}]}], "num_fewshot": 4}},
  "n-samples": {"leaderboard_math_algebra_hard": {"original": 307, "effective": %d}},
  "config": {"model": "hf", "model_args": {"pretrained": "example/constructed"}, "batch_size": 1, "device": "cpu", "limit": %d.0, "bootstrap_iters": 100000, "gen_kwargs": {}, "random_seed": 0, "numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 1234},
  "lm_eval_version": "0.4.8", "model_source": "hf", "model_name": "example/constructed", "date": 1790921714.0
}
`, mean, stderr, pr, len(mathHardRows), len(mathHardRows))
	return writeRun(t, dir, ts, "leaderboard_math_algebra_hard", results, b.String())
}

// TestMathHardRescoredWherePossible: documents decided without sympy are
// recomputed and compared; the others are counted and named, and the
// check stays reaggregated.
func TestMathHardRescoredWherePossible(t *testing.T) {
	py := testenv.Python(t)
	c := find(t, rescore(t, writeMathHard(t, py, nil)), "leaderboard_math_algebra_hard", "exact_match", "none")
	if c.Level != analysis.LevelReaggregated || c.Status != analysis.StatusExact || !strings.Contains(c.Reason, "2 of 5 lines not recomputed") || !strings.Contains(c.Reason, "sympy") {
		t.Fatalf("level %s, status %s: %s", c.Level, c.Status, c.Reason)
	}
	// A logged 1 for the response without a final answer is named.
	c = find(t, rescore(t, writeMathHard(t, py, func(i int, v *int) {
		if i == 1 {
			*v = 1
		}
	})), "leaderboard_math_algebra_hard", "exact_match", "none")
	if c.Status != analysis.StatusDiffers || len(c.DocDiffs) != 1 || c.DocDiffs[0].DocID != 1 {
		t.Fatalf("status %s, diffs %+v: %s", c.Status, c.DocDiffs, c.Reason)
	}
}
