package analysis_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// ifevalRun is a constructed ifeval run (no real lm-eval ifeval samples are
// public at a pinned commit): each row's outcome per instruction, strict and
// loose, follows from the documented rules by hand, and
// TestIFEvalAgainstPython checks the checkers themselves.
var ifevalRun = []struct {
	ids           []string
	kwargs        []map[string]any
	response      string
	strict, loose []bool
}{
	{[]string{"punctuation:no_comma"}, []map[string]any{{}}, "Hello world", []bool{true}, []bool{true}},
	// the comma is on the last line, which loose drops
	{[]string{"punctuation:no_comma", "detectable_format:title"}, []map[string]any{{}, {}}, "<<A title>>\nYes, indeed", []bool{false, true}, []bool{true, true}},
	{[]string{"length_constraints:number_words"}, []map[string]any{{"num_words": 3, "relation": "at least"}}, "one two", []bool{false}, []bool{false}},
	{[]string{"startend:quotation"}, []map[string]any{{}}, `"quoted"`, []bool{true}, []bool{true}},
	{[]string{"keywords:existence"}, []map[string]any{{"keywords": []string{"apple"}}}, "An Apple a day", []bool{true}, []bool{true}},
	{[]string{"detectable_format:number_highlighted_sections"}, []map[string]any{{"num_highlights": 2}}, "*one* and **two**", []bool{true}, []bool{true}},
	// not lower case: decided without langdetect
	{[]string{"change_case:english_lowercase"}, []map[string]any{{}}, "ALL CAPS", []bool{false}, []bool{false}},
	{[]string{"startend:end_checker"}, []map[string]any{{"end_phrase": "Goodbye."}}, "See you. GOODBYE.", []bool{true}, []bool{true}},
}

func all(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return true
}

