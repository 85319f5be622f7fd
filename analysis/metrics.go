package analysis

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/evalcapsule/evalcapsule/analysis/internal/pyre"
	"github.com/evalcapsule/evalcapsule/harness"
)

// exactMatch is lm-eval's exact_match for one prediction and reference (the
// vendored HF evaluate metric): the ignore-regexes in order, then case, then
// punctuation, then digits, then equality.
type exactMatch struct {
	ignore      []*pyre.Regexp
	ignoreCase  bool
	ignorePunct bool
	ignoreNums  bool
}

func newExactMatch(kw harness.Value, field string) (*exactMatch, error) {
	em := &exactMatch{}
	for i, k := range kw.Keys {
		v := kw.Vals[i]
		switch k {
		case "regexes_to_ignore":
			if v.Kind == harness.Null {
				continue
			}
			if v.Kind != harness.List {
				return nil, &UnsupportedError{field + ".regexes_to_ignore", "expected a list of regexes"}
			}
			for j, e := range v.List {
				if e.Kind != harness.String {
					return nil, &UnsupportedError{fmt.Sprintf("%s.regexes_to_ignore[%d]", field, j), "expected a string"}
				}
				re, err := pyre.Compile(e.Str)
				if err != nil {
					return nil, &UnsupportedError{fmt.Sprintf("%s.regexes_to_ignore[%d]", field, j), err.Error()}
				}
				em.ignore = append(em.ignore, re)
			}
		case "ignore_case":
			em.ignoreCase, _ = v.Truth()
		case "ignore_punctuation":
			em.ignorePunct, _ = v.Truth()
		case "ignore_numbers":
			em.ignoreNums, _ = v.Truth()
		}
	}
	return em, nil
}

func (em *exactMatch) normalize(s string) string {
	for _, re := range em.ignore {
		s = re.Sub(s)
	}
	if em.ignoreCase {
		s = pyre.Lower(s)
	}
	if em.ignorePunct {
		s = strings.Map(func(r rune) rune {
			if r < 128 && strings.ContainsRune(asciiPunctuation, r) {
				return -1
			}
			return r
		}, s)
	}
	if em.ignoreNums {
		s = strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return -1
			}
			return r
		}, s)
	}
	return numpyStr(s)
}

// score returns 1 if the prediction matches any of the references. memo,
// when not nil, caches the normalized references.
func (em *exactMatch) score(pred string, golds []string, memo map[string]string) float64 {
	p := em.normalize(pred)
	for _, g := range golds {
		n, ok := memo[g]
		if !ok {
			n = em.normalize(g)
			if memo != nil {
				memo[g] = n
			}
		}
		if n == p {
			return 1
		}
	}
	return 0
}

// asciiPunctuation is Python's string.punctuation.
const asciiPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// numpyStr mimics storing a str in a numpy unicode array, which the HF
// exact_match does (np.array / np.asarray): trailing NUL characters are lost.
func numpyStr(s string) string { return strings.TrimRight(s, "\x00") }

// removeUnicodePunct deletes every character whose Unicode category starts
// with P, as MultiChoiceRegexFilter's punctuation table does.
func removeUnicodePunct(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) {
			return -1
		}
		return r
	}, s)
}
