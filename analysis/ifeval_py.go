package analysis

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Python's re on str patterns is Unicode-aware where Go's regexp is ASCII:
// the IFEval patterns are compiled with these classes instead of \s.
const pySpace = `[\t\n\v\f\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`

func mustPyRegexp(p string) *regexp.Regexp { return regexp.MustCompile(p) }

var (
	reParagraphStars  = mustPyRegexp(pySpace + `?\*\*\*` + pySpace + `?`)
	rePlaceholder     = mustPyRegexp(`\[.*?\]`)
	rePPS             = mustPyRegexp(`(?m)` + pySpace + `*p\.` + pySpace + `?p\.` + pySpace + `?s.*$`)
	rePS              = mustPyRegexp(`(?m)` + pySpace + `*p\.` + pySpace + `?s\..*$`)
	reBulletStar      = mustPyRegexp(`(?m)^` + pySpace + `*\*[^\*].*$`)
	reBulletDash      = mustPyRegexp(`(?m)^` + pySpace + `*-.*$`)
	reHighlight       = mustPyRegexp(`\*[^\n\*]*\*`)
	reDoubleHighlight = mustPyRegexp(`\*\*[^\n\*]*\*\*`)
	reTitle           = mustPyRegexp(`<<[^\n]+>>`)
)

// pyReSplit is re.split for a pattern that cannot match the empty string.
func pyReSplit(re *regexp.Regexp, s string) []string {
	return re.Split(s, -1)
}

// isPlainLiteral: a pattern with no character re treats specially, so that
// it matches itself and nothing else.
func isPlainLiteral(p string) bool {
	return p != "" && !strings.ContainsAny(p, `.^$*+?{}[]\|()`)
}

func quoteMeta(s string) string { return regexp.QuoteMeta(s) }

// pyFoldKey maps a character to a key shared by exactly the characters
// Python's re.IGNORECASE lets it match: Unicode simple case folding, plus
// re's extra equivalence of i, İ and ı.
func pyFoldKey(r rune) rune {
	if r < 0x80 { // an ASCII orbit's least member is its upper case
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	switch r {
	case 'ı', 'İ':
		return 'I'
	}
	min := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < min {
			min = f
		}
	}
	return min
}

// pyIgnoreCaseCount counts where re.findall(word, s, re.IGNORECASE) (or,
// with bounded, r"\b"+word+r"\b") matches, for a word with no regex syntax;
// first stops at the first match. It says why when the word is a regex.
func pyIgnoreCaseCount(s, word string, bounded, first bool) (int, string) {
	if !isPlainLiteral(word) {
		return 0, "the keyword " + quoteForReason(word) + " is a regular expression that is not re-implemented"
	}
	if len(word) > maxKeyword {
		// Bounded work on hostile input: IFEval's keywords are words.
		return 0, fmt.Sprintf("the keyword is longer than %d bytes and is not searched for", maxKeyword)
	}
	t := []rune(s)
	// Folded keys as fixed 4-byte units, so that strings.Index finds
	// candidates quickly.
	enc := func(rs []rune) string {
		b := make([]byte, 4*len(rs))
		for i, r := range rs {
			binary.BigEndian.PutUint32(b[4*i:], uint32(pyFoldKey(r)))
		}
		return string(b)
	}
	hay, needle := enc(t), enc([]rune(word))
	w := len(needle) / 4
	n := 0
	for from := 0; from+len(needle) <= len(hay); {
		j := strings.Index(hay[from:], needle)
		if j < 0 {
			break
		}
		at := from + j
		if at%4 != 0 {
			from = at + (4 - at%4) // not on a character boundary
			continue
		}
		i := at / 4
		if bounded && !(pyBoundary(t, i) && pyBoundary(t, i+w)) {
			from = at + 4 // re.search tries every start
			continue
		}
		n++
		if first {
			return n, ""
		}
		from = at + len(needle) // findall: matches do not overlap
	}
	return n, ""
}

// maxKeyword bounds the keywords searched for (IFEval's longest is a
// short phrase).
const maxKeyword = 1000

// pyBoundary is re's Unicode \b at rune index i.
func pyBoundary(t []rune, i int) bool {
	before := i > 0 && pyIsWord(t[i-1])
	after := i < len(t) && pyIsWord(t[i])
	return before != after
}

func quoteForReason(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return "\"" + strings.ToValidUTF8(s, "?") + "\""
}

// pyJSONValid reports whether Python's json.loads accepts s: JSON plus
// NaN, Infinity and -Infinity; deep is set when the nesting is deep enough
// for Python to raise RecursionError instead, which the check cannot mirror.
func pyJSONValid(s string) (ok, deep bool) {
	p := jsonParser{s: s}
	p.ws()
	if !p.value(0) {
		return false, p.deep
	}
	p.ws()
	return p.i == len(p.s), false
}

type jsonParser struct {
	s    string
	i    int
	deep bool
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n\r", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *jsonParser) lit(l string) bool {
	if strings.HasPrefix(p.s[p.i:], l) {
		p.i += len(l)
		return true
	}
	return false
}

func (p *jsonParser) value(depth int) bool {
	if depth > 900 {
		p.deep = true
		return false
	}
	if p.i >= len(p.s) {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		p.ws()
		if p.lit("}") {
			return true
		}
		for {
			p.ws()
			if !p.str() {
				return false
			}
			p.ws()
			if !p.lit(":") {
				return false
			}
			p.ws()
			if !p.value(depth + 1) {
				return false
			}
			p.ws()
			if p.lit("}") {
				return true
			}
			if !p.lit(",") {
				return false
			}
		}
	case c == '[':
		p.i++
		p.ws()
		if p.lit("]") {
			return true
		}
		for {
			p.ws()
			if !p.value(depth + 1) {
				return false
			}
			p.ws()
			if p.lit("]") {
				return true
			}
			if !p.lit(",") {
				return false
			}
		}
	case c == '"':
		return p.str()
	case c == 'n':
		return p.lit("null")
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'N':
		return p.lit("NaN")
	case c == 'I':
		return p.lit("Infinity")
	case c == '-' && strings.HasPrefix(p.s[p.i:], "-Infinity"):
		p.i += len("-Infinity")
		return true
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return false
}

func (p *jsonParser) str() bool {
	if !p.lit(`"`) {
		return false
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return true
		case c < 0x20:
			return false // strict=True rejects control characters
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return false
			}
			e := p.s[p.i+1]
			switch {
			case strings.IndexByte(`"\/bfnrt`, e) >= 0:
				p.i += 2
			case e == 'u':
				if p.i+6 > len(p.s) || !isHex4(p.s[p.i+2:p.i+6]) {
					return false
				}
				p.i += 6
			default:
				return false
			}
		default:
			_, n := utf8.DecodeRuneInString(p.s[p.i:])
			p.i += n
		}
	}
	return false
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			return false
		}
	}
	return true
}

func (p *jsonParser) number() bool {
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	p.lit("-")
	if p.lit("0") {
	} else if digits() == 0 {
		return false
	}
	// Python's scanner takes the longest number it can and leaves the
	// rest: "1." is the number 1 followed by extra data.
	if p.i+1 < len(p.s) && p.s[p.i] == '.' && p.s[p.i+1] >= '0' && p.s[p.i+1] <= '9' {
		p.i++
		digits()
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		j := p.i + 1
		if j < len(p.s) && (p.s[j] == '+' || p.s[j] == '-') {
			j++
		}
		if j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			p.i = j
			digits()
		}
	}
	return true
}