// writeIFEval writes the run; edit may change a row's logged strict list.
func writeIFEval(t *testing.T, py string, edit func(i int, strict []bool) []bool) string {
	t.Helper()
	dir := t.TempDir()
	const ts = "2026-10-02T10-00-00.000000"
	var b strings.Builder
	var ps, pl, is, il []bool
	for i, r := range ifevalRun {
		strict := append([]bool(nil), r.strict...)
		if edit != nil {
			strict = edit(i, strict)
		}
		doc := map[string]any{"key": 1000 + i, "prompt": "Write something.", "instruction_id_list": r.ids, "kwargs": r.kwargs}
		line := map[string]any{"doc_id": i, "doc": doc, "target": "0",
			"arguments": map[string]any{"gen_args_0": map[string]any{"arg_0": "Write something.", "arg_1": map[string]any{"until": []string{}, "do_sample": false}}},
			"resps":     [][]string{{r.response}}, "filtered_resps": []string{r.response}, "filter": "none",
			"metrics":                 []string{"prompt_level_strict_acc", "inst_level_strict_acc", "prompt_level_loose_acc", "inst_level_loose_acc"},
			"prompt_level_strict_acc": all(strict), "inst_level_strict_acc": strict,
			"prompt_level_loose_acc": all(r.loose), "inst_level_loose_acc": r.loose}
		j, err := json.Marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
		ps, pl = append(ps, all(r.strict)), append(pl, all(r.loose))
		is, il = append(is, r.strict...), append(il, r.loose...)
	}
	// What lm-eval reports: mean and mean_stderr (metrics.py) of the
	// prompt-level bools, agg_inst_level_acc of the lists with no stderr.
	stats := func(xs []bool) (string, string) { return pyMeanStderr(t, py, xs) }
	frac := func(xs []bool) string {
		n := 0
		for _, x := range xs {
			if x {
				n++
			}
		}
		out, err := exec.Command(py, "-c", fmt.Sprintf("print(repr(%d / %d))", n, len(xs))).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	psv, pse := stats(ps)
	plv, ple := stats(pl)
	results := fmt.Sprintf(`{
  "results": {"ifeval": {"alias": "ifeval", "prompt_level_strict_acc,none": %s, "prompt_level_strict_acc_stderr,none": %s,
    "inst_level_strict_acc,none": %s, "inst_level_strict_acc_stderr,none": "N/A",
    "prompt_level_loose_acc,none": %s, "prompt_level_loose_acc_stderr,none": %s,
    "inst_level_loose_acc,none": %s, "inst_level_loose_acc_stderr,none": "N/A"}},
  "configs": {"ifeval": {"task": "ifeval", "dataset_path": "google/IFEval", "test_split": "train", "doc_to_text": "prompt", "doc_to_target": 0,
    "process_results": "def process_results(doc, results):\n    inp = InputExample(\n        key=doc[\"key\"],\n        instruction_id_list=doc[\"instruction_id_list\"],\n        prompt=doc[\"prompt\"],\n        kwargs=doc[\"kwargs\"],\n    )\n    response = results[0]\n\n    out_strict = test_instruction_following_strict(inp, response)\n    out_loose = test_instruction_following_loose(inp, response)\n",
    "output_type": "generate_until", "generation_kwargs": {"until": [], "do_sample": false, "temperature": 0.0, "max_gen_toks": 1280},
    "metric_list": [{"metric": "prompt_level_strict_acc", "aggregation": "mean", "higher_is_better": true},
      {"metric": "inst_level_strict_acc", "aggregation": "def agg_inst_level_acc(items):\n    flat_items = [item for sublist in items for item in sublist]\n    inst_level_acc = sum(flat_items) / len(flat_items)\n    return inst_level_acc\n", "higher_is_better": true},
      {"metric": "prompt_level_loose_acc", "aggregation": "mean", "higher_is_better": true},
      {"metric": "inst_level_loose_acc", "aggregation": "def agg_inst_level_acc(items):\n    flat_items = [item for sublist in items for item in sublist]\n    inst_level_acc = sum(flat_items) / len(flat_items)\n    return inst_level_acc\n", "higher_is_better": true}],
    "filter_list": [{"name": "none", "filter": [{"function": "take_first"}]}], "repeats": 1, "num_fewshot": 0}},
  "n-samples": {"ifeval": {"original": 541, "effective": %d}},
  "config": {"model": "hf", "model_args": {"pretrained": "example/constructed"}, "batch_size": 1, "device": "cpu", "limit": %d.0, "bootstrap_iters": 100000, "gen_kwargs": {}, "random_seed": 0, "numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 1234},
  "lm_eval_version": "0.4.8", "model_source": "hf", "model_name": "example/constructed", "date": 1790921714.0
}
`, psv, pse, frac(is), plv, ple, frac(il), len(ifevalRun), len(ifevalRun))
	return writeRun(t, dir, ts, "ifeval", results, b.String())
}

// TestIFEvalRescored: the four IFEval metrics are recomputed from the
// responses, per document and in aggregate (agg_inst_level_acc selected by
// the YAML's !function), and a logged per-doc list that the response does
// not support is named.
func TestIFEvalRescored(t *testing.T) {
	py := testenv.Python(t)
	rep := rescore(t, writeIFEval(t, py, nil))
	for _, m := range []string{"prompt_level_strict_acc", "inst_level_strict_acc", "prompt_level_loose_acc", "inst_level_loose_acc"} {
		c := find(t, rep, "ifeval", m, "none")
		if c.Level != analysis.LevelRescored || c.Status != analysis.StatusExact {
			t.Errorf("%s: level %s, status %s: %s", m, c.Level, c.Status, c.Reason)
		}
	}
	rep = rescore(t, writeIFEval(t, py, func(i int, strict []bool) []bool {
		if i == 2 {
			strict[0] = true
		}
		return strict
	}))
	c := find(t, rep, "ifeval", "inst_level_strict_acc", "none")
	if c.Status != analysis.StatusDiffers || len(c.DocDiffs) == 0 || c.DocDiffs[0].DocID != 2 {
		t.Fatalf("edited doc 2: status %s, diffs %+v: %s", c.Status, c.DocDiffs, c.Reason)
	}
}

// TestIFEvalLanguageNotRecomputed: an instruction that needs langdetect
// leaves the metrics it decides re-aggregated, saying why.
func TestIFEvalLanguageNotRecomputed(t *testing.T) {
	py := testenv.Python(t)
	saved := ifevalRun[0]
	defer func() { ifevalRun[0] = saved }()
	ifevalRun[0].ids = []string{"language:response_language"}
	ifevalRun[0].kwargs = []map[string]any{{"language": "en"}}
	rep := rescore(t, writeIFEval(t, py, nil))
	for _, m := range []string{"prompt_level_strict_acc", "inst_level_loose_acc"} {
		c := find(t, rep, "ifeval", m, "none")
		if c.Level != analysis.LevelReaggregated || c.Status != analysis.StatusExact || !strings.Contains(c.Reason, "langdetect") || !strings.Contains(c.Reason, "1 of 8 lines not recomputed") {
			t.Errorf("%s: level %s, status %s: %s", m, c.Level, c.Status, c.Reason)
		}
	}
}
