package harness

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// This file reads an argv back the way each lm-eval release does, written
// from the releases' source (lm_eval/utils.py simple_parse_args_string and
// handle_arg_string; lm_eval/__main__.py try_parse_json and the
// trust_remote_code handling up to v0.4.9.2; lm_eval/_cli/utils.py
// MergeDictAction, key_val_to_dict and handle_cli_value_string, and
// lm_eval/config/evaluate_config.py from v0.4.10), independently of
// argv.go: the tests compare the Python values it gives with the values a
// spec means. Where Python would do something this model does not follow
// (a non-ASCII digit, a string escape inside ast.literal_eval, ...) it says
// errPyUnmodelled, and only the Python cross-check judges.

var errPyUnmodelled = errors.New("not modelled in Go")

// pyKind is the type of a Python value.
type pyKind uint8

const (
	pyNone pyKind = iota
	pyBool
	pyInt
	pyFloat
	pyStr
	pyList
	pyTuple
	pyDict
)

// pyValue is a Python value: None, bool, int, float, str, list, tuple or
// dict (keys in insertion order).
type pyValue struct {
	kind  pyKind
	b     bool
	i     *big.Int
	f     float64
	s     string
	items []pyValue // list, tuple
	keys  []pyValue // dict
	vals  []pyValue // dict
}

func pyStrValue(s string) pyValue { return pyValue{kind: pyStr, s: s} }
func pyDictValue() pyValue        { return pyValue{kind: pyDict} }

// set assigns d[k] = v: a new key goes last, an existing one keeps its place.
func (d *pyValue) set(k, v pyValue) {
	for i, old := range d.keys {
		if pyKeyEqual(old, k) {
			d.vals[i] = v
			return
		}
	}
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
}

// pyKeyEqual compares dict keys of the kinds the model lets into a dict
// (str and int).
func pyKeyEqual(a, b pyValue) bool {
	switch {
	case a.kind != b.kind:
		return false
	case a.kind == pyStr:
		return a.s == b.s
	case a.kind == pyInt:
		return a.i.Cmp(b.i) == 0
	}
	return false
}

// canon renders v as the canonical text both the Go model and the Python
// cross-check write: JSON with Python's number and string forms, a tuple as
// {"tuple":[...]}, a dict with a key that is not a str as {"dict":[[k,v],...]}.
func (v pyValue) canon() string { return string(v.appendCanon(nil)) }

func (v pyValue) appendCanon(b []byte) []byte {
	switch v.kind {
	case pyNone:
		return append(b, "null"...)
	case pyBool:
		return strconv.AppendBool(b, v.b)
	case pyInt:
		return append(b, v.i.String()...)
	case pyFloat:
		return pynum.AppendJSONFloat(b, v.f)
	case pyStr:
		return pynum.AppendString(b, v.s)
	case pyList, pyTuple:
		if v.kind == pyTuple {
			b = append(b, `{"tuple":`...)
		}
		b = append(b, '[')
		for i, x := range v.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = x.appendCanon(b)
		}
		b = append(b, ']')
		if v.kind == pyTuple {
			b = append(b, '}')
		}
		return b
	}
	strKeys := true
	for _, k := range v.keys {
		strKeys = strKeys && k.kind == pyStr
	}
	if !strKeys {
		b = append(b, `{"dict":[`...)
		for i := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = v.keys[i].appendCanon(b)
			b = append(b, ',')
			b = v.vals[i].appendCanon(b)
			b = append(b, ']')
		}
		return append(b, "]}"...)
	}
	b = append(b, '{')
	for i := range v.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = v.keys[i].appendCanon(b)
		b = append(b, ':')
		b = v.vals[i].appendCanon(b)
	}
	return append(b, '}')
}

// pyNonASCIIRisk reports whether s holds a character that Python's
// isnumeric, int(), float() or strip() treat differently from ASCII text
// (digits, numerals, spaces of other scripts).
func pyNonASCIIRisk(s string) bool {
	for _, r := range s {
		if r >= utf8.RuneSelf && (unicode.IsNumber(r) || unicode.IsSpace(r) || unicode.Is(unicode.Han, r)) {
			return true
		}
	}
	return false
}

var (
	// pyFloatSyntax is what float() reads once stripped: PEP 515 digits
	// (single underscores between digits), optional fraction and exponent.
	pyFloatSyntax = regexp.MustCompile(`^[+-]?(\d(_?\d)*(\.(\d(_?\d)*)?)?|\.\d(_?\d)*)([eE][+-]?\d(_?\d)*)?$`)
	pyFloatWords  = regexp.MustCompile(`(?i)^[+-]?(inf|infinity|nan)$`)
)

