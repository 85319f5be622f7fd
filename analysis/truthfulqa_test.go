package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// TestTruthfulQAGenFixture re-scores the real truthfulqa_gen fixture (817
// and 20 documents, 12 metrics): every per-doc bleu/rouge value must be
// recomputed from the generation bit for bit, so every check is rescored
// and exact.
func TestTruthfulQAGenFixture(t *testing.T) {
	rep := rescorePaths(t, filepath.Join(fixtures(t), "harness-pr3032-truthfulqa-gen-gptneo125m"))
	if len(rep.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(rep.Runs))
	}
	n := 0
	for _, run := range rep.Runs {
		for _, c := range run.Checks {
			if c.Task != "truthfulqa_gen" {
				continue
			}
			n++
			// The run is macOS's: two bleu values of the 817-line file come
			// out of its exp/log an ulp away, and the reason must say so.
			libm := strings.Contains(c.Reason, "within the rounding of exp/log")
			wantLibm := strings.Contains(run.Path, "13-51-32") && (c.Metric == "bleu_max" || c.Metric == "bleu_diff")
			if libm != wantLibm {
				t.Errorf("%s: %s: libm note %v, want %v: %s", run.Path, c.Metric, libm, wantLibm, c.Reason)
			}
			if c.Level != LevelRescored || c.Status != StatusExact {
				t.Errorf("%s: %s %s at level %s: %s", run.Path, c.Metric, c.Status, c.Level, c.Reason)
				for _, d := range c.DocDiffs {
					t.Logf("  %+v", d)
				}
			}
		}
	}
	if n != 24 {
		t.Errorf("%d truthfulqa_gen checks, want 2 × 12", n)
	}
}

