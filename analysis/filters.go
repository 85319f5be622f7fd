package analysis

import (
	"fmt"
	"strings"

	"github.com/evalcapsule/evalcapsule/analysis/internal/pyre"
	"github.com/evalcapsule/evalcapsule/harness"
)

// responses is what flows through a filter pipeline for one request: the
// list of its responses (one per repeat) until a selection filter such as
// take_first turns it into a single string.
type responses struct {
	list   []string
	single bool // list has been collapsed to one string: list[0]
}

// filterStep is one step of lm-eval's FilterEnsemble.
type filterStep interface {
	apply(r responses, doc *docContext) (responses, error)
}

// docContext gives filters and metrics that read the document lazy access
// to it.
type docContext struct {
	sample *harness.Sample
	doc    harness.Value
	parsed bool
	err    error
}

// field returns one field of the document, parsing only that field unless
// the whole document was needed already.
func (d *docContext) field(key string) (harness.Value, bool) {
	if d.parsed {
		v, ok := d.doc.Get(key)
		return v, ok && d.err == nil
	}
	v, ok, err := d.sample.DocField(key)
	return v, ok && err == nil
}

func (d *docContext) value() (harness.Value, error) {
	if !d.parsed {
		d.parsed = true
		d.doc, d.err = d.sample.DocValue()
	}
	return d.doc, d.err
}

// pipeline is a named filter: the steps of one entry of filter_list.
type pipeline struct {
	name  string
	steps []filterStep
}

func (p *pipeline) apply(resps []string, doc *docContext) (responses, error) {
	r := responses{list: resps}
	for _, s := range p.steps {
		var err error
		if r, err = s.apply(r, doc); err != nil {
			return r, err
		}
	}
	return r, nil
}

// builtinFilters is lm-eval's filter registry (lm_eval/filters/__init__.py).
var builtinFilters = []string{
	"take_first", "regex", "majority_vote", "take_first_k", "remove_whitespace",
	"lowercase", "uppercase", "map", "multi_choice_regex", "regex_pos",
	"format_span", "custom", "decontaminate",
}

// buildPipelines reads configs[task].filter_list. A task without one gets
// lm-eval's default: a filter named "none" that takes the first response.
func buildPipelines(task string, cfg harness.Value, rules versionRules) (map[string]*pipeline, []string, error) {
	fl, ok := cfg.Get("filter_list")
	if !ok || fl.Kind == harness.Null {
		return map[string]*pipeline{"none": {name: "none", steps: []filterStep{takeFirst{}}}}, []string{"none"}, nil
	}
	base := fmt.Sprintf("configs[%q].filter_list", task)
	if fl.Kind != harness.List {
		return nil, nil, &UnsupportedError{base, fmt.Sprintf("expected a list of filters, found a %s", fl.Kind)}
	}
	out := map[string]*pipeline{}
	var order []string
	for i, f := range fl.List {
		field := fmt.Sprintf("%s[%d]", base, i)
		nameV, _ := f.Get("name")
		if nameV.Kind != harness.String {
			return nil, nil, &UnsupportedError{field, "expected a \"name\""}
		}
		p := &pipeline{name: nameV.Str}
		order = append(order, p.name)
		out[p.name] = p
		steps, _ := f.Get("filter")
		if steps.Kind != harness.List {
			return out, order, &UnsupportedError{field + ".filter", "expected a list of filter steps"}
		}
		for j, st := range steps.List {
			sf := fmt.Sprintf("%s.filter[%d]", field, j)
			step, err := buildStep(st, sf, rules)
			if err != nil {
				p.steps = nil
				return out, order, err
			}
			p.steps = append(p.steps, step)
		}
	}
	return out, order, nil
}