// pyFloatOf is float(s): ok false where Python raises ValueError.
func pyFloatOf(s string) (f float64, ok bool, err error) {
	if pyNonASCIIRisk(s) {
		return 0, false, errPyUnmodelled
	}
	t := strings.Trim(s, " \t\n\r\v\f\x1c\x1d\x1e\x1f\x85")
	switch {
	case pyFloatWords.MatchString(t):
		neg := strings.HasPrefix(t, "-")
		if strings.HasSuffix(strings.ToLower(t), "nan") {
			return math.NaN(), true, nil
		}
		if neg {
			return math.Inf(-1), true, nil
		}
		return math.Inf(1), true, nil
	case pyFloatSyntax.MatchString(t):
		f, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, false, err
		}
		return f, true, nil
	}
	return 0, false, nil
}

// pyHandleArgString is lm_eval.utils.handle_arg_string (every release):
// "true"/"false" in any case, str.isnumeric → int, float(), else the text.
// literalEval adds v0.4.10's handle_cli_value_string last step: what
// ast.literal_eval reads, before the text.
func pyHandleArgString(s string, literalEval bool) (pyValue, error) {
	switch strings.ToLower(s) {
	case "true":
		return pyValue{kind: pyBool, b: true}, nil
	case "false":
		return pyValue{kind: pyBool, b: false}, nil
	}
	if pyNonASCIIRisk(s) {
		return pyValue{}, errPyUnmodelled
	}
	if s != "" && strings.Trim(s, "0123456789") == "" {
		n, _ := new(big.Int).SetString(s, 10)
		return pyValue{kind: pyInt, i: n}, nil
	}
	if f, ok, err := pyFloatOf(s); err != nil {
		return pyValue{}, err
	} else if ok {
		return pyValue{kind: pyFloat, f: f}, nil
	}
	if literalEval {
		v, ok, err := pyLiteralEval(s)
		if err != nil {
			return pyValue{}, err
		}
		if ok {
			return v, nil
		}
	}
	return pyStrValue(s), nil
}

// pyVersion is a release of the parsing model, by its number.
func pyVersion(s string) Version { return MustVersion(s) }

// pySimpleParseArgsString is lm_eval.utils.simple_parse_args_string: the
// argument stripped, split at every ",", empty items dropped, each item
// split at "=" (v0.4.0-v0.4.7: into exactly two parts or ValueError; from
// v0.4.8 the first part is the key and the rest, joined by "=", the value),
// each value through handle_arg_string, into a dict.
func pySimpleParseArgsString(v Version, s string) (pyValue, error) {
	d := pyDictValue()
	s = strings.TrimSpace(s)
	if s == "" {
		return d, nil
	}
	for item := range strings.SplitSeq(s, ",") {
		if item == "" {
			continue
		}
		parts := strings.Split(item, "=")
		var key, val string
		if v.Less(pyVersion("0.4.8")) {
			if len(parts) != 2 {
				return pyValue{}, fmt.Errorf("ValueError: %q does not split into key and value", item)
			}
			key, val = parts[0], parts[1]
		} else {
			key, val = parts[0], strings.Join(parts[1:], "=")
		}
		x, err := pyHandleArgString(val, false)
		if err != nil {
			return pyValue{}, err
		}
		d.set(pyStrValue(key), x)
	}
	return d, nil
}

// pyTryParseJSON is try_parse_json (v0.4.9+): json.loads, or on a decoding
// error the text itself, unless it holds "{" (then an error).
func pyTryParseJSON(s string) (pyValue, error) {
	v, err := pyJSONLoads(s)
	switch {
	case err == nil:
		return v, nil
	case errors.Is(err, errPyUnmodelled):
		return pyValue{}, err
	case strings.Contains(s, "{"):
		return pyValue{}, fmt.Errorf("argparse error: invalid JSON %q", s)
	}
	return pyStrValue(s), nil
}

// pyKeyValToDict is key_val_to_dict (v0.4.10+): split at every ",", each
// item at the first "=" (ValueError without one), values through
// handle_cli_value_string.
func pyKeyValToDict(s string) (pyValue, error) {
	d := pyDictValue()
	if s == "" {
		return d, nil
	}
	for item := range strings.SplitSeq(s, ",") {
		key, val, ok := strings.Cut(item, "=")
		if !ok {
			return pyValue{}, fmt.Errorf("ValueError: %q has no \"=\"", item)
		}
		x, err := pyHandleArgString(val, true)
		if err != nil {
			return pyValue{}, err
		}
		d.set(pyStrValue(key), x)
	}
	return d, nil
}

