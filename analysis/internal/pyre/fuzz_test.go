package pyre

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzFindAll checks invariants that need no Python: compiling never
// fails with anything but an *Error (a regexp2 rejection of a translation
// would be a pyre bug), matching never panics, matches are ordered and
// non-overlapping with at most one empty match per position, every group
// is a piece of the input, and FindAll, Search and Sub agree with the
// match positions and with each other.
//
// CI runs it briefly: go test -run=^$ -fuzz=FuzzFindAll -fuzztime=10s
func FuzzFindAll(f *testing.F) {
	texts := append([]string{}, realisticInputs...)
	fixtures := fixtureTexts(f)
	if len(fixtures) > 40 {
		fixtures = fixtures[:40]
	}
	texts = append(texts, fixtures...)
	patterns := append(append([]string{}, lmEvalPatterns...), featurePatterns...)
	for i, p := range patterns {
		f.Add(p, texts[i%len(texts)])
	}
	for i, s := range texts {
		f.Add(lmEvalPatterns[i%len(lmEvalPatterns)], s)
	}

	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 200 || len(s) > 4000 {
			return
		}
		// Uncached, so fuzzing does not grow the package cache, and with a
		// timeout, because patterns that backtrack exponentially do so in
		// CPython as well and are not bugs.
		re, err := compile(pattern)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Compile(%q): %v", pattern, err)
			}
			return
		}
		re.re.MatchTimeout = 200 * time.Millisecond
		re.nonEmpty.MatchTimeout = 200 * time.Millisecond

		txt := newText(s)
		var matches [][]span
		if err := re.each(txt, func(sp []span) { matches = append(matches, sp) }); err != nil {
			return // timed out
		}
		rows, err := re.findAll(s)
		if err != nil {
			return
		}
		if len(rows) != len(matches) {
			t.Fatalf("%q on %q: FindAll has %d rows for %d matches", pattern, s, len(rows), len(matches))
		}

		n := len(txt.runes)
		prevEnd, prevEmpty := 0, false
		for i, m := range matches {
			start, end := m[0].start, m[0].end
			if start < prevEnd || end < start || end > n {
				t.Fatalf("%q on %q: match %d at [%d,%d) after a match ending at %d", pattern, s, i, start, end, prevEnd)
			}
			if prevEmpty && start == end && start == prevEnd {
				t.Fatalf("%q on %q: two empty matches at %d", pattern, s, start)
			}
			for g, sp := range m[1:] {
				if sp.start == -1 && sp.end == -1 {
					continue
				}
				if sp.start < 0 || sp.end < sp.start || sp.end > n {
					t.Fatalf("%q on %q: group %d of match %d at [%d,%d)", pattern, s, g+1, i, sp.start, sp.end)
				}
			}
			for g, str := range rows[i] {
				if !strings.Contains(s, str) {
					t.Fatalf("%q on %q: group %d of match %d, %q, is not in the input", pattern, s, g, i, str)
				}
			}
			want := txt.group(m[0])
			if re.groups == 1 {
				want = txt.group(m[1])
			}
			if re.groups <= 1 && rows[i][0] != want {
				t.Fatalf("%q on %q: FindAll row %d is %q, the match says %q", pattern, s, i, rows[i][0], want)
			}
			prevEnd, prevEmpty = end, start == end
		}

		// Sub(s) removes exactly the matches.
		var kept strings.Builder
		last := 0
		for _, m := range matches {
			kept.WriteString(txt.slice(last, m[0].start))
			last = m[0].end
		}
		kept.WriteString(txt.slice(last, n))
		if got, err := re.sub(s); err == nil && got != kept.String() {
			t.Fatalf("%q on %q: Sub = %q, want %q", pattern, s, got, kept.String())
		}

		// Search finds the first match.
		first, err := re.match(txt, 0, false)
		if err == nil && (first == nil) != (len(matches) == 0) {
			t.Fatalf("%q on %q: search and findall disagree on whether there is a match", pattern, s)
		}
		if err == nil && first != nil && first[0] != matches[0][0] {
			t.Fatalf("%q on %q: search found %v, findall %v", pattern, s, first[0], matches[0][0])
		}

		// Wrapping a group-free pattern in one group changes nothing but
		// what FindAll reports, which becomes group 1: the whole match.
		// (A conditional could start referring to the new group.)
		if re.groups == 0 && !strings.Contains(pattern, "(?(") {
			wrapped, err := compile("(" + pattern + ")")
			if err != nil {
				return // e.g. global flags are no longer at the start
			}
			wrapped.re.MatchTimeout = 200 * time.Millisecond
			wrapped.nonEmpty.MatchTimeout = 200 * time.Millisecond
			wrows, err := wrapped.findAll(s)
			if err == nil && !equalRows(wrows, rows) {
				t.Fatalf("%q on %q: FindAll %q, wrapped in a group %q", pattern, s, rows, wrows)
			}
		}
	})
}
