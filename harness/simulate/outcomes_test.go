package simulate

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFastFilters checks the regexp-free strict-match filter and metric on
// every answer of a full simulated gsm8k run and on random strings built
// from the characters that matter.
func TestFastFilters(t *testing.T) {
	c, err := Options{Seed: 3, Tasks: []string{"gsm8k"}}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	model := gsm8kModel{accuracy: c.GSM8KAccuracy, formatMiss: c.GSM8KFormatMiss, truncated: c.GSM8KTruncated}
	var texts []string
	for id := 0; id < c.GSM8KDocs; id++ {
		p := newProblem(stream(c.DataSeed, "gsm8k", id))
		texts = append(texts, model.respond(stream(c.Seed, "gsm8k-model", id), &p), p.solution())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"#", "#### ", "-", "1", "2", ".", ",", "$", " ", "\n", "a", "5"}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := rng.IntN(20); j > 0; j-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for i, s := range texts {
		if got, want := strictFast(s), gsm8kFilters[0].apply(s); got != want {
			t.Fatalf("strictFast(%q) = %q, regexp %q", s, got, want)
		}
		ref := texts[(i+1)%len(texts)]
		if got, want := exactMatchFast(s, ref), exactMatch(s, ref); got != want {
			t.Fatalf("exactMatchFast(%q, %q) = %v, regexp %v", s, ref, got, want)
		}
		if got, want := exactMatchFast(strictFast(s), "x\n#### "+strictFast(s)), exactMatch(strictFast(s), "x\n#### "+strictFast(s)); got != want {
			t.Fatalf("exactMatchFast on %q: %v, regexp %v", s, got, want)
		}
	}
}