// pyOccurrences returns the values given to flag, one list per occurrence:
// "--flag=value" is one value; "--flag v..." takes the next argument, or
// with nargs="+" every argument up to the next option.
func pyOccurrences(args []string, flag string, nargsPlus bool) [][]string {
	var out [][]string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if value, ok := strings.CutPrefix(a, flag+"="); ok {
			out = append(out, []string{value})
			continue
		}
		if a != flag {
			continue
		}
		var values []string
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			values = append(values, args[i])
			if !nargsPlus {
				break
			}
		}
		out = append(out, values)
	}
	return out
}

// pyParseKVFlags returns the dicts a release makes of the --model_args
// and --gen_kwargs of args, as simple_evaluate receives them (absent: an
// empty dict), with --trust_remote_code's addition to model_args.
func pyParseKVFlags(v Version, args []string) (modelArgs, genKwargs pyValue, err error) {
	trust := false
	for _, a := range args {
		trust = trust || a == "--trust_remote_code"
	}
	if v.AtLeast(pyVersion("0.4.10")) {
		if len(args) == 0 || args[0] != "run" {
			return pyValue{}, pyValue{}, errors.New("no run subcommand")
		}
		parse := func(flag string) (pyValue, error) {
			cur := pyDictValue()
			for _, values := range pyOccurrences(args[1:], flag, true) {
				if len(values) == 0 {
					return pyValue{}, fmt.Errorf("argparse error: %s expects at least one argument", flag)
				}
				r, err := pyTryParseJSON(values[0])
				if err != nil {
					return pyValue{}, err
				}
				if r.kind == pyDict {
					for i := range r.keys {
						cur.set(r.keys[i], r.vals[i])
					}
					continue // the other values of this occurrence are dropped
				}
				for _, x := range values {
					d, err := pyKeyValToDict(x)
					if err != nil {
						return pyValue{}, err
					}
					for i := range d.keys {
						cur.set(d.keys[i], d.vals[i])
					}
				}
			}
			return cur, nil
		}
		if modelArgs, err = parse("--model_args"); err != nil {
			return
		}
		if genKwargs, err = parse("--gen_kwargs"); err != nil {
			return
		}
		if trust {
			modelArgs.set(pyStrValue("trust_remote_code"), pyValue{kind: pyBool, b: true})
		}
		return modelArgs, genKwargs, nil
	}

	last := func(flag string) (string, bool, error) {
		occ := pyOccurrences(args, flag, false)
		if len(occ) == 0 {
			return "", false, nil
		}
		values := occ[len(occ)-1]
		if len(values) != 1 {
			return "", false, fmt.Errorf("argparse error: %s expects one argument", flag)
		}
		return values[0], true, nil
	}
	// parse is what simple_evaluate makes of the flag's value, after the
	// argparse type (try_parse_json from v0.4.9).
	typed := func(flag, s string) (pyValue, error) {
		if v.Less(pyVersion("0.4.9")) {
			return pySimpleParseArgsString(v, s)
		}
		r, err := pyTryParseJSON(s)
		if err != nil {
			return pyValue{}, err
		}
		switch r.kind {
		case pyDict:
			return r, nil
		case pyStr:
			return pySimpleParseArgsString(v, r.s)
		}
		return pyValue{}, fmt.Errorf("%s is JSON but not an object: %s", flag, r.canon())
	}

	s, _, err := last("--model_args")
	if err != nil {
		return
	}
	if trust && v.AtLeast(pyVersion("0.4.2")) {
		switch {
		case v.Less(pyVersion("0.4.9")):
			s += ",trust_remote_code=True"
		default:
			r, err := pyTryParseJSON(s)
			if err != nil {
				return pyValue{}, pyValue{}, err
			}
			if r.kind == pyDict {
				if v.Less(pyVersion("0.4.9.1")) {
					return pyValue{}, pyValue{}, errors.New("TypeError: dict + str (v0.4.9 appends to --model_args)")
				}
				r.set(pyStrValue("trust_remote_code"), pyValue{kind: pyBool, b: true})
				modelArgs = r
			} else {
				s += ",trust_remote_code=True"
			}
		}
	}
	if modelArgs.kind != pyDict {
		if modelArgs, err = typed("--model_args", s); err != nil {
			return
		}
	}
	g, given, err := last("--gen_kwargs")
	switch {
	case err != nil:
		return
	case !given:
		genKwargs = pyDictValue()
	case v.AtLeast(pyVersion("0.4.2")) && v.Less(pyVersion("0.4.3")):
		return pyValue{}, pyValue{}, errors.New("argparse error: --gen_kwargs is type=dict")
	default:
		if genKwargs, err = typed("--gen_kwargs", g); err != nil {
			return
		}
	}
	return modelArgs, genKwargs, nil
}

