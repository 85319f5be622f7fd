package analysis_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// writeWeightedF1 writes a constructed afrimmlu-style run (multiple choice,
// metric f1 aggregated by utils.weighted_f1_score): 30 documents with
// made-up log-likelihoods, the per-doc [gold, pred] pairs lm-eval logs for
// them, and the aggregate Debian's scikit-learn computes from those pairs.
func writeWeightedF1(t *testing.T, py string) string {
	t.Helper()
	dir := t.TempDir()
	const ts = "2026-10-03T09-00-00.000000"
	rng := rand.New(rand.NewSource(11))
	var b strings.Builder
	var golds, preds []int
	for i := 0; i < 30; i++ {
		gold := rng.Intn(4)
		lls := make([]float64, 4)
		best := 0
		for j := range lls {
			lls[j] = -float64(rng.Intn(4000)) / 100
			if lls[j] > lls[best] {
				best = j
			}
		}
		golds, preds = append(golds, gold), append(preds, best)
		args := map[string]any{}
		var resps, filtered []any
		for j, c := range []string{"A", "B", "C", "D"} {
			args[fmt.Sprintf("gen_args_%d", j)] = map[string]any{"arg_0": "Q", "arg_1": " " + c}
			ll := fmt.Sprint(lls[j])
			resps = append(resps, []any{[]any{ll, "False"}})
			filtered = append(filtered, []any{ll, "False"})
		}
		line, _ := json.Marshal(map[string]any{"doc_id": i, "doc": map[string]any{"answer": "ABCD"[gold : gold+1]}, "target": fmt.Sprint(gold),
			"arguments": args, "resps": resps, "filtered_resps": filtered, "filter": "none", "metrics": []string{"f1"}, "f1": []int{gold, best}})
		b.Write(line)
		b.WriteByte('\n')
	}
	pairs, _ := json.Marshal([2][]int{golds, preds})
	out, err := exec.Command(py, "-c", `import json, sys
from sklearn.metrics import f1_score
g, p = json.loads(sys.argv[1])
print(repr(float(f1_score(g, p, average="weighted"))))`, string(pairs)).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	agg := `def weighted_f1_score(items):\n    from sklearn.metrics import f1_score\n\n    unzipped_list = list(zip(*items))\n    golds = unzipped_list[0]\n    preds = unzipped_list[1]\n    fscore = f1_score(golds, preds, average=\"weighted\")\n    return fscore\n`
	results := fmt.Sprintf(`{
  "results": {"afrimmlu_x": {"alias": "afrimmlu_x", "f1,none": %s, "f1_stderr,none": "N/A"}},
  "configs": {"afrimmlu_x": {"task": "afrimmlu_x", "output_type": "multiple_choice", "doc_to_target": "{{['A', 'B', 'C', 'D'].index(answer)}}",
    "doc_to_choice": ["A", "B", "C", "D"], "target_delimiter": " ",
    "metric_list": [{"metric": "f1", "aggregation": "%s", "average": "weighted", "hf_evaluate": true, "higher_is_better": true}], "num_fewshot": 0}},
  "n-samples": {"afrimmlu_x": {"original": 30, "effective": 30}},
  "config": {"model": "hf", "model_args": {"pretrained": "example/constructed"}, "batch_size": 1, "device": "cpu", "limit": null, "bootstrap_iters": 100000, "gen_kwargs": {}, "random_seed": 0, "numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 1234},
  "lm_eval_version": "0.4.8", "model_source": "hf", "model_name": "example/constructed", "date": 1790921714.0
}
`, strings.TrimSpace(string(out)), agg)
	return writeRun(t, dir, ts, "afrimmlu_x", results, b.String())
}

// TestWeightedF1Rescored: a task whose YAML aggregates f1 with
// utils.weighted_f1_score is re-scored from the log-likelihoods and
// aggregated as scikit-learn does, to the bit.
func TestWeightedF1Rescored(t *testing.T) {
	py := testenv.Python(t, "sklearn")
	c := find(t, rescore(t, writeWeightedF1(t, py)), "afrimmlu_x", "f1", "none")
	if c.Level != analysis.LevelRescored || c.Status != analysis.StatusExact {
		t.Fatalf("level %s, status %s: %s", c.Level, c.Status, c.Reason)
	}
	t.Log(c.Reason)
}

// TestBrierScoreSaysWhy: brier_score's logged per-doc arrays lose digits;
// the check says so rather than averaging them.
func TestBrierScoreSaysWhy(t *testing.T) {
	py := testenv.Python(t, "sklearn")
	dir := writeWeightedF1(t, py)
	matches, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, p := range matches {
		rewrite(t, p, func(s string) string {
			if strings.HasSuffix(p, ".json") {
				s = strings.Replace(s, `"f1,none"`, `"brier_score,none": 0.7, "brier_score_stderr,none": "N/A", "f1,none"`, 1)
				return strings.Replace(s, `"metric_list": [`, `"metric_list": [{"metric": "brier_score", "higher_is_better": false}, `, 1)
			}
			return strings.ReplaceAll(s, `"metrics":["f1"],`, `"brier_score":[1,"[0.25 0.25 0.25 0.25]"],"metrics":["f1","brier_score"],`)
		})
	}
	c := find(t, rescore(t, dir), "afrimmlu_x", "brier_score", "none")
	if c.Level != analysis.LevelNone || !strings.Contains(c.Reason, "str()") {
		t.Fatalf("level %s, status %s: %s", c.Level, c.Status, c.Reason)
	}
}
