package simulate

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The simulated datasets are written from the word lists below. The text is
// deliberately synthetic (grammatical, topical, meaningless): it only has to
// look like benchmark data to a parser, exercise JSON escaping (quotes,
// backslashes, newlines, non-ASCII) and have realistic lengths.

var (
	adjectives = []string{
		"standard", "primary", "relative", "internal", "external", "central",
		"early", "modern", "formal", "typical", "critical", "stable", "variable",
		"linear", "local", "global", "direct", "indirect", "minimal", "maximal",
		"common", "rare", "classical", "empirical", "theoretical", "public",
		"private", "structural", "functional", "marginal", "average", "initial",
		"final", "natural", "artificial", "regional", "national", "moral",
		"legal", "social", "naïve", "coöperative", "well-known", "so-called",
	}
	nouns = []string{
		"process", "structure", "system", "model", "theory", "method", "effect",
		"principle", "factor", "policy", "market", "function", "element",
		"sample", "measure", "argument", "response", "cell", "agent", "network",
		"population", "interval", "ratio", "boundary", "signal", "contract",
		"institution", "framework", "distribution", "mechanism", "variable",
		"constraint", "equilibrium", "hypothesis", "procedure", "statement",
		"outcome", "resource", "region", "period", "tradition", "community",
		"treaty", "movement", "index", "rate", "value", "duty", "right", "claim",
		"protein", "molecule", "circuit", "algorithm", "lesion", "symptom",
		"dose", "archive", "reform", "café", "régime", "façade",
	}
	verbs = []string{
		"determines", "reduces", "increases", "describes", "explains",
		"supports", "limits", "requires", "implies", "predicts", "affects",
		"reflects", "controls", "produces", "restricts", "measures", "follows",
		"replaces", "defines", "separates", "connects", "encourages",
	}
	connectives = []string{
		"because", "although", "while", "unless", "whenever", "since",
		"as long as", "even though", "provided that",
	}
	people = []string{
		"a researcher", "the committee", "a patient", "the defendant",
		"an economist", "the author", "a student", "the court", "a nurse",
		"the government", "an engineer", "the historian", "a firm", "the user",
	}
)

// sentence returns one synthetic sentence that mentions topic now and then.
func sentence(r *rng, topic string) string {
	var b strings.Builder
	subj := pick(r, nouns)
	if r.chance(0.3) {
		subj = topic
	}
	b.WriteString(capitalize("the " + pick(r, adjectives) + " " + subj))
	b.WriteString(" ")
	b.WriteString(pick(r, verbs))
	b.WriteString(" the ")
	b.WriteString(pick(r, nouns))
	b.WriteString(" of ")
	b.WriteString(pick(r, people))
	if r.chance(0.5) {
		b.WriteString(" ")
		b.WriteString(pick(r, connectives))
		b.WriteString(" the ")
		b.WriteString(pick(r, adjectives))
		b.WriteString(" ")
		b.WriteString(pick(r, nouns))
		b.WriteString(" ")
		b.WriteString(pick(r, verbs))
		b.WriteString(" ")
		b.WriteString(pick(r, people))
	}
	switch r.intn(40) {
	case 0:
		b.WriteString(` (the so-called "` + pick(r, nouns) + ` rule")`)
	case 1:
		b.WriteString(" – see § " + strconv.Itoa(r.between(2, 40)))
	case 2:
		b.WriteString(`, written \(x_` + strconv.Itoa(r.between(1, 9)) + `\)`)
	}
	b.WriteString(".")
	return b.String()
}

// paragraph returns sentences until it reaches at least n bytes.
func paragraph(r *rng, topic string, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		b.WriteString(sentence(r, topic))
	}
	return b.String()
}

// phrase returns a short noun phrase, used for answer choices.
func phrase(r *rng, topic string) string {
	switch r.intn(5) {
	case 0:
		return capitalize(pick(r, adjectives) + " " + pick(r, nouns))
	case 1:
		return capitalize("the " + pick(r, nouns) + " " + pick(r, verbs) + " the " + pick(r, nouns))
	case 2:
		return capitalize(pick(r, adjectives) + " " + topic + " " + pick(r, nouns))
	case 3:
		return capitalize("it " + pick(r, verbs) + " " + pick(r, people))
	}
	return capitalize(pick(r, nouns) + " and " + pick(r, nouns))
}

func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// pyStrip is Python's str.strip() with no argument: it removes the
// characters for which str.isspace() is true, a larger set than Go's
// unicode.IsSpace (it includes the separators U+001C..U+001F).
func pyStrip(s string) string {
	start := 0
	for start < len(s) {
		c, n := utf8.DecodeRuneInString(s[start:])
		if !pyIsSpace(c) {
			break
		}
		start += n
	}
	end := len(s)
	for end > start {
		c, n := utf8.DecodeLastRuneInString(s[start:end])
		if !pyIsSpace(c) {
			break
		}
		end -= n
	}
	return s[start:end]
}

func pyIsSpace(c rune) bool {
	switch {
	case c >= 0x09 && c <= 0x0d, c >= 0x1c && c <= 0x20:
		return true
	case c == 0x85, c == 0xa0, c == 0x1680, c >= 0x2000 && c <= 0x200a,
		c == 0x2028, c == 0x2029, c == 0x202f, c == 0x205f, c == 0x3000:
		return true
	}
	return false
}

// withCommas formats n with thousands separators, as GSM8K solutions and
// model outputs often do ("$80,000").
func withCommas(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

const (
	ln2Hi = 6.93147180369123816490e-01 // fdlibm's split of ln 2
	ln2Lo = 1.90821492927058770002e-10
)

// detLog is the natural logarithm computed with correctly rounded basic
// operations only (the atanh series of the reduced argument). math.Log is
// assembly on some architectures and the compiler may fuse multiply-adds on
// others; simulated log-likelihoods must be the same bits everywhere. The
// explicit float64 conversions stop fusion, as the Go spec provides.
func detLog(x float64) float64 {
	m, e := math.Frexp(x) // x = m·2^e, m in [0.5, 1)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	s := float64(m-1) / float64(m+1)
	s2 := float64(s * s)
	var sum float64
	for k := 25; k >= 3; k -= 2 {
		sum = float64(float64(sum+1/float64(k)) * s2)
	}
	twoS := float64(2 * s)
	lm := float64(twoS + float64(twoS*sum))
	fe := float64(e)
	return float64(float64(fe*ln2Hi) + float64(lm+float64(fe*ln2Lo)))
}
