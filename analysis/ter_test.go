package analysis

import (
	"strings"
	"testing"
)

// TestTERShifts: a block moved is one shift, not as many edits as its
// words; the examples follow Tercom's definition (Snover et al. 2006).
func TestTERShifts(t *testing.T) {
	for _, c := range []struct {
		hyp, ref string
		edits    int
	}{
		{"a b c d e f", "a b c d e f", 0},
		{"d e f a b c", "a b c d e f", 1},         // one shift
		{"x b c d e f", "a b c d e f", 1},         // one substitution
		{"", "a b c", 3},                          // three insertions
		{"c d e f g h a b", "a b c d e f g h", 1}, // shift of a b
		{"a b c q d e f", "a b c d e f", 1},       // one deletion
		{"the cat sat on the mat", "on the mat the cat sat", 1},
	} {
		e, l := translationEditRate(strings.Fields(c.hyp), strings.Fields(c.ref))
		if e != c.edits || l != len(strings.Fields(c.ref)) {
			t.Errorf("TER(%q, %q) = %d edits / %d, want %d / %d", c.hyp, c.ref, e, l, c.edits, len(strings.Fields(c.ref)))
		}
	}
}
