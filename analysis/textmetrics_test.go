package analysis

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// textWords mixes what the tokenizers treat differently: punctuation next
// to digits and letters, symbols, non-ASCII letters (U+0130 and the Kelvin
// sign lowercase to ASCII), Python-only whitespace (U+001C), no-break
// spaces, newlines and lm-eval's " . " sentence marker.
var textWords = []string{
	"the", "The", "cat", "cats", "sat", "on", "mat", "a", "A:", "1992", "3.5", "12,000",
	"U.S.", "don't", "(yes)", "—", "€5", "©", "é", "İstanbul", "\u212Aelvin", "x\u001cy",
	"no\u00a0break", "\n", " . ", ".", ",", "?", "!", "Eisenhower", "1955.", "e-mail", "#1",
}

func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 && rng.Intn(4) > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(textWords[rng.Intn(len(textWords))])
	}
	return b.String()
}

func hexFloats(t *testing.T, line string) []float64 {
	t.Helper()
	var out []float64
	for _, f := range strings.Fields(line) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatalf("reference output %q: %v", line, err)
		}
		out = append(out, v)
	}
	return out
}

// runTextRef feeds the JSON lines to testdata/textmetrics_ref.py under
// Debian's Python and returns its output lines.
func runTextRef(t *testing.T, inputs []any) []string {
	t.Helper()
	py := testenv.Python(t, "numpy", "regex")
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, x := range inputs {
		if err := enc.Encode(x); err != nil {
			t.Fatal(err)
		}
	}
	return pyLines(t, py, "testdata/textmetrics_ref.py", &in, len(inputs))
}

// TestTextMetricsAgainstPython compares sentence BLEU (intl) and ROUGE-1/2/
// Lsum/L bit for bit with the reference formulas run by Debian's Python on
// random texts.
func TestTextMetricsAgainstPython(t *testing.T) {
	rng := rand.New(rand.NewSource(19))
	type pair struct {
		Hyp string `json:"hyp"`
		Ref string `json:"ref"`
	}
	var pairs []pair
	var inputs []any
	for i := 0; i < 600; i++ {
		p := pair{randomText(rng, rng.Intn(20)), randomText(rng, rng.Intn(12))}
		if i%5 == 0 { // overlapping texts give non-zero scores
			p.Hyp = p.Ref + " " + randomText(rng, rng.Intn(6))
		}
		pairs = append(pairs, p)
		inputs = append(inputs, p)
	}
	rule := pythonRule(t)
	lines := runTextRef(t, inputs)
	nonzero := 0
	for i, p := range pairs {
		want := hexFloats(t, lines[i])
		r1, r2, rl := truthfulQARouge(p.Ref, p.Hyp)
		rt := rougeTokenize(strings.ReplaceAll(p.Ref, " . ", ".\n"))
		pt := rougeTokenize(strings.ReplaceAll(p.Hyp, " . ", ".\n"))
		got := []float64{sentenceBLEUIntl(p.Hyp, []string{p.Ref}, rule), r1, r2, rl, rougeL(rt, pt)}
		for j, name := range []string{"bleu", "rouge1", "rouge2", "rougeLsum", "rougeL (unscaled)"} {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
				t.Errorf("%s(hyp %q, ref %q) = %v, Python %v", name, p.Hyp, p.Ref, got[j], want[j])
			}
		}
		if got[0] > 0 && got[3] > 0 {
			nonzero++
		}
	}
	if nonzero < 100 {
		t.Errorf("only %d pairs with non-zero scores: the test does not exercise the formulas", nonzero)
	}
}

// TestTruthfulQAMC2AgainstNumpy compares process_results_mc2, both
// versions, with numpy on random log-likelihoods and label orders: bit for
// bit where the probabilities come from the C library's exp, and within
// the tolerance the re-scorer grants (perDoc.libmTol) where they come from
// numpy's own exp.
func TestTruthfulQAMC2AgainstNumpy(t *testing.T) {
	rng := rand.New(rand.NewSource(2768))
	type doc struct {
		LLs    []float64 `json:"lls"`
		Labels []int     `json:"labels"`
	}
	var docs []doc
	var inputs []any
	for i := 0; i < 400; i++ {
		n := 2 + rng.Intn(20) // truthfulqa has up to 20 choices; 8+ takes numpy's unrolled sum
		d := doc{}
		for j := 0; j < n; j++ {
			d.LLs = append(d.LLs, -rng.ExpFloat64()*30)
			d.Labels = append(d.Labels, rng.Intn(2))
		}
		d.Labels[rng.Intn(n)] = 0 // list.index(0) must find one
		docs = append(docs, d)
		inputs = append(inputs, d)
	}
	lines := runTextRef(t, inputs)
	for i, d := range docs {
		want := hexFloats(t, lines[i])
		raw, _ := json.Marshal(map[string]any{"mc2_targets": map[string]any{"labels": d.Labels}})
		dv, err := harness.ParseJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		dc := &docContext{doc: dv, parsed: true}
		for j, split := range []bool{false, true} {
			got, err := truthfulQAMC2(d.LLs, dc, split)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(got) != math.Float64bits(want[j]) {
				t.Errorf("doc %d (split %v): %v, numpy with math.exp %v (lls %v labels %v)", i, split, got, want[j], d.LLs, d.Labels)
			}
			if tol := mc2Tol(got, len(d.LLs)); math.Abs(got-want[2+j]) > tol {
				t.Errorf("doc %d (split %v): %v, numpy with np.exp %v: more than %g apart", i, split, got, want[2+j], tol)
			}
		}
	}
}