// pyIntended returns the dicts spec means on release v: a text value as
// that release's key=value reading types it (handle_arg_string;
// handle_cli_value_string from v0.4.10), a JSON value as json.loads reads
// it; with trust_remote_code=True added when the spec asks for it.
func pyIntended(v Version, spec RunSpec) (modelArgs, genKwargs pyValue, err error) {
	dict := func(kvs KVs) (pyValue, error) {
		d := pyDictValue()
		for _, kv := range kvs {
			var x pyValue
			var err error
			if kv.JSON {
				x, err = pyJSONLoads(kv.Value)
			} else {
				x, err = pyHandleArgString(kv.Value, v.AtLeast(pyVersion("0.4.10")))
			}
			if err != nil {
				return pyValue{}, fmt.Errorf("%s: %w", kv.Key, err)
			}
			d.set(pyStrValue(kv.Key), x)
		}
		return d, nil
	}
	if modelArgs, err = dict(spec.ModelArgs); err != nil {
		return
	}
	if spec.TrustRemoteCode {
		modelArgs.set(pyStrValue("trust_remote_code"), pyValue{kind: pyBool, b: true})
	}
	genKwargs, err = dict(spec.GenKwargs)
	return
}

// pyJSONLoads is Python's json.loads: standard JSON plus NaN, Infinity and
// -Infinity; an int without fraction or exponent, a float otherwise
// (beyond float64: inf); an object's repeated key keeps its first place and
// its last value.
func pyJSONLoads(s string) (pyValue, error) {
	p := &pyJSONParser{s: s}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return pyValue{}, err
	}
	p.space()
	if p.i != len(p.s) {
		return pyValue{}, p.fail("extra data")
	}
	return v, nil
}

var errPyJSONDecode = errors.New("JSONDecodeError")

type pyJSONParser struct {
	s string
	i int
}

func (p *pyJSONParser) fail(msg string) error {
	return fmt.Errorf("%w: %s at %d", errPyJSONDecode, msg, p.i)
}

func (p *pyJSONParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n\r", p.s[p.i]) >= 0 {
		p.i++
	}
}

var pyJSONNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`)

func (p *pyJSONParser) value(depth int) (pyValue, error) {
	if depth > 500 {
		return pyValue{}, errPyUnmodelled // Python's recursion limit
	}
	rest := p.s[p.i:]
	for _, w := range []struct {
		word string
		v    pyValue
	}{
		{"null", pyValue{kind: pyNone}},
		{"true", pyValue{kind: pyBool, b: true}},
		{"false", pyValue{kind: pyBool}},
		{"NaN", pyValue{kind: pyFloat, f: math.NaN()}},
		{"Infinity", pyValue{kind: pyFloat, f: math.Inf(1)}},
		{"-Infinity", pyValue{kind: pyFloat, f: math.Inf(-1)}},
	} {
		if strings.HasPrefix(rest, w.word) {
			p.i += len(w.word)
			return w.v, nil
		}
	}
	if rest == "" {
		return pyValue{}, p.fail("expecting value")
	}
	switch c := rest[0]; {
	case c == '"':
		s, err := p.str()
		return pyStrValue(s), err
	case c == '[':
		p.i++
		out := pyValue{kind: pyList}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return out, nil
		}
		for {
			p.space()
			x, err := p.value(depth + 1)
			if err != nil {
				return pyValue{}, err
			}
			out.items = append(out.items, x)
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				return out, nil
			}
			return pyValue{}, p.fail("expecting , or ]")
		}
	case c == '{':
		p.i++
		out := pyDictValue()
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return out, nil
		}
		for {
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return pyValue{}, p.fail("expecting property name")
			}
			k, err := p.str()
			if err != nil {
				return pyValue{}, err
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return pyValue{}, p.fail("expecting :")
			}
			p.i++
			p.space()
			x, err := p.value(depth + 1)
			if err != nil {
				return pyValue{}, err
			}
			out.set(pyStrValue(k), x)
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return out, nil
			}
			return pyValue{}, p.fail("expecting , or }")
		}
	}
	m := pyJSONNumber.FindStringSubmatch(rest)
	if m == nil {
		return pyValue{}, p.fail("expecting value")
	}
	p.i += len(m[0])
	if m[2] == "" && m[3] == "" {
		n, _ := new(big.Int).SetString(m[0], 10)
		return pyValue{kind: pyInt, i: n}, nil
	}
	f, err := strconv.ParseFloat(m[0], 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return pyValue{}, err
	}
	return pyValue{kind: pyFloat, f: f}, nil
}

// str reads a JSON string at p.i (strict: no raw control characters).
func (p *pyJSONParser) str() (string, error) {
	p.i++ // the quote
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.fail("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", p.fail("invalid control character")
		case c != '\\':
			b.WriteByte(c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", p.fail("unterminated string")
		}
		e := p.s[p.i+1]
		p.i += 2
		if r, ok := map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[e]; ok {
			b.WriteByte(r)
			continue
		}
		if e != 'u' {
			return "", p.fail("invalid \\escape")
		}
		r, err := p.hex4()
		if err != nil {
			return "", err
		}
		if 0xd800 <= r && r < 0xdc00 && strings.HasPrefix(p.s[p.i:], `\u`) {
			p.i += 2
			lo, err := p.hex4()
			if err != nil {
				return "", err
			}
			if 0xdc00 <= lo && lo < 0xe000 {
				r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
			} else {
				return "", errPyUnmodelled // a lone surrogate, which Python keeps
			}
		} else if 0xd800 <= r && r < 0xe000 {
			return "", errPyUnmodelled
		}
		b.WriteRune(r)
	}
}

func (p *pyJSONParser) hex4() (rune, error) {
	if p.i+4 > len(p.s) {
		return 0, p.fail("invalid \\uXXXX escape")
	}
	n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, p.fail("invalid \\uXXXX escape")
	}
	p.i += 4
	return rune(n), nil
}

// pyLiteralEval is ast.literal_eval of the text handle_cli_value_string
// gives it (v0.4.10+): ok false where Python raises ValueError or
// SyntaxError (lm-eval then keeps the text). The model reads numbers
// (decimal int and float), strings without escapes, True, False, None,
// tuples, lists and dicts with str or int keys, and a single + or - before
// a number; anything Python's literal grammar has beyond that (escapes,
// string prefixes and concatenation, complex numbers, sets, Ellipsis,
// other number forms, non-ASCII outside strings, line breaks, comments) is
// errPyUnmodelled. An expression that holds a name other than True, False
// and None (and set, unmodelled), or any operator a literal cannot hold,
// fails in Python whatever else it holds, so it is ok false.
func pyLiteralEval(s string) (pyValue, bool, error) {
	toks, ok, err := pyLiteralTokens(strings.TrimLeft(s, " \t"))
	if err != nil || !ok {
		return pyValue{}, ok, err
	}
	p := &pyLiteralParser{toks: toks}
	v, ok, err := p.top()
	if err != nil || !ok {
		return pyValue{}, ok, err
	}
	if p.i != len(p.toks) {
		return pyValue{}, false, nil
	}
	return v, true, nil
}

type pyToken struct {
	kind byte // 'n' number, 's' string, 'w' word, or the punctuation itself
	text string
}

var pyLiteralNumber = regexp.MustCompile(`^([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?`)

func pyLiteralTokens(s string) (toks []pyToken, ok bool, err error) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c >= utf8.RuneSelf, c == '\n', c == '\r', c == '\\', c == '#', c == '\f', c == '\v', c < 0x20:
			return nil, false, errPyUnmodelled
		case c == '"' || c == '\'':
			if strings.HasPrefix(s[i:], strings.Repeat(string(c), 3)) {
				return nil, false, errPyUnmodelled
			}
			if len(toks) > 0 && toks[len(toks)-1].kind == 's' {
				return nil, false, errPyUnmodelled // implicit concatenation
			}
			body, n, ok, err := pyStringLiteral(s[i+1:], c)
			if err != nil || !ok {
				return nil, ok, err
			}
			toks = append(toks, pyToken{'s', body})
			i += 1 + n
		case '0' <= c && c <= '9' || c == '.' && i+1 < len(s) && '0' <= s[i+1] && s[i+1] <= '9':
			m := pyLiteralNumber.FindString(s[i:])
			j := i + len(m)
			if j < len(s) {
				switch next := s[j] | 0x20; {
				case s[j] == '_' || s[j] == '.' || next == 'j' || m == "0" && strings.IndexByte("xob", next) >= 0:
					return nil, false, errPyUnmodelled // 1_0, 1.2.3, 1j, 0x1F, ...
				case 'a' <= next && next <= 'z':
					// "9f", "1e": an invalid decimal literal, or a number
					// before a keyword, which no literal has.
					return nil, false, nil
				}
			}
			toks = append(toks, pyToken{'n', m})
			i = j
		case c == '_' || 'a' <= c|0x20 && c|0x20 <= 'z':
			j := i
			for j < len(s) && (s[j] == '_' || 'a' <= s[j]|0x20 && s[j]|0x20 <= 'z' || '0' <= s[j] && s[j] <= '9') {
				j++
			}
			word := s[i:j]
			if j < len(s) && (s[j] == '"' || s[j] == '\'') {
				switch strings.ToLower(word) {
				case "r", "u", "b", "f", "br", "rb", "fr", "rf":
					return nil, false, errPyUnmodelled // a prefixed string
				}
				return nil, false, nil // a name before a string: SyntaxError
			}
			switch word {
			case "True", "False", "None":
				toks = append(toks, pyToken{'w', word})
			case "set":
				return nil, false, errPyUnmodelled // set() is a literal
			default:
				return nil, false, nil // a name: malformed node or SyntaxError
			}
			i = j
		case strings.IndexByte("()[]{},:+-", c) >= 0:
			toks = append(toks, pyToken{c, ""})
			i++
		case c == '.':
			return nil, false, errPyUnmodelled // Ellipsis, or an attribute
		default:
			return nil, false, nil // = * / % < > ! & | ^ ~ @ ; ` $ ?: never in a literal
		}
	}
	return toks, true, nil
}

