package analysis

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/evalcapsule/evalcapsule/harness"
)

// leaderboard_math_hard's process_results (lm_eval/tasks/leaderboard/math/
// utils.py) changed twice:
//
//   - to v0.4.5, exact_match was sympy's is_equiv(answer, doc["answer"]) for
//     every answer: nothing is decided without sympy;
//   - v0.4.6 to v0.4.8, an "[invalidanswer]" scores 0 and an answer equal to
//     doc["answer"] (both strip()ped) scores 1, before is_equiv;
//   - from v0.4.9, exact_match is math-verify's verify(), and
//     exact_match_original is the v0.4.6 rule with the gold normalised too.
//
// is_equiv (parse_latex, simplify, under a SIGALRM timeout of 1 or 5
// seconds) and math-verify are not re-implemented: a doc they decide is
// not recomputable, and says so. Extraction and normalize_final_answer are.
type mathHardRules int

const (
	mathHardUnknown  mathHardRules = iota // the version range spans a change
	mathHardSympy                         // ≤ v0.4.5
	mathHardShortcut                      // v0.4.6 – v0.4.8
	mathHardVerify                        // ≥ v0.4.9
)

// mathHardRulesFor tells the rules of a leaderboard_math_* task from
// process_results' source, which lm-eval writes into configs, else from the
// lm-eval version.
func mathHardRulesFor(task string, cfg harness.Value, vr harness.VersionRange) (mathHardRules, bool) {
	pr, ok := cfg.Get("process_results")
	// minerva_math and putnam_axiom share the helpers, not the rules.
	if !ok || pr.Kind != harness.String || !strings.HasPrefix(task, "leaderboard_math_") {
		return 0, false
	}
	if strings.HasPrefix(pr.Str, "def ") {
		switch {
		case !strings.Contains(pr.Str, "get_unnormalized_answer(") && !strings.Contains(pr.Str, "process_result_v1("):
			return 0, false
		case strings.Contains(pr.Str, "verify(parsed_answer, parsed_candidate)"):
			return mathHardVerify, true
		case strings.Contains(pr.Str, "if answer == INVALID_ANSWER"):
			return mathHardShortcut, true
		}
		return mathHardSympy, true
	}
	switch {
	case vr.Hi.Less(harness.Version{0, 4, 6}):
		return mathHardSympy, true
	case vr.Lo.AtLeast(harness.Version{0, 4, 9}):
		return mathHardVerify, true
	case vr.Lo.AtLeast(harness.Version{0, 4, 6}) && vr.Hi.Less(harness.Version{0, 4, 9}):
		return mathHardShortcut, true
	}
	return mathHardUnknown, true
}

const mathInvalid = "[invalidanswer]"

var reFinalAnswer = regexp.MustCompile(`Final Answer: The final answer is(.*?). I hope it is correct.`)

// mathUnnormalizedAnswer is get_unnormalized_answer.
func mathUnnormalizedAnswer(text string) string {
	m := reFinalAnswer.FindStringSubmatch(text + "I hope it is correct.")
	if m == nil {
		return mathInvalid
	}
	return pyStrip(m[1])
}

var mathSubstitutions = [][2]string{
	{"an ", ""}, {"a ", ""}, {".$", "$"}, {"\\$", ""}, {`\ `, ""}, {" ", ""}, {"mbox", "text"},
	{",\\text{and}", ","}, {"\\text{and}", ","}, {"\\text{m}", "\\text{}"},
}

var mathRemoved = []string{
	"square", "ways", "integers", "dollars", "mph", "inches", "ft", "hours", "km", "units", "\\ldots", "sue",
	"points", "feet", "minutes", "digits", "cents", "degrees", "cm", "gm", "pounds", "meters", "meals", "edges",
	"students", "childrentickets", "multiples", "\\text{s}", "\\text{.}", "\\text{\ns}", "\\text{}^2",
	"\\text{}^3", "\\text{\n}", "\\text{}", `\mathrm{th}`, `^\circ`, `^{\circ}`, `\;`, `,\!`, "{,}", `"`, "\\dots",
}

