// Package quote shows untrusted strings (a capsule's names, command lines,
// model outputs) so that a terminal displays them rather than obeys them:
// control characters, escapes and invalid UTF-8 are written as Go escapes.
package quote

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// unsafe reports whether r must not reach a terminal as it is: controls
// (ESC, BEL, CR, ...), the C1 range, bidirectional overrides, and
// characters that print nothing.
func unsafe(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) ||
		(!unicode.IsPrint(r) && r != ' ')
}

// Text is s with every character that is unsafe on a terminal escaped as
// Go writes it (\x1b, \u202e); safe text is returned as it is.
func Text(s string) string {
	if !needs(s) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func needs(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.ContainsFunc(s, unsafe)
}

// Arg is one argument of a command line as a shell user reads it: as it is
// when it holds no space, quote or unsafe character, else Go-quoted.
func Arg(s string) string {
	if s != "" && !needs(s) && !strings.ContainsAny(s, " \t\"'\\$`") {
		return s
	}
	return strconv.Quote(s)
}

// Argv is a command line, each argument as Arg shows it.
func Argv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = Arg(a)
	}
	return strings.Join(out, " ")
}
