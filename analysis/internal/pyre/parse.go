package pyre

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is a transliteration of CPython 3.11's re/_parser.py: same
// grammar, same error conditions, same messages where it makes sense, so
// that a pattern Python rejects is rejected here too, and a pattern Python
// accepts is read with the same structure (group numbers, flags, widths).
// Only the tree it builds is different: the emitter in translate.go turns it
// into regexp2 syntax.

// flagSet holds sre's SRE_FLAG_* bits.
type flagSet uint16

const (
	flagTemplate   flagSet = 1
	flagIgnoreCase flagSet = 2
	flagLocale     flagSet = 4
	flagMultiline  flagSet = 8
	flagDotAll     flagSet = 16
	flagUnicode    flagSet = 32
	flagVerbose    flagSet = 64
	flagDebug      flagSet = 128
	flagASCII      flagSet = 256

	typeFlags   = flagASCII | flagLocale | flagUnicode
	globalFlags = flagDebug | flagTemplate
)

var inlineFlags = map[string]flagSet{
	"i": flagIgnoreCase, "L": flagLocale, "m": flagMultiline, "s": flagDotAll,
	"x": flagVerbose, "a": flagASCII, "t": flagTemplate, "u": flagUnicode,
}

// combineFlags is _compiler._combine_flags.
func combineFlags(flags, add, del flagSet) flagSet {
	if add&typeFlags != 0 {
		flags &^= typeFlags
	}
	return (flags | add) &^ del
}

const (
	maxRepeat = 4294967295 // _sre.MAXREPEAT on 64-bit CPython
	maxGroups = 1073741823 // _sre.MAXGROUPS on 64-bit CPython
)

type opcode uint8

const (
	opLiteral opcode = iota
	opNotLiteral
	opAny
	opIn
	opAt
	opBranch
	opSubpattern
	opRepeat
	opAtomic
	opAssert
	opGroupRef
	opGroupRefExists
)

type atCode uint8

const (
	atBeginning       atCode = iota // ^
	atBeginningString               // \A
	atEnd                           // $
	atEndString                     // \Z
	atBoundary                      // \b
	atNonBoundary                   // \B
)

type repeatKind uint8

const (
	greedy repeatKind = iota
	lazy
	possessive
)

type itemKind uint8

const (
	itemLiteral itemKind = iota
	itemRange
	itemCategory
)

// classItem is one member of a character class: a literal, a range or one
// of the \d \D \s \S \w \W categories.
type classItem struct {
	kind   itemKind
	lo, hi rune
	cat    category
}

type class struct {
	negate bool
	items  []classItem
}

// node is one element of a parsed pattern, the counterpart of an sre
// (op, av) pair.
type node struct {
	op  opcode
	c   rune   // opLiteral, opNotLiteral
	cls *class // opIn
	at  atCode // opAt

	alts [][]*node // opBranch

	// opSubpattern: group (0 for none) and scoped flags; opGroupRef and
	// opGroupRefExists: the referenced group.
	group    int
	add, del flagSet

	body []*node // opSubpattern, opRepeat, opAtomic, opAssert; "yes" of opGroupRefExists
	no   []*node // "no" of opGroupRefExists (nil if absent)

	min, max uint64 // opRepeat
	kind     repeatKind

	behind, negative bool // opAssert
}

// width is a (min, max) match length, as SubPattern.getwidth computes it.
type width struct{ lo, hi uint64 }

// Error reports a pattern that cannot be compiled, either because Python's
// re rejects it too (Unsupported false), or because it uses a construct
// pyre cannot reproduce faithfully on regexp2 (Unsupported true).
type Error struct {
	Pattern     string
	Pos         int // code point offset in Pattern, or -1
	Msg         string
	Unsupported bool
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Unsupported {
		fmt.Fprintf(&b, "pyre: pattern %q is valid Python but not supported: %s", e.Pattern, e.Msg)
	} else {
		fmt.Fprintf(&b, "pyre: invalid pattern %q: %s", e.Pattern, e.Msg)
	}
	if e.Pos >= 0 {
		fmt.Fprintf(&b, " at position %d", e.Pos)
	}
	return b.String()
}

// tokenizer is _parser.Tokenizer: next is one character, or a backslash and
// the character after it.
type tokenizer struct {
	pattern string
	src     []rune
	index   int
	next    string // "" at the end
}

func newTokenizer(pattern string) (*tokenizer, error) {
	t := &tokenizer{pattern: pattern, src: []rune(pattern)}
	return t, t.advance()
}

