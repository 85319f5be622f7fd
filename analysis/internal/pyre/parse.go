package pyre

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Error is the error Compile returns: either Python's re would reject the
// pattern too (re.error, or the OverflowError/ValueError/RuntimeError that
// re.compile raises for a few patterns), or, with Unsupported set, the
// pattern is valid Python but uses a construct pyre does not reproduce.
type Error struct {
	Pattern     string // the pattern as given to Compile
	Pos         int    // code point offset in Pattern the error refers to
	Msg         string // what is wrong, in the words of Python's message where there is one
	Unsupported bool   // valid in Python, refused by pyre
}

func (e *Error) Error() string {
	if e.Unsupported {
		return fmt.Sprintf("pyre: pattern %q: %s (position %d) is not supported", e.Pattern, e.Msg, e.Pos)
	}
	return fmt.Sprintf("pyre: invalid pattern %q: %s at position %d", e.Pattern, e.Msg, e.Pos)
}

// flags are Python's inline flags; which ones hold is recorded on every
// node they change the meaning of, so that scopes need no further care.
type flags uint8

const (
	flagI flags = 1 << iota // IGNORECASE
	flagM                   // MULTILINE
	flagS                   // DOTALL
	flagX                   // VERBOSE
	flagA                   // ASCII
	flagU                   // UNICODE (the default for str patterns)
	flagL                   // LOCALE (bytes patterns only)
	flagT                   // TEMPLATE (deprecated, global only)
)

var flagLetters = map[rune]flags{
	'a': flagA, 'i': flagI, 'L': flagL, 'm': flagM, 's': flagS, 'u': flagU, 'x': flagX, 't': flagT,
}

// maxRepeat is Python's MAXREPEAT (2**32-1): counts from there on are an
// OverflowError. maxCount is the largest count regexp2 can express.
const (
	maxRepeat = 1<<32 - 1
	maxCount  = 1<<31 - 2
	infinite  = -1
)

type kind uint8

const (
	kEmpty    kind = iota
	kChar          // one code point: r, fl
	kClass         // a character class or category: cls, fl
	kAny           // '.': fl (flagS)
	kBOL           // '^': fl (flagM)
	kEOL           // '$': fl (flagM)
	kBOS           // \A
	kEOS           // \Z
	kBoundary      // \b: fl (flagA)
	kNonBound      // \B: fl (flagA)
	kGroup         // capturing group n: subs[0]
	kLook          // lookaround: behind, neg, subs[0]
	kAtomic        // (?>...): subs[0]
	kRepeat        // min, max (infinite), lazy, possessive: subs[0]
	kBackref       // group n, fl (flagI, flagA)
	kCond          // (?(n)yes|no): subs[0], subs[1]
	kConcat        // subs
	kAlt           // subs
)

type node struct {
	kind       kind
	r          rune
	fl         flags
	cls        *class
	n          int // group number (kGroup, kBackref, kCond)
	min, max   int
	lazy       bool
	possessive bool
	behind     bool
	neg        bool
	subs       []*node
	pos        int // where in the pattern the construct starts
}

// class is a parsed [...] set, or a single category escape such as \d.
type class struct {
	neg   bool
	items []classItem
}

type classItem struct {
	cat    byte // 0 for a range; otherwise one of d D s S w W
	lo, hi rune
	lit    bool // written as a single character, not a range
}

// parsed is the result of parse: the tree and what Python's compiled
// pattern reports about groups.
type parsed struct {
	root       *node
	groups     int
	groupIndex map[string]int
}

type parser struct {
	pattern string
	src     []rune
	pos     int

	global     flags
	groups     int
	groupIndex map[string]int
	open       map[int]bool // groups whose ')' has not been reached
	groupNodes map[int]*node
	// lookbehinds holds, for each lookbehind being parsed (outermost
	// first), the number of groups opened before it.
	lookbehinds []int
	condRefs    []condRef
	unsupported *Error
}

type condRef struct {
	n, pos int
	name   string
}