func buildStep(st harness.Value, field string, rules versionRules) (filterStep, error) {
	fn, _ := st.Get("function")
	if fn.Kind != harness.String {
		return nil, &UnsupportedError{field, "expected a \"function\" name"}
	}
	str := func(key, def string) (string, error) {
		v, ok := st.Get(key)
		if !ok || v.Kind == harness.Null {
			return def, nil
		}
		if v.Kind != harness.String {
			return "", &UnsupportedError{field + "." + key, fmt.Sprintf("expected a string, found %s", v)}
		}
		return v.Str, nil
	}
	integer := func(key string, def int) (int, error) {
		v, ok := st.Get(key)
		if !ok || v.Kind == harness.Null {
			return def, nil
		}
		if v.Kind != harness.Number || !v.IsInt {
			return 0, &UnsupportedError{field + "." + key, fmt.Sprintf("expected an integer, found %s", v)}
		}
		return int(v.Num), nil
	}
	switch fn.Str {
	case "take_first":
		return takeFirst{}, nil
	case "take_first_k":
		k, err := integer("k", -1)
		if err != nil {
			return nil, err
		}
		if k < 0 {
			return nil, &UnsupportedError{field, "take_first_k needs k"}
		}
		return takeFirstK{k}, nil
	case "majority_vote":
		return majorityVote{}, nil
	case "lowercase":
		return mapStrings(pyre.Lower), nil
	case "uppercase":
		return mapStrings(pyre.Upper), nil
	case "remove_whitespace":
		return mapStrings(pyre.Strip), nil
	case "regex", "multi_choice_regex":
		pat, err := str("regex_pattern", `#### (\-?[0-9\.\,]+)`)
		if err != nil {
			return nil, err
		}
		gs, err := integer("group_select", 0)
		if err != nil {
			return nil, err
		}
		fb, err := str("fallback", "[invalid]")
		if err != nil {
			return nil, err
		}
		re, err := pyre.Compile(pat)
		if err != nil {
			return nil, &UnsupportedError{field + ".regex_pattern", err.Error()}
		}
		rf := regexFilter{re: re, groupSelect: gs, fallback: fb, rules: rules}
		if fn.Str == "regex" {
			return rf, nil
		}
		mc := mcRegexFilter{regexFilter: rf}
		if v, ok := st.Get("ignore_case"); ok {
			mc.ignoreCase, _ = v.Truth()
		}
		if v, ok := st.Get("ignore_punctuation"); ok {
			mc.ignorePunct, _ = v.Truth()
		}
		if v, ok := st.Get("regexes_to_ignore"); ok && v.Kind == harness.List {
			for i, e := range v.List {
				r, err := pyre.Compile(e.Str)
				if err != nil || e.Kind != harness.String {
					return nil, &UnsupportedError{fmt.Sprintf("%s.regexes_to_ignore[%d]", field, i), fmt.Sprintf("invalid regex %s", e)}
				}
				mc.ignore = append(mc.ignore, r)
			}
		}
		return mc, nil
	case "map":
		m, ok := st.Get("mapping_dict")
		if ok && m.Kind != harness.Object && m.Kind != harness.Null {
			return nil, &UnsupportedError{field + ".mapping_dict", "expected an object"}
		}
		def, _ := st.Get("default_value")
		return mapFilter{mapping: m, def: def}, nil
	}
	for _, b := range builtinFilters {
		if b == fn.Str {
			return nil, &UnsupportedError{field, fmt.Sprintf("filter %q is not re-implemented", fn.Str)}
		}
	}
	return nil, &UnsupportedError{field, fmt.Sprintf("unknown filter type %q (lm-eval's built-in filters are %s)", fn.Str, strings.Join(builtinFilters, ", "))}
}

type takeFirst struct{}

func (takeFirst) apply(r responses, _ *docContext) (responses, error) {
	if r.single {
		// Python's r[0] on a str is its first character.
		s := r.list[0]
		for _, c := range s {
			return responses{list: []string{string(c)}, single: true}, nil
		}
		return r, fmt.Errorf("take_first on an empty string (lm-eval raises IndexError)")
	}
	if len(r.list) == 0 {
		return r, fmt.Errorf("take_first on no responses (lm-eval raises IndexError)")
	}
	return responses{list: r.list[:1], single: true}, nil
}

type takeFirstK struct{ k int }

func (t takeFirstK) apply(r responses, _ *docContext) (responses, error) {
	if r.single || len(r.list) < t.k {
		return r, fmt.Errorf("take_first_k needs at least %d responses per doc, got %d", t.k, len(r.list))
	}
	return responses{list: r.list[:t.k]}, nil
}

type majorityVote struct{}

func (majorityVote) apply(r responses, _ *docContext) (responses, error) {
	if r.single || len(r.list) == 0 {
		return r, fmt.Errorf("majority_vote needs a list of responses")
	}
	// Counter(...).most_common(1): the highest count, ties to the value seen
	// first.
	counts := map[string]int{}
	best, bestN := "", 0
	for _, s := range r.list {
		counts[s]++
	}
	for _, s := range r.list {
		if n := counts[s]; n > bestN {
			best, bestN = s, n
		}
	}
	return responses{list: []string{best}}, nil
}

type mapStrings func(string) string

func (f mapStrings) apply(r responses, _ *docContext) (responses, error) {
	if r.single {
		// lowercase etc. iterate over the items; over a str that is its
		// characters, which come back as a list.
		var out []string
		for _, c := range r.list[0] {
			out = append(out, f(string(c)))
		}
		return responses{list: out}, nil
	}
	out := make([]string, len(r.list))
	for i, s := range r.list {
		out[i] = f(s)
	}
	return responses{list: out}, nil
}

type mapFilter struct {
	mapping harness.Value
	def     harness.Value
}

func (m mapFilter) apply(r responses, _ *docContext) (responses, error) {
	if r.single {
		return r, fmt.Errorf("map filter applied after a selection filter")
	}
	out := make([]string, len(r.list))
	for i, s := range r.list {
		v, ok := m.mapping.Get(s)
		if !ok {
			v = m.def
		}
		t, ok := v.Text()
		if !ok {
			t = "None"
		}
		out[i] = t
	}
	return responses{list: out}, nil
}

// regexFilter is lm-eval's RegexFilter.
type regexFilter struct {
	re          *pyre.Regexp
	groupSelect int
	fallback    string
	rules       versionRules
}

