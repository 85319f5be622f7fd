package pyre

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// Character classes are the place where Python's sre and regexp2 (a port of
// .NET's engine) disagree most: \w, \s, \b and case-insensitive matching are
// all defined over different Unicode properties. Rather than emit \w or \s
// and hope, the translator computes every class as an exact set of code
// points in Go, following sre's own algorithm (re/_compiler.py
// _optimize_charset and the *_IGNORE opcodes), and writes that set out in a
// form whose meaning in regexp2 is unambiguous: explicit \x{...} ranges, plus
// \p{L}/\p{N}/\p{Nd} (looked up in Go's unicode tables, exactly the tables
// the sets here are built from) to keep the classes short, since regexp2
// scans a class's ranges linearly.

const maxRune = unicode.MaxRune

// runeRange is an inclusive range of code points.
type runeRange struct{ lo, hi rune }

// runeSet is a set of code points: sorted, disjoint, non-adjacent ranges.
type runeSet []runeRange

// normalize sorts and merges rs into a runeSet. It reuses rs's storage.
func normalize(rs []runeRange) runeSet {
	if len(rs) == 0 {
		return nil
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].lo < rs[j].lo })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r.lo <= last.hi+1 {
			if r.hi > last.hi {
				last.hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return runeSet(out)
}

func setOf(runes ...rune) runeSet {
	rs := make([]runeRange, len(runes))
	for i, r := range runes {
		rs[i] = runeRange{r, r}
	}
	return normalize(rs)
}

func (s runeSet) contains(r rune) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].hi >= r })
	return i < len(s) && s[i].lo <= r
}

func (s runeSet) complement() runeSet {
	var out runeSet
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= maxRune {
		out = append(out, runeRange{next, maxRune})
	}
	return out
}

func union(sets ...runeSet) runeSet {
	var all []runeRange
	for _, s := range sets {
		all = append(all, s...)
	}
	return normalize(all)
}

func intersect(a, b runeSet) runeSet {
	var out runeSet
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i].lo, b[j].lo), min(a[i].hi, b[j].hi)
		if lo <= hi {
			out = append(out, runeRange{lo, hi})
		}
		if a[i].hi < b[j].hi {
			i++
		} else {
			j++
		}
	}
	return out
}

func subtract(a, b runeSet) runeSet { return intersect(a, b.complement()) }

func (s runeSet) equal(t runeSet) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}

func fromTables(tables ...*unicode.RangeTable) runeSet {
	var rs []runeRange
	for _, t := range tables {
		for _, r := range t.R16 {
			rs = appendStride(rs, rune(r.Lo), rune(r.Hi), rune(r.Stride))
		}
		for _, r := range t.R32 {
			rs = appendStride(rs, rune(r.Lo), rune(r.Hi), rune(r.Stride))
		}
	}
	return normalize(rs)
}

func appendStride(rs []runeRange, lo, hi, stride rune) []runeRange {
	if stride == 1 {
		return append(rs, runeRange{lo, hi})
	}
	for r := lo; r <= hi; r += stride {
		rs = append(rs, runeRange{r, r})
	}
	return rs
}

// Unicode data shared by all patterns, built once.
var uni = sync.OnceValue(func() *unicodeData {
	d := &unicodeData{
		letters: fromTables(unicode.L),
		numbers: fromTables(unicode.N),
		digits:  fromTables(unicode.Nd),
	}
	d.word = union(d.letters, d.numbers, setOf('_'))
	// CPython's Py_UNICODE_ISSPACE: bidirectional class WS, B or S, or
	// category Zs. Unlike .NET's \s (and Go's unicode.IsSpace) it includes
	// the information separators U+001C..U+001F.
	d.space = normalize([]runeRange{
		{'\t', '\r'}, {0x1c, ' '}, {0x85, 0x85}, {0xa0, 0xa0},
		{0x1680, 0x1680}, {0x2000, 0x200a}, {0x2028, 0x2029},
		{0x202f, 0x202f}, {0x205f, 0x205f}, {0x3000, 0x3000},
	})
	// Characters whose sre lowercase or uppercase differs from themselves;
	// only these need individual treatment under IGNORECASE.
	for _, cr := range unicode.CaseRanges {
		for r := rune(cr.Lo); r <= rune(cr.Hi); r++ {
			if unicode.ToLower(r) != r {
				d.lowerChanges = append(d.lowerChanges, r)
			}
			if unicode.ToUpper(r) != r {
				d.upperChanges = append(d.upperChanges, r)
			}
		}
	}
	for r := range specialUpper {
		d.upperChanges = append(d.upperChanges, r)
	}
	sort.Slice(d.upperChanges, func(i, j int) bool { return d.upperChanges[i] < d.upperChanges[j] })
	d.lowerChangesSet = setOf(d.lowerChanges...)
	d.upperChangesSet = setOf(d.upperChanges...)
	d.bases = []classBase{
		{`\p{L}`, d.letters},
		{`\p{N}`, d.numbers},
		{`\p{Nd}`, d.digits},
		{`\p{L}\p{N}`, union(d.letters, d.numbers)},
		{`\p{L}\p{Nd}`, union(d.letters, d.digits)},
		{`\p{L}\p{Nl}\p{No}`, union(d.letters, fromTables(unicode.Nl, unicode.No))},
	}
	return d
})

