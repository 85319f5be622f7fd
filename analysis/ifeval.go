package analysis

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/evalcapsule/evalcapsule/harness"
)

// IFEval's process_results (lm_eval/tasks/ifeval/utils.py, shared by
// leaderboard_ifeval; unchanged in behaviour from v0.4.1 to v0.4.11): every
// instruction of a doc is checked on the response (strict) and on eight
// variants of it (loose: first and/or last line dropped, '*' removed). The
// checkers are instructions.py's, re-implemented with Python's str and re
// semantics (Unicode \s \w \d, IGNORECASE folding, str.strip/lower/isupper).
//
// Three checks cannot be recomputed bit for bit and say so: langdetect
// (response_language, and english_capital/english_lowercase once the case
// test passes), nltk's punkt sentence tokenizer (number_sentences) and its
// word_tokenize (capital_word_frequency).

// ifTri is a checker's outcome: followed, not followed, or not recomputable.
type ifTri int8

const (
	ifNo ifTri = iota
	ifYes
	ifUnknown
)

// ifevalResult is one doc's four metrics; why is set when any is unknown.
type ifevalResult struct {
	promptStrict, promptLoose ifTri
	instStrict, instLoose     []ifTri
	why                       string
}

// ifevalInstruction is one entry of instruction_id_list with its kwargs.
type ifevalInstruction struct {
	id     string
	kwargs map[string]harness.Value // falsy values dropped, as utils.py does
}

// scoreIFEval checks a response against a doc's instructions.
func scoreIFEval(doc harness.Value, response string) (ifevalResult, error) {
	var res ifevalResult
	ids, ok := doc.Get("instruction_id_list")
	if !ok || ids.Kind != harness.List {
		return res, fmt.Errorf("doc.instruction_id_list: expected a list of instruction ids")
	}
	kws, ok := doc.Get("kwargs")
	if !ok || kws.Kind != harness.List || len(kws.List) != len(ids.List) {
		return res, fmt.Errorf("doc.kwargs: expected one object per instruction (%d)", len(ids.List))
	}
	insts := make([]ifevalInstruction, len(ids.List))
	for i, idv := range ids.List {
		if idv.Kind != harness.String {
			return res, fmt.Errorf("doc.instruction_id_list[%d]: expected a string, found %s", i, idv)
		}
		in := ifevalInstruction{id: idv.Str, kwargs: map[string]harness.Value{}}
		kv := kws.List[i]
		if kv.Kind != harness.Object && kv.Kind != harness.Null {
			return res, fmt.Errorf("doc.kwargs[%d]: expected an object, found %s", i, kv)
		}
		for j, k := range kv.Keys {
			if pyTruthy(kv.Vals[j]) {
				in.kwargs[k] = kv.Vals[j]
			}
		}
		insts[i] = in
	}
	loose := looseVariants(response)
	var whys []string
	note := func(w string) {
		for _, x := range whys {
			if x == w {
				return
			}
		}
		whys = append(whys, w)
	}
	res.promptStrict, res.promptLoose = ifYes, ifYes
	all := func(acc *ifTri, t ifTri) {
		switch {
		case t == ifNo || *acc == ifNo:
			*acc = ifNo
		case t == ifUnknown:
			*acc = ifUnknown
		}
	}
	for _, in := range insts {
		check, err := ifevalChecker(in)
		var unknownID *ifevalUnknownIDError
		if errors.As(err, &unknownID) {
			return res, err // lm-eval raises KeyError: it cannot have logged this line
		}
		if err != nil {
			// kwargs lm-eval fills in at random (or rejects): the outcome
			// cannot be known from the logged doc.
			why := err.Error()
			check = func(string) (bool, string) { return false, why }
		}
		strict := ifNo
		if pyStrip(response) != "" {
			ok, why := check(response)
			strict = tri(ok, why)
			if why != "" {
				note(in.id + ": " + why)
			}
		}
		// any() over the variants: a True decides, an unknown keeps it open.
		lo := ifNo
		for _, r := range loose {
			if pyStrip(r) == "" {
				continue
			}
			ok, why := check(r)
			t := tri(ok, why)
			if t == ifYes {
				lo = ifYes
				break
			}
			if t == ifUnknown {
				lo = ifUnknown
				note(in.id + ": " + why)
			}
		}
		res.instStrict = append(res.instStrict, strict)
		res.instLoose = append(res.instLoose, lo)
		all(&res.promptStrict, strict)
		all(&res.promptLoose, lo)
	}
	res.why = strings.Join(whys, "; ")
	return res, nil
}