type pyLiteralParser struct {
	toks []pyToken
	i    int
}

func (p *pyLiteralParser) peek() byte {
	if p.i < len(p.toks) {
		return p.toks[p.i].kind
	}
	return 0
}

// top reads the expression: a bare tuple when it has a comma.
func (p *pyLiteralParser) top() (pyValue, bool, error) {
	first, ok, err := p.elem()
	if err != nil || !ok {
		return pyValue{}, ok, err
	}
	if p.peek() != ',' {
		return first, true, nil
	}
	out := pyValue{kind: pyTuple, items: []pyValue{first}}
	for p.peek() == ',' {
		p.i++
		if p.peek() == 0 {
			break
		}
		x, ok, err := p.elem()
		if err != nil || !ok {
			return pyValue{}, ok, err
		}
		out.items = append(out.items, x)
	}
	return out, true, nil
}

// seq reads elements up to the closing bracket; tuple reports whether a
// comma was seen (for parentheses).
func (p *pyLiteralParser) seq(closing byte) (items []pyValue, comma, ok bool, err error) {
	for {
		if p.peek() == closing {
			p.i++
			return items, comma, true, nil
		}
		x, ok, err := p.elem()
		if err != nil || !ok {
			return nil, false, ok, err
		}
		items = append(items, x)
		switch p.peek() {
		case ',':
			p.i++
			comma = true
		case closing:
		default:
			return nil, false, false, nil
		}
	}
}

func (p *pyLiteralParser) elem() (pyValue, bool, error) {
	if p.i >= len(p.toks) {
		return pyValue{}, false, nil
	}
	t := p.toks[p.i]
	p.i++
	switch t.kind {
	case '+', '-':
		switch p.peek() {
		case 'n':
		case '(':
			return pyValue{}, false, errPyUnmodelled // -(1) is -1
		default:
			return pyValue{}, false, nil // a sign before anything but a number
		}
		v, ok := pyLiteralNum(p.toks[p.i].text)
		p.i++
		if !ok {
			return pyValue{}, false, nil
		}
		if t.kind == '-' {
			if v.kind == pyInt {
				v.i.Neg(v.i)
			} else {
				v.f = -v.f
			}
		}
		if k := p.peek(); k == '+' || k == '-' {
			// A binary + or - is a literal only with a complex number on
			// the right, which the tokens would have shown as unmodelled.
			return pyValue{}, false, nil
		}
		return v, true, nil
	case 'n':
		v, ok := pyLiteralNum(t.text)
		if k := p.peek(); k == '+' || k == '-' {
			return pyValue{}, false, nil
		}
		return v, ok, nil
	case 's':
		return pyStrValue(t.text), true, nil
	case 'w':
		switch t.text {
		case "True":
			return pyValue{kind: pyBool, b: true}, true, nil
		case "False":
			return pyValue{kind: pyBool}, true, nil
		}
		return pyValue{kind: pyNone}, true, nil
	case '[':
		items, _, ok, err := p.seq(']')
		return pyValue{kind: pyList, items: items}, ok, err
	case '(':
		if p.peek() == ')' {
			p.i++
			return pyValue{kind: pyTuple}, true, nil
		}
		items, comma, ok, err := p.seq(')')
		if err != nil || !ok {
			return pyValue{}, ok, err
		}
		if len(items) == 1 && !comma {
			return items[0], true, nil
		}
		return pyValue{kind: pyTuple, items: items}, true, nil
	case '{':
		out := pyDictValue()
		for {
			if p.peek() == '}' {
				p.i++
				return out, true, nil
			}
			k, ok, err := p.elem()
			if err != nil || !ok {
				return pyValue{}, ok, err
			}
			if p.peek() != ':' {
				return pyValue{}, false, errPyUnmodelled // a set, or a syntax error
			}
			p.i++
			v, ok, err := p.elem()
			if err != nil || !ok {
				return pyValue{}, ok, err
			}
			if k.kind != pyStr && k.kind != pyInt {
				return pyValue{}, false, errPyUnmodelled // unhashable, or equal across types
			}
			out.set(k, v)
			switch p.peek() {
			case ',':
				p.i++
			case '}':
			default:
				return pyValue{}, false, nil
			}
		}
	}
	return pyValue{}, false, nil
}

