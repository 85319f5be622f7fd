package pyre

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dlclark/regexp2"
)

// Regexp is a compiled Python regular expression. It is safe for concurrent
// use by multiple goroutines.
type Regexp struct {
	pattern    string
	groups     int
	groupIndex map[string]int

	// re is the translated pattern. nonEmpty is the same pattern followed by
	// (?!\G): when run from position p it only accepts matches that do not
	// end at p, the search Python makes after an empty match (see match).
	re, nonEmpty *regexp2.Regexp
	expr         string
}

type cacheEntry struct {
	re  *Regexp
	err error
}

// cache holds compiled patterns, errors included, keyed by pattern text.
// lm-eval applies a handful of patterns to every response of every sample,
// so compiling once per pattern is what keeps the per-sample cost small.
// Some patterns are built per document, though (multi_choice_regex joins
// the escaped answer choices), so the cache is bounded: when it grows past
// maxCached entries it is emptied, like CPython's re cache drops entries,
// and the few hot patterns are compiled again on their next use.
var (
	cache       sync.Map // string -> cacheEntry
	cacheSize   atomic.Int64
	maxCached   int64        = 2048
	cacheClears atomic.Int64 // for tests
)

// Compile parses a Python re pattern (str syntax, flags only inline, as
// lm-eval's re.compile(pattern) and re.sub(pattern, ...) receive it) and
// returns a Regexp matching exactly what Python 3.11's re would match.
// Compiled patterns are cached; the Regexp is safe for concurrent use.
//
// The error is an *Error: either Python rejects the pattern too, or the
// pattern uses one of the few constructs pyre cannot reproduce faithfully
// (Error.Unsupported): \N{name} escapes, the (?t) flag, a back-reference
// under both (?a) and (?i), a capturing group repeated inside a lookbehind,
// a conditional (?(N)...) inside group N, and repeat counts above
// 2147483646.
func Compile(pattern string) (*Regexp, error) {
	if v, ok := cache.Load(pattern); ok {
		e := v.(cacheEntry)
		return e.re, e.err
	}
	re, err := compile(pattern)
	v, loaded := cache.LoadOrStore(pattern, cacheEntry{re, err})
	if !loaded && cacheSize.Add(1) > maxCached {
		cache.Clear()
		cacheSize.Store(0)
		cacheClears.Add(1)
	}
	e := v.(cacheEntry)
	return e.re, e.err
}

// MustCompile is like Compile but panics on error. It is meant for
// package-level variables holding fixed patterns.
func MustCompile(pattern string) *Regexp {
	re, err := Compile(pattern)
	if err != nil {
		panic(err)
	}
	return re
}

func compile(pattern string) (*Regexp, error) {
	p, err := parse(pattern)
	if err != nil {
		return nil, err
	}
	expr, err := translate(pattern, p)
	if err != nil {
		return nil, err
	}
	re, err := regexp2.Compile(expr, regexp2.None)
	if err != nil {
		// A translation regexp2 rejects is a bug in pyre, not in the
		// pattern; say so rather than blame the caller's pattern.
		return nil, fmt.Errorf("pyre: internal error translating %q to %q: %w", pattern, expr, err)
	}
	nonEmpty, err := regexp2.Compile("(?:"+expr+`)(?!\G)`, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("pyre: internal error translating %q to %q: %w", pattern, expr, err)
	}
	return &Regexp{
		pattern:    pattern,
		groups:     p.groups,
		groupIndex: p.groupIndex,
		re:         re,
		nonEmpty:   nonEmpty,
		expr:       expr,
	}, nil
}

// String returns the Python pattern the Regexp was compiled from.
func (re *Regexp) String() string { return re.pattern }

// NumGroups returns the number of capturing groups, Python's pattern.groups.
func (re *Regexp) NumGroups() int { return re.groups }

// GroupIndex returns the group number of a named group, Python's
// pattern.groupindex[name], and whether the name exists.
func (re *Regexp) GroupIndex(name string) (int, bool) {
	i, ok := re.groupIndex[name]
	return i, ok
}

// text is an input string decoded once into code points, which is what
// Python positions count and what regexp2 matches on. offs[i] is the byte
// offset of code point i in s (offs[len(runes)] == len(s)), so that every
// returned string is a slice of the input: invalid UTF-8, which a Python
// str cannot hold, is matched as U+FFFD one byte at a time but returned
// unchanged.
type text struct {
	s     string
	runes []rune
	offs  []int
}

func newText(s string) *text {
	t := &text{s: s, runes: make([]rune, 0, len(s)), offs: make([]int, 0, len(s)+1)}
	for i, r := range s {
		t.runes = append(t.runes, r)
		t.offs = append(t.offs, i)
	}
	t.offs = append(t.offs, len(s))
	return t
}

