package pyre

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// translate turns a parsed Python pattern into regexp2 syntax with the same
// meaning. regexp2 is used with no options at all: every flag-dependent
// construct is resolved here, so nothing depends on how .NET's options
// would have interpreted it.
//
// The choices, and why:
//   - Capture groups are emitted unnamed: .NET numbers named groups after
//     all unnamed ones, Python numbers all groups left to right. Names are
//     resolved to numbers here; back-references become \k<N>.
//   - Literals and classes become explicit code point sets (charset.go),
//     which also carries Python's IGNORECASE rules; regexp2 never sees the
//     i option except on a back-reference, where both engines compare the
//     simple lowercase of each character.
//   - \b and \B become lookarounds over Python's word set (Unicode L, N and
//     "_"); .NET's \b also counts Mn, Pc and U+200C/U+200D as word
//     characters. sre's \B never matches in an empty string; neither does
//     the rewrite.
//   - \Z (end of string only) becomes \z; .NET's \Z also matches before a
//     final newline. $ and ^ keep their regexp2 meaning, which is Python's
//     (end, or before a final "\n"; start), and become (?m:$) / (?m:^)
//     under MULTILINE.
//   - "." is [^\n] in both engines; under DOTALL it becomes (?s:.).
func translate(pattern string, p *parsed) (string, error) {
	e := &emitter{pattern: pattern, widths: p.widths}
	if err := e.seq(p.seq, p.flags); err != nil {
		return "", err
	}
	return e.b.String(), nil
}

type emitter struct {
	pattern string
	widths  []*width
	b       strings.Builder
}

func (e *emitter) unsupported(format string, args ...any) error {
	return &Error{Pattern: e.pattern, Pos: -1, Msg: fmt.Sprintf(format, args...), Unsupported: true}
}

func (e *emitter) seq(seq []*node, flags flagSet) error {
	for _, n := range seq {
		if err := e.node(n, flags); err != nil {
			return err
		}
	}
	return nil
}

func (e *emitter) node(n *node, flags flagSet) error {
	b := &e.b
	switch n.op {
	case opLiteral:
		s := literalSet(n.c, flags)
		if len(s) == 1 && s[0].lo == s[0].hi {
			writeLiteral(b, s[0].lo)
		} else {
			b.WriteString(classSyntax(s))
		}

	case opNotLiteral:
		b.WriteString(classSyntax(literalSet(n.c, flags).complement()))

	case opIn:
		b.WriteString(classSyntax(classSet(n.cls, flags)))

	case opAny:
		if flags&flagDotAll != 0 {
			b.WriteString("(?s:.)")
		} else {
			b.WriteString(".")
		}

	case opAt:
		e.at(n.at, flags)

	case opBranch:
		b.WriteString("(?:")
		for i, alt := range n.alts {
			if i > 0 {
				b.WriteByte('|')
			}
			if err := e.seq(alt, flags); err != nil {
				return err
			}
		}
		b.WriteByte(')')

	case opSubpattern:
		if n.group > 0 {
			b.WriteByte('(')
		} else {
			b.WriteString("(?:")
		}
		if err := e.seq(n.body, combineFlags(flags, n.add, n.del)); err != nil {
			return err
		}
		b.WriteByte(')')

	case opAtomic:
		b.WriteString("(?>")
		if err := e.seq(n.body, flags); err != nil {
			return err
		}
		b.WriteByte(')')

	case opRepeat:
		return e.repeat(n, flags)

	case opAssert:
		return e.assert(n, flags)

	case opGroupRef:
		ref := `\k<` + strconv.Itoa(n.group) + `>`
		switch {
		case flags&flagIgnoreCase == 0:
			b.WriteString(ref)
		case flags&flagASCII != 0:
			// sre folds only A-Z here; regexp2 would fold all of Unicode.
			return e.unsupported("back-reference under both ASCII and IGNORECASE flags")
		default:
			// GROUPREF_UNI_IGNORE and regexp2's case-insensitive
			// back-reference both compare simple lowercase mappings.
			b.WriteString("(?i:" + ref + ")")
		}

	case opGroupRefExists:
		fmt.Fprintf(b, "(?(%d)", n.group)
		if err := e.seq(n.body, flags); err != nil {
			return err
		}
		// Always write the "no" branch: regexp2 fails a (?(N)yes) whose
		// group did not match, where Python (and .NET) match empty.
		b.WriteByte('|')
		if err := e.seq(n.no, flags); err != nil {
			return err
		}
		b.WriteByte(')')
	}
	return nil
}