type unicodeData struct {
	letters, numbers, digits, word, space runeSet

	lowerChanges, upperChanges       []rune
	lowerChangesSet, upperChangesSet runeSet

	bases []classBase
}

// classBase is a union of Unicode categories regexp2 can test with a binary
// search (unicode.Is), together with its exact extent.
type classBase struct {
	syntax string
	set    runeSet
}

var (
	asciiWord  = normalize([]runeRange{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}})
	asciiDigit = runeSet{{'0', '9'}}
	// sre's SRE_IS_SPACE: " \t\n\r\v\f".
	asciiSpace = normalize([]runeRange{{'\t', '\r'}, {' ', ' '}})
)

// sreLower is sre_lower_unicode (CPython's _PyUnicode_ToLowercase): the
// simple lowercase mapping. For U+0130, whose full lowercase is two code
// points, it is the first of them, which equals the simple mapping.
func sreLower(r rune) rune { return unicode.ToLower(r) }

// sreUpper is sre_upper_unicode (_PyUnicode_ToUppercase): the first code
// point of the full uppercase mapping, so "ß" → "S", not the simple "ß".
func sreUpper(r rune) rune {
	if s, ok := specialUpper[r]; ok {
		for _, u := range s {
			return u
		}
	}
	return unicode.ToUpper(r)
}

// sreIsCased is _sre.unicode_iscased.
func sreIsCased(r rune) bool { return r != sreLower(r) || r != sreUpper(r) }

