package analysis

import (
	"github.com/evalcapsule/evalcapsule/internal/testenv"

	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

type corpusInput struct {
	Corpus string   `json:"corpus"`
	Refs   []string `json:"refs"`
	Preds  []string `json:"preds"`
	Iters  int      `json:"iters"`
}

func randomCorpus(rng *rand.Rand, agg string, n int) corpusInput {
	in := corpusInput{Corpus: agg, Iters: 100}
	for i := 0; i < n; i++ {
		ref := randomText(rng, 1+rng.Intn(12))
		pred := randomText(rng, rng.Intn(12))
		switch rng.Intn(3) {
		case 0:
			pred = ref + " " + pred
		case 1: // blocks out of place: TER's shifts
			w := strings.Fields(ref)
			k := rng.Intn(len(w) + 1)
			pred = strings.Join(append(append([]string{}, w[k:]...), w[:k]...), " ") + " " + randomText(rng, rng.Intn(3))
		}
		in.Refs, in.Preds = append(in.Refs, ref), append(in.Preds, pred)
	}
	return in
}

// TestCorpusBLEUChrFAgainstPython compares lm-eval's bleu, chrf and ter
// aggregations (sacrebleu corpus scores with their defaults) and their
// 100-resample bootstrap stderr bit for bit with the reference formulas
// run by Debian's Python.
func TestCorpusBLEUChrFAgainstPython(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var ins []corpusInput
	var inputs []any
	for i := 0; i < 60; i++ {
		agg := []string{"bleu", "chrf", "ter"}[i%3]
		in := randomCorpus(rng, agg, 1+rng.Intn(30))
		ins = append(ins, in)
		inputs = append(inputs, in)
	}
	rule := pythonRule(t)
	lines := runTextRef(t, inputs)
	for i, in := range ins {
		want := hexFloats(t, lines[i])
		cs := newCorpusScorer(in.Corpus, in.Refs, in.Preds, rule)
		got := []float64{cs.score(nil), BootstrapStderr(len(in.Refs), cs.score, in.Iters, PyFloat, rule)}
		for j, what := range []string{"value", "stderr"} {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) && !(math.IsNaN(got[j]) && math.IsNaN(want[j])) {
				t.Errorf("corpus %s %d (%d items) %s: %v, Python %v", in.Corpus, i, len(in.Refs), what, got[j], want[j])
			}
		}
	}
}

// TestRescoreCorpusMetrics builds an lm-eval output of a generate_until
// task with bleu, chrf and ter (lm-eval's passthrough items [gold, prediction])
// whose reported scores are the Python reference's, and checks that
// rescore recomputes the items from the responses and the aggregates bit
// for bit; then that an edited response is a difference.
func TestRescoreCorpusMetrics(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	in := randomCorpus(rng, "bleu", 25)
	ref := runTextRef(t, []any{in, corpusInput{Corpus: "chrf", Refs: in.Refs, Preds: in.Preds, Iters: 100}, corpusInput{Corpus: "ter", Refs: in.Refs, Preds: in.Preds, Iters: 100}})
	bleu, chrf, ter := hexFloats(t, ref[0]), hexFloats(t, ref[1]), hexFloats(t, ref[2])
	// The run says it ran under the reference's Python, whose sum() the
	// bootstrap stderr follows (compensated from 3.12).
	major, minor := testenv.PythonVersion(t)
	num := func(f float64) string { return string(pynum.AppendJSONFloat(nil, f)) }
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	write := func(preds []string) string {
		dir := t.TempDir()
		var b strings.Builder
		for i := range in.Refs {
			fmt.Fprintf(&b, `{"doc_id": %d, "doc": {"src": "s", "ref": %s}, "target": %s, "arguments": {"gen_args_0": {"arg_0": "s", "arg_1": {"until": ["\n"]}}}, "resps": [[%s]], "filtered_resps": [%s], "filter": "none", "metrics": ["bleu", "chrf", "ter"], "doc_hash": "h", "prompt_hash": "p", "target_hash": "t", "bleu": [%s, %s], "chrf": [%s, %s], "ter": [%s, %s]}`+"\n",
				i, q(in.Refs[i]), q(in.Refs[i]), q(preds[i]), q(preds[i]), q(in.Refs[i]), q(in.Preds[i]), q(in.Refs[i]), q(in.Preds[i]), q(in.Refs[i]), q(in.Preds[i]))
		}
		if err := os.WriteFile(filepath.Join(dir, "samples_mt_2025-01-01T00-00-00.000000.jsonl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		res := fmt.Sprintf(`{"results": {"mt": {"alias": "mt", "bleu,none": %s, "bleu_stderr,none": %s, "chrf,none": %s, "chrf_stderr,none": %s, "ter,none": %s, "ter_stderr,none": %s}},
 "configs": {"mt": {"task": "mt", "output_type": "generate_until", "doc_to_target": "ref",
   "metric_list": [{"metric": "bleu"}, {"metric": "chrf"}, {"metric": "ter"}], "filter_list": [{"name": "none", "filter": [{"function": "take_first"}]}]}},
 "versions": {"mt": 1.0}, "n-shot": {"mt": 0}, "n-samples": {"mt": {"original": %d, "effective": %d}},
 "config": {"bootstrap_iters": 100000}, "lm_eval_version": "0.4.8", "pretty_env_info": "Python version: %d.%d.0 (main) [GCC 12.2.0] (64-bit runtime)"}`,
			num(bleu[0]), num(bleu[1]), num(chrf[0]), num(chrf[1]), num(ter[0]), num(ter[1]), len(in.Refs), len(in.Refs), major, minor)
		if err := os.WriteFile(filepath.Join(dir, "results_2025-01-01T00-00-00.000000.json"), []byte(res), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	rep := rescorePaths(t, write(in.Preds))
	n := 0
	for _, c := range rep.Runs[0].Checks {
		if c.Task != "mt" {
			continue
		}
		n++
		if c.Level != LevelRescored || c.Status != StatusExact {
			t.Errorf("%s: %s at level %s: %s", c.Metric, c.Status, c.Level, c.Reason)
		}
	}
	if n != 3 {
		t.Errorf("%d checks, want bleu, chrf and ter", n)
	}
	edited := append([]string{}, in.Preds...)
	edited[3] = "something else entirely"
	rep = rescorePaths(t, write(edited))
	for _, c := range rep.Runs[0].Checks {
		if c.Task == "mt" && (c.Status != StatusDiffers || len(c.DocDiffs) == 0 || c.DocDiffs[0].DocID != 3) {
			t.Errorf("edited response: %s %s: %s (%+v)", c.Metric, c.Status, c.Reason, c.DocDiffs)
		}
	}
}
