package analysis_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
)

// copaRun is a real lm-eval 0.4.13 copa run (sshleifer/tiny-gpt2, --limit
// 20, CPU), published in github.com/antonsoo/errorbars at commit
// 05f148ff7ab10a42af8d37f3c072fdc24e5d245d under
// tests/fixtures/lm_eval_output/sshleifer__tiny-gpt2/. Each row keeps what
// re-scoring reads of a samples line, as lm-eval wrote it: the target (the
// correct choice's text, which copa's doc_to_target returns), the two
// continuations (target_delimiter + choice), their log-likelihoods and the
// per-document acc lm-eval logged. Its results file reports acc 0.6 and
// stderr 0.11239029738980327.
var copaRun = []struct {
	target, c1, c2 string
	ll1, ll2       string
	acc            string
}{
	{" water flowed from the spout.", " the toilet filled with water.", " water flowed from the spout.", "-75.82633972167969", "-86.52076721191406", "0.0"},
	{" she lost her appetite.", " she poured milk in the bowl.", " she lost her appetite.", "-86.58055877685547", "-64.97540283203125", "1.0"},
	{" she received her pension.", " she received her pension.", " she paid off her mortgage.", "-64.89643859863281", "-75.75365447998047", "1.0"},
	{" i shut off the light in the unoccupied room.", " i swept the floor in the unoccupied room.", " i shut off the light in the unoccupied room.", "-118.96208190917969", "-129.98291015625", "0.0"},
	{" the cook grilled it.", " the cook froze it.", " the cook grilled it.", "-64.94225311279297", "-64.88955688476562", "1.0"},
	{" i turned his offer down.", " i turned his offer down.", " he persuaded me to buy the product.", "-75.84638977050781", "-97.36912536621094", "1.0"},
	{" the forecast called for storms.", " the forecast called for storms.", " my friends urged me to go out.", "-75.83258819580078", "-97.47187805175781", "1.0"},
	{" i was sobbing.", " i was sobbing.", " i was laughing.", "-65.00666809082031", "-54.133785247802734", "0.0"},
	{" i blew on the wick.", " i blew on the wick.", " i put a match to the wick.", "-86.37724304199219", "-108.14413452148438", "1.0"},
	{" he had a headache the next day.", " he had a headache the next day.", " he had a runny nose the next day.", "-97.35231018066406", "-119.15193176269531", "1.0"},
	{" the man rolled the bowling ball down the alley.", " the man rolled the bowling ball down the alley.", " the man dropped the bowling ball on his foot.", "-119.15914154052734", "-119.13768768310547", "0.0"},
	{" his obituary appeared in the newspaper.", " his family buried him in the cemetery.", " his obituary appeared in the newspaper.", "-97.48870086669922", "-108.13427734375", "0.0"},
	{" i lost all my data.", " i installed new speakers.", " i lost all my data.", "-65.01414489746094", "-75.84446716308594", "0.0"},
	{" she believed her superiors were acting unethically.", " she aspired to hold an executive position in the firm.", " she believed her superiors were acting unethically.", "-140.70542907714844", "-119.01612091064453", "1.0"},
	{" her teammate threw it to her.", " her teammate threw it to her.", " her opponent tried to intercept it.", "-86.67989349365234", "-86.56812286376953", "0.0"},
	{" the courtroom broke into uproar.", " the courtroom broke into uproar.", " the jury announced its verdict.", "-75.86264038085938", "-75.88494110107422", "1.0"},
	{" the children trampled through her garden.", " the children hit a ball into her yard.", " the children trampled through her garden.", "-108.20382690429688", "-97.4377670288086", "1.0"},
	{" they accepted ransom money.", " they accepted ransom money.", " they escaped from jail.", "-64.99008178710938", "-64.95032501220703", "0.0"},
	{" he cut an onion.", " he ran out of onions.", " he cut an onion.", "-75.76788330078125", "-64.9601821899414", "1.0"},
	{" she burned her finger on the toaster.", " she burned her finger on the toaster.", " she put a diamond ring on her finger.", "-108.29469299316406", "-108.3210678100586", "1.0"},
}

// copaResults is that run's results file as lm-eval wrote it.
const copaResults = `{
  "results": {"copa": {"name": "copa", "alias": "copa", "sample_len": 20, "acc,none": 0.6, "acc_stderr,none": 0.11239029738980327}},
  "n-samples": {"copa": {"original": 100, "effective": 20}},
  "config": {"model": "hf", "model_args": {"pretrained": "sshleifer/tiny-gpt2"}, "batch_size": 1, "device": "cpu", "limit": 20.0, "bootstrap_iters": 100000, "gen_kwargs": {}, "random_seed": 0, "numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 1234},
  "lm_eval_version": "0.4.13", "model_source": "hf", "model_name": "sshleifer/tiny-gpt2", "model_name_sanitized": "sshleifer__tiny-gpt2", "date": 1790921714.0712206
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
	if err := os.WriteFile(filepath.Join(dir, "results_"+ts+".json"), []byte(copaResults), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "samples_copa_"+ts+".jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCopaAccRescored: plain acc of a multiple-choice task whose target is
// the choice's text is re-scored from the log-likelihoods (argmax, gold by
// choices.index), matching lm-eval's per-document acc on every line and its
// aggregate and stderr to the bit.
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
