package pyre

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// These tests pin down behaviour with values taken from CPython 3.11; they
// need no interpreter. TestPythonDifferential checks far more cases against
// the interpreter itself.

func mustFindAll(t *testing.T, pattern, s string) [][]string {
	t.Helper()
	re, err := Compile(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return re.FindAll(s)
}

func rows(xs ...string) [][]string {
	out := make([][]string, len(xs))
	for i, x := range xs {
		out[i] = []string{x}
	}
	return out
}

func TestFindAllEmptyMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		want       [][]string
	}{
		// After the empty match at 0, "b" is still found at 0 (must_advance
		// rejects only empty matches there); Python < 3.7 gave ['', 'aaa', ''].
		{`a*|b`, "baaa", rows("", "b", "aaa", "")},
		{`x*`, "axb", rows("", "x", "", "")},
		{`\b`, "a b", rows("", "", "", "")},
		{`(?=(a|aa))`, "aaa", rows("a", "a", "a")},
		{``, "ab", rows("", "", "")},
		{`a*`, "", rows("")},
		{`\b`, "", nil},
		{`\B`, "", nil}, // sre's \B never matches in an empty string
	} {
		if got := mustFindAll(t, c.pattern, c.s); !reflect.DeepEqual(got, c.want) {
			t.Errorf("findall(%q, %q) = %q, want %q", c.pattern, c.s, got, c.want)
		}
	}
}

func TestFindAllGroups(t *testing.T) {
	const answer = "Janet has 16 eggs, eats 3 and bakes 4: 16 - 3 - 4 = 9. She sells 9 * $2 = $18.\n#### 18"
	got := mustFindAll(t, `(-?[$0-9.,]{2,})|(-?[0-9]+)`, answer)
	want := [][]string{{"16", ""}, {"", "3"}, {"", "4"}, {"16", ""}, {"", "3"}, {"", "4"}, {"9.", ""}, {"", "9"}, {"$2", ""}, {"$18.", ""}, {"18", ""}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flexible-extract: got %q, want %q", got, want)
	}
	if got := mustFindAll(t, `#### (\-?[0-9\.\,]+)`, answer); !reflect.DeepEqual(got, rows("18")) {
		t.Errorf("strict-match: got %q", got)
	}
	if got := mustFindAll(t, `(a)?(b)?`, "b"); !reflect.DeepEqual(got, [][]string{{"", "b"}, {"", ""}}) {
		t.Errorf("unmatched optional group: got %q", got)
	}
}

func TestNumGroups(t *testing.T) {
	for pattern, want := range map[string]int{
		`abc`: 0, `(a)`: 1, `(?:a)(b)`: 1, `(?P<x>a)(b)`: 2, `(?=(a))(?<=(b))`: 2,
		`((?<=The answer is )(.*)(?=.)|(?<=the answer is )(.*)(?=.)|(?<=The answer: )(.*)(?=.)|(?<=The final answer: )(.*)(?=.))`: 5,
	} {
		re, err := Compile(pattern)
		if err != nil {
			t.Fatal(err)
		}
		if re.NumGroups() != want {
			t.Errorf("NumGroups(%q) = %d, want %d", pattern, re.NumGroups(), want)
		}
	}
}

func TestNamedGroupsNumberedLeftToRight(t *testing.T) {
	// .NET numbers named groups after unnamed ones; Python does not.
	re := MustCompile(`(?P<first>a)(b)(?P<third>c)\3`)
	got, ok := re.Search("xabcc")
	if !ok || !reflect.DeepEqual(got, []string{"abcc", "a", "b", "c"}) {
		t.Errorf("Search = %q, %v", got, ok)
	}
	if i, ok := re.GroupIndex("third"); !ok || i != 3 {
		t.Errorf("GroupIndex(third) = %d, %v", i, ok)
	}
}

func TestSearch(t *testing.T) {
	re := MustCompile(`(a)|(b)`)
	if got, ok := re.Search("xb"); !ok || !reflect.DeepEqual(got, []string{"b", "", "b"}) {
		t.Errorf("Search = %q, %v", got, ok)
	}
	if got, ok := re.Search("xyz"); ok || got != nil {
		t.Errorf("Search without match = %q, %v", got, ok)
	}
}

