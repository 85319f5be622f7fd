package pyre

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// translate writes the parsed pattern as a regexp2 pattern (compiled with
// no options) that matches exactly what Python's re matches, with the same
// capturing groups under the same numbers.
func translate(pattern string, p *parsed) (string, error) {
	t := &translator{}
	t.emit(p.root)
	return t.b.String(), nil
}

type translator struct {
	b strings.Builder
}

func (t *translator) emit(n *node) {
	b := &t.b
	switch n.kind {
	case kEmpty:
	case kChar:
		t.set(charSet(n.r, n.fl))
	case kClass:
		t.set(classSet(n.cls, n.fl))
	case kAny:
		if n.fl&flagS != 0 {
			b.WriteString(`[\s\S]`)
		} else {
			b.WriteString(`[^\n]`)
		}
	case kBOL:
		if n.fl&flagM != 0 {
			b.WriteString(`(?m:^)`)
		} else {
			b.WriteString(`\A`)
		}
	case kEOL:
		if n.fl&flagM != 0 {
			b.WriteString(`(?m:$)`)
		} else {
			b.WriteString(`$`)
		}
	case kBOS:
		b.WriteString(`\A`)
	case kEOS:
		b.WriteString(`\z`)
	case kBoundary, kNonBound:
		w := classText(wordSet(n.fl))
		if n.kind == kBoundary {
			fmt.Fprintf(b, `(?:(?<=%s)(?!%s)|(?<!%s)(?=%s))`, w, w, w, w)
		} else {
			// Python's \B never matches in an empty string.
			fmt.Fprintf(b, `(?!\A\z)(?:(?<=%s)(?=%s)|(?<!%s)(?!%s))`, w, w, w, w)
		}
	case kGroup:
		// Explicit numbers: a repeat may be written out twice (see
		// repeat), and both copies must capture into the same group.
		fmt.Fprintf(b, "(?<%d>", n.n)
		t.emit(n.subs[0])
		b.WriteByte(')')
	case kLook:
		switch {
		case n.behind && n.neg:
			b.WriteString(`(?<!`)
		case n.behind:
			b.WriteString(`(?<=`)
		case n.neg:
			b.WriteString(`(?!`)
		default:
			b.WriteString(`(?=`)
		}
		t.emit(n.subs[0])
		b.WriteByte(')')
	case kAtomic:
		b.WriteString(`(?>`)
		t.emit(n.subs[0])
		b.WriteByte(')')
	case kRepeat:
		t.repeat(n)
	case kBackref:
		if n.fl&flagI != 0 {
			fmt.Fprintf(b, `(?i:\k<%d>)`, n.n)
		} else {
			fmt.Fprintf(b, `\k<%d>`, n.n)
		}
	case kCond:
		fmt.Fprintf(b, `(?(%d)(?:`, n.n)
		t.emit(n.subs[0])
		b.WriteString(`)|(?:`)
		t.emit(n.subs[1])
		b.WriteString(`))`)
	case kConcat:
		for _, s := range n.subs {
			if s.kind == kAlt {
				b.WriteString(`(?:`)
				t.emit(s)
				b.WriteByte(')')
				continue
			}
			t.emit(s)
		}
	case kAlt:
		for i, s := range n.subs {
			if i > 0 {
				b.WriteByte('|')
			}
			t.emit(s)
		}
	default:
		panic(fmt.Sprintf("pyre: unknown node kind %d", n.kind))
	}
}

func quant(min, max int) string {
	switch {
	case min == 1 && max == 1:
		return ""
	case min == 0 && max == infinite:
		return "*"
	case min == 1 && max == infinite:
		return "+"
	case min == 0 && max == 1:
		return "?"
	case max == infinite:
		return "{" + strconv.Itoa(min) + ",}"
	case min == max:
		return "{" + strconv.Itoa(min) + "}"
	}
	return "{" + strconv.Itoa(min) + "," + strconv.Itoa(max) + "}"
}

// repeat writes a quantified item. When the body can match the empty
// string and the quantifier has both a mandatory and an optional part,
// the two are written separately, X{m,n} as X{m}X{0,n-m}: Python always
// tries a first optional iteration after the mandatory ones, even when the
// last of those matched the empty string, while regexp2's loops can stop
// at such an empty iteration (seen with X+?, X{1,3} and X{1,}; the
// differential tests find no difference once the loop is split).
func (t *translator) repeat(n *node) {
	b := &t.b
	if n.possessive {
		b.WriteString(`(?>`)
	}
	body := n.subs[0]
	if lo, _ := width(body); lo == 0 && n.min > 0 && n.max != n.min {
		t.loop(body, n.min, n.min, false)
		rest := infinite
		if n.max != infinite {
			rest = n.max - n.min
		}
		t.loop(body, 0, rest, n.lazy)
	} else {
		t.loop(body, n.min, n.max, n.lazy)
	}
	if n.possessive {
		b.WriteByte(')')
	}
}