// pyLiteralNum reads a number token; ok false for a decimal int with
// leading zeros, which Python's grammar refuses.
func pyLiteralNum(s string) (pyValue, bool) {
	if !strings.ContainsAny(s, ".eE") {
		if len(s) > 1 && s[0] == '0' && strings.Trim(s, "0") != "" {
			return pyValue{}, false
		}
		n, _ := new(big.Int).SetString(s, 10)
		return pyValue{kind: pyInt, i: n}, true
	}
	f, _ := strconv.ParseFloat(s, 64) // the token is float syntax; out of range is inf or 0, as in Python
	return pyValue{kind: pyFloat, f: f}, true
}

// argvRoundTrip reads args back as release v does and compares the dicts
// with what spec means there. It returns a description of the first
// difference ("" when none), or errPyUnmodelled where the Go model cannot
// tell.
func argvRoundTrip(v Version, spec RunSpec, args []string) (string, error) {
	wantMA, wantGK, err := pyIntended(v, spec)
	if err != nil {
		return "", err
	}
	gotMA, gotGK, err := pyParseKVFlags(v, args)
	if err != nil {
		if errors.Is(err, errPyUnmodelled) {
			return "", err
		}
		return fmt.Sprintf("lm-eval %s fails to read the argv: %v", v, err), nil
	}
	if got, want := gotMA.canon(), wantMA.canon(); got != want {
		return fmt.Sprintf("model_args reads back as %s, want %s", got, want), nil
	}
	if got, want := gotGK.canon(), wantGK.canon(); got != want {
		return fmt.Sprintf("gen_kwargs reads back as %s, want %s", got, want), nil
	}
	return "", nil
}

// pyStringLiteral reads the rest of a Python string literal opened by
// quote (no prefix, not triple-quoted): its value and the bytes read,
// closing quote included. Escapes: \\ \' \" \a \b \f \n \r \t \v, \xhh,
// \uXXXX, \UXXXXXXXX, and an unknown escape kept as it is (Python warns);
// octal, \N{...} and line continuations are errPyUnmodelled. ok is false
// for an unterminated literal (SyntaxError).
func pyStringLiteral(s string, quote byte) (body string, n int, ok bool, err error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == quote:
			return b.String(), i + 1, true, nil
		case c == '\n' || c == '\r':
			return "", 0, false, nil // a line break ends the line: unterminated
		case c == 0:
			return "", 0, false, errPyUnmodelled
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return "", 0, false, nil
		}
		e := s[i+1]
		if r, ok := map[byte]byte{'\\': '\\', '\'': '\'', '"': '"', 'a': 7, 'b': 8, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11}[e]; ok {
			b.WriteByte(r)
			i += 2
			continue
		}
		width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
		switch {
		case width > 0:
			if i+2+width > len(s) {
				return "", 0, false, nil // truncated escape: SyntaxError
			}
			r, perr := strconv.ParseUint(s[i+2:i+2+width], 16, 32)
			if perr != nil {
				return "", 0, false, nil
			}
			if r > unicode.MaxRune || 0xd800 <= r && r < 0xe000 {
				return "", 0, false, errPyUnmodelled
			}
			b.WriteRune(rune(r))
			i += 2 + width
		case '0' <= e && e <= '7' || e == 'N' || e == '\n' || e == '\r':
			return "", 0, false, errPyUnmodelled
		default:
			b.WriteByte('\\') // an unknown escape stays
			i++
		}
	}
	return "", 0, false, nil
}