func (f regexFilter) apply(r responses, _ *docContext) (responses, error) {
	if r.single {
		return r, fmt.Errorf("regex filter applied after a selection filter")
	}
	out := make([]string, len(r.list))
	for i, s := range r.list {
		v, err := f.extract(s)
		if err != nil {
			return r, err
		}
		out[i] = v
	}
	return responses{list: out}, nil
}

func (f regexFilter) extract(s string) (string, error) {
	if f.rules.legacyRegex {
		// v0.4.0-v0.4.1: re.search(...).group(1).strip()
		g, ok := f.re.Search(s)
		if !ok {
			return f.fallback, nil
		}
		if len(g) < 2 {
			return "", fmt.Errorf("regex has no group 1 (lm-eval v0.4.0-v0.4.1 raises IndexError)")
		}
		return pyre.Strip(g[1]), nil
	}
	m, found, err := selectMatch(f.re, s, f.groupSelect)
	switch {
	case err != nil:
		return "", err
	case !found:
		return f.fallback, nil
	case m == "" && f.re.NumGroups() > 1:
		// An all-empty tuple falls back (v0.4.7+; earlier versions crashed,
		// so no file they wrote holds one).
		if !f.rules.emptyTupleFallback {
			return "", fmt.Errorf("all groups of the selected match are empty (lm-eval before v0.4.7 raises IndexError)")
		}
		return pyre.Strip(f.fallback), nil
	}
	return pyre.Strip(m), nil
}

// selectMatch is the selection both regex filters make: re.findall, the
// match at group_select (Python indexing: -1 is the last), and for a tuple
// its first non-empty group ("" when all are empty). found is false when
// nothing matched.
func selectMatch(re *pyre.Regexp, s string, groupSelect int) (m string, found bool, err error) {
	matches := re.FindAll(s)
	if len(matches) == 0 {
		return "", false, nil
	}
	i := groupSelect
	if i < 0 {
		i += len(matches)
	}
	if i < 0 || i >= len(matches) {
		return "", false, fmt.Errorf("group_select %d out of range for %d matches (lm-eval raises IndexError)", groupSelect, len(matches))
	}
	if re.NumGroups() > 1 {
		for _, g := range matches[i] {
			if g != "" {
				return g, true, nil
			}
		}
		return "", true, nil
	}
	return matches[i][0], true, nil
}

// mcRegexFilter is lm-eval's MultiChoiceRegexFilter: the regex, then the
// document's choices as literal patterns, then bare letters after a colon.
type mcRegexFilter struct {
	regexFilter
	ignoreCase, ignorePunct bool
	ignore                  []*pyre.Regexp
}

func (f mcRegexFilter) apply(r responses, dc *docContext) (responses, error) {
	if r.single {
		return r, fmt.Errorf("multi_choice_regex applied after a selection filter")
	}
	doc, err := dc.value()
	if err != nil {
		return r, fmt.Errorf("multi_choice_regex needs the document: %v", err)
	}
	chV, _ := doc.Get("choices")
	if chV.Kind != harness.List {
		return r, fmt.Errorf(`multi_choice_regex needs doc["choices"], a list`)
	}
	var litPats, letterPats []string
	toAlpha := map[string]string{}
	letterTo := map[string]string{}
	for i, c := range chV.List {
		if c.Kind != harness.String {
			return r, fmt.Errorf(`doc["choices"][%d] is not a string`, i)
		}
		m := f.ignores(pyre.Strip(c.Str))
		litPats = append(litPats, pyre.Escape(m))
		letter := string(rune('A' + i))
		toAlpha[m] = "(" + letter + ")"
		letterPats = append(letterPats, letter)
		letterTo[letter] = "(" + letter + ")"
	}
	litRE, err := pyre.Compile(strings.Join(litPats, "|"))
	if err != nil {
		return r, err
	}
	letterRE, err := pyre.Compile(`:[\s]*(` + strings.Join(letterPats, "|") + `)`)
	if err != nil {
		return r, err
	}
	out := make([]string, len(r.list))
	for i, s := range r.list {
		m, err := f.find(f.re, s, nil)
		if err != nil {
			return r, err
		}
		if m == "" {
			if m, err = f.find(litRE, f.ignores(s), toAlpha); err != nil {
				return r, err
			}
			if m == "" {
				if m, err = f.find(letterRE, s, letterTo); err != nil {
					return r, err
				}
			}
		}
		if m == "" {
			m = f.fallback
		}
		out[i] = m
	}
	return responses{list: out}, nil
}

func (f mcRegexFilter) find(re *pyre.Regexp, s string, convert map[string]string) (string, error) {
	g, found, err := selectMatch(re, s, f.groupSelect)
	if err != nil || !found || g == "" {
		return "", err
	}
	g = pyre.Strip(g)
	if c, ok := convert[g]; ok && g != "" {
		g = c
	}
	return g, nil
}

func (f mcRegexFilter) ignores(s string) string {
	for _, re := range f.ignore {
		s = re.Sub(s)
	}
	if f.ignoreCase {
		s = pyre.Lower(s)
	}
	if f.ignorePunct {
		s = removeUnicodePunct(s)
	}
	return s
}
