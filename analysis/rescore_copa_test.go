package analysis_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
)

// copaRun is a constructed copa-style run (no real copa samples are in the
// fixtures): 20 documents in lm-eval's samples format, each with two choices
// whose text is the target of one of them, as copa's doc_to_target returns
// the correct choice's text rather than its index. The log-likelihoods are
// made up so that the higher one is the gold on 12 documents; acc is what
// lm-eval logs for that (1.0 when the argmax is choices.index(target)), and
// the results file holds lm-eval's mean and stderr of those 12 ones in 20
// (0.6 and sqrt(0.6·0.4/19) = 0.11239029738980327, as Python's statistics
// module computes them).
var copaRun = func() []struct {
	target, c1, c2 string
	ll1, ll2       string
	acc            string
} {
	rows := make([]struct {
		target, c1, c2 string
		ll1, ll2       string
		acc            string
	}, 20)
	for i := range rows {
		r := &rows[i]
		r.c1 = fmt.Sprintf(" the first outcome of case %d.", i)
		r.c2 = fmt.Sprintf(" the second outcome of case %d.", i)
		gold := i % 2 // the target is the first or the second choice
		r.target = r.c1
		if gold == 1 {
			r.target = r.c2
		}
		// Close values on some documents, far apart on others.
		hi, lo := fmt.Sprintf("-%d.%03d", 60+i, 125+7*i), fmt.Sprintf("-%d.%03d", 60+i+(i%3)*11, 500+3*i)
		right := i < 12 // the gold has the higher log-likelihood
		first := (gold == 0) == right
		if first {
			r.ll1, r.ll2 = hi, lo
		} else {
			r.ll1, r.ll2 = lo, hi
		}
		r.acc = "0.0"
		if right {
			r.acc = "1.0"
		}
	}
	return rows
}()

// copaResults is the results file lm-eval writes for such a run.
const copaResults = `{
  "results": {"copa": {"name": "copa", "alias": "copa", "sample_len": 20, "acc,none": 0.6, "acc_stderr,none": 0.11239029738980327}},
  "n-samples": {"copa": {"original": 100, "effective": 20}},
  "config": {"model": "hf", "model_args": {"pretrained": "example/constructed"}, "batch_size": 1, "device": "cpu", "limit": 20.0, "bootstrap_iters": 100000, "gen_kwargs": {}, "random_seed": 0, "numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 1234},
  "lm_eval_version": "0.4.13", "model_source": "hf", "model_name": "example/constructed", "model_name_sanitized": "example__constructed", "date": 1790921714.0712206
}
`

// writeCopa writes the copa run into a folder; edit may change a row.
func writeCopa(t *testing.T, edit func(i int, ll1, ll2 *string)) string {
	t.Helper()
	dir := t.TempDir()
	const ts = "2026-10-01T23-15-32.942677"
	var b strings.Builder
	for i, r := range copaRun {
		ll1, ll2 := r.ll1, r.ll2
		if edit != nil {
			edit(i, &ll1, &ll2)
		}
		fmt.Fprintf(&b, `{"doc_id": %d, "doc": {"idx": %d}, "target": %q, "arguments": {"gen_args_0": {"arg_0": "p", "arg_1": %q}, "gen_args_1": {"arg_0": "p", "arg_1": %q}}, `+
			`"resps": [[[%q, "False"]], [[%q, "False"]]], "filtered_resps": [[%q, "False"], [%q, "False"]], "filter": "none", "metrics": ["acc"], "acc": %s}`+"\n",
			i, i, r.target, " "+r.c1, " "+r.c2, ll1, ll2, ll1, ll2, r.acc)
	}
	return writeRun(t, dir, ts, "copa", copaResults, b.String())
}

// TestCopaAccRescored: plain acc of a multiple-choice task whose target is
// the choice's text is re-scored from the log-likelihoods (argmax, gold by
// choices.index), matching the per-document acc lm-eval would log on every line and
// lm-eval's aggregate and stderr to the bit.
func TestCopaAccRescored(t *testing.T) {
	c := find(t, rescore(t, writeCopa(t, nil)), "copa", "acc", "none")
	if c.Level != analysis.LevelRescored || c.Status != analysis.StatusExact || c.N != 20 {
		t.Fatalf("copa acc: level %s, status %s, n %d: %s", c.Level, c.Status, c.N, c.Reason)
	}
	if c.Recomputed.Value != 0.6 || c.RecomputedStderr.Value != 0.11239029738980327 {
		t.Errorf("recomputed %v ± %v, lm-eval reported 0.6 ± 0.11239029738980327", c.Recomputed, c.RecomputedStderr)
	}

	// The re-scoring reads the log-likelihoods: swapping one document's
	// makes its acc differ from the logged one, and is named.
	c = find(t, rescore(t, writeCopa(t, func(i int, ll1, ll2 *string) {
		if i == 4 {
			*ll1, *ll2 = *ll2, *ll1
		}
	})), "copa", "acc", "none")
	if c.Status != analysis.StatusDiffers || len(c.DocDiffs) != 1 || c.DocDiffs[0].DocID != 4 {
		t.Fatalf("swapped doc 4: status %s, diffs %+v: %s", c.Status, c.DocDiffs, c.Reason)
	}
}
