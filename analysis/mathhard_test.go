package analysis

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

var mathPieces = []string{
	"Final Answer: The final answer is ", "Final Answer: The final answer is", " I hope it is correct.", ". I hope it is correct.",
	"$", "$$", "\\$", "\\boxed{", "\\text{", "\\textbf{", "\\overline{", "{", "}", "frac", "\\frac12", "\\dfrac{1}{2}", "sqrt2", "sqrt", "\\sqrt{3}",
	"=", "x=", " ", "\\ ", "\n", ",", "1,000", "12", "٣", "²", "a ", "an ", ".", "mbox", "\\text{and}", "units", "degrees", "^\\circ",
	"\\;", ",\\!", "{,}", `"`, "\\dots", "\\ldots", "\\text{m}", "\\text{}", "pi", "\\pi", "-", "(", ")", "[", "]", "\u00a0",
}

// TestMathHardAgainstPython checks answer extraction and
// normalize_final_answer on random text against Python running utils.py's
// documented steps with its own re and str (testdata/mathhard_ref.py).
func TestMathHardAgainstPython(t *testing.T) {
	py := testenv.Python(t)
	rng := rand.New(rand.NewSource(5))
	const n = 5000
	var in bytes.Buffer
	var texts []string
	for i := 0; i < n; i++ {
		var b strings.Builder
		for j, k := 0, rng.Intn(14); j < k; j++ {
			b.WriteString(mathPieces[rng.Intn(len(mathPieces))])
		}
		texts = append(texts, b.String())
		j, _ := json.Marshal(b.String())
		in.Write(j)
		in.WriteByte('\n')
	}
	lines := pyLines(t, py, "testdata/mathhard_ref.py", &in, n)
	bad, skipped := 0, 0
	for i, l := range lines {
		var want [2]string
		if err := json.Unmarshal([]byte(l), &want); err != nil {
			t.Fatal(err)
		}
		u := mathUnnormalizedAnswer(texts[i])
		norm, ok := mathNormalize(u)
		if !ok {
			skipped++
			continue
		}
		if u != want[0] || norm != want[1] {
			bad++
			if bad <= 10 {
				t.Errorf("%q: Go %q → %q, Python %q → %q", texts[i], u, norm, want[0], want[1])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d differ", bad, n)
	}
	if skipped > n/5 {
		t.Errorf("%d of %d not decided", skipped, n)
	}
}

// TestMathHardScore: what is decided without sympy, per lm-eval version.
func TestMathHardScore(t *testing.T) {
	const resp = "so the area is 12.\nFinal Answer: The final answer is $12$. I hope it is correct."
	for _, c := range []struct {
		rules        mathHardRules
		metric       string
		response     string
		gold         string
		want         float64
		recomputable bool
	}{
		{mathHardShortcut, "exact_match", resp, "12", 1, true},
		{mathHardShortcut, "exact_match", "no final line", "12", 0, true},
		{mathHardShortcut, "exact_match", resp, "\\frac{24}{2}", 0, false},
		// v0.4.9+ normalises the gold too: "1,000" becomes "1000"
		{mathHardVerify, "exact_match_original", "Final Answer: The final answer is $1000$. I hope it is correct.", "1,000", 1, true},
		{mathHardShortcut, "exact_match", "Final Answer: The final answer is $1000$. I hope it is correct.", "1,000", 0, false},
		{mathHardVerify, "exact_match", resp, "12", 0, false},
		{mathHardSympy, "exact_match", resp, "12", 0, false},
	} {
		v, why := mathHardScore(c.rules, c.metric, c.response, c.gold)
		if (why == "") != c.recomputable || c.recomputable && v != c.want {
			t.Errorf("%v %s %q gold %q: %v, %q; want %v recomputable %v", c.rules, c.metric, c.response, c.gold, v, why, c.want, c.recomputable)
		}
	}
}

// TestMathHardOnlyLeaderboard: minerva_math shares the helpers (and their
// names in its source) but not the rules.
func TestMathHardOnlyLeaderboard(t *testing.T) {
	cfg, err := harness.ParseJSON([]byte(`{"process_results": "def process_results(doc, results):\n    unnormalized_answer = get_unnormalized_answer(candidates)\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mathHardRulesFor("minerva_math_algebra", cfg, harness.VersionRange{}); ok {
		t.Error("minerva_math taken for leaderboard_math")
	}
	if r, ok := mathHardRulesFor("leaderboard_math_algebra_hard", cfg, harness.VersionRange{}); !ok || r != mathHardSympy {
		t.Errorf("leaderboard_math_algebra_hard: %v %v", r, ok)
	}
}