func (t *translator) loop(body *node, min, max int, lazy bool) {
	b := &t.b
	switch body.kind {
	case kChar, kClass, kAny:
		t.emit(body) // a single character or class needs no group
	default:
		b.WriteString(`(?:`)
		t.emit(body)
		b.WriteByte(')')
	}
	b.WriteString(quant(min, max))
	if lazy {
		b.WriteByte('?')
	}
}

// set writes a one-character matcher for s.
func (t *translator) set(s runeSet) {
	if len(s) == 1 && s[0].lo == s[0].hi {
		writeChar(&t.b, s[0].lo, false)
		return
	}
	t.b.WriteString(classText(s))
}

// writeChar writes r so that regexp2 reads it as that literal character,
// inside a class or not.
func writeChar(b *strings.Builder, r rune, inClass bool) {
	switch {
	case r < 0x80 && ('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r == '_'):
		b.WriteRune(r)
	case (r == '<' || r == '>' || r == '\'') && !inClass:
		// Escaped, \<...> and \'...' would be .NET back-references.
		b.WriteRune(r)
	case r > ' ' && r < 0x7f && !inClass:
		b.WriteByte('\\')
		b.WriteRune(r)
	case r > 0x7f && (unicode.IsLetter(r) || unicode.IsDigit(r)):
		b.WriteRune(r)
	default:
		fmt.Fprintf(b, `\x{%X}`, r)
	}
}

// base is a set regexp2 can name with Unicode categories.
type base struct {
	syntax string
	set    runeSet
}

var (
	basesOnce sync.Once
	bases     []base
)

func getBases() []base {
	basesOnce.Do(func() {
		initCats()
		bases = []base{
			{`\p{L}\p{N}_`, uniWord},
			{`\p{Nd}`, uniDigit},
			{`\p{L}`, letters},
			{`\p{N}`, numbers},
			{`\p{L}\p{N}`, union(letters, numbers)},
			{`\p{L}\p{Nl}\p{No}_`, subtract(uniWord, uniDigit)},
		}
	})
	return bases
}

// classText writes s as a regexp2 character class, using Unicode
// categories where s is close to one, since regexp2 tests a class's
// explicit ranges one by one.
func classText(s runeSet) string {
	switch {
	case len(s) == 0:
		return `[^\x{0}-\x{10FFFF}]`
	case len(s) == 1 && s[0] == (runeRange{0, unicode.MaxRune}):
		return `[\x{0}-\x{10FFFF}]`
	}
	var b strings.Builder
	best, bestCost := -1, len(s)
	negated := false
	if c := complement(s); len(c) < bestCost {
		bestCost, negated = len(c), true
	}
	var plan struct {
		base       base
		compl      bool
		add, minus runeSet
	}
	if bestCost > 4 {
		for i, bs := range getBases() {
			add, minus := subtract(s, bs.set), subtract(bs.set, s)
			if c := len(add) + len(minus) + 1; c < bestCost {
				best, bestCost = i, c
				plan.base, plan.compl, plan.add, plan.minus = bs, false, add, minus
			}
			nb := complement(bs.set)
			add, minus = subtract(s, nb), subtract(nb, s)
			if c := len(add) + len(minus) + 1; c < bestCost {
				best, bestCost = i, c
				plan.base, plan.compl, plan.add, plan.minus = bs, true, add, minus
			}
		}
	}
	switch {
	case best < 0:
		b.WriteByte('[')
		if negated {
			b.WriteByte('^')
			writeRanges(&b, complement(s))
		} else {
			writeRanges(&b, s)
		}
		b.WriteByte(']')
	case !plan.compl:
		// (B ∪ add) − minus
		b.WriteByte('[')
		b.WriteString(plan.base.syntax)
		writeRanges(&b, plan.add)
		if len(plan.minus) > 0 {
			b.WriteString("-[")
			writeRanges(&b, plan.minus)
			b.WriteByte(']')
		}
		b.WriteByte(']')
	case len(plan.add) == 0:
		// ¬B − minus = ¬(B ∪ minus)
		b.WriteString("[^")
		b.WriteString(plan.base.syntax)
		writeRanges(&b, plan.minus)
		b.WriteByte(']')
	default:
		// (¬B ∪ add) − minus = all − ((B ∪ minus) − add)
		b.WriteString(`[\x{0}-\x{10FFFF}-[`)
		b.WriteString(plan.base.syntax)
		writeRanges(&b, plan.minus)
		b.WriteString("-[")
		writeRanges(&b, plan.add)
		b.WriteString("]]]")
	}
	return b.String()
}

func writeRanges(b *strings.Builder, s runeSet) {
	for _, r := range s {
		writeChar(b, r.lo, true)
		if r.hi == r.lo {
			continue
		}
		if r.hi > r.lo+1 {
			b.WriteByte('-')
		}
		writeChar(b, r.hi, true)
	}
}
