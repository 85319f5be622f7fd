package pyre

import (
	"sort"
	"sync"
	"unicode"
)

// runeRange is an inclusive range of code points.
type runeRange struct{ lo, hi rune }

// runeSet is a set of code points as sorted, disjoint, non-adjacent
// ranges. Every character class is computed as an exact runeSet before it
// is written out for regexp2.
type runeSet []runeRange

// normalize sorts and merges arbitrary ranges into a runeSet.
func normalize(rs []runeRange) runeSet {
	if len(rs) == 0 {
		return nil
	}
	s := append([]runeRange(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].lo < s[j].lo })
	out := s[:1]
	for _, r := range s[1:] {
		last := &out[len(out)-1]
		if r.lo <= last.hi+1 {
			if r.hi > last.hi {
				last.hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func setOf(rs ...rune) runeSet {
	out := make([]runeRange, len(rs))
	for i, r := range rs {
		out[i] = runeRange{r, r}
	}
	return normalize(out)
}

func union(a, b runeSet) runeSet {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	return normalize(append(append([]runeRange(nil), a...), b...))
}

func complement(a runeSet) runeSet {
	var out runeSet
	next := rune(0)
	for _, r := range a {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, runeRange{next, unicode.MaxRune})
	}
	return out
}

func intersect(a, b runeSet) runeSet {
	var out runeSet
	for i, j := 0, 0; i < len(a) && j < len(b); {
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

func subtract(a, b runeSet) runeSet { return intersect(a, complement(b)) }

func (s runeSet) contains(r rune) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].hi >= r })
	return i < len(s) && s[i].lo <= r
}

// fromTables is the union of Unicode tables as a runeSet.
func fromTables(tabs ...*unicode.RangeTable) runeSet {
	var rs []runeRange
	for _, t := range tabs {
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

// The sets behind Python's category escapes on str patterns, from Go's
// Unicode tables (the same ones regexp2's \p{..} uses):
//
//   - \w is str.isalnum() plus "_", which is exactly categories L and N
//     plus "_" (.NET's \w has Mn and Pc instead of No and Nl);
//   - \d is category Nd;
//   - \s is str.isspace() (IsSpace), which has U+001C..U+001F;
//
// and under ASCII [0-9A-Za-z_], [0-9] and [\t-\r ].
var (
	catOnce                         sync.Once
	uniWord, uniDigit, uniSpace     runeSet
	asciiWord, asciiDigit, asciiSpc runeSet
	letters, numbers                runeSet
)

func initCats() {
	catOnce.Do(func() {
		letters = fromTables(unicode.L)
		numbers = fromTables(unicode.N)
		uniWord = union(union(letters, numbers), setOf('_'))
		uniDigit = fromTables(unicode.Nd)
		var sp []rune
		for r := rune(0); r <= 0x3000; r++ {
			if IsSpace(r) {
				sp = append(sp, r)
			}
		}
		uniSpace = setOf(sp...)
		asciiWord = normalize([]runeRange{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}})
		asciiDigit = runeSet{{'0', '9'}}
		asciiSpc = runeSet{{'\t', '\r'}, {' ', ' '}}
	})
}

// wordSet is the set \w and \b use under the given flags.
func wordSet(fl flags) runeSet {
	initCats()
	if fl&flagA != 0 {
		return asciiWord
	}
	return uniWord
}

// categorySet is the set of a category escape (d, D, s, S, w, W).
func categorySet(cat byte, fl flags) runeSet {
	initCats()
	ascii := fl&flagA != 0
	var s runeSet
	switch cat | 0x20 {
	case 'd':
		s = uniDigit
		if ascii {
			s = asciiDigit
		}
	case 's':
		s = uniSpace
		if ascii {
			s = asciiSpc
		}
	case 'w':
		s = uniWord
		if ascii {
			s = asciiWord
		}
	}
	if cat < 'a' {
		return complement(s)
	}
	return s
}

// charSet is the set of characters a literal character matches.
func charSet(r rune, fl flags) runeSet {
	if fl&flagI == 0 {
		return runeSet{{r, r}}
	}
	if fl&flagA != 0 {
		return setOf(asciiOrbit(r)...)
	}
	return setOf(foldOrbit(r)...)
}

// classSet is the set of characters a class matches under the flags, as
// measured on CPython 3.11 (see casefold.go for IGNORECASE).
func classSet(c *class, fl flags) runeSet {
	var s runeSet
	ignore := fl&flagI != 0
	// A class made of one character (possibly repeated) matches like that
	// character alone.
	single := ignore && len(c.items) > 0
	for _, it := range c.items {
		if !it.lit || it.lo != c.items[0].lo || !c.items[0].lit {
			single = false
		}
	}
	if single {
		s = charSet(c.items[0].lo, fl)
	} else {
		var plain []runeRange
		for _, it := range c.items {
			switch {
			case it.cat != 0:
				s = union(s, categorySet(it.cat, fl))
			case !ignore:
				plain = append(plain, runeRange{it.lo, it.hi})
			case it.lit:
				s = union(s, classCharFold(it.lo, fl))
			default:
				s = union(s, rangeFold(it.lo, it.hi, fl))
			}
		}
		s = union(s, normalize(plain))
	}
	if c.neg {
		return complement(s)
	}
	return s
}