// TestTruthfulQAGenEditedResponse changes one generation of the 20-doc run
// (resps and filtered_resps alike): the logged bleu/rouge values of that
// line no longer follow from it, and the checks must say so.
func TestTruthfulQAGenEditedResponse(t *testing.T) {
	src := filepath.Join(fixtures(t), "harness-pr3032-truthfulqa-gen-gptneo125m", "results")
	dir := t.TempDir()
	const stamp = "2025-05-31T14-30-51.983293"
	res, err := os.ReadFile(filepath.Join(src, "truthfulqa_gen_neo125_"+stamp+".json"))
	if err != nil {
		t.Fatal(err)
	}
	samples, err := os.ReadFile(filepath.Join(src, "samples_truthfulqa_gen_"+stamp+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	old := `"\nA: I eat watermelon seeds."`
	if bytes.Count(samples, []byte(old)) != 2 {
		t.Fatalf("fixture changed: %q not found twice", old)
	}
	samples = bytes.ReplaceAll(samples, []byte(old), []byte(`"\nA: Nothing happens."`))
	if err := os.WriteFile(filepath.Join(dir, "truthfulqa_gen_neo125_"+stamp+".json"), res, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "samples_truthfulqa_gen_"+stamp+".jsonl"), samples, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := rescorePaths(t, dir)
	differs := map[string]bool{}
	for _, c := range rep.Runs[0].Checks {
		if c.Status == StatusDiffers && len(c.DocDiffs) > 0 && c.DocDiffs[0].DocID == 0 {
			differs[c.Metric] = true
		}
	}
	for _, m := range []string{"bleu_max", "rouge1_max", "rouge2_max", "rougeL_max"} {
		if !differs[m] {
			t.Errorf("%s: edited generation not reported (differing: %v)", m, differs)
		}
	}
}

// TestRescoreTruthfulQAMC2 builds a truthfulqa_mc2 output (no real one is
// in the fixtures) whose per-doc accs and reported mean and stderr are
// numpy's, computed by the reference script: with the C library's exp the
// check is rescored and exact; with numpy's own exp (AVX512F machines) the
// per-doc values that differ are within the rounding the re-scorer allows
// and the reason counts them; an edited log-likelihood is a difference.
func TestRescoreTruthfulQAMC2(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	type doc struct {
		LLs    []float64 `json:"lls"`
		Labels []int     `json:"labels"`
	}
	var docs []doc
	for i := 0; i < 60; i++ {
		n := 4 + rng.Intn(10)
		d := doc{}
		for j := 0; j < n; j++ {
			d.LLs = append(d.LLs, -rng.ExpFloat64()*20)
			d.Labels = append(d.Labels, rng.Intn(2))
		}
		d.Labels[rng.Intn(n)] = 0 // the reference also runs the old formula
		docs = append(docs, d)
	}
	// The fingerprint lines of process_results_mc2 (lm-eval PR #2768).
	src := "def process_results_mc2(doc, results):\n    ll, _ = zip(*results)\n    ll = np.array(ll)\n    probs = np.exp(ll)\n    probs_norm = probs / np.sum(probs)\n    labels = np.array(doc[\"mc2_targets\"][\"labels\"])\n    pm_true = np.sum(probs_norm[labels == 1])\n    return {\"acc\": pm_true}\n"
	num := func(f float64) string { return string(pynum.AppendJSONFloat(nil, f)) }
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	write := func(accs []float64, mean, se float64, lls func(i int) []float64) string {
		dir := t.TempDir()
		var b strings.Builder
		for i, d := range docs {
			var resps, filt []string
			for _, ll := range lls(i) {
				resps = append(resps, fmt.Sprintf("[[%s, false]]", num(ll)))
				filt = append(filt, fmt.Sprintf("[%s, false]", num(ll)))
			}
			fmt.Fprintf(&b, `{"doc_id": %d, "doc": {"question": "q", "mc2_targets": {"choices": %s, "labels": %s}}, "target": 0, "arguments": {}, "resps": [%s], "filtered_resps": [%s], "filter": "none", "metrics": ["acc"], "doc_hash": "h", "prompt_hash": "p", "target_hash": "t", "acc": %s}`+"\n",
				i, js(make([]string, len(d.LLs))), js(d.Labels), strings.Join(resps, ", "), strings.Join(filt, ", "), num(accs[i]))
		}
		if err := os.WriteFile(filepath.Join(dir, "samples_truthfulqa_mc2_2025-01-01T00-00-00.000000.jsonl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		res := fmt.Sprintf(`{"results": {"truthfulqa_mc2": {"alias": "truthfulqa_mc2", "acc,none": %s, "acc_stderr,none": %s}},
 "configs": {"truthfulqa_mc2": {"task": "truthfulqa_mc2", "output_type": "multiple_choice", "doc_to_target": 0, "doc_to_choice": "{{mc2_targets.choices}}",
   "process_results": %s, "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": true}], "metadata": {"version": 3.0}}},
 "versions": {"truthfulqa_mc2": 3.0}, "n-shot": {"truthfulqa_mc2": 0}, "n-samples": {"truthfulqa_mc2": {"original": %d, "effective": %d}},
 "lm_eval_version": "0.4.8", "pretty_env_info": "OS: Debian GNU/Linux 12 (bookworm) (x86_64)\nPython version: 3.11.2 (main) [GCC 12.2.0] (64-bit runtime)"}`,
			num(mean), num(se), js(src), len(docs), len(docs))
		if err := os.WriteFile(filepath.Join(dir, "results_2025-01-01T00-00-00.000000.json"), []byte(res), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	orig := func(i int) []float64 { return docs[i].LLs }
	for _, exp := range []string{"libm", "numpy"} {
		out := hexFloats(t, runTextRef(t, []any{map[string]any{"mc2docs": docs, "exp": exp}})[0])
		accs, mean, se := out[:len(docs)], out[len(docs)], out[len(docs)+1]
		rep := rescorePaths(t, write(accs, mean, se, orig))
		var c Check
		for _, ch := range rep.Runs[0].Checks {
			if ch.Task == "truthfulqa_mc2" {
				c = ch
			}
		}
		if c.Level != LevelRescored || c.Status != StatusExact {
			t.Errorf("exp %s: %s at level %s: %s", exp, c.Status, c.Level, c.Reason)
		}
		if libm := strings.Contains(c.Reason, libmNote); exp == "libm" && libm {
			t.Errorf("exp libm: values kept as logged: %s", c.Reason)
		} else {
			t.Logf("exp %s: %s", exp, c.Reason)
		}
		if exp != "libm" {
			continue
		}
		edited := func(i int) []float64 {
			if i != 5 {
				return docs[i].LLs
			}
			e := append([]float64{}, docs[i].LLs...)
			e[0] -= 3
			return e
		}
		rep = rescorePaths(t, write(accs, mean, se, edited))
		for _, ch := range rep.Runs[0].Checks {
			if ch.Task == "truthfulqa_mc2" && (ch.Status != StatusDiffers || len(ch.DocDiffs) == 0 || ch.DocDiffs[0].DocID != 5) {
				t.Errorf("edited log-likelihood: %s: %s (%+v)", ch.Status, ch.Reason, ch.DocDiffs)
			}
		}
	}
}

// BenchmarkRescoreTruthfulQAGen re-scores the real 817-document
// truthfulqa_gen run: 13 references per document on average, each scored
// with sentence BLEU and ROUGE-1/2/Lsum, then the 12 aggregates and their
// stderrs.
func BenchmarkRescoreTruthfulQAGen(b *testing.B) {
	dir := filepath.Join(fixtures(b), "harness-pr3032-truthfulqa-gen-gptneo125m", "results")
	outs, err := harness.Find(filepath.Join(dir, "truthfulqa_gen_neo125_2025-05-31T13-51-32.759677.json"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rep, err := Rescore(context.Background(), outs, RescoreOptions{Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Levels.Rescored != 12 {
			b.Fatalf("%+v", rep.Levels)
		}
	}
}