// The re.sub steps of normalize_final_answer: pattern and the groups the
// replacement is made of (text between them as given).
var mathSubs = []struct {
	re   *regexp.Regexp
	repl func(m []string) string
}{
	{regexp.MustCompile(`(.*?)(\$)(.*?)(\$)(.*)`), func(m []string) string { return "$" + m[3] + "$" }},
	{regexp.MustCompile(`(\\text\{)(.*?)(\})`), func(m []string) string { return m[2] }},
	{regexp.MustCompile(`(\\textbf\{)(.*?)(\})`), func(m []string) string { return m[2] }},
	{regexp.MustCompile(`(\\overline\{)(.*?)(\})`), func(m []string) string { return m[2] }},
	{regexp.MustCompile(`(\\boxed\{)(.*)(\})`), func(m []string) string { return m[2] }},
	{regexp.MustCompile(`(frac)([^{])(.)`), func(m []string) string { return "frac{" + m[2] + "}{" + m[3] + "}" }},
	{regexp.MustCompile(`(sqrt)([^{])`), func(m []string) string { return "sqrt{" + m[2] + "}" }},
}

// pyReSub is re.sub with a replacement built from the groups.
func pyReSub(re *regexp.Regexp, s string, repl func([]string) string) string {
	var b strings.Builder
	last := 0
	for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(s[last:loc[0]])
		m := make([]string, len(loc)/2)
		for i := range m {
			if loc[2*i] >= 0 {
				m[i] = s[loc[2*i]:loc[2*i+1]]
			}
		}
		b.WriteString(repl(m))
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// mathNormalize is normalize_final_answer; ok is false when str.isdigit
// would need Unicode's Numeric_Type, which Go's tables do not carry.
func mathNormalize(s string) (string, bool) {
	parts := strings.Split(s, "=")
	s = parts[len(parts)-1]
	for _, r := range mathSubstitutions {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	for _, r := range mathRemoved {
		s = strings.ReplaceAll(s, r, "")
	}
	for _, sub := range mathSubs {
		s = pyReSub(sub.re, s, sub.repl)
	}
	s = strings.ReplaceAll(s, "$", "")
	digits := strings.ReplaceAll(s, ",", "")
	isDigit := digits != ""
	for _, r := range digits {
		if unicode.Is(unicode.No, r) {
			return "", false
		}
		if !unicode.Is(unicode.Nd, r) {
			isDigit = false
		}
	}
	if isDigit {
		s = digits
	}
	return s, true
}

// mathHardScore decides one doc's exact_match (or exact_match_original)
// where the rules allow it without sympy; why says otherwise.
func mathHardScore(rules mathHardRules, metric, response, gold string) (float64, string) {
	const sympyWhy = "the answer differs from the gold as text, and sympy's is_equiv (parse_latex, simplify, under a timeout) is not re-implemented"
	switch {
	case rules == mathHardUnknown:
		return 0, "the lm-eval version range spans a change of leaderboard_math's process_results"
	case rules == mathHardSympy:
		return 0, "lm-eval ≤0.4.5 scores every answer with sympy's is_equiv, which is not re-implemented"
	case rules == mathHardVerify && metric == "exact_match":
		return 0, "exact_match is math-verify's verify(), which is not re-implemented"
	case metric != "exact_match" && metric != "exact_match_original":
		return 0, "per-doc metric " + metric + " is not one leaderboard_math's process_results returns"
	}
	answer, ok := mathNormalize(mathUnnormalizedAnswer(response))
	if !ok {
		return 0, "str.isdigit() of a character with a Unicode numeric type is not re-implemented"
	}
	if answer == mathInvalid {
		return 0, ""
	}
	if rules == mathHardVerify {
		if gold, ok = mathNormalize(gold); !ok {
			return 0, "str.isdigit() of a character with a Unicode numeric type is not re-implemented"
		}
	}
	if pyStrip(answer) == pyStrip(gold) {
		return 1, ""
	}
	return 0, sympyWhy
}

// rescoreMathHard recomputes the per-doc exact_match values it can decide.
func (ts *taskScorer) rescoreMathHard(res lineResult, dc *docContext, response string, want []string) lineResult {
	g, ok := dc.field("answer")
	if !ok || g.Kind != harness.String {
		res.unsupported = "doc.answer (the gold process_docs extracts) is not logged as a string"
		return res
	}
	for _, name := range want {
		v, why := mathHardScore(ts.mathRules, name, response, g.Str)
		if why != "" {
			res.unsupported = why
			continue
		}
		res.values = append(res.values, perDoc{name: name, value: v, kind: PyInt})
	}
	return res
}