func asciiLower(r rune) rune {
	if 'A' <= r && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

func asciiIsCased(r rune) bool { return r < 128 && ('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z') }

// category is one of sre's CATEGORY_* codes that the parser can produce.
type category uint8

const (
	catDigit category = iota
	catNotDigit
	catSpace
	catNotSpace
	catWord
	catNotWord
)

func (c category) set(ascii bool) runeSet {
	var s runeSet
	switch c &^ 1 {
	case catDigit:
		s = uni().digits
		if ascii {
			s = asciiDigit
		}
	case catSpace:
		s = uni().space
		if ascii {
			s = asciiSpace
		}
	case catWord:
		s = uni().word
		if ascii {
			s = asciiWord
		}
	}
	if c&1 != 0 {
		return s.complement()
	}
	return s
}

// wordSet is the set \b and \B test on either side of a position.
func wordSet(flags flagSet) runeSet {
	return catWord.set(flags&flagASCII != 0)
}

// preimageLower returns {ch : lower(ch) ∈ t}. Only characters whose
// lowercase differs from themselves can move in or out of t.
func preimageLower(t runeSet, ascii bool) runeSet {
	if ascii {
		out := subtract(t, runeSet{{'A', 'Z'}})
		var extra []rune
		for r := rune('A'); r <= 'Z'; r++ {
			if t.contains(asciiLower(r)) {
				extra = append(extra, r)
			}
		}
		return union(out, setOf(extra...))
	}
	d := uni()
	out := subtract(t, d.lowerChangesSet)
	var extra []rune
	for _, r := range d.lowerChanges {
		if t.contains(sreLower(r)) {
			extra = append(extra, r)
		}
	}
	return union(out, setOf(extra...))
}

// literalSet is the set of characters a literal c matches, following
// _compiler._compile's LITERAL handling.
func literalSet(c rune, flags flagSet) runeSet {
	if flags&flagIgnoreCase == 0 {
		return setOf(c)
	}
	ascii := flags&flagASCII != 0
	if ascii {
		if !asciiIsCased(c) {
			return setOf(c)
		}
		return preimageLower(setOf(asciiLower(c)), true)
	}
	if !sreIsCased(c) {
		return setOf(c)
	}
	lo := sreLower(c)
	targets := append([]rune{lo}, extraCases[lo]...)
	return preimageLower(setOf(targets...), false)
}

// classSet is the set of characters a Python character class matches,
// following _compiler._optimize_charset and the IN / IN_IGNORE /
// IN_UNI_IGNORE opcodes, including their corner cases (a non-BMP literal
// inside a case-insensitive class is compared with the lowercased input
// as is; ranges reaching past the BMP also match through the uppercase).
func classSet(c *class, flags flagSet) runeSet {
	ascii := flags&flagASCII != 0
	if flags&flagIgnoreCase == 0 {
		var parts []runeSet
		for _, it := range c.items {
			parts = append(parts, it.plainSet(ascii))
		}
		u := union(parts...)
		if c.negate {
			return u.complement()
		}
		return u
	}

	lower, isCased := sreLower, sreIsCased
	var fixes map[rune][]rune = extraCases
	if ascii {
		lower, isCased, fixes = asciiLower, asciiIsCased, nil
	}
	const charmapSize = 0x10000 // sre's charmap covers the BMP
	var charmap []rune
	var tail []runeSet
	hasCased := false
	addLowered := func(l rune) {
		charmap = append(charmap, l)
		for _, k := range fixes[l] {
			charmap = append(charmap, k)
		}
	}
	for _, it := range c.items {
		switch it.kind {
		case itemLiteral:
			if l := lower(it.lo); l < charmapSize {
				addLowered(l)
				if isCased(it.lo) {
					hasCased = true
				}
			} else {
				// IndexError in _optimize_charset: the literal goes to the
				// tail unchanged and is compared with the lowercased input.
				hasCased = true
				tail = append(tail, setOf(it.lo))
			}
		case itemRange:
			overflow := false
			for r := it.lo; r <= it.hi; r++ {
				l := lower(r)
				if l >= charmapSize {
					overflow = true
					break
				}
				addLowered(l)
			}
			if overflow {
				hasCased = true
				tail = append(tail, rangeUniIgnore(it.lo, it.hi))
				continue
			}
			if !hasCased {
				for r := it.lo; r <= it.hi; r++ {
					if isCased(r) {
						hasCased = true
						break
					}
				}
			}
		case itemCategory:
			tail = append(tail, it.cat.set(ascii))
		}
	}
	t := union(append(tail, setOf(charmap...))...)
	if c.negate {
		t = t.complement()
	}
	if !hasCased {
		return t
	}
	return preimageLower(t, ascii)
}

// rangeUniIgnore is the set of (already lowercased) characters that
// RANGE_UNI_IGNORE lo..hi accepts: in the range, or uppercasing into it.
func rangeUniIgnore(lo, hi rune) runeSet {
	in := runeSet{{lo, hi}}
	var extra []rune
	for _, r := range uni().upperChanges {
		if u := sreUpper(r); lo <= u && u <= hi {
			extra = append(extra, r)
		}
	}
	return union(in, setOf(extra...))
}

func (it classItem) plainSet(ascii bool) runeSet {
	switch it.kind {
	case itemCategory:
		return it.cat.set(ascii)
	default:
		return runeSet{{it.lo, it.hi}}
	}
}

// classSyntax writes s as a single regexp2 character class. It picks, among
// a few shapes, the one with the fewest explicit ranges, because regexp2
// tests a class's ranges one by one while a \p{..} category costs a binary
// search:
//
//	[R]                   s is R
//	[^R]                  s is the complement of R
//	[A\p{..}-[R]]         s is (base ∪ A) \ R
//	[^A\p{..}]            s is the complement of (base ∪ A)
//	[U-[\p{..}-[A]]]      s is U \ (base \ A), with U = s ∪ base
//
// Every shape denotes exactly s: A and R are computed from s, not guessed.
func classSyntax(s runeSet) string {
	if len(s) == 0 {
		return `[^\x{0}-\x{10FFFF}]`
	}
	comp := s.complement()
	best, bestCost := "", -1
	try := func(cost int, build func() string) {
		if bestCost < 0 || cost < bestCost {
			best, bestCost = build(), cost
		}
	}
	try(len(s), func() string { return "[" + rangesSyntax(s) + "]" })
	if len(comp) > 0 {
		try(len(comp)+1, func() string { return "[^" + rangesSyntax(comp) + "]" })
	}
	for _, b := range uni().bases {
		add, rem := subtract(s, b.set), subtract(b.set, s)
		try(len(add)+len(rem)+1, func() string {
			out := "[" + rangesSyntax(add) + b.syntax
			if len(rem) > 0 {
				out += "-[" + rangesSyntax(rem) + "]"
			}
			return out + "]"
		})
		if len(intersect(s, b.set)) == 0 {
			// s = ¬(base ∪ add) with add = ¬base \ s.
			add := subtract(b.set.complement(), s)
			try(len(add)+1, func() string { return "[^" + rangesSyntax(add) + b.syntax + "]" })
		}
		// s = U \ (base \ A) with A = s ∩ base and U = s ∪ base; this is
		// the short one when s is nearly the complement of base (\W).
		a := intersect(s, b.set)
		u := union(s, b.set)
		try(len(u)+len(a)+2, func() string {
			inner := b.syntax
			if len(a) > 0 {
				inner += "-[" + rangesSyntax(a) + "]"
			}
			return "[" + rangesSyntax(u) + "-[" + inner + "]]"
		})
	}
	return best
}

func rangesSyntax(s runeSet) string {
	var b strings.Builder
	for _, r := range s {
		writeClassRune(&b, r.lo)
		if r.hi != r.lo {
			if r.hi > r.lo+1 {
				b.WriteByte('-')
			}
			writeClassRune(&b, r.hi)
		}
	}
	return b.String()
}

func writeClassRune(b *strings.Builder, r rune) {
	if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
		b.WriteRune(r)
		return
	}
	fmt.Fprintf(b, `\x{%X}`, r)
}
