// Package quote shows untrusted strings (a capsule's names, command lines,
// model outputs) so that a terminal displays them rather than obeys them:
// control characters, escapes and invalid UTF-8 are written as Go escapes.
package quote

import (
	"fmt"
	"io"
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

// Writer passes text on with every character that is unsafe on a terminal
// escaped as Text does, except line breaks and tabs, which layout needs. A
// character split across two writes is held until it is whole; Flush
// writes what is held.
type Writer struct {
	w    io.Writer
	held []byte
}

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (q *Writer) Write(p []byte) (int, error) {
	n := len(p)
	if len(q.held) > 0 {
		p = append(q.held, p...)
		q.held = nil
	}
	var out []byte
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		if r == utf8.RuneError && size <= 1 && !utf8.FullRune(p) {
			q.held = append([]byte(nil), p...)
			break
		}
		switch {
		case r == '\n' || r == '\t':
			out = append(out, byte(r))
		case r == utf8.RuneError && size <= 1:
			out = fmt.Appendf(out, `\x%02x`, p[0])
		case unsafe(r):
			q := strconv.QuoteRune(r)
			out = append(out, q[1:len(q)-1]...)
		default:
			out = append(out, p[:size]...)
		}
		p = p[size:]
	}
	if _, err := q.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes a character held incomplete, escaped byte by byte.
func (q *Writer) Flush() error {
	var out []byte
	for _, b := range q.held {
		out = fmt.Appendf(out, `\x%02x`, b)
	}
	q.held = nil
	_, err := q.w.Write(out)
	return err
}