func (t *text) slice(start, end int) string { return t.s[t.offs[start]:t.offs[end]] }

// span is a match or group position in code points; start < 0 means the
// group did not participate in the match.
type span struct{ start, end int }

// match runs one search from code point pos. With mustAdvance, a match
// starting at pos must not be empty: after an empty match, Python 3.7+'s
// findall, finditer and sub search on from the same position but reject
// an empty match there, taking instead the next alternative in
// backtracking order that is not empty (findall(r"a*|b", "baaa") finds "",
// then "b" at 0), and only if there is none does the search move on. The
// (?!\G) suffix of nonEmpty does exactly that: \G is the position the
// search started from, so the suffix fails only for a match ending at pos,
// which (matches never ending before they start) is an empty match at pos.
//
// The only error regexp2 returns is a MatchTimeout, which pyre never sets
// on the Regexps it hands out; the fuzz test sets one to cut off
// catastrophic backtracking.
func (re *Regexp) match(t *text, pos int, mustAdvance bool) ([]span, error) {
	prog := re.re
	if mustAdvance {
		prog = re.nonEmpty
	}
	m, err := prog.FindRunesMatchStartingAt(t.runes, pos)
	if err != nil || m == nil {
		return nil, err
	}
	spans := make([]span, re.groups+1)
	spans[0] = span{m.Index, m.Index + m.Length}
	for i := 1; i <= re.groups; i++ {
		g := m.GroupByNumber(i)
		if g == nil || len(g.Captures) == 0 {
			spans[i] = span{-1, -1}
			continue
		}
		spans[i] = span{g.Index, g.Index + g.Length}
	}
	return spans, nil
}

// each calls fn for every match Python's findall/finditer/sub would visit:
// non-overlapping, left to right, an empty match allowed anywhere, including
// right after a previous match, but never twice at the same position.
func (re *Regexp) each(t *text, fn func([]span)) error {
	pos, mustAdvance := 0, false
	for pos <= len(t.runes) {
		spans, err := re.match(t, pos, mustAdvance)
		if err != nil || spans == nil {
			return err
		}
		fn(spans)
		mustAdvance = spans[0].start == spans[0].end
		pos = spans[0].end
	}
	return nil
}

// must turns the impossible matching error into a panic.
func (re *Regexp) must(err error) {
	if err != nil {
		panic(fmt.Sprintf("pyre: matching %q: %v", re.pattern, err))
	}
}

func (t *text) group(sp span) string {
	if sp.start < 0 {
		return ""
	}
	return t.slice(sp.start, sp.end)
}

// FindAll is Python's re.findall(pattern, s): one element per match, left
// to right. For a pattern without groups an element is a one-element slice
// holding the whole match; otherwise it holds groups 1..NumGroups, with ""
// for a group that did not participate (findall's default). Python returns
// a plain string per match when there is exactly one group; here that is
// element[0].
func (re *Regexp) FindAll(s string) [][]string {
	out, err := re.findAll(s)
	re.must(err)
	return out
}

func (re *Regexp) findAll(s string) ([][]string, error) {
	t := newText(s)
	var out [][]string
	err := re.each(t, func(spans []span) {
		if re.groups == 0 {
			out = append(out, []string{t.group(spans[0])})
			return
		}
		row := make([]string, re.groups)
		for i := range row {
			row[i] = t.group(spans[i+1])
		}
		out = append(out, row)
	})
	return out, err
}

// Search is Python's re.search(pattern, s): the first match, with
// groups[0] the whole match and groups[i] group i ("" if it did not
// participate; Python would give None).
func (re *Regexp) Search(s string) (groups []string, ok bool) {
	t := newText(s)
	spans, err := re.match(t, 0, false)
	re.must(err)
	if spans == nil {
		return nil, false
	}
	groups = make([]string, len(spans))
	for i, sp := range spans {
		groups[i] = t.group(sp)
	}
	return groups, true
}

// Sub is Python's re.sub(pattern, "", s): every match removed, empty ones
// included (which remove nothing but, since Python 3.7, are also found
// right after a previous match). lm-eval's regexes_to_ignore are applied
// this way; replacement templates are not supported.
func (re *Regexp) Sub(s string) string {
	out, err := re.sub(s)
	re.must(err)
	return out
}

func (re *Regexp) sub(s string) (string, error) {
	t := newText(s)
	var b strings.Builder
	last := 0 // code point index of the end of the previous match
	err := re.each(t, func(spans []span) {
		b.WriteString(t.slice(last, spans[0].start))
		last = spans[0].end
	})
	b.WriteString(t.slice(last, len(t.runes)))
	return b.String(), err
}