func (e *emitter) at(a atCode, flags flagSet) {
	b := &e.b
	multiline := flags&flagMultiline != 0
	switch a {
	case atBeginning:
		if multiline {
			b.WriteString("(?m:^)")
		} else {
			b.WriteString(`\A`)
		}
	case atBeginningString:
		b.WriteString(`\A`)
	case atEnd:
		if multiline {
			b.WriteString("(?m:$)")
		} else {
			b.WriteString("$")
		}
	case atEndString:
		b.WriteString(`\z`)
	case atBoundary, atNonBoundary:
		w := classSyntax(wordSet(flags))
		if a == atBoundary {
			fmt.Fprintf(b, `(?:(?<=%s)(?!%s)|(?<!%s)(?=%s))`, w, w, w, w)
		} else {
			fmt.Fprintf(b, `(?!\A\z)(?:(?<=%s)(?=%s)|(?<!%s)(?!%s))`, w, w, w, w)
		}
	}
}

func (e *emitter) repeat(n *node, flags flagSet) error {
	b := &e.b
	if n.min > math.MaxInt32-1 || (n.max != maxRepeat && n.max > math.MaxInt32-1) {
		return e.unsupported("repeat count above %d", math.MaxInt32-1)
	}
	if n.kind == possessive {
		b.WriteString("(?>")
	}
	atom := len(n.body) == 1
	if atom {
		switch n.body[0].op {
		case opLiteral, opNotLiteral, opAny, opIn, opSubpattern, opAtomic, opGroupRef:
		default:
			atom = false
		}
	}
	if !atom {
		b.WriteString("(?:")
	}
	if err := e.seq(n.body, flags); err != nil {
		return err
	}
	if !atom {
		b.WriteByte(')')
	}
	switch {
	case n.min == 0 && n.max == maxRepeat:
		b.WriteByte('*')
	case n.min == 1 && n.max == maxRepeat:
		b.WriteByte('+')
	case n.min == 0 && n.max == 1:
		b.WriteByte('?')
	case n.max == maxRepeat:
		fmt.Fprintf(b, "{%d,}", n.min)
	case n.min == n.max:
		fmt.Fprintf(b, "{%d}", n.min)
	default:
		fmt.Fprintf(b, "{%d,%d}", n.min, n.max)
	}
	switch n.kind {
	case lazy:
		b.WriteByte('?')
	case possessive:
		b.WriteByte(')')
	}
	return nil
}

func (e *emitter) assert(n *node, flags flagSet) error {
	b := &e.b
	switch {
	case !n.behind && !n.negative:
		b.WriteString("(?=")
	case !n.behind && n.negative:
		b.WriteString("(?!")
	default:
		w := getwidth(n.body, e.widths)
		if w.lo != w.hi {
			return &Error{Pattern: e.pattern, Pos: -1, Msg: "look-behind requires fixed-width pattern"}
		}
		// regexp2 matches a lookbehind right to left. For a fixed-width
		// body every element sits at a fixed offset, so the set of
		// matches and the captures kept are the same as sre's forward
		// match, except for a group captured repeatedly: sre keeps the
		// rightmost capture, right-to-left matching the leftmost.
		if captureInRepeat(n.body, false) {
			return e.unsupported("capturing group inside a repeat inside a lookbehind")
		}
		if n.negative {
			b.WriteString("(?<!")
		} else {
			b.WriteString("(?<=")
		}
	}
	if err := e.seq(n.body, flags); err != nil {
		return err
	}
	b.WriteByte(')')
	return nil
}

func captureInRepeat(seq []*node, inRepeat bool) bool {
	for _, n := range seq {
		if n.op == opSubpattern && n.group > 0 && inRepeat {
			return true
		}
		rep := inRepeat || (n.op == opRepeat && n.max > 1)
		if captureInRepeat(n.body, rep) || captureInRepeat(n.no, rep) {
			return true
		}
		for _, alt := range n.alts {
			if captureInRepeat(alt, rep) {
				return true
			}
		}
	}
	return false
}

// writeLiteral writes r so that regexp2 reads exactly r: letters and
// digits as themselves, everything else as \x{...}.
func writeLiteral(b *strings.Builder, r rune) {
	if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
		b.WriteRune(r)
		return
	}
	fmt.Fprintf(b, `\x{%X}`, r)
}