func (p *parser) errAt(pos int, format string, args ...any) *Error {
	return &Error{Pattern: p.pattern, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// refuse records the first construct pyre cannot translate. Parsing goes
// on, so that a pattern Python rejects is still reported as invalid.
func (p *parser) refuse(pos int, msg string) {
	if p.unsupported == nil {
		p.unsupported = &Error{Pattern: p.pattern, Pos: pos, Msg: msg, Unsupported: true}
	}
}

// bail carries an *Error out of the recursive descent.
type bail struct{ err *Error }

func (p *parser) fail(pos int, format string, args ...any) {
	panic(bail{p.errAt(pos, format, args...)})
}

func parse(pattern string) (pp *parsed, err error) {
	p := &parser{
		pattern:    pattern,
		src:        []rune(pattern),
		groupIndex: map[string]int{},
		open:       map[int]bool{},
		groupNodes: map[int]*node{},
	}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bail)
			if !ok {
				panic(r)
			}
			pp, err = nil, b.err
		}
	}()
	root := p.parseAlt(0, 0)
	if p.pos < len(p.src) {
		// Only a ')' stops the top-level alternation early.
		p.fail(p.pos, "unbalanced parenthesis")
	}
	for _, c := range p.condRefs {
		if c.n > p.groups {
			p.fail(c.pos, "invalid group reference %s", c.name)
		}
	}
	if p.global&flagA != 0 && p.global&flagU != 0 {
		p.fail(0, "ASCII and UNICODE flags are incompatible")
	}
	if p.global&flagT != 0 {
		p.refuse(0, "the TEMPLATE flag (?t)")
	}
	if p.unsupported != nil {
		return nil, p.unsupported
	}
	return &parsed{root: root, groups: p.groups, groupIndex: p.groupIndex}, nil
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

func (p *parser) peek() rune {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return -1
}

func (p *parser) peekAt(i int) rune {
	if p.pos+i < len(p.src) {
		return p.src[p.pos+i]
	}
	return -1
}