func tri(ok bool, why string) ifTri {
	switch {
	case why != "":
		return ifUnknown
	case ok:
		return ifYes
	}
	return ifNo
}

// looseVariants are test_instruction_following_loose's eight responses.
func looseVariants(response string) []string {
	r := strings.Split(response, "\n")
	first := pyStrip(strings.Join(r[1:], "\n"))
	last := pyStrip(strings.Join(r[:len(r)-1], "\n"))
	both := ""
	if len(r) > 2 {
		both = pyStrip(strings.Join(r[1:len(r)-1], "\n"))
	}
	star := func(s string) string { return strings.ReplaceAll(s, "*", "") }
	return []string{response, star(response), first, last, both, star(first), star(last), star(both)}
}

// pyTruthy is Python's bool() of a JSON value.
func pyTruthy(v harness.Value) bool {
	switch v.Kind {
	case harness.Null:
		return false
	case harness.Bool:
		return v.Bool
	case harness.Number:
		return v.Num != 0
	case harness.String:
		return v.Str != ""
	case harness.List:
		return len(v.List) > 0
	case harness.Object:
		return len(v.Keys) > 0
	}
	return true
}

// ifChecker is check_following: the outcome, or why it cannot be recomputed.
type ifChecker func(value string) (bool, string)

// ifevalChecker builds an instruction's checker from its kwargs the way
// build_description does; a kwarg left to random.choice is an error.
func ifevalChecker(in ifevalInstruction) (ifChecker, error) {
	field := func(k string) string { return fmt.Sprintf("doc.kwargs of %s: %s", in.id, k) }
	str := func(k string) (string, error) {
		v, ok := in.kwargs[k]
		if !ok {
			return "", fmt.Errorf("%s is missing (lm-eval would draw it at random)", field(k))
		}
		if v.Kind != harness.String {
			return "", fmt.Errorf("%s: expected a string, found %s", field(k), v)
		}
		return v.Str, nil
	}
	num := func(k string) (int, error) {
		v, ok := in.kwargs[k]
		if !ok {
			return 0, fmt.Errorf("%s is missing (lm-eval would draw it at random)", field(k))
		}
		if v.Kind != harness.Number || !v.IsInt {
			return 0, fmt.Errorf("%s: expected an integer, found %s", field(k), v)
		}
		if v.Num < 0 {
			return 0, fmt.Errorf("%s is negative (lm-eval would draw it at random)", field(k))
		}
		return int(v.Num), nil
	}
	rel := func(k string) (bool, error) { // true: "less than"
		s, err := str(k)
		if err != nil {
			return false, err
		}
		switch s {
		case "less than":
			return true, nil
		case "at least":
			return false, nil
		}
		return false, fmt.Errorf("%s: expected \"less than\" or \"at least\", found %q", field(k), s)
	}
	compare := func(n, threshold int, less bool) bool {
		if less {
			return n < threshold
		}
		return n >= threshold
	}
	var err error
	must := func(e error) {
		if err == nil {
			err = e
		}
	}
	var c ifChecker
	switch in.id {
	case "keywords:existence":
		v := in.kwargs["keywords"]
		kws, e := strList(v, field("keywords"))
		must(e)
		c = func(s string) (bool, string) {
			for _, k := range kws {
				n, why := pyIgnoreCaseCount(s, k, false, true)
				if why != "" {
					return false, why
				}
				if n == 0 {
					return false, ""
				}
			}
			return true, ""
		}
	case "keywords:frequency":
		k, e := str("keyword")
		must(e)
		k = pyStrip(k)
		f, e := num("frequency")
		must(e)
		less, e := rel("relation")
		must(e)
		c = func(s string) (bool, string) {
			n, why := pyIgnoreCaseCount(s, k, false, false)
			return compare(n, f, less), why
		}
	case "keywords:forbidden_words":
		ws, e := strList(in.kwargs["forbidden_words"], field("forbidden_words"))
		must(e)
		c = func(s string) (bool, string) {
			for _, w := range ws {
				n, why := pyIgnoreCaseCount(s, w, true, true)
				if why != "" {
					return false, why
				}
				if n > 0 {
					return false, ""
				}
			}
			return true, ""
		}
	case "keywords:letter_frequency":
		l, e := str("letter")
		must(e)
		// build_description draws a random ASCII letter unless letter is
		// one character whose lower case is a..z.
		if low, _ := pyLower(l); e == nil && (utf8.RuneCountInString(l) != 1 || len(low) != 1 || low[0] < 'a' || low[0] > 'z') {
			must(fmt.Errorf("%s %q is not one letter a-z (lm-eval would draw one at random)", field("letter"), l))
		}
		f, e := num("let_frequency")
		must(e)
		less, e := rel("let_relation")
		must(e)
		l, lowOK := pyLower(pyStrip(l))
		c = func(s string) (bool, string) {
			low, ok := pyLower(s)
			if !ok || !lowOK {
				return false, "str.lower() of a capital sigma depends on its context"
			}
			n := 0
			if utf8.RuneCountInString(l) == 1 {
				n = strings.Count(low, l)
			}
			return compare(n, f, less), ""
		}
	case "language:response_language":
		c = func(string) (bool, string) { return false, "langdetect is not re-implemented" }
	case "length_constraints:number_sentences":
		c = func(string) (bool, string) { return false, "nltk's punkt sentence tokenizer is not re-implemented" }
	case "length_constraints:number_paragraphs":
		n, e := num("num_paragraphs")
		must(e)
		c = func(s string) (bool, string) {
			ps := pyReSplit(reParagraphStars, s)
			count := len(ps)
			for i, p := range ps {
				if pyStrip(p) == "" {
					if i == 0 || i == len(ps)-1 {
						count--
					} else {
						return false, ""
					}
				}
			}
			return count == n, ""
		}
	case "length_constraints:number_words":
		n, e := num("num_words")
		must(e)
		less, e := rel("relation")
		must(e)
		c = func(s string) (bool, string) { return compare(countWords(s), n, less), "" }
	case "length_constraints:nth_paragraph_first_word":
		nps, e := num("num_paragraphs")
		must(e)
		nth, e := num("nth_paragraph")
		must(e)
		if e == nil && (nth <= 0 || nth > nps) {
			must(fmt.Errorf("%s: %d is outside 1..num_paragraphs (lm-eval would draw it at random)", field("nth_paragraph"), nth))
		}
		fw, e := str("first_word")
		must(e)
		fw, fwOK := pyLower(fw)
		c = func(s string) (bool, string) {
			if !fwOK {
				return false, "str.lower() of a capital sigma depends on its context"
			}
			ps := strings.Split(s, "\n\n")
			count := len(ps)
			for _, p := range ps {
				if pyStrip(p) == "" {
					count--
				}
			}
			if nth > count {
				return false, ""
			}
			p := pyStrip(ps[nth-1])
			if p == "" {
				return false, ""
			}
			word := strings.TrimLeft(strings.TrimLeft(pyStrip(pyFields(p)[0]), "'"), `"`)
			var first strings.Builder
			for _, r := range word {
				if strings.ContainsRune(`.,?!'"`, r) {
					break
				}
				first.WriteRune(r)
			}
			low, ok := pyLower(first.String())
			if !ok {
				return false, "str.lower() of a capital sigma depends on its context"
			}
			return count == nps && low == fw, ""
		}
	case "detectable_content:number_placeholders":
		n, e := num("num_placeholders")
		must(e)
		c = func(s string) (bool, string) { return len(rePlaceholder.FindAllStringIndex(s, -1)) >= n, "" }
	case "detectable_content:postscript":
		m, e := str("postscript_marker")
		must(e)
		m = pyStrip(m)
		var re func(string) bool
		switch m {
		case "P.P.S":
			re = rePPS.MatchString
		case "P.S.":
			re = rePS.MatchString
		default:
			low, ok := pyLower(m)
			if !ok || !isPlainLiteral(low) {
				must(fmt.Errorf("%s %q is a regular expression that is not re-implemented", field("postscript_marker"), m))
			}
			// \s*marker.*$ found anywhere: the marker occurring at all.
			re = func(s string) bool { return strings.Contains(s, low) }
		}
		c = func(s string) (bool, string) {
			low, ok := pyLower(s)
			if !ok {
				return false, "str.lower() of a capital sigma depends on its context"
			}
			return re(low), ""
		}
	case "detectable_format:number_bullet_lists":
		n, e := num("num_bullets")
		must(e)
		c = func(s string) (bool, string) {
			return len(reBulletStar.FindAllStringIndex(s, -1))+len(reBulletDash.FindAllStringIndex(s, -1)) == n, ""
		}
	case "detectable_format:constrained_response":
		c = func(s string) (bool, string) {
			s = pyStrip(s)
			for _, o := range []string{"My answer is yes.", "My answer is no.", "My answer is maybe."} {
				if strings.Contains(s, o) {
					return true, ""
				}
			}
			return false, ""
		}
	case "detectable_format:number_highlighted_sections":
		n, e := num("num_highlights")
		must(e)
		c = func(s string) (bool, string) {
			count := 0
			for _, h := range reHighlight.FindAllString(s, -1) {
				if pyStrip(strings.Trim(h, "*")) != "" {
					count++
				}
			}
			for _, h := range reDoubleHighlight.FindAllString(s, -1) {
				if pyStrip(h[2:len(h)-2]) != "" {
					count++
				}
			}
			return count >= n, ""
		}
	case "detectable_format:multiple_sections":
		sp, e := str("section_spliter")
		must(e)
		sp = pyStrip(sp)
		n, e := num("num_sections")
		must(e)
		if e == nil && !isPlainLiteral(sp) {
			must(fmt.Errorf("%s %q is a regular expression that is not re-implemented", field("section_spliter"), sp))
		}
		re := mustPyRegexp(pySpace + `?` + quoteMeta(sp) + pySpace + `?\p{Nd}+` + pySpace + `?`)
		c = func(s string) (bool, string) { return len(re.FindAllStringIndex(s, -1)) >= n, "" }
	case "detectable_format:json_format":
		c = func(s string) (bool, string) {
			s = pyStrip(s)
			for _, p := range []string{"```json", "```Json", "```JSON", "```"} {
				if strings.HasPrefix(s, p) {
					s = s[len(p):]
					break
				}
			}
			s = pyStrip(strings.TrimSuffix(s, "```"))
			ok, deep := pyJSONValid(s)
			if deep {
				return false, "JSON nested deeper than Python's recursion limit"
			}
			return ok, ""
		}
	case "detectable_format:title":
		c = func(s string) (bool, string) {
			for _, t := range reTitle.FindAllString(s, -1) {
				if pyStrip(strings.TrimRight(strings.TrimLeft(t, "<"), ">")) != "" {
					return true, ""
				}
			}
			return false, ""
		}
	case "combination:two_responses":
		c = func(s string) (bool, string) {
			var valid []string
			rs := strings.Split(s, "******")
			for i, r := range rs {
				if pyStrip(r) == "" {
					if i != 0 && i != len(rs)-1 {
						return false, ""
					}
				} else {
					valid = append(valid, r)
				}
			}
			return len(valid) == 2 && pyStrip(valid[0]) != pyStrip(valid[1]), ""
		}
	case "combination:repeat_prompt":
		p, e := str("prompt_to_repeat")
		must(e)
		p, pOK := pyLower(pyStrip(p))
		c = func(s string) (bool, string) {
			low, ok := pyLower(pyStrip(s))
			if !ok || !pOK {
				return false, "str.lower() of a capital sigma depends on its context"
			}
			return strings.HasPrefix(low, p), ""
		}
	case "startend:end_checker":
		p, e := str("end_phrase")
		must(e)
		p, pOK := pyLower(pyStrip(p))
		c = func(s string) (bool, string) {
			low, ok := pyLower(strings.Trim(pyStrip(s), `"`))
			if !ok || !pOK {
				return false, "str.lower() of a capital sigma depends on its context"
			}
			return strings.HasSuffix(low, p), ""
		}
	case "startend:quotation":
		c = func(s string) (bool, string) {
			s = pyStrip(s)
			return utf8.RuneCountInString(s) > 1 && s[0] == '"' && s[len(s)-1] == '"', ""
		}
	case "change_case:capital_word_frequency":
		c = func(string) (bool, string) { return false, "nltk's word_tokenize is not re-implemented" }
	case "change_case:english_capital":
		c = func(s string) (bool, string) {
			if !pyIsUpper(s) {
				return false, ""
			}
			return false, "langdetect is not re-implemented"
		}
	case "change_case:english_lowercase":
		c = func(s string) (bool, string) {
			if !pyIsLower(s) {
				return false, ""
			}
			return false, "langdetect is not re-implemented"
		}
	case "punctuation:no_comma":
		c = func(s string) (bool, string) { return !strings.Contains(s, ","), "" }
	default:
		return nil, &ifevalUnknownIDError{in.id}
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ifevalUnknownIDError: an instruction id lm-eval's registry does not have.
type ifevalUnknownIDError struct{ id string }

func (e *ifevalUnknownIDError) Error() string {
	return fmt.Sprintf("doc.instruction_id_list: %q is not in lm-eval's INSTRUCTION_DICT", e.id)
}

func strList(v harness.Value, field string) ([]string, error) {
	if v.Kind != harness.List {
		return nil, fmt.Errorf("%s: expected a list of strings (lm-eval would draw them at random when empty), found %s", field, v)
	}
	out := make([]string, 0, len(v.List))
	for _, e := range v.List {
		if e.Kind != harness.String {
			return nil, fmt.Errorf("%s: expected strings, found %s", field, e)
		}
		out = append(out, e.Str)
	}
	return out, nil
}

// pyIsSpace is str.isspace of one character: Unicode White_Space plus the
// separators U+001C..U+001F, which Python counts and Go does not.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// pyStrip is str.strip().
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// pyFields is str.split().
func pyFields(s string) []string { return strings.FieldsFunc(s, pyIsSpace) }

// pyIsWord is re's Unicode \w: str.isalnum() or '_'.
func pyIsWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// countWords is instructions_util.count_words: nltk's RegexpTokenizer(r"\w+").
func countWords(s string) int {
	n := 0
	in := false
	for _, r := range s {
		w := pyIsWord(r)
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

// pyLower is str.lower(): Go's simple mapping plus Python's full mapping
// of İ and its Final_Sigma rule for Σ. The bool is always true; it stays so
// that a mapping found not to be mirrored can say so.
func pyLower(s string) (string, bool) {
	if !strings.ContainsAny(s, "İΣ") {
		return strings.Map(unicode.ToLower, s), true
	}
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		switch r {
		case 'İ':
			b.WriteString("i\u0307")
		case 'Σ':
			if finalSigma(rs, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String(), true
}

// finalSigma is CPython's Final_Sigma context: a cased letter before the Σ
// and none after it, case-ignorable characters skipped both ways.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && pyCaseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !pyCased(rs[j]) {
		return false
	}
	j = i + 1
	for j < len(rs) && pyCaseIgnorable(rs[j]) {
		j++
	}
	return j == len(rs) || !pyCased(rs[j])
}

func pyCased(r rune) bool {
	return pyIsUpperRune(r) || pyIsLowerRune(r) || unicode.Is(unicode.Lt, r)
}

// pyCaseIgnorable is Unicode's Case_Ignorable: Mn, Me, Cf, Lm, Sk and the
// word-break MidLetter, MidNumLet and Single_Quote characters.
func pyCaseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '·', 0x387, 0x55f, 0x5f4, 0x2018, 0x2019, 0x2024, 0x2027, 0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

func pyIsUpperRune(r rune) bool {
	return unicode.Is(unicode.Lu, r) || unicode.Is(unicode.Other_Uppercase, r)
}

func pyIsLowerRune(r rune) bool {
	return unicode.Is(unicode.Ll, r) || unicode.Is(unicode.Other_Lowercase, r)
}

// pyIsUpper is str.isupper(): a cased character and no lower or title case.
func pyIsUpper(s string) bool {
	cased := false
	for _, r := range s {
		if pyIsLowerRune(r) || unicode.Is(unicode.Lt, r) {
			return false
		}
		if pyIsUpperRune(r) {
			cased = true
		}
	}
	return cased
}

// pyIsLower is str.islower().
func pyIsLower(s string) bool {
	cased := false
	for _, r := range s {
		if pyIsUpperRune(r) || unicode.Is(unicode.Lt, r) {
			return false
		}
		if pyIsLowerRune(r) {
			cased = true
		}
	}
	return cased
}