// argvPythonScript reads the same argvs back in Python, following each
// release's documented parsing with the standard library's argparse, json
// and ast. Input: one JSON object a line, {"v": release, "argv": [...],
// "model_args": [[key, value, is_json], ...], "gen_kwargs": [...],
// "trust": bool}; output: one line each, {"parsed": [model_args,
// gen_kwargs] or {"error": ...}, "intended": [...] or {"error": ...}},
// values written as pyValue.canon writes them.
const argvPythonScript = `
import argparse, ast, io, json, math, sys

def V(s): return tuple(int(x) for x in s.split("."))

def canon(v):
    if v is None: return "null"
    if v is True: return "true"
    if v is False: return "false"
    if isinstance(v, int): return str(v)
    if isinstance(v, float):
        if math.isnan(v): return "NaN"
        if math.isinf(v): return "Infinity" if v > 0 else "-Infinity"
        return repr(v)
    if isinstance(v, str): return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list): return "[" + ",".join(canon(x) for x in v) + "]"
    if isinstance(v, tuple): return '{"tuple":[' + ",".join(canon(x) for x in v) + "]}"
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v):
            return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canon(x) for k, x in v.items()) + "}"
        return '{"dict":[' + ",".join("[" + canon(k) + "," + canon(x) + "]" for k, x in v.items()) + "]}"
    return json.dumps({"repr": repr(v)}, ensure_ascii=False)

# lm_eval.utils.handle_arg_string; with literal, v0.4.10's handle_cli_value_string.
def handle_arg_string(arg, literal=False):
    if arg.lower() == "true": return True
    if arg.lower() == "false": return False
    if arg.isnumeric(): return int(arg)
    try:
        return float(arg)
    except ValueError:
        if not literal: return arg
        try:
            return ast.literal_eval(arg)
        except (ValueError, SyntaxError):
            return arg

# lm_eval.utils.simple_parse_args_string: split at ",", drop empty items,
# each at "=" (before v0.4.8 exactly two parts).
def simple_parse_args_string(v, s):
    s = s.strip()
    if not s: return {}
    out = {}
    for item in [a for a in s.split(",") if a]:
        kv = item.split("=")
        if v < (0, 4, 8):
            k, val = kv
        else:
            k, val = kv[0], "=".join(kv[1:])
        out[k] = handle_arg_string(val)
    return out

# try_parse_json (v0.4.9+).
def try_parse_json(s):
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        if "{" in s: raise ValueError("invalid JSON")
        return s

# key_val_to_dict (v0.4.10+).
def key_val_to_dict(s):
    res = {}
    if not s: return res
    for item in s.split(","):
        k, val = item.split("=", 1)
        res[k] = handle_arg_string(val, literal=True)
    return res

# MergeDictAction (v0.4.10+): a JSON object in the first value of an
# occurrence is merged; otherwise every value is read as key=value.
class MergeDict(argparse.Action):
    def __call__(self, parser, ns, values, option_string=None):
        cur = getattr(ns, self.dest) or {}
        r = try_parse_json(values[0])
        if isinstance(r, dict):
            cur = {**cur, **r}
        else:
            for x in values: cur.update(key_val_to_dict(x))
        setattr(ns, self.dest, cur)

def parse(v, argv):
    p = argparse.ArgumentParser(allow_abbrev=False, exit_on_error=False)
    for flag in ("--model", "--tasks", "--output_path", "--num_fewshot", "--batch_size", "--device", "--limit",
                 "--use_cache", "--system_instruction", "--seed", "--apply_chat_template", "--fewshot_as_multiturn"):
        p.add_argument(flag, nargs="?")
    for flag in ("--log_samples", "--trust_remote_code", "--confirm_run_unsafe_code"):
        p.add_argument(flag, action="store_true")
    if v >= (0, 4, 10):
        p.add_argument("cmd")
        p.add_argument("--model_args", nargs="+", action=MergeDict, default=None)
        p.add_argument("--gen_kwargs", nargs="+", action=MergeDict, default=None)
    else:
        t = try_parse_json if v >= (0, 4, 9) else str
        p.add_argument("--model_args", type=t, default="")
        p.add_argument("--gen_kwargs", type=dict if (0, 4, 2) <= v < (0, 4, 3) else t, default=None)
    err = sys.stderr
    sys.stderr = io.StringIO()
    try:
        a = p.parse_args(argv)
    except SystemExit:
        raise ValueError("argparse error: " + sys.stderr.getvalue().strip().splitlines()[-1])
    finally:
        sys.stderr = err
    ma, gk = a.model_args, a.gen_kwargs
    if v >= (0, 4, 10):
        ma, gk = ma or {}, gk or {}
        if a.trust_remote_code: ma["trust_remote_code"] = True
        return ma, gk
    if a.trust_remote_code and v >= (0, 4, 2):
        if isinstance(ma, dict) and v >= (0, 4, 9, 1):
            ma["trust_remote_code"] = True
        else:
            ma = ma + ",trust_remote_code=True"
    # simple_evaluate: a str is parsed, a dict taken as it is.
    def read(x):
        if x is None: return {}
        if isinstance(x, dict): return x
        if isinstance(x, str): return simple_parse_args_string(v, x)
        raise TypeError("not a str or dict: " + repr(x))
    return read(ma), read(gk)

def intended(v, line):
    out = []
    for kvs in (line["model_args"], line["gen_kwargs"]):
        d = {}
        for k, val, is_json in kvs:
            d[k] = json.loads(val) if is_json else handle_arg_string(val, literal=v >= (0, 4, 10))
        out.append(d)
    if line["trust"]: out[0]["trust_remote_code"] = True
    return out

for raw in sys.stdin:
    line = json.loads(raw)
    v = V(line["v"])
    res = {}
    for name, f in (("parsed", lambda: parse(v, line["argv"])), ("intended", lambda: intended(v, line))):
        try:
            res[name] = [canon(x) for x in f()]
        except Exception as e:
            res[name] = {"error": type(e).__name__ + ": " + str(e)}
    print(json.dumps(res, ensure_ascii=False))
`