// skipVerbose skips whitespace and comments when the VERBOSE flag holds.
func (p *parser) skipVerbose(fl flags) {
	if fl&flagX == 0 {
		return
	}
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || '\t' <= c && c <= '\r':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

// parseAlt parses branches separated by '|' up to a ')' (not consumed)
// or the end of the pattern. depth is 0 at the top level.
func (p *parser) parseAlt(fl flags, depth int) *node {
	start := p.pos
	var branches []*node
	for {
		branches = append(branches, p.parseSeq(fl, depth, len(branches) == 0))
		if p.peek() != '|' {
			break
		}
		p.pos++
	}
	if len(branches) == 1 {
		return branches[0]
	}
	return &node{kind: kAlt, subs: branches, pos: start}
}

// parseSeq parses one branch. fl holds the flags in force; at the top
// level global flags may still change them (and must come first).
func (p *parser) parseSeq(fl flags, depth int, firstBranch bool) *node {
	start := p.pos
	var items []*node
	// lastRepeat says whether the last item carries a quantifier.
	lastRepeat := false
	for {
		if depth == 0 {
			fl |= p.global
		}
		p.skipVerbose(fl)
		if p.eof() {
			break
		}
		c := p.src[p.pos]
		if c == '|' || c == ')' {
			break
		}
		here := p.pos
		switch c {
		case '*', '+', '?', '{':
			lo, hi, ok := p.quantifier()
			if !ok {
				// A '{' that does not open a valid quantifier is literal.
				p.pos++
				items = append(items, &node{kind: kChar, r: '{', fl: fl, pos: here})
				lastRepeat = false
				continue
			}
			if lo > hi && hi != infinite {
				p.fail(here+1, "min repeat greater than max repeat")
			}
			if len(items) == 0 || isAssertion(items[len(items)-1]) {
				p.fail(here, "nothing to repeat")
			}
			if lastRepeat {
				p.fail(here, "multiple repeat")
			}
			rep := &node{kind: kRepeat, min: lo, max: hi, subs: []*node{items[len(items)-1]}, pos: here}
			switch p.peek() {
			case '?':
				p.pos++
				rep.lazy = true
			case '+':
				p.pos++
				rep.possessive = true
			}
			items[len(items)-1] = rep
			lastRepeat = true
			continue
		}
		n, isItem := p.parseAtom(fl, depth, depth == 0 && firstBranch && len(items) == 0)
		if !isItem {
			continue // a comment or global flags
		}
		items = append(items, n)
		lastRepeat = false
	}
	switch len(items) {
	case 0:
		return &node{kind: kEmpty, pos: start}
	case 1:
		return items[0]
	}
	return &node{kind: kConcat, subs: items, pos: start}
}

func isAssertion(n *node) bool {
	switch n.kind {
	case kBOL, kEOL, kBOS, kEOS, kBoundary, kNonBound:
		return true
	}
	return false
}

// quantifier reads *, +, ? or a {m,n} form at p.pos. For '{' that is not
// a quantifier it returns ok == false and leaves p.pos alone.
func (p *parser) quantifier() (lo, hi int, ok bool) {
	switch p.src[p.pos] {
	case '*':
		p.pos++
		return 0, infinite, true
	case '+':
		p.pos++
		return 1, infinite, true
	case '?':
		p.pos++
		return 0, 1, true
	}
	// '{' [digits] [',' [digits]] '}', but not "{}".
	i := p.pos + 1
	readDigits := func() string {
		j := i
		for i < len(p.src) && '0' <= p.src[i] && p.src[i] <= '9' {
			i++
		}
		return string(p.src[j:i])
	}
	min := readDigits()
	max, comma := min, false
	if i < len(p.src) && p.src[i] == ',' {
		i++
		comma = true
		max = readDigits()
	}
	if i >= len(p.src) || p.src[i] != '}' || (min == "" && !comma) {
		return 0, 0, false
	}
	start := p.pos
	p.pos = i + 1
	lo, hi = 0, infinite
	if min != "" {
		lo = p.count(min, start)
	}
	if max != "" {
		hi = p.count(max, start)
	}
	return lo, hi, true
}

func (p *parser) count(digits string, pos int) int {
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 10 {
		p.fail(pos, "the repetition number is too large")
	}
	v, _ := strconv.ParseInt("0"+digits, 10, 64)
	if v >= maxRepeat {
		p.fail(pos, "the repetition number is too large")
	}
	if v > maxCount {
		p.refuse(pos, "a repeat count above 2147483646")
	}
	return int(v)
}

// parseAtom parses one item at p.pos. isItem is false for constructs that
// leave nothing behind (comments, global flags). atStart says whether
// global flags are allowed here.
func (p *parser) parseAtom(fl flags, depth int, atStart bool) (n *node, isItem bool) {
	start := p.pos
	c := p.src[p.pos]
	p.pos++
	switch c {
	case '.':
		return &node{kind: kAny, fl: fl, pos: start}, true
	case '^':
		return &node{kind: kBOL, fl: fl, pos: start}, true
	case '$':
		return &node{kind: kEOL, fl: fl, pos: start}, true
	case '[':
		return &node{kind: kClass, cls: p.parseClass(start), fl: fl, pos: start}, true
	case '\\':
		return p.parseEscape(fl, start), true
	case '(':
		return p.parseGroup(fl, depth, atStart, start)
	}
	return &node{kind: kChar, r: c, fl: fl, pos: start}, true
}

// parseGroup parses what follows a '(' at start.
func (p *parser) parseGroup(fl flags, depth int, atStart bool, start int) (*node, bool) {
	if p.peek() != '?' {
		return p.capture(fl, depth, start, ""), true
	}
	p.pos++
	if p.eof() {
		p.fail(p.pos, "unexpected end of pattern")
	}
	c := p.src[p.pos]
	p.pos++
	switch c {
	case ':':
		return grouped(p.body(fl, depth, start)), true
	case '#':
		for {
			if p.eof() {
				p.fail(start, "missing ), unterminated comment")
			}
			c := p.src[p.pos]
			p.pos++
			if c == ')' {
				return nil, false
			}
			if c == '\\' {
				if p.eof() {
					p.fail(p.pos-1, "bad escape (end of pattern)")
				}
				p.pos++
			}
		}
	case '=', '!':
		return p.look(fl, depth, start, false, c == '!'), true
	case '<':
		if p.eof() {
			p.fail(p.pos, "unexpected end of pattern")
		}
		d := p.src[p.pos]
		if d != '=' && d != '!' {
			p.fail(start+1, "unknown extension ?<%s", p.token())
		}
		p.pos++
		return p.look(fl, depth, start, true, d == '!'), true
	case '>':
		body := p.body(fl, depth, start)
		return &node{kind: kAtomic, subs: []*node{body}, pos: start}, true
	case 'P':
		if p.eof() {
			p.fail(p.pos, "unexpected end of pattern")
		}
		d := p.src[p.pos]
		p.pos++
		switch d {
		case '<':
			name, namePos := p.groupName('>')
			if !isIdentifier(name) {
				p.fail(namePos, "bad character in group name %s", pyRepr(name))
			}
			if g, dup := p.groupIndex[name]; dup {
				p.fail(namePos, "redefinition of group name %s as group %d; was group %d", pyRepr(name), p.groups+1, g)
			}
			return p.capture(fl, depth, start, name), true
		case '=':
			name, namePos := p.groupName(')')
			if !isIdentifier(name) {
				p.fail(namePos, "bad character in group name %s", pyRepr(name))
			}
			g, ok := p.groupIndex[name]
			if !ok {
				p.fail(namePos, "unknown group name %s", pyRepr(name))
			}
			p.checkBackref(g, namePos, namePos)
			return p.backref(g, fl, start), true
		}
		p.pos--
		p.fail(start+1, "unknown extension ?P%s", p.token())
	case '(':
		return p.conditional(fl, depth, start), true
	}
	p.pos--
	if _, ok := flagLetters[c]; ok || c == '-' {
		return p.inlineFlags(fl, depth, atStart, start)
	}
	p.fail(start+1, "unknown extension ?%s", p.token())
	return nil, false
}

// token is the character at p.pos as Python's error messages show it, an
// escape with its backslash.
func (p *parser) token() string {
	if p.src[p.pos] != '\\' {
		return string(p.src[p.pos])
	}
	if p.pos+1 >= len(p.src) {
		p.fail(p.pos, "bad escape (end of pattern)")
	}
	return string(p.src[p.pos : p.pos+2])
}

// body parses a group's contents and its ')'.
func (p *parser) body(fl flags, depth int, start int) *node {
	n := p.parseAlt(fl, depth+1)
	if p.peek() != ')' {
		p.fail(start, "missing ), unterminated subpattern")
	}
	p.pos++
	return n
}

func (p *parser) capture(fl flags, depth int, start int, name string) *node {
	p.groups++
	g := p.groups
	if name != "" {
		p.groupIndex[name] = g
	}
	p.open[g] = true
	body := p.body(fl, depth, start)
	delete(p.open, g)
	n := &node{kind: kGroup, n: g, subs: []*node{body}, pos: start}
	p.groupNodes[g] = n
	return n
}

func (p *parser) look(fl flags, depth int, start int, behind, neg bool) *node {
	if behind {
		p.lookbehinds = append(p.lookbehinds, p.groups)
	}
	body := p.body(fl, depth, start)
	if behind {
		p.lookbehinds = p.lookbehinds[:len(p.lookbehinds)-1]
		lo, hi := width(body)
		if lo != hi {
			p.fail(start, "look-behind requires fixed-width pattern")
		}
		if lo > 1<<31-1 {
			// CPython: RuntimeError: invalid SRE code.
			p.fail(start, "look-behind width %d is too large", lo)
		}
		if repeatedCapture(body, false) {
			p.refuse(start, "capturing group inside a repeat inside a lookbehind")
		}
	}
	return &node{kind: kLook, behind: behind, neg: neg, subs: []*node{body}, pos: start}
}

// repeatedCapture reports whether n has a capturing group inside a repeat
// that can iterate more than once at different positions.
func repeatedCapture(n *node, inRepeat bool) bool {
	if n.kind == kGroup && inRepeat {
		return true
	}
	if n.kind == kRepeat && (n.max == infinite || n.max > 1) {
		if _, hi := width(n.subs[0]); hi != 0 {
			inRepeat = true
		}
	}
	for _, s := range n.subs {
		if s != nil && repeatedCapture(s, inRepeat) {
			return true
		}
	}
	return false
}

// groupName reads a name up to the terminator, which it consumes.
func (p *parser) groupName(term rune) (string, int) {
	namePos := p.pos
	for i := p.pos; i < len(p.src); i++ {
		if p.src[i] == term {
			name := string(p.src[namePos:i])
			p.pos = i + 1
			if name == "" {
				p.fail(namePos, "missing group name")
			}
			return name, namePos
		}
	}
	if p.eof() {
		p.fail(namePos, "missing group name")
	}
	p.fail(namePos, "missing %c, unterminated name", term)
	return "", 0
}

// checkBackref applies Python's rules for a reference to group g.
func (p *parser) checkBackref(g, pos, openPos int) {
	if g > p.groups {
		p.fail(pos, "invalid group reference %d", g)
	}
	if p.open[g] {
		p.fail(openPos, "cannot refer to an open group")
	}
	if len(p.lookbehinds) > 0 && g > p.lookbehinds[0] {
		p.fail(openPos, "cannot refer to group defined in the same lookbehind subpattern")
	}
}

func (p *parser) backref(g int, fl flags, start int) *node {
	if fl&flagI != 0 && fl&flagA != 0 {
		p.refuse(start, "back-reference under both ASCII and IGNORECASE flags")
	}
	// A reference matches what the group matched, so it is as wide.
	lo, hi := width(p.groupNodes[g])
	return &node{kind: kBackref, n: g, fl: fl, pos: start, min: lo, max: hi}
}

func (p *parser) conditional(fl flags, depth int, start int) *node {
	name, namePos := p.groupName(')')
	var g int
	if isIdentifier(name) {
		var ok bool
		if g, ok = p.groupIndex[name]; !ok {
			p.fail(namePos, "unknown group name %s", pyRepr(name))
		}
	} else {
		v, ok := pyInt(name)
		if !ok || v.Sign() < 0 {
			p.fail(namePos, "bad character in group name %s", pyRepr(name))
		}
		if v.Sign() == 0 {
			p.fail(namePos, "bad group number")
		}
		if !v.IsInt64() || v.Int64() > 1<<30 {
			p.fail(namePos, "invalid group reference %s", v)
		}
		g = int(v.Int64())
		p.condRefs = append(p.condRefs, condRef{n: g, pos: namePos, name: v.String()})
	}
	if len(p.lookbehinds) > 0 {
		if g > p.groups || p.open[g] {
			p.fail(p.pos, "cannot refer to an open group")
		}
		if g > p.lookbehinds[0] {
			p.fail(p.pos, "cannot refer to group defined in the same lookbehind subpattern")
		}
	}
	if p.open[g] {
		p.refuse(start, fmt.Sprintf("a conditional on group %d inside the group it tests", g))
	}
	yes := p.parseSeq(fl, depth+1, false)
	var no *node
	if p.peek() == '|' {
		p.pos++
		no = p.parseSeq(fl, depth+1, false)
		if p.peek() == '|' {
			p.fail(p.pos, "conditional backref with more than two branches")
		}
	}
	if p.peek() != ')' {
		p.fail(start, "missing ), unterminated subpattern")
	}
	p.pos++
	if no == nil {
		no = &node{kind: kEmpty, pos: p.pos}
	}
	return &node{kind: kCond, n: g, subs: []*node{yes, no}, pos: start}
}

// inlineFlags parses (?aiLmsux), (?flags:...) and (?flags-flags:...) from
// just after the '?'.
func (p *parser) inlineFlags(fl flags, depth int, atStart bool, start int) (*node, bool) {
	var on, off flags
	for !p.eof() {
		f, ok := flagLetters[p.src[p.pos]]
		if !ok {
			break
		}
		p.pos++
		if f == flagL {
			p.fail(p.pos, "bad inline flags: cannot use 'L' flag with a str pattern")
		}
		on |= f
		if on&flagA != 0 && on&flagU != 0 {
			p.fail(p.pos, "bad inline flags: flags 'a', 'u' and 'L' are incompatible")
		}
	}
	if p.eof() {
		p.fail(p.pos, "missing -, : or )")
	}
	switch c := p.src[p.pos]; {
	case c == ')':
		p.pos++
		if !atStart {
			p.fail(start, "global flags not at the start of the expression")
		}
		p.global |= on
		return nil, false
	case c == '-':
		p.pos++
		if p.eof() {
			p.fail(p.pos, "missing flag")
		}
		for !p.eof() {
			f, ok := flagLetters[p.src[p.pos]]
			if !ok {
				break
			}
			p.pos++
			switch f {
			case flagA, flagU, flagL:
				p.fail(p.pos, "bad inline flags: cannot turn off flags 'a', 'u' and 'L'")
			case flagT:
				p.fail(p.pos, "bad inline flags: cannot turn off global flag")
			}
			off |= f
		}
		if !p.eof() && unicode.IsLetter(p.peek()) {
			p.fail(p.pos, "unknown flag")
		}
		if off == 0 {
			p.fail(p.pos, "missing flag")
		}
		if p.peek() != ':' {
			p.fail(p.pos, "missing :")
		}
	case c == ':':
	case unicode.IsLetter(c):
		p.fail(p.pos, "unknown flag")
	default:
		p.fail(p.pos, "missing -, : or )")
	}
	if on&flagT != 0 {
		p.fail(p.pos, "bad inline flags: cannot turn on global flag")
	}
	if on&off != 0 {
		p.fail(p.pos, "bad inline flags: flag turned on and off")
	}
	p.pos++ // ':'
	inner := fl&^off | on
	if on&flagA != 0 {
		inner &^= flagU
	}
	if on&flagU != 0 {
		inner &^= flagA
	}
	return grouped(p.body(inner, depth, start)), true
}

// grouped wraps the body of a non-capturing group, so that it stays one
// item (an assertion in parentheses can be repeated, a bare one cannot).
func grouped(n *node) *node {
	return &node{kind: kConcat, subs: []*node{n}, pos: n.pos}
}

// parseEscape parses a backslash escape outside a class; start is the
// backslash.
func (p *parser) parseEscape(fl flags, start int) *node {
	if p.eof() {
		p.fail(start, "bad escape (end of pattern)")
	}
	c := p.src[p.pos]
	p.pos++
	switch c {
	case 'A':
		return &node{kind: kBOS, pos: start}
	case 'Z':
		return &node{kind: kEOS, pos: start}
	case 'b':
		return &node{kind: kBoundary, fl: fl, pos: start}
	case 'B':
		return &node{kind: kNonBound, fl: fl, pos: start}
	case 'd', 'D', 's', 'S', 'w', 'W':
		return &node{kind: kClass, cls: &class{items: []classItem{{cat: byte(c)}}}, fl: fl, pos: start}
	}
	if '1' <= c && c <= '9' {
		return p.digitEscape(c, fl, start)
	}
	r := p.charEscape(c, start)
	return &node{kind: kChar, r: r, fl: fl, pos: start}
}

// digitEscape handles \1..\99 (back-references) and 3-digit octal escapes.
func (p *parser) digitEscape(c rune, fl flags, start int) *node {
	isOct := func(r rune) bool { return '0' <= r && r <= '7' }
	isDig := func(r rune) bool { return '0' <= r && r <= '9' }
	d2, d3 := p.peek(), p.peekAt(1)
	if isOct(c) && isOct(d2) && isOct(d3) {
		p.pos += 2
		v := (c-'0')*64 + (d2-'0')*8 + (d3 - '0')
		if v > 0o377 {
			p.fail(start, "octal escape value \\%c%c%c outside of range 0-0o377", c, d2, d3)
		}
		return &node{kind: kChar, r: v, fl: fl, pos: start}
	}
	g := int(c - '0')
	if isDig(d2) {
		p.pos++
		g = g*10 + int(d2-'0')
	}
	p.checkBackref(g, start+1, start)
	return p.backref(g, fl, start)
}

// charEscape parses the escapes that stand for one character, shared by
// classes and the rest of the pattern; c (after the backslash) has been
// consumed. Octal escapes starting with 1-7 are the caller's business.
func (p *parser) charEscape(c rune, start int) rune {
	switch c {
	case 'a':
		return '\a'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'v':
		return '\v'
	case '\\':
		return '\\'
	case '0':
		v := rune(0)
		for i := 0; i < 2 && '0' <= p.peek() && p.peek() <= '7'; i++ {
			v = v*8 + p.peek() - '0'
			p.pos++
		}
		return v
	case 'x', 'u', 'U':
		n := map[rune]int{'x': 2, 'u': 4, 'U': 8}[c]
		v := int64(0)
		for i := 0; i < n; i++ {
			h := hexVal(p.peek())
			if h < 0 {
				p.fail(start, "incomplete escape %s", string(p.src[start:p.pos]))
			}
			v = v*16 + int64(h)
			p.pos++
		}
		if v > unicode.MaxRune {
			p.fail(start, "bad escape %s", string(p.src[start:p.pos]))
		}
		return rune(v)
	case 'N':
		if p.peek() != '{' {
			p.fail(p.pos, "missing {")
		}
		p.pos++
		namePos := p.pos
		for !p.eof() && p.peek() != '}' {
			p.pos++
		}
		if p.pos == namePos {
			p.fail(namePos, "missing character name")
		}
		if p.eof() {
			p.fail(namePos, "missing }, unterminated name")
		}
		p.pos++
		p.refuse(start, "a \\N{name} escape")
		return unicode.ReplacementChar
	}
	if c < 0x80 && (unicode.IsLetter(c) || unicode.IsDigit(c)) {
		p.fail(start, "bad escape \\%c", c)
	}
	return c
}

func hexVal(r rune) rune {
	switch {
	case '0' <= r && r <= '9':
		return r - '0'
	case 'a' <= r && r <= 'f':
		return r - 'a' + 10
	case 'A' <= r && r <= 'F':
		return r - 'A' + 10
	}
	return -1
}

// parseClass parses a [...] set; start is the '['.
func (p *parser) parseClass(start int) *class {
	cls := &class{}
	if p.peek() == '^' {
		p.pos++
		cls.neg = true
	}
	first := true
	for {
		if p.eof() {
			p.fail(start, "unterminated character set")
		}
		if p.peek() == ']' && !first {
			p.pos++
			return cls
		}
		first = false
		itemPos := p.pos
		lo := p.classAtom(start)
		if p.peek() == '-' && p.peekAt(1) != ']' && p.peekAt(1) != -1 {
			p.pos++
			hi := p.classAtom(start)
			if lo.cat != 0 || hi.cat != 0 {
				p.fail(itemPos, "bad character range %s", string(p.src[itemPos:p.pos]))
			}
			if hi.lo < lo.lo {
				p.fail(itemPos, "bad character range %s", string(p.src[itemPos:p.pos]))
			}
			cls.items = append(cls.items, classItem{lo: lo.lo, hi: hi.lo})
			continue
		}
		if p.peek() == '-' && p.peekAt(1) == -1 {
			p.fail(start, "unterminated character set")
		}
		cls.items = append(cls.items, lo)
	}
}

// classAtom reads one character or category escape inside a class.
func (p *parser) classAtom(classStart int) classItem {
	start := p.pos
	c := p.src[p.pos]
	p.pos++
	if c != '\\' {
		return classItem{lo: c, hi: c, lit: true}
	}
	if p.eof() {
		p.fail(start, "bad escape (end of pattern)")
	}
	c = p.src[p.pos]
	p.pos++
	switch c {
	case 'd', 'D', 's', 'S', 'w', 'W':
		return classItem{cat: byte(c)}
	case 'b':
		return classItem{lo: '\b', hi: '\b', lit: true}
	}
	if '1' <= c && c <= '7' {
		v := c - '0'
		for i := 0; i < 2 && '0' <= p.peek() && p.peek() <= '7'; i++ {
			v = v*8 + p.peek() - '0'
			p.pos++
		}
		if v > 0o377 {
			p.fail(start, "octal escape value %s outside of range 0-0o377", string(p.src[start:p.pos]))
		}
		return classItem{lo: v, hi: v, lit: true}
	}
	if c == '8' || c == '9' {
		p.fail(start, "bad escape \\%c", c)
	}
	r := p.charEscape(c, start)
	return classItem{lo: r, hi: r, lit: true}
}

// width is the minimum and maximum number of characters n can match
// (infinite for no maximum), as Python computes it for lookbehinds.
func width(n *node) (lo, hi int) {
	const cap = 1 << 40
	add := func(a, b int) int {
		if a == infinite || b == infinite {
			return infinite
		}
		if a+b > cap {
			return cap
		}
		return a + b
	}
	mul := func(a, b int) int {
		if a == 0 || b == 0 {
			return 0
		}
		if a == infinite || b == infinite {
			return infinite
		}
		if a > cap/b {
			return cap
		}
		return a * b
	}
	switch n.kind {
	case kChar, kClass, kAny:
		return 1, 1
	case kGroup, kAtomic:
		return width(n.subs[0])
	case kConcat:
		for _, s := range n.subs {
			l, h := width(s)
			lo, hi = add(lo, l), add(hi, h)
		}
		return lo, hi
	case kAlt, kCond:
		lo, hi = -2, 0
		for _, s := range n.subs {
			l, h := width(s)
			if lo == -2 || l < lo {
				lo = l
			}
			if hi != infinite && (h == infinite || h > hi) {
				hi = h
			}
		}
		return lo, hi
	case kRepeat:
		l, h := width(n.subs[0])
		return mul(l, n.min), mul(h, n.max)
	case kBackref:
		return n.min, n.max
	}
	return 0, 0
}

// pyRepr quotes a string the way Python's repr does.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\' || r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == ' ' || r > ' ' && unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