func TestSub(t *testing.T) {
	for _, c := range []struct{ pattern, s, want string }{
		{`a*`, "baaa", "b"},
		{`x*`, "axb", "ab"},
		{`,`, "1,234,567", "1234567"},
		{`\$`, "$5.00", "5.00"},
		{`(?s).*#### `, "Step 1\nStep 2\n#### 42", "42"},
		{`\.$`, "end.\n", "end\n"},
		{`(\d+)`, "a1b22", "ab"},
		{`(a)|(b)`, "abc", "c"},
		{`\b`, "a b", "a b"},
	} {
		if got := MustCompile(c.pattern).Sub(c.s); got != c.want {
			t.Errorf("re.sub(%q, \"\", %q) = %q, want %q", c.pattern, c.s, got, c.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for pattern, unsupported := range map[string]bool{
		`(`: false, `a)`: false, `*a`: false, `a**`: false, `[z-a]`: false, `\p{L}`: false, `\z`: false,
		`(?<=a+)b`: false, `(?<n>a)`: false, `(?L)a`: false, `(?i`: false, `\1(a)`: false, `(a\1)`: false,
		`a{3,2}`: false, `(?P=nope)`: false, `(?(2)a)(b)`: false, `x{4294967295}`: false,
		`\N{DIGIT ONE}`: true, `(?t)a`: true, `(?ai)(a)\1`: true, `(?<=(a){2})b`: true, `a{2147483647}`: true,
	} {
		_, err := Compile(pattern)
		var perr *Error
		if !errors.As(err, &perr) {
			t.Errorf("Compile(%q) = %v, want an *Error", pattern, err)
			continue
		}
		if perr.Unsupported != unsupported {
			t.Errorf("Compile(%q): Unsupported = %v, want %v (%v)", pattern, perr.Unsupported, unsupported, err)
		}
		if !strings.Contains(err.Error(), strconv.Quote(pattern)) {
			t.Errorf("error %q does not name the pattern", err)
		}
	}
}

func TestCompileCaches(t *testing.T) {
	// Compile twice first, so that the second pair of calls cannot be the
	// one that overflows and empties the cache.
	Compile(`(\d+)`)
	Compile(`(`)
	clears := cacheClears.Load()
	a, err := Compile(`(\d+)`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Compile(`(\d+)`)
	_, err1 := Compile(`(`)
	_, err2 := Compile(`(`)
	if cacheClears.Load() != clears {
		t.Skip("cache emptied concurrently")
	}
	if a != b {
		t.Error("Compile returned a different *Regexp for the same pattern")
	}
	if err1 == nil || err1 != err2 {
		t.Errorf("errors not cached: %v, %v", err1, err2)
	}
}

func TestCacheIsBounded(t *testing.T) {
	before := cacheClears.Load()
	for i := int64(0); i <= maxCached; i++ {
		if _, err := Compile(Escape(fmt.Sprintf("choice %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if cacheClears.Load() == before {
		t.Errorf("%d distinct patterns did not empty the cache", maxCached+1)
	}
	if n := cacheSize.Load(); n > maxCached {
		t.Errorf("cache holds %d entries", n)
	}
}

func TestInvalidUTF8PassesThrough(t *testing.T) {
	s := "a\xffb\xfe"
	if got := mustFindAll(t, `.`, s); !reflect.DeepEqual(got, rows("a", "\xff", "b", "\xfe")) {
		t.Errorf("findall = %q", got)
	}
	if got := MustCompile(`b`).Sub(s); got != "a\xff\xfe" {
		t.Errorf("sub = %q", got)
	}
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "",
		"a.b":                 `a\.b`,
		"$5.00 (A)":           `\$5\.00\ \(A\)`,
		"!\"%',/:;<=>@_`é":    "!\"%',/:;<=>@_`é",
		"()[]{}?*+-|^$\\.&~#": `\(\)\[\]\{\}\?\*\+\-\|\^\$\\\.\&\~\#`,
		"\t\n\r\v\f":          "\\\t\\\n\\\r\\\v\\\f",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStrHelpers(t *testing.T) {
	for _, c := range []struct{ fn, in, want string }{
		{"strip", "\x1c a \u3000", "a"},
		{"strip", "\u200ba\ufeff", "\u200ba\ufeff"},
		{"strip", "\u0085\u00a0 42 \u2028", "42"},
		{"lower", "İ", "i\u0307"},
		{"lower", "ΟΔΟΣ ΣΑΣ", "οδος σας"},
		{"lower", "Σ", "σ"},
		{"lower", "AΣ.", "aς."},
		{"lower", "A'Σ'", "a'ς'"},
		{"lower", "AΣb", "aσb"},
		{"lower", "ABC\xff", "abc\xff"},
		{"upper", "ß", "SS"},
		{"upper", "ﬁ", "FI"},
		{"upper", "ŉ", "ʼN"},
		{"upper", "ᾳ", "ΑΙ"},
		{"upper", "abc\xff", "ABC\xff"},
	} {
		var got string
		switch c.fn {
		case "strip":
			got = Strip(c.in)
		case "lower":
			got = Lower(c.in)
		case "upper":
			got = Upper(c.in)
		}
		if got != c.want {
			t.Errorf("%s(%q) = %q, want %q", c.fn, c.in, got, c.want)
		}
	}
	for _, r := range []rune{'\t', '\x1c', '\x1f', ' ', '\u0085', '\u00a0', '\u1680', '\u2000', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000'} {
		if !IsSpace(r) {
			t.Errorf("IsSpace(%U) = false", r)
		}
	}
	for _, r := range []rune{'a', '\u200b', '\ufeff', '\u180e', '\x1b'} {
		if IsSpace(r) {
			t.Errorf("IsSpace(%U) = true", r)
		}
	}
}

func TestUnicodeClasses(t *testing.T) {
	// Python's \w is L, N and "_" (not .NET's Mn or Pc); \s includes
	// U+001C..U+001F; \b follows \w.
	for _, c := range []struct {
		pattern, s string
		want       [][]string
	}{
		{`\w+`, "คำตอบคือ ๓ e\u0301 a‿b ½²", rows("คำตอบค", "อ", "๓", "e", "a", "b", "½²")},
		{`\s+`, "a\x1cb", rows("\x1c")},
		{`\b\w`, "x\u0301y", rows("x", "y")},
		{`\d+`, "٣٤ ١٢ ²", rows("٣٤", "١٢")},
		{`(?a)\w+`, "naïve", rows("na", "ve")},
		{`(?i)s+`, "sSſ", rows("sSſ")},
		{`(?i)k`, "kKK", rows("k", "K", "K")},
	} {
		if got := mustFindAll(t, c.pattern, c.s); !reflect.DeepEqual(got, c.want) {
			t.Errorf("findall(%q, %q) = %q, want %q", c.pattern, c.s, got, c.want)
		}
	}
}

func TestEveryASCIICharacterIsLiteral(t *testing.T) {
	// Every character, escaped as re.escape does or put in a class, must
	// reach regexp2 as that literal character, whatever follows it (.NET
	// reads \<1> and \'1' as back-references, for one).
	for r := rune(0); r < 0x80; r++ {
		c, e := string(r), Escape(string(r))
		for _, tc := range []struct{ p, in string }{
			{e, c}, {"(" + e + ")", c}, {"(" + e + "1)", c + "1"}, {"(" + e + "7000000000)", c + "7000000000"},
			{"[" + e + "]", c}, {"[" + e + "-" + e + "]", c}, {"[^" + e + "]", "x"}, {"(?i)" + e + "1>", c + "1>"},
			{"(a)" + e + "'1'", "a" + c + "'1'"}, {"(a)" + e + "<1>", "a" + c + "<1>"},
		} {
			re, err := Compile(tc.p)
			if err != nil {
				t.Errorf("Compile(%q): %v", tc.p, err)
				continue
			}
			if r == 'x' && strings.HasPrefix(tc.p, "[^") {
				continue
			}
			if got, ok := re.Search(tc.in); !ok || got[0] != tc.in {
				t.Errorf("%q on %q: %q, %v", tc.p, tc.in, got, ok)
			}
			if _, ok := re.Search("é"); ok && !strings.HasPrefix(tc.p, "[^") {
				t.Errorf("%q matches \"é\"", tc.p)
			}
		}
	}
}

func TestEmptyIterations(t *testing.T) {
	// After a mandatory iteration that matched the empty string, Python
	// still tries an optional one (values from CPython 3.11).
	for _, c := range []struct {
		pattern, s string
		want       []string
	}{
		{`(?:(?=(.))|a)+?b`, "ab", []string{"ab", "a"}},
		{`(?:(?=(.))|a)*?b`, "ab", []string{"ab", ""}},
		{`(?:(?=(.))|a)+b`, "ab", []string{"ab", "b"}},
		{`(?:(?=(.))|a){2,3}?b`, "ab", []string{"ab", "a"}},
		{`(?:()|(a))+?b`, "aab", []string{"aab", "", "a"}},
		{`(?:(a)|())+?b`, "aab", []string{"aab", "a", ""}},
		{`(?:(a)|()){4}?b`, "aab", []string{"aab", "a", ""}},
		{`(?:()|(a)){2}b`, "aab", []string{"aab", "", "a"}},
	} {
		if got, ok := MustCompile(c.pattern).Search(c.s); !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("search(%q, %q) = %q, want %q", c.pattern, c.s, got, c.want)
		}
	}
}

func TestIgnoreCaseQuirks(t *testing.T) {
	// CPython 3.11's IGNORECASE, as measured (see casefold.go).
	for _, c := range []struct {
		pattern, s string
		want       [][]string
	}{
		{`(?i)[\U00010400\U00010401]`, "\U00010400\U00010428\U00010401\U00010429", nil},
		{`(?i)[\U00010400]`, "\U00010400\U00010428", rows("\U00010400", "\U00010428")},
		{`(?i)[\U00010428\U00010401]`, "\U00010400\U00010428\U00010401\U00010429", rows("\U00010400", "\U00010428")},
		{`(?i)[\u02bc-\U00010000]`, "ŉn", rows("ŉ")},
		{`(?i)[a-z]+`, "İıſK", rows("İıſK")},
		{`(?i)i+`, "Iiİı", rows("Iiİı")},
		{`(?ia)k+`, "kK\u212a", rows("kK")},
		{`(?ia)[\u00e0]`, "àÀ", rows("à")},
		{`(?ia)[\U00010400-\U00010401]+`, "\U00010400\U00010428", rows("\U00010400\U00010428")},
		{`(?ia)[\U00010428-\U00010429]+`, "\U00010400\U00010428", rows("\U00010428")},
		{`(?i)\w`, "\u0345", nil},
		{`(?i)(.)\1`, "sſ ßẞ", rows("ß")},
	} {
		if got := mustFindAll(t, c.pattern, c.s); !reflect.DeepEqual(got, c.want) {
			t.Errorf("findall(%q, %q) = %q, want %q", c.pattern, c.s, got, c.want)
		}
	}
}
