package analysis

import "testing"

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