func (t *tokenizer) advance() error {
	i := t.index
	if i >= len(t.src) {
		t.next = ""
		return nil
	}
	c := string(t.src[i])
	if c == `\` {
		i++
		if i >= len(t.src) {
			return &Error{Pattern: t.pattern, Pos: len(t.src) - 1, Msg: "bad escape (end of pattern)"}
		}
		c += string(t.src[i])
	}
	t.index = i + 1
	t.next = c
	return nil
}

func (t *tokenizer) match(c string) (bool, error) {
	if t.next != "" && t.next == c {
		return true, t.advance()
	}
	return false, nil
}

func (t *tokenizer) get() (string, error) {
	this := t.next
	return this, t.advance()
}

func (t *tokenizer) getwhile(n int, set string) (string, error) {
	var out string
	for i := 0; i < n; i++ {
		c := t.next
		if c == "" || utf8.RuneCountInString(c) != 1 || !strings.Contains(set, c) {
			break
		}
		out += c
		if err := t.advance(); err != nil {
			return "", err
		}
	}
	return out, nil
}

func (t *tokenizer) getuntil(terminator, name string) (string, error) {
	var result string
	for {
		c := t.next
		if err := t.advance(); err != nil {
			return "", err
		}
		if c == "" {
			if result == "" {
				return "", t.errorf(0, "missing %s", name)
			}
			return "", t.errorf(runeLen(result), "missing %s, unterminated name", terminator)
		}
		if c == terminator {
			if result == "" {
				return "", t.errorf(1, "missing %s", name)
			}
			return result, nil
		}
		result += c
	}
}

func (t *tokenizer) tell() int { return t.index - runeLen(t.next) }

func (t *tokenizer) seek(index int) error {
	t.index = index
	return t.advance()
}

func (t *tokenizer) errorf(offset int, format string, args ...any) *Error {
	return &Error{Pattern: t.pattern, Pos: t.tell() - offset, Msg: fmt.Sprintf(format, args...)}
}

func (t *tokenizer) unsupported(offset int, format string, args ...any) *Error {
	e := t.errorf(offset, format, args...)
	e.Unsupported = true
	return e
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// isIdentifier approximates str.isidentifier (XID_Start XID_Continue*).
// Group names only have to be told valid or invalid; pyre numbers groups
// itself, so names never reach regexp2.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		start := r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_ID_Start, r)
		if i == 0 {
			if !start {
				return false
			}
			continue
		}
		if !start && !unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue) {
			return false
		}
	}
	return true
}

func (t *tokenizer) checkgroupname(name string, offset int) error {
	if !isIdentifier(name) {
		return t.errorf(runeLen(name)+offset, "bad character in group name %s", pyRepr(name))
	}
	return nil
}

// pyRepr quotes s roughly as Python's repr does, for error messages.
func pyRepr(s string) string {
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return strconv.Quote(s)
}

// parseState is _parser.State.
type parseState struct {
	flags            flagSet
	groupdict        map[string]int
	groupwidths      []*width // index 0 is group 0; nil while a group is open
	lookbehindgroups int      // -1 for None
	grouprefpos      map[int]int
}

func (s *parseState) groups() int { return len(s.groupwidths) }

func (s *parseState) checkgroup(gid int) bool {
	return gid < s.groups() && s.groupwidths[gid] != nil
}

func (s *parseState) checklookbehindgroup(gid int, src *tokenizer) error {
	if s.lookbehindgroups >= 0 {
		if !s.checkgroup(gid) {
			return src.errorf(0, "cannot refer to an open group")
		}
		if gid >= s.lookbehindgroups {
			return src.errorf(0, "cannot refer to group defined in the same lookbehind subpattern")
		}
	}
	return nil
}

// parsed is the result of parsing a whole pattern.
type parsed struct {
	seq        []*node
	flags      flagSet // global flags, UNICODE added as fix_flags does
	groups     int     // number of capturing groups (pattern.groups)
	groupIndex map[string]int
	widths     []*width
}

const (
	digits      = "0123456789"
	octDigits   = "01234567"
	hexDigits   = "0123456789abcdefABCDEF"
	specialChar = ".\\[{()*+?^$|"
	repeatChars = "*+?{"
	whitespace  = " \t\n\r\v\f"
)

var escapes = map[string]rune{
	`\a`: '\a', `\b`: '\b', `\f`: '\f', `\n`: '\n',
	`\r`: '\r', `\t`: '\t', `\v`: '\v', `\\`: '\\',
}

var categoryEscapes = map[string]category{
	`\d`: catDigit, `\D`: catNotDigit, `\s`: catSpace,
	`\S`: catNotSpace, `\w`: catWord, `\W`: catNotWord,
}

var atEscapes = map[string]atCode{
	`\A`: atBeginningString, `\b`: atBoundary, `\B`: atNonBoundary, `\Z`: atEndString,
}

func isASCIILetter(c string) bool {
	return len(c) == 1 && ('a' <= c[0] && c[0] <= 'z' || 'A' <= c[0] && c[0] <= 'Z')
}

func inSet(c, set string) bool {
	return c != "" && runeLen(c) == 1 && strings.Contains(set, c)
}

func parse(pattern string) (*parsed, error) {
	src, err := newTokenizer(pattern)
	if err != nil {
		return nil, err
	}
	st := &parseState{
		groupdict:        map[string]int{},
		groupwidths:      []*width{nil},
		lookbehindgroups: -1,
		grouprefpos:      map[int]int{},
	}
	seq, err := parseSub(src, st, false, 0)
	if err != nil {
		return nil, err
	}
	// fix_flags for a str pattern.
	if st.flags&flagLocale != 0 {
		return nil, &Error{Pattern: pattern, Pos: -1, Msg: "cannot use LOCALE flag with a str pattern"}
	}
	if st.flags&flagASCII == 0 {
		st.flags |= flagUnicode
	} else if st.flags&flagUnicode != 0 {
		return nil, &Error{Pattern: pattern, Pos: -1, Msg: "ASCII and UNICODE flags are incompatible"}
	}
	if src.next != "" {
		return nil, src.errorf(0, "unbalanced parenthesis")
	}
	for g, pos := range st.grouprefpos {
		if g >= st.groups() {
			return nil, &Error{Pattern: pattern, Pos: pos, Msg: fmt.Sprintf("invalid group reference %d", g)}
		}
	}
	if st.flags&flagTemplate != 0 {
		return nil, &Error{Pattern: pattern, Pos: -1, Msg: "the TEMPLATE flag (?t) is deprecated and not supported", Unsupported: true}
	}
	return &parsed{
		seq:        seq,
		flags:      st.flags,
		groups:     st.groups() - 1,
		groupIndex: st.groupdict,
		widths:     st.groupwidths,
	}, nil
}

// parseSub parses an alternation a|b|c.
func parseSub(src *tokenizer, st *parseState, verbose bool, nested int) ([]*node, error) {
	var items [][]*node
	for {
		item, err := parseSeq(src, st, verbose, nested+1, nested == 0 && len(items) == 0)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
		ok, err := src.match("|")
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if nested == 0 {
			verbose = st.flags&flagVerbose != 0
		}
	}
	if len(items) == 1 {
		return items[0], nil
	}
	return []*node{{op: opBranch, alts: items}}, nil
}

// parseSeq is _parser._parse: a sequence of items up to "|" or ")".
func parseSeq(src *tokenizer, st *parseState, verbose bool, nested int, first bool) ([]*node, error) {
	var seq []*node
	for {
		this := src.next
		if this == "" || this == "|" || this == ")" {
			break
		}
		if err := src.advance(); err != nil {
			return nil, err
		}
		if verbose {
			if inSet(this, whitespace) {
				continue
			}
			if this == "#" {
				for {
					c, err := src.get()
					if err != nil {
						return nil, err
					}
					if c == "" || c == "\n" {
						break
					}
				}
				continue
			}
		}

		switch {
		case this[0] == '\\':
			n, err := parseEscape(src, this, st)
			if err != nil {
				return nil, err
			}
			seq = append(seq, n)

		case !inSet(this, specialChar):
			r, _ := utf8.DecodeRuneInString(this)
			seq = append(seq, &node{op: opLiteral, c: r})

		case this == "[":
			n, err := parseClass(src)
			if err != nil {
				return nil, err
			}
			seq = append(seq, n)

		case inSet(this, repeatChars):
			var err error
			if seq, err = parseRepeat(src, this, seq); err != nil {
				return nil, err
			}

		case this == ".":
			seq = append(seq, &node{op: opAny})

		case this == "(":
			n, kind, err := parseGroup(src, st, verbose, nested, first, len(seq) > 0)
			if err != nil {
				return nil, err
			}
			switch kind {
			case groupComment:
			case groupGlobalFlags:
				verbose = st.flags&flagVerbose != 0
			default:
				seq = append(seq, n)
			}

		case this == "^":
			seq = append(seq, &node{op: opAt, at: atBeginning})

		case this == "$":
			seq = append(seq, &node{op: opAt, at: atEnd})
		}
	}
	return seq, nil
}

func parseRepeat(src *tokenizer, this string, seq []*node) ([]*node, error) {
	here := src.tell()
	var lo, hi uint64
	switch this {
	case "?":
		lo, hi = 0, 1
	case "*":
		lo, hi = 0, maxRepeat
	case "+":
		lo, hi = 1, maxRepeat
	case "{":
		if src.next == "}" {
			return append(seq, &node{op: opLiteral, c: '{'}), nil
		}
		lo, hi = 0, maxRepeat
		var los, his string
		for inSet(src.next, digits) {
			c, err := src.get()
			if err != nil {
				return nil, err
			}
			los += c
		}
		ok, err := src.match(",")
		if err != nil {
			return nil, err
		}
		if ok {
			for inSet(src.next, digits) {
				c, err := src.get()
				if err != nil {
					return nil, err
				}
				his += c
			}
		} else {
			his = los
		}
		ok, err = src.match("}")
		if err != nil {
			return nil, err
		}
		if !ok {
			seq = append(seq, &node{op: opLiteral, c: '{'})
			return seq, src.seek(here)
		}
		if los != "" {
			v, err := strconv.ParseUint(los, 10, 64)
			if err != nil || v >= maxRepeat {
				return nil, &Error{Pattern: src.pattern, Pos: -1, Msg: "the repetition number is too large"}
			}
			lo = v
		}
		if his != "" {
			v, err := strconv.ParseUint(his, 10, 64)
			if err != nil || v >= maxRepeat {
				return nil, &Error{Pattern: src.pattern, Pos: -1, Msg: "the repetition number is too large"}
			}
			hi = v
			if hi < lo {
				return nil, src.errorf(src.tell()-here, "min repeat greater than max repeat")
			}
		}
	}
	if len(seq) == 0 || seq[len(seq)-1].op == opAt {
		return nil, src.errorf(src.tell()-here+runeLen(this), "nothing to repeat")
	}
	last := seq[len(seq)-1]
	if last.op == opRepeat {
		return nil, src.errorf(src.tell()-here+runeLen(this), "multiple repeat")
	}
	body := []*node{last}
	if last.op == opSubpattern && last.group == 0 && last.add == 0 && last.del == 0 {
		body = last.body
	}
	rep := &node{op: opRepeat, min: lo, max: hi, body: body, kind: greedy}
	if ok, err := src.match("?"); err != nil {
		return nil, err
	} else if ok {
		rep.kind = lazy
	} else if ok, err := src.match("+"); err != nil {
		return nil, err
	} else if ok {
		rep.kind = possessive
	}
	seq[len(seq)-1] = rep
	return seq, nil
}

func parseClass(src *tokenizer) (*node, error) {
	here := src.tell() - 1
	negate, err := src.match("^")
	if err != nil {
		return nil, err
	}
	var items []classItem
	for {
		this, err := src.get()
		if err != nil {
			return nil, err
		}
		if this == "" {
			return nil, src.errorf(src.tell()-here, "unterminated character set")
		}
		if this == "]" && len(items) > 0 {
			break
		}
		var code1 classItem
		if this[0] == '\\' {
			if code1, err = classEscape(src, this); err != nil {
				return nil, err
			}
		} else {
			r, _ := utf8.DecodeRuneInString(this)
			code1 = classItem{kind: itemLiteral, lo: r, hi: r}
		}
		ok, err := src.match("-")
		if err != nil {
			return nil, err
		}
		if !ok {
			items = append(items, code1)
			continue
		}
		that, err := src.get()
		if err != nil {
			return nil, err
		}
		if that == "" {
			return nil, src.errorf(src.tell()-here, "unterminated character set")
		}
		if that == "]" {
			items = append(items, code1, classItem{kind: itemLiteral, lo: '-', hi: '-'})
			break
		}
		var code2 classItem
		if that[0] == '\\' {
			if code2, err = classEscape(src, that); err != nil {
				return nil, err
			}
		} else {
			r, _ := utf8.DecodeRuneInString(that)
			code2 = classItem{kind: itemLiteral, lo: r, hi: r}
		}
		if code1.kind != itemLiteral || code2.kind != itemLiteral || code2.lo < code1.lo {
			return nil, src.errorf(runeLen(this)+1+runeLen(that), "bad character range %s-%s", this, that)
		}
		items = append(items, classItem{kind: itemRange, lo: code1.lo, hi: code2.lo})
	}
	items = uniqItems(items)
	if len(items) == 1 && items[0].kind == itemLiteral {
		if negate {
			return &node{op: opNotLiteral, c: items[0].lo}, nil
		}
		return &node{op: opLiteral, c: items[0].lo}, nil
	}
	return &node{op: opIn, cls: &class{negate: negate, items: items}}, nil
}

func uniqItems(items []classItem) []classItem {
	seen := map[classItem]bool{}
	out := items[:0]
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}

// hexEscape reads the fixed-length hexadecimal escapes \xhh, \uhhhh and
// \Uhhhhhhhh (c is 'x', 'u' or 'U'), common to both escape contexts.
func hexEscape(src *tokenizer, escape string, c byte) (rune, error) {
	n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
	more, err := src.getwhile(n, hexDigits)
	if err != nil {
		return 0, err
	}
	escape += more
	if len(more) != n {
		return 0, src.errorf(runeLen(escape), "incomplete escape %s", escape)
	}
	v, _ := strconv.ParseUint(more, 16, 32)
	if v > maxRune {
		return 0, src.errorf(runeLen(escape), "bad escape %s", escape)
	}
	return rune(v), nil
}

// namedEscape consumes \N{NAME}. Resolving the name needs the Unicode name
// table, which Go's standard library does not carry.
func namedEscape(src *tokenizer) error {
	ok, err := src.match("{")
	if err != nil {
		return err
	}
	if !ok {
		return src.errorf(0, "missing {")
	}
	name, err := src.getuntil("}", "character name")
	if err != nil {
		return err
	}
	return src.unsupported(runeLen(name)+len(`\N{}`), `named character escape \N{%s}`, name)
}

// classEscape is _parser._class_escape.
func classEscape(src *tokenizer, escape string) (classItem, error) {
	if r, ok := escapes[escape]; ok {
		return classItem{kind: itemLiteral, lo: r, hi: r}, nil
	}
	if c, ok := categoryEscapes[escape]; ok {
		return classItem{kind: itemCategory, cat: c}, nil
	}
	c := escape[1]
	lit := func(r rune) classItem { return classItem{kind: itemLiteral, lo: r, hi: r} }
	switch {
	case c == 'x' || c == 'u' || c == 'U':
		r, err := hexEscape(src, escape, c)
		return lit(r), err
	case c == 'N':
		return classItem{}, namedEscape(src)
	case strings.IndexByte(octDigits, c) >= 0:
		more, err := src.getwhile(2, octDigits)
		if err != nil {
			return classItem{}, err
		}
		escape += more
		v, _ := strconv.ParseUint(escape[1:], 8, 32)
		if v > 0o377 {
			return classItem{}, src.errorf(runeLen(escape), "octal escape value %s outside of range 0-0o377", escape)
		}
		return lit(rune(v)), nil
	case strings.IndexByte(digits, c) >= 0:
		return classItem{}, src.errorf(runeLen(escape), "bad escape %s", escape)
	}
	if runeLen(escape) == 2 {
		if isASCIILetter(escape[1:]) {
			return classItem{}, src.errorf(2, "bad escape %s", escape)
		}
		r, _ := utf8.DecodeRuneInString(escape[1:])
		return lit(r), nil
	}
	return classItem{}, src.errorf(runeLen(escape), "bad escape %s", escape)
}

// parseEscape is _parser._escape (an escape outside a class).
func parseEscape(src *tokenizer, escape string, st *parseState) (*node, error) {
	if c, ok := categoryEscapes[escape]; ok {
		return &node{op: opIn, cls: &class{items: []classItem{{kind: itemCategory, cat: c}}}}, nil
	}
	if a, ok := atEscapes[escape]; ok {
		return &node{op: opAt, at: a}, nil
	}
	if r, ok := escapes[escape]; ok {
		return &node{op: opLiteral, c: r}, nil
	}
	c := escape[1]
	switch {
	case c == 'x' || c == 'u' || c == 'U':
		r, err := hexEscape(src, escape, c)
		return &node{op: opLiteral, c: r}, err
	case c == 'N':
		return nil, namedEscape(src)
	case c == '0':
		more, err := src.getwhile(2, octDigits)
		if err != nil {
			return nil, err
		}
		v, _ := strconv.ParseUint(escape[1:]+more, 8, 32)
		return &node{op: opLiteral, c: rune(v)}, nil
	case strings.IndexByte(digits, c) >= 0:
		// octal escape *or* decimal group reference (sigh)
		if inSet(src.next, digits) {
			d, err := src.get()
			if err != nil {
				return nil, err
			}
			escape += d
			if strings.IndexByte(octDigits, escape[1]) >= 0 && strings.IndexByte(octDigits, escape[2]) >= 0 && inSet(src.next, octDigits) {
				d, err := src.get()
				if err != nil {
					return nil, err
				}
				escape += d
				v, _ := strconv.ParseUint(escape[1:], 8, 32)
				if v > 0o377 {
					return nil, src.errorf(runeLen(escape), "octal escape value %s outside of range 0-0o377", escape)
				}
				return &node{op: opLiteral, c: rune(v)}, nil
			}
		}
		group, _ := strconv.Atoi(escape[1:])
		if group < st.groups() {
			if !st.checkgroup(group) {
				return nil, src.errorf(runeLen(escape), "cannot refer to an open group")
			}
			if err := st.checklookbehindgroup(group, src); err != nil {
				return nil, err
			}
			return &node{op: opGroupRef, group: group}, nil
		}
		return nil, src.errorf(runeLen(escape)-1, "invalid group reference %d", group)
	}
	if runeLen(escape) == 2 {
		if isASCIILetter(escape[1:]) {
			return nil, src.errorf(2, "bad escape %s", escape)
		}
		r, _ := utf8.DecodeRuneInString(escape[1:])
		return &node{op: opLiteral, c: r}, nil
	}
	return nil, src.errorf(runeLen(escape), "bad escape %s", escape)
}

// groupResult says what parseGroup found after "(".
type groupResult uint8

const (
	groupItem        groupResult = iota // a group, assertion, reference or conditional
	groupComment                        // (?#...)
	groupGlobalFlags                    // (?flags), already applied to the state
)

// parseGroup parses what follows "(".
func parseGroup(src *tokenizer, st *parseState, verbose bool, nested int, first, nonEmpty bool) (*node, groupResult, error) {
	start := src.tell() - 1
	capture := true
	atomic := false
	name := ""
	named := false
	var addFlags, delFlags flagSet

	q, err := src.match("?")
	if err != nil {
		return nil, 0, err
	}
	if q {
		char, err := src.get()
		if err != nil {
			return nil, 0, err
		}
		switch {
		case char == "":
			return nil, 0, src.errorf(0, "unexpected end of pattern")

		case char == "P":
			if ok, err := src.match("<"); err != nil {
				return nil, 0, err
			} else if ok {
				if name, err = src.getuntil(">", "group name"); err != nil {
					return nil, 0, err
				}
				if err := src.checkgroupname(name, 1); err != nil {
					return nil, 0, err
				}
				named = true
				break
			}
			if ok, err := src.match("="); err != nil {
				return nil, 0, err
			} else if ok {
				name, err := src.getuntil(")", "group name")
				if err != nil {
					return nil, 0, err
				}
				if err := src.checkgroupname(name, 1); err != nil {
					return nil, 0, err
				}
				gid, ok := st.groupdict[name]
				if !ok {
					return nil, 0, src.errorf(runeLen(name)+1, "unknown group name %s", pyRepr(name))
				}
				if !st.checkgroup(gid) {
					return nil, 0, src.errorf(runeLen(name)+1, "cannot refer to an open group")
				}
				if err := st.checklookbehindgroup(gid, src); err != nil {
					return nil, 0, err
				}
				return &node{op: opGroupRef, group: gid}, groupItem, nil
			}
			char, err := src.get()
			if err != nil {
				return nil, 0, err
			}
			if char == "" {
				return nil, 0, src.errorf(0, "unexpected end of pattern")
			}
			return nil, 0, src.errorf(runeLen(char)+2, "unknown extension ?P%s", char)

		case char == ":":
			capture = false

		case char == "#":
			for {
				if src.next == "" {
					return nil, 0, src.errorf(src.tell()-start, "missing ), unterminated comment")
				}
				c, err := src.get()
				if err != nil {
					return nil, 0, err
				}
				if c == ")" {
					return nil, groupComment, nil
				}
			}

		case char == "=" || char == "!" || char == "<":
			behind := false
			saved := st.lookbehindgroups
			if char == "<" {
				if char, err = src.get(); err != nil {
					return nil, 0, err
				}
				if char == "" {
					return nil, 0, src.errorf(0, "unexpected end of pattern")
				}
				if char != "=" && char != "!" {
					return nil, 0, src.errorf(runeLen(char)+2, "unknown extension ?<%s", char)
				}
				behind = true
				if saved < 0 {
					st.lookbehindgroups = st.groups()
				}
			}
			p, err := parseSub(src, st, verbose, nested+1)
			if err != nil {
				return nil, 0, err
			}
			if behind && saved < 0 {
				st.lookbehindgroups = -1
			}
			if ok, err := src.match(")"); err != nil {
				return nil, 0, err
			} else if !ok {
				return nil, 0, src.errorf(src.tell()-start, "missing ), unterminated subpattern")
			}
			return &node{op: opAssert, body: p, behind: behind, negative: char == "!"}, groupItem, nil

		case char == "(":
			n, err := parseConditional(src, st, verbose, nested, start)
			return n, groupItem, err

		case char == ">":
			capture = false
			atomic = true

		case inlineFlags[char] != 0 || char == "-":
			add, del, global, err := parseFlags(src, st, char)
			if err != nil {
				return nil, 0, err
			}
			if global {
				if !first || nonEmpty {
					return nil, 0, src.errorf(src.tell()-start, "global flags not at the start of the expression")
				}
				return nil, groupGlobalFlags, nil
			}
			addFlags, delFlags = add, del
			capture = false

		default:
			return nil, 0, src.errorf(runeLen(char)+1, "unknown extension ?%s", char)
		}
	}

	group := 0
	if capture {
		group = st.groups()
		st.groupwidths = append(st.groupwidths, nil)
		if st.groups() > maxGroups {
			return nil, 0, src.errorf(runeLen(name)+1, "too many groups")
		}
		if named {
			if ogid, ok := st.groupdict[name]; ok {
				return nil, 0, src.errorf(runeLen(name)+1, "redefinition of group name %s as group %d; was group %d", pyRepr(name), group, ogid)
			}
			st.groupdict[name] = group
		}
	}
	subVerbose := (verbose || addFlags&flagVerbose != 0) && delFlags&flagVerbose == 0
	p, err := parseSub(src, st, subVerbose, nested+1)
	if err != nil {
		return nil, 0, err
	}
	if ok, err := src.match(")"); err != nil {
		return nil, 0, err
	} else if !ok {
		return nil, 0, src.errorf(src.tell()-start, "missing ), unterminated subpattern")
	}
	if group != 0 {
		w := getwidth(p, st.groupwidths)
		st.groupwidths[group] = &w
	}
	if atomic {
		return &node{op: opAtomic, body: p}, groupItem, nil
	}
	return &node{op: opSubpattern, group: group, add: addFlags, del: delFlags, body: p}, groupItem, nil
}

func parseConditional(src *tokenizer, st *parseState, verbose bool, nested, start int) (*node, error) {
	condname, err := src.getuntil(")", "group name")
	if err != nil {
		return nil, err
	}
	var condgroup int
	if isIdentifier(condname) {
		if err := src.checkgroupname(condname, 1); err != nil {
			return nil, err
		}
		gid, ok := st.groupdict[condname]
		if !ok {
			return nil, src.errorf(runeLen(condname)+1, "unknown group name %s", pyRepr(condname))
		}
		condgroup = gid
	} else {
		allDigits := condname != ""
		for i := 0; i < len(condname); i++ {
			if condname[i] < '0' || condname[i] > '9' {
				allDigits = false
			}
		}
		if !allDigits {
			// Python runs int() on it, which also takes "+1", " 1", "1_0"
			// and non-ASCII digits (with a DeprecationWarning); refuse
			// those rather than guess.
			if strings.ContainsAny(condname, "+_ \t\n\r\v\f") || strings.IndexFunc(condname, unicode.IsDigit) >= 0 {
				return nil, src.unsupported(runeLen(condname)+1, "conditional group reference %s that is not plain ASCII digits", pyRepr(condname))
			}
			return nil, src.errorf(runeLen(condname)+1, "bad character in group name %s", pyRepr(condname))
		}
		v, err := strconv.ParseUint(condname, 10, 64)
		if err != nil || v >= maxGroups {
			return nil, src.errorf(runeLen(condname)+1, "invalid group reference %s", condname)
		}
		if v == 0 {
			return nil, src.errorf(runeLen(condname)+1, "bad group number")
		}
		condgroup = int(v)
		if _, ok := st.grouprefpos[condgroup]; !ok {
			st.grouprefpos[condgroup] = src.tell() - runeLen(condname) - 1
		}
	}
	if err := st.checklookbehindgroup(condgroup, src); err != nil {
		return nil, err
	}
	if condgroup < st.groups() && st.groupwidths[condgroup] == nil {
		// Inside group N, "did N match" depends on earlier iterations of
		// a loop around it, and sre and regexp2 disagree on whether a
		// loop may iterate again after a mandatory iteration matched
		// empty; with such a condition the difference becomes visible.
		return nil, src.unsupported(runeLen(condname)+1, "conditional (?(%s)...) inside the group it tests", condname)
	}
	yes, err := parseSeq(src, st, verbose, nested+1, false)
	if err != nil {
		return nil, err
	}
	var no []*node
	hasNo := false
	if ok, err := src.match("|"); err != nil {
		return nil, err
	} else if ok {
		hasNo = true
		if no, err = parseSeq(src, st, verbose, nested+1, false); err != nil {
			return nil, err
		}
		if src.next == "|" {
			return nil, src.errorf(0, "conditional backref with more than two branches")
		}
	}
	if ok, err := src.match(")"); err != nil {
		return nil, err
	} else if !ok {
		return nil, src.errorf(src.tell()-start, "missing ), unterminated subpattern")
	}
	n := &node{op: opGroupRefExists, group: condgroup, body: yes}
	if hasNo {
		n.no = no
		if n.no == nil {
			n.no = []*node{}
		}
	}
	return n, nil
}

// parseFlags is _parser._parse_flags; char is the first flag character or
// "-". It reports global = true for "(?flags)", which sets st.flags.
func parseFlags(src *tokenizer, st *parseState, char string) (add, del flagSet, global bool, err error) {
	if char != "-" {
		for {
			flag := inlineFlags[char]
			if char == "L" {
				return 0, 0, false, src.errorf(0, "bad inline flags: cannot use 'L' flag with a str pattern")
			}
			add |= flag
			if flag&typeFlags != 0 && add&typeFlags != flag {
				return 0, 0, false, src.errorf(0, "bad inline flags: flags 'a', 'u' and 'L' are incompatible")
			}
			if char, err = src.get(); err != nil {
				return 0, 0, false, err
			}
			if char == "" {
				return 0, 0, false, src.errorf(0, "missing -, : or )")
			}
			if char == ")" || char == "-" || char == ":" {
				break
			}
			if inlineFlags[char] == 0 {
				if isAlpha(char) {
					return 0, 0, false, src.errorf(runeLen(char), "unknown flag")
				}
				return 0, 0, false, src.errorf(runeLen(char), "missing -, : or )")
			}
		}
	}
	if char == ")" {
		st.flags |= add
		return 0, 0, true, nil
	}
	if add&globalFlags != 0 {
		return 0, 0, false, src.errorf(1, "bad inline flags: cannot turn on global flag")
	}
	if char == "-" {
		if char, err = src.get(); err != nil {
			return 0, 0, false, err
		}
		if char == "" {
			return 0, 0, false, src.errorf(0, "missing flag")
		}
		if inlineFlags[char] == 0 {
			if isAlpha(char) {
				return 0, 0, false, src.errorf(runeLen(char), "unknown flag")
			}
			return 0, 0, false, src.errorf(runeLen(char), "missing flag")
		}
		for {
			flag := inlineFlags[char]
			if flag&typeFlags != 0 {
				return 0, 0, false, src.errorf(0, "bad inline flags: cannot turn off flags 'a', 'u' and 'L'")
			}
			del |= flag
			if char, err = src.get(); err != nil {
				return 0, 0, false, err
			}
			if char == "" {
				return 0, 0, false, src.errorf(0, "missing :")
			}
			if char == ":" {
				break
			}
			if inlineFlags[char] == 0 {
				if isAlpha(char) {
					return 0, 0, false, src.errorf(runeLen(char), "unknown flag")
				}
				return 0, 0, false, src.errorf(runeLen(char), "missing :")
			}
		}
	}
	if del&globalFlags != 0 {
		return 0, 0, false, src.errorf(1, "bad inline flags: cannot turn off global flag")
	}
	if add&del != 0 {
		return 0, 0, false, src.errorf(1, "bad inline flags: flag turned on and off")
	}
	return add, del, false, nil
}

// isAlpha is str.isalpha for a token (a backslash pair is not alphabetic).
func isAlpha(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// getwidth is SubPattern.getwidth: the (min, max) length of seq, each
// capped as CPython caps them.
func getwidth(seq []*node, groupwidths []*width) width {
	var lo, hi uint64
	for _, n := range seq {
		var i, j uint64
		switch n.op {
		case opBranch:
			i, j = maxRepeat-1, 0
			for _, alt := range n.alts {
				w := getwidth(alt, groupwidths)
				i, j = min(i, w.lo), max(j, w.hi)
			}
		case opAtomic, opSubpattern:
			w := getwidth(n.body, groupwidths)
			i, j = w.lo, w.hi
		case opRepeat:
			w := getwidth(n.body, groupwidths)
			i, j = satMul(w.lo, n.min), satMul(w.hi, n.max)
		case opLiteral, opNotLiteral, opAny, opIn:
			i, j = 1, 1
		case opGroupRef:
			if w := groupwidths[n.group]; w != nil {
				i, j = w.lo, w.hi
			}
		case opGroupRefExists:
			w := getwidth(n.body, groupwidths)
			i, j = w.lo, w.hi
			if n.no != nil {
				w2 := getwidth(n.no, groupwidths)
				i, j = min(i, w2.lo), max(j, w2.hi)
			} else {
				i = 0
			}
		}
		lo, hi = satAdd(lo, i), satAdd(hi, j)
	}
	return width{min(lo, maxRepeat-1), min(hi, maxRepeat)}
}

// Python's integers do not overflow; saturating well above MAXREPEAT keeps
// the min() caps above exact.
const widthCap = 1 << 62

func satAdd(a, b uint64) uint64 {
	if a >= widthCap || b >= widthCap || a+b >= widthCap {
		return widthCap
	}
	return a + b
}

func satMul(a, b uint64) uint64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a >= widthCap/b {
		return widthCap
	}
	return a * b
}
