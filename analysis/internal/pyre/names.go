package pyre

import (
	"math/big"
	"strings"
	"unicode"
)

// isIdentifier is Python's str.isidentifier, which group names must pass:
// a first character that is "_" or XID_Start, then XID_Continue ones.
// XID_Start and XID_Continue are Unicode's ID_Start and ID_Continue
// (derived below from Go's tables) less the few characters whose NFKC
// form is not an identifier (notXIDStart, notXIDContinue).
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if i == 0 {
			if r != '_' && !xidStart(r) {
				return false
			}
		} else if !xidContinue(r) {
			return false
		}
	}
	return true
}

func idStart(r rune) bool {
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Other_ID_Start) &&
		!unicode.In(r, unicode.Pattern_Syntax, unicode.Pattern_White_Space)
}

func xidStart(r rune) bool {
	return idStart(r) && !strings.ContainsRune(notXIDStart, r)
}

func xidContinue(r rune) bool {
	ok := r == '_' || idStart(r) ||
		unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue) &&
			!unicode.In(r, unicode.Pattern_Syntax, unicode.Pattern_White_Space)
	return ok && !strings.ContainsRune(notXIDContinue, r)
}

// The characters that are ID_Start (ID_Continue) but not XID_Start
// (XID_Continue), per Unicode's DerivedCoreProperties.txt.
const (
	notXIDStart = "\u037a\u0e33\u0eb3\u309b\u309c\ufc5e\ufc5f\ufc60\ufc61\ufc62\ufc63" +
		"\ufdfa\ufdfb\ufe70\ufe72\ufe74\ufe76\ufe78\ufe7a\ufe7c\ufe7e\uff9e\uff9f"
	notXIDContinue = "\u037a\u309b\u309c\ufc5e\ufc5f\ufc60\ufc61\ufc62\ufc63" +
		"\ufdfa\ufdfb\ufe70\ufe72\ufe74\ufe76\ufe78\ufe7a\ufe7c\ufe7e"
)

// pyInt is Python's int(s) for a str s, which is how a conditional's
// group reference that is not an identifier is read: surrounding
// whitespace, an optional sign, then decimal digits of any script, with
// single underscores allowed between digits.
func pyInt(s string) (*big.Int, bool) {
	s = strings.TrimFunc(s, isIntSpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	v := new(big.Int)
	digits := 0
	prevUnderscore := false
	for _, r := range s {
		if r == '_' {
			if digits == 0 || prevUnderscore {
				return nil, false
			}
			prevUnderscore = true
			continue
		}
		d := digitValue(r)
		if d < 0 {
			return nil, false
		}
		v.Mul(v, big.NewInt(10))
		v.Add(v, big.NewInt(int64(d)))
		digits++
		prevUnderscore = false
	}
	if digits == 0 || prevUnderscore {
		return nil, false
	}
	if neg {
		v.Neg(v)
	}
	return v, true
}

// isIntSpace is the whitespace int() strips: str.isspace() without
// U+001C..U+001F.
func isIntSpace(r rune) bool {
	return IsSpace(r) && (r < 0x1c || r > 0x1f)
}

// digitValue is the value of a decimal digit (category Nd), or -1. Nd
// characters come in runs of ten, 0 to 9, so the value is the offset in
// its run.
func digitValue(r rune) int {
	if '0' <= r && r <= '9' {
		return int(r - '0')
	}
	if !unicode.Is(unicode.Nd, r) {
		return -1
	}
	lo := r
	for lo > 0 && unicode.Is(unicode.Nd, lo-1) {
		lo--
	}
	return int(r-lo) % 10
}
