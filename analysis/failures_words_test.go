package analysis

import (
	"strings"
	"testing"
)

func TestContainsWord(t *testing.T) {
	for _, c := range []struct {
		s, word string
		want    bool
	}{
		{"the answer is (l).", "l", true},
		{"the equivalence point will be reached", "l", false},
		{"l", "l", true},
		{"answer: l", "l", true},
		{"ll l", "l", true},
		{"(d) and (k). the answer is (k).", "(k)", true},
		{"x(k)y", "(k)", true}, // punctuation at both ends: no boundary asked
		{"true or false", "true", true},
		{"untrue", "true", false},
		{"trueness", "true", false},
		{"42 apples", "42", true},
		{"1420 apples", "42", false},
		{"réponse é", "é", true},
		{"réponse", "é", false},
		{"", "a", false},
	} {
		if got := containsWord(c.s, c.word); got != c.want {
			t.Errorf("containsWord(%q, %q) = %v, want %v", c.s, c.word, got, c.want)
		}
	}
}

func TestFinalAnswer(t *testing.T) {
	stops := []string{"Question:", "</s>"}
	for _, c := range []struct {
		out    string
		want   string
		stated bool
	}{
		// The target of a 35 % discount on $40 is an operand, not the answer.
		{"35/100 * $40 = $<<35/100*40=14>>14 off.\nSo she pays 40 - 14 = $<<40-14=26>>26.\n#### 26", "26", true},
		{"so 65,000 profit\n#### 65,000\n\n", "65,000", true},
		// A run-on after "####" is not the answer; the first "####" is.
		{"3 + 9 = 12\n#### 12You are an AI assistant. 13 people ... #### 99", "12", true},
		{"x = 4\n#### $18.00\n", "$18.00", true},
		{`we get \boxed{\frac{1}{2}} and then 7`, `\frac{1}{2}`, true},
		{"The answer is 42.", "42", true},
		{"So the answer is $1,200.", "1,200", true},
		{"I think the answer is (B). Later the answer is (K).", "(K).", true},
		{"answer: Paris. It is in France.", "Paris.", true},
		// A hallucinated next turn is cut away, with its numbers.
		{"5 * 2 = 10 apples.\n\nQuestion: Tom has 3 cars and 7 bikes", "10", false},
		// The last sentence restates the result of the last "=".
		{"8 * $3 = $<<8*3=24>>24\nThe total is $40 + $24 = $64\nKylar needs to pay $64 for the 16 glasses.", "$64", false},
		// ... else its last number is the conclusion.
		{"He walks 3 miles. Then he has 12 left over from 20.", "20", false},
		{"180 + 15 - 120 = 75 miles\n\nJohn is 75 miles away after 4 hours.", "75", false},
		{"no numbers here", "", false},
		{"", "", false},
	} {
		got := finalAnswer(c.out, stops)
		if got.text != c.want || got.stated != c.stated {
			t.Errorf("finalAnswer(%q) = %q stated %v, want %q stated %v", c.out, got.text, got.stated, c.want, c.stated)
		}
	}
}

func TestSameAnswer(t *testing.T) {
	gsm := &exactMatch{}
	for _, c := range []struct {
		final, target string
		want          bool
	}{
		{"26", "26", true},
		{"1,200", "1200", true},
		{"$18.00", "18", true},
		{"18.5", "18", false},
		{"5125", "125", false},
		{"(K).", "(K)", true},
		{"(D) and (K).", "(K)", true},
		{"Paris.", "Paris", true},
		{"Parisian", "Paris", false},
		{"", "7", false},
	} {
		if got := sameAnswer(c.final, c.target, gsm); got != c.want {
			t.Errorf("sameAnswer(%q, %q) = %v, want %v", c.final, c.target, got, c.want)
		}
	}
}

func TestTruncated(t *testing.T) {
	long := strings.Repeat("The glass costs $0.23 and the next one ", 20) // 780 bytes
	for _, c := range []struct {
		out  string
		toks int
		want bool
	}{
		{long + "costs $0.13", 256, true},         // cut mid-number: no stated answer
		{long + "and the", 256, true},             // cut mid-sentence
		{long + "so it costs $0.13.", 256, false}, // a sentence ends
		{long + "\n#### 12", 256, false},          // a stated answer
		{long + "The answer is 12", 256, false},
		{long + "costs $0.13", 512, false}, // shorter than 2 bytes per allowed token
		{long + "**18**", 256, false},      // a closing mark ends the answer
		{long + "\n*", 256, true},          // a list item opened
		{"short and the", 256, false},
	} {
		if got := truncated(c.out, finalAnswer(c.out, nil), c.toks); got != c.want {
			t.Errorf("truncated(…%q, %d) = %v, want %v", c.out[max(0, len(c.out)-20):], c.toks, got, c.want)
		}
	}
}

// A target that is only an operand or an intermediate result is a reasoning
// miss; a target the output concludes with, missed by the filter, is an
// extraction miss.
func TestClassifyFinalAnswer(t *testing.T) {
	for _, c := range []struct {
		out, target string
		want        FailureClass
	}{
		{"She saves 35/100 * $40 = $<<35/100*40=14>>14.\n#### 14", "35", Reasoning},
		{"40 - 15 = 25 miles left.\n40 - 25 = 15 miles between.\n#### 15", "25", Reasoning},
		{"She saves 35/100 * $40 = $14, so she keeps 35.\n#### 35.00", "35", Extraction},
		{"She keeps 40 - 5 = 35 dollars. The answer is $35.", "35", Extraction},
	} {
		d := &docText{target: c.target, output: c.out, scores: map[string]float64{"strict-match": 0}}
		if got := classify(d, finalAnswer(c.out, nil), "strict-match", 256, nil); got != c.want {
			t.Errorf("%q (target %s): %s, want %s", c.out, c.target, got, c.want)
		}
	}
}
