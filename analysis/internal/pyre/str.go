package pyre

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsSpace reports whether r is whitespace by Python's str.isspace (and
// sre's \s): bidirectional class WS, B or S, or category Zs. That includes
// U+001C..U+001F, which Go's unicode.IsSpace and .NET's \s leave out, and
// excludes U+200B and U+FEFF, which some other definitions count.
func IsSpace(r rune) bool {
	switch {
	case r < 0x80:
		return '\t' <= r && r <= '\r' || 0x1c <= r && r <= ' '
	case r == 0x85, r == 0xa0, r == 0x1680, 0x2000 <= r && r <= 0x200a,
		r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}

// Strip is Python's str.strip() with no argument: leading and trailing
// IsSpace characters removed. lm-eval strips every extracted answer, so
// "\x1c42" and "42" must compare equal exactly when Python says so.
func Strip(s string) string {
	return strings.TrimFunc(s, IsSpace)
}

// Lower is Python's str.lower(): the full lowercase mapping of every
// character. Beyond Go's strings.ToLower that means "İ" (U+0130) becomes
// "i̇" (two code points), and "Σ" becomes "ς" instead of "σ" where Unicode's
// Final_Sigma condition holds, exactly as CPython's handle_capital_sigma
// tests it. Bytes that are not valid UTF-8 are copied unchanged.
func Lower(s string) string {
	if isASCIIWithoutUpper(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !validAt(s, i):
			b.WriteByte(s[i])
		case r == 0x130:
			b.WriteString("i\u0307")
		case r == 0x3a3:
			if finalSigma(s, i) {
				b.WriteRune(0x3c2)
			} else {
				b.WriteRune(0x3c3)
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// Upper is Python's str.upper(): the full uppercase mapping of every
// character, so "ß" becomes "SS" and "ﬁ" becomes "FI" where Go's
// strings.ToUpper keeps one code point. Invalid UTF-8 bytes are copied
// unchanged.
func Upper(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteByte(byte(r))
		case r == utf8.RuneError && !validAt(s, i):
			b.WriteByte(s[i])
		default:
			if up, ok := specialUpper[r]; ok {
				b.WriteString(up)
			} else {
				b.WriteRune(unicode.ToUpper(r))
			}
		}
	}
	return b.String()
}

func isASCIIWithoutUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// validAt reports whether the U+FFFD decoded at byte i of s is really
// written there, rather than standing for an invalid byte.
func validAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size == 3
}

// finalSigma reports whether the capital sigma at byte i of s is in the
// Final_Sigma context: preceded by a cased character (skipping
// case-ignorable ones) and not followed by one (likewise).
func finalSigma(s string, i int) bool {
	j := i
	var c rune
	found := false
	for j > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:j])
		j -= size
		if !isCaseIgnorable(r) {
			c, found = r, true
			break
		}
	}
	if !found || !isCased(c) {
		return false
	}
	for _, r := range s[i+len("Σ"):] {
		if !isCaseIgnorable(r) {
			return !isCased(r)
		}
	}
	return true
}

// isCased is Unicode's Cased property: Lowercase, Uppercase or Lt.
func isCased(r rune) bool {
	return unicode.In(r, unicode.Ll, unicode.Lu, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// isCaseIgnorable is Unicode's Case_Ignorable property: categories Mn, Me,
// Cf, Lm and Sk, plus Word_Break MidLetter, MidNumLet and Single_Quote
// (listed here because Go has no Word_Break table).
func isCaseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0xb7, 0x387, 0x55f, 0x5f4, 0x2018, 0x2019, 0x2024,
		0x2027, 0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
