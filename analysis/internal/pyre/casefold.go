package pyre

import (
	"sort"
	"sync"
	"unicode"
)

// IGNORECASE, as measured on CPython 3.11 over all code points (see
// casefold_test.go, which regenerates casetables.go):
//
//   - A literal character c, alone or as the only member of a class (once
//     or repeated), matches its case-folding orbit: the characters Go's
//     unicode.SimpleFold cycles through from c, with the few orbits Python
//     merges further (foldExtra: I i İ ı, ΐ ΐ, ΰ ΰ, ﬅ ﬆ). Under ASCII only
//     the ASCII letters fold, each with its other case.
//   - Category escapes (\w, \d, \s and their negations) are not folded.
//   - In a class of several items, a character up to U+FFFF matches its
//     orbit, but one above (the Deseret, Osage, ... letters) only the
//     characters whose simple lowercase it is: its orbit if it is
//     lowercase, nothing if it is uppercase (under ASCII: itself).
//   - A range ending at or below U+FFFF matches the orbits of its
//     characters (ASCII orbits under ASCII). A range ending above U+FFFF
//     is tested character by character: see rangeFold.
//   - A negated class is the complement of the class.

var (
	foldOnce  sync.Once
	foldRunes []rune // every rune whose orbit is more than itself, sorted
)

// foldOrbit is the set of characters c matches under IGNORECASE
// (Unicode), c included.
func foldOrbit(c rune) []rune {
	if o, ok := foldExtra[c]; ok {
		return o
	}
	out := []rune{c}
	for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
		out = append(out, f)
	}
	return out
}

func asciiOrbit(c rune) []rune {
	switch {
	case 'a' <= c && c <= 'z':
		return []rune{c - 0x20, c}
	case 'A' <= c && c <= 'Z':
		return []rune{c, c + 0x20}
	}
	return []rune{c}
}

func initFold() {
	foldOnce.Do(func() {
		seen := map[rune]bool{}
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if unicode.SimpleFold(r) != r {
				seen[r] = true
			}
		}
		for r := range foldExtra {
			seen[r] = true
		}
		for r := range seen {
			foldRunes = append(foldRunes, r)
		}
		sort.Slice(foldRunes, func(i, j int) bool { return foldRunes[i] < foldRunes[j] })
	})
}

// closeOrbits adds to s the orbits of its members.
func closeOrbits(s runeSet) runeSet {
	initFold()
	var add []rune
	for _, r := range foldRunes {
		if s.contains(r) {
			add = append(add, foldOrbit(r)...)
		}
	}
	return union(s, setOf(add...))
}

func closeASCII(s runeSet) runeSet {
	var add []rune
	for c := rune('A'); c <= 'z'; c++ {
		if s.contains(c) {
			add = append(add, asciiOrbit(c)...)
		}
	}
	return union(s, setOf(add...))
}

// classCharFold is what character c matches as one of several items of a
// class under IGNORECASE.
func classCharFold(c rune, fl flags) runeSet {
	if fl&flagA != 0 {
		return setOf(asciiOrbit(c)...)
	}
	if c <= 0xffff {
		return setOf(foldOrbit(c)...)
	}
	var out []rune
	for _, x := range foldOrbit(c) {
		if unicode.ToLower(x) == c {
			out = append(out, x)
		}
	}
	return setOf(out...)
}

// rangeFold is what the range lo-hi matches under IGNORECASE.
//
// A range ending at or below U+FFFF matches the orbits of its members
// (ASCII orbits under ASCII). One ending above U+FFFF matches character by
// character instead: x matches if one of its probes lies in the range,
// where the probes are (measured on CPython 3.11 over all code points)
//
//   - Unicode: x's orbit and the first character of x's full uppercase
//     (so "ŉ", uppercased "ʼN", is in [\u02bc-\U00010000]);
//   - ASCII: x, x lowercased if it is an ASCII capital, and the first
//     character of that one's full uppercase (so "µ" is in
//     [\u039c-\U00010000] though it is not ASCII).
func rangeFold(lo, hi rune, fl flags) runeSet {
	r := runeSet{{lo, hi}}
	ascii := fl&flagA != 0
	if hi <= 0xffff {
		if ascii {
			return closeASCII(r)
		}
		return closeOrbits(r)
	}
	in := func(c rune) bool { return lo <= c && c <= hi }
	var add []rune
	for _, x := range caseRunes() {
		if in(x) {
			continue
		}
		var probes []rune
		if ascii {
			l := x
			if 'A' <= x && x <= 'Z' {
				l += 'a' - 'A'
			}
			probes = []rune{l, upper1(l)}
		} else {
			probes = append(foldOrbit(x), upper1(x))
		}
		for _, p := range probes {
			if in(p) {
				add = append(add, x)
				break
			}
		}
	}
	return union(r, setOf(add...))
}

// upper1 is the first character of r's full uppercase mapping.
func upper1(r rune) rune {
	if s, ok := specialUpper[r]; ok {
		for _, u := range s {
			return u
		}
	}
	return unicode.ToUpper(r)
}

var (
	caseOnce     sync.Once
	caseRuneList []rune
)

// caseRunes is every rune with an orbit or an uppercase other than itself:
// the only ones whose IGNORECASE probes can differ from themselves.
func caseRunes() []rune {
	caseOnce.Do(func() {
		initFold()
		seen := map[rune]bool{}
		for _, r := range foldRunes {
			seen[r] = true
		}
		for r := range specialUpper {
			seen[r] = true
		}
		for _, cr := range unicode.CaseRanges {
			for r := rune(cr.Lo); r <= rune(cr.Hi); r++ {
				if unicode.ToUpper(r) != r {
					seen[r] = true
				}
			}
		}
		for r := range seen {
			caseRuneList = append(caseRuneList, r)
		}
		sort.Slice(caseRuneList, func(i, j int) bool { return caseRuneList[i] < caseRuneList[j] })
	})
	return caseRuneList
}
