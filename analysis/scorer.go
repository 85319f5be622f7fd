package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/evalcapsule/evalcapsule/harness"
)

// versionRules are the scoring behaviours that changed between lm-eval
// releases.
type versionRules struct {
	// legacyRegex: v0.4.0-v0.4.1 RegexFilter took re.search(...).group(1).
	legacyRegex bool
	// emptyTupleFallback: an all-empty tuple match falls back instead of
	// crashing (v0.4.7+). Older releases crashed, so no file they wrote holds
	// such a case and the fallback is safe for every version.
	emptyTupleFallback bool
	version            harness.VersionRange // for task rules that changed (leaderboard_math)
}

func rulesFor(vr harness.VersionRange) versionRules {
	return versionRules{
		legacyRegex:        vr.Hi.Less(harness.Version{0, 4, 2}),
		emptyTupleFallback: true,
		version:            vr,
	}
}

// metricSpec is one entry of configs[task].metric_list.
type metricSpec struct {
	name        string
	aggregation string // "" when not given: the registry default applies
	customAgg   bool   // aggregation is a Python function lm-eval printed
	kwargs      harness.Value
	field       string
}

// taskScorer holds what the configuration of one task says about scoring.
type taskScorer struct {
	task       string
	cfg        harness.Value
	hasConfig  bool
	outputType string

	pipelines   map[string]*pipeline
	filterOrder []string
	pipelineErr error // why the filters cannot be re-applied

	metrics       []metricSpec
	customProcess bool // process_results is a task-specific Python function
	// process is the customProcess re-implemented (truthfulqa.go), and
	// sumRule the summation of CPython's sum() it uses.
	process   knownProcess
	sumRule   Summation
	ifeval    bool // process_results is IFEval's (ifeval, leaderboard_ifeval)
	mathHard  bool // process_results is leaderboard_math's, under mathRules
	mathRules mathHardRules
	exact     map[string]*exactMatch
	exactErr  error
	// goldMemo caches normalized references: each doc's target is scored
	// once per filter. A scorer serves one samples file, on one goroutine.
	goldMemo map[string]string

	targetField  string   // doc_to_target names a doc field
	choiceList   []string // doc_to_choice is a literal list
	choiceField  string   // doc_to_choice names a doc field
	targetDelim  string
	hasDocChoice bool // generate_until with doc_to_choice: gold = choices[gold]
}

func newTaskScorer(task string, cfg harness.Value, rules versionRules) *taskScorer {
	ts := &taskScorer{task: task, cfg: cfg, hasConfig: cfg.Kind == harness.Object, targetDelim: " "}
	if !ts.hasConfig {
		if b, ok := builtinConfig(task); ok {
			ts.cfg, ts.hasConfig = b, true
			cfg = b
		}
	}
	if ot, ok := cfg.Get("output_type"); ok && ot.Kind == harness.String {
		ts.outputType = ot.Str
	}
	ts.pipelines, ts.filterOrder, ts.pipelineErr = buildPipelines(task, cfg, rules)
	if !ts.hasConfig {
		ts.pipelineErr = &UnsupportedError{fmt.Sprintf("configs[%q]", task), "no task configuration (no results file)"}
	}
	if pr, ok := cfg.Get("process_results"); ok && pr.Kind != harness.Null {
		ts.customProcess = true
		if pr.Kind == harness.String {
			ts.process = processOf(pr.Str)
		}
	}
	if ml, ok := cfg.Get("metric_list"); ok && ml.Kind == harness.List {
		for i, m := range ml.List {
			field := fmt.Sprintf("configs[%q].metric_list[%d]", task, i)
			name, _ := m.Get("metric")
			spec := metricSpec{field: field, kwargs: harness.Value{Kind: harness.Object}}
			if name.Kind == harness.String {
				spec.name = name.Str
			} else {
				spec.name = name.String()
			}
			for j, k := range m.Keys {
				v := m.Vals[j]
				switch k {
				case "metric", "higher_is_better", "hf_evaluate":
				case "aggregation":
					if v.Kind == harness.String {
						spec.aggregation = v.Str
						spec.customAgg = strings.HasPrefix(v.Str, "<function") || strings.Contains(v.Str, " at 0x") || strings.HasPrefix(v.Str, "def ")
					}
				default:
					spec.kwargs.Keys = append(spec.kwargs.Keys, k)
					spec.kwargs.Vals = append(spec.kwargs.Vals, v)
				}
			}
			ts.metrics = append(ts.metrics, spec)
		}
	}
	ts.ifeval = ts.customProcess && isIFEvalConfig(task, cfg, ts.metrics)
	if ts.customProcess && !ts.ifeval {
		ts.mathRules, ts.mathHard = mathHardRulesFor(task, cfg, rules.version)
	}
	ts.exact = map[string]*exactMatch{}
	ts.goldMemo = map[string]string{}
	for _, m := range ts.metrics {
		if m.name == "exact_match" {
			em, err := newExactMatch(m.kwargs, m.field)
			if err != nil {
				ts.exactErr = err
			}
			ts.exact[m.name] = em
		}
	}
	if t, ok := cfg.Get("doc_to_target"); ok && t.Kind == harness.String && isIdentifier(t.Str) {
		ts.targetField = t.Str
	}
	if t, ok := cfg.Get("doc_to_target"); ok && t.Kind == harness.String {
		if f, ok := jinjaField(t.Str); ok {
			ts.targetField = f
		}
	}
	if c, ok := cfg.Get("doc_to_choice"); ok {
		switch c.Kind {
		case harness.List:
			for _, e := range c.List {
				s, _ := e.Text()
				ts.choiceList = append(ts.choiceList, s)
			}
			ts.hasDocChoice = true
		case harness.String:
			if isIdentifier(c.Str) {
				ts.choiceField = c.Str
			} else if f, ok := jinjaField(c.Str); ok {
				ts.choiceField = f
			}
			ts.hasDocChoice = true
		}
	}
	if d, ok := cfg.Get("target_delimiter"); ok && d.Kind == harness.String {
		ts.targetDelim = d.Str
	}
	return ts
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// jinjaField recognises the templates "{{field}}" and "{{ field }}".
func jinjaField(s string) (string, bool) {
	if !strings.HasPrefix(s, "{{") || !strings.HasSuffix(s, "}}") {
		return "", false
	}
	f := strings.TrimSpace(s[2 : len(s)-2])
	return f, isIdentifier(f)
}

// spec returns the metric_list entry of a metric, if any.
func (ts *taskScorer) spec(name string) (metricSpec, bool) {
	for _, m := range ts.metrics {
		if m.name == name {
			return m, true
		}
	}
	return metricSpec{}, false
}

// aggregation returns the aggregation lm-eval used for a metric: the one the
// config names, else the registry's default for the metric, else mean (what
// lm-eval falls back to, with a warning, for metrics it does not know).
func (ts *taskScorer) aggregation(name string) (agg string, custom bool) {
	if m, ok := ts.spec(name); ok && m.aggregation != "" {
		return m.aggregation, m.customAgg
	}
	switch name {
	case "perplexity":
		return "perplexity", false
	case "word_perplexity", "byte_perplexity":
		return "weighted_perplexity", false
	case "bits_per_byte":
		return "bits_per_byte", false
	case "mcc":
		return "matthews_corrcoef", false
	case "f1":
		return "f1", false
	case "bleu", "chrf", "ter", "brier_score":
		return name, false
	}
	return "mean", false
}

// perDoc is one recomputed per-doc metric value.
type perDoc struct {
	name  string
	value float64
	kind  PyKind
	pair  []float64 // f1/mcc items: (gold, pred)
	// libmTol, when not 0, is how far the value may move when the C
	// library's exp or log it passes through rounds otherwise on another
	// platform (one ulp of each operand that came out of them).
	libmTol float64
	// texts is a sacrebleu item: (reference, prediction).
	texts []string
	// anyPlatform: the tolerance holds on every platform (numpy's own
	// exp), not only on one whose C library differs from this one's.
	anyPlatform bool
	list        []float64 // a list per doc (IFEval's inst_level_*), nil otherwise
}

// lineResult is what rescoring one samples line produced.
type lineResult struct {
	filtered     []string // recomputed filtered_resps leaves, flattened
	filteredOK   bool     // filtered recomputed
	filteredDiff string   // logged vs recomputed, when they differ
	values       []perDoc
	unsupported  string // why per-doc metrics were not recomputed
	err          string // a per-doc failure (e.g. a filter that would crash)
}

// rescoreLine recomputes the filtered responses and per-doc metrics of one
// line under the filter it was logged for.
func (ts *taskScorer) rescoreLine(s *harness.Sample, filter string, want []string) lineResult {
	var res lineResult
	outType := ts.outputType
	if outType == "" {
		outType = inferOutputType(s)
	}
	dc := &docContext{sample: s}
	switch outType {
	case "generate_until":
		res = ts.rescoreGenerate(s, filter, dc, want)
	case "multiple_choice", "loglikelihood":
		res = ts.rescoreLoglikelihood(s, filter, outType, dc, want)
	default:
		res.unsupported = fmt.Sprintf("output type %q is not re-scored per document", outType)
	}
	return res
}

func inferOutputType(s *harness.Sample) string {
	if s.Resps.Kind != harness.List || len(s.Resps.List) == 0 {
		return ""
	}
	first := s.Resps.List[0]
	if first.Kind == harness.List && len(first.List) > 0 && first.List[0].Kind == harness.List {
		if len(s.Resps.List) > 1 {
			return "multiple_choice"
		}
		return "loglikelihood"
	}
	return "generate_until"
}

func (ts *taskScorer) rescoreGenerate(s *harness.Sample, filter string, dc *docContext, want []string) lineResult {
	var res lineResult
	if ts.pipelineErr != nil {
		res.unsupported = ts.pipelineErr.Error()
		return res
	}
	p, ok := ts.pipelines[filter]
	if !ok {
		res.unsupported = fmt.Sprintf("filter %q is not in configs[%q].filter_list", filter, ts.task)
		return res
	}
	if s.Resps.Kind != harness.List || s.Filtered.Kind != harness.List || len(s.Resps.List) != len(s.Filtered.List) {
		res.err = "resps and filtered_resps do not have one entry per request"
		return res
	}
	var first responses
	for i, req := range s.Resps.List {
		if req.Kind != harness.List {
			res.err = fmt.Sprintf("resps[%d] is not a list of responses", i)
			return res
		}
		texts := make([]string, len(req.List))
		for j, r := range req.List {
			t, ok := r.Text()
			if !ok {
				t = "" // lm-eval v0.4.10+ turns non-strings into ""
			}
			texts[j] = t
		}
		out, err := p.apply(texts, dc)
		if err != nil {
			res.err = err.Error()
			return res
		}
		if i == 0 {
			first = out
		}
		if d := compareFiltered(out, s.Filtered.List[i]); d != "" && res.filteredDiff == "" {
			res.filteredDiff = d
		}
		res.filtered = append(res.filtered, out.list...)
	}
	res.filteredOK = true
	if ts.process == processTruthfulQAGen {
		return ts.rescoreProcessGen(res, first, dc, want)
	}
	if ts.ifeval && first.single {
		return ts.rescoreIFEval(res, dc, first.list[0], want)
	}
	if ts.mathHard && first.single {
		return ts.rescoreMathHard(res, dc, first.list[0], want)
	}
	if ts.customProcess {
		res.unsupported = fmt.Sprintf("configs[%q].process_results is a task-specific function", ts.task)
		return res
	}
	if !first.single {
		res.unsupported = "the filter pipeline does not end in a single response"
		return res
	}
	pred := first.list[0]
	for _, name := range want {
		if pd, ok, why := ts.textItem(s, dc, name, pred); ok || why != "" {
			if ok {
				res.values = append(res.values, pd)
			} else {
				res.unsupported = why
			}
			continue
		}
		if name != "exact_match" {
			res.unsupported = fmt.Sprintf("per-doc metric %q is not re-implemented", name)
			continue
		}
		if ts.exactErr != nil {
			res.unsupported = ts.exactErr.Error()
			continue
		}
		em := ts.exact[name]
		if em == nil {
			em = &exactMatch{}
		}
		golds, multi, err := ts.golds(s, dc)
		if err != nil {
			res.unsupported = err.Error()
			continue
		}
		v := em.score(pred, golds, ts.goldMemo)
		kind := NumpyFloat
		if multi {
			kind = PyFloat // 1.0 if scores > 0.0 else 0.0
		}
		res.values = append(res.values, perDoc{name: name, value: v, kind: kind})
	}
	return res
}

// compareFiltered compares a recomputed filter output with the logged
// filtered_resps entry; it returns "" when they agree.
func compareFiltered(out responses, logged harness.Value) string {
	if out.single {
		t, ok := logged.Text()
		if ok && t == out.list[0] {
			return ""
		}
		return fmt.Sprintf("logged %s, recomputed %q", logged, out.list[0])
	}
	if logged.Kind == harness.List && len(logged.List) == len(out.list) {
		same := true
		for i, e := range logged.List {
			if t, ok := e.Text(); !ok || t != out.list[i] {
				same = false
			}
		}
		if same {
			return ""
		}
	}
	return fmt.Sprintf("logged %s, recomputed %q", logged, out.list)
}

// golds returns the reference answers of a generate_until doc.
func (ts *taskScorer) golds(s *harness.Sample, dc *docContext) ([]string, bool, error) {
	target := s.Target
	if ts.targetField != "" {
		if v, ok := dc.field(ts.targetField); ok {
			target = v
		}
	}
	if ts.hasDocChoice {
		choices, err := ts.choices(s, dc)
		if err != nil {
			return nil, false, err
		}
		idx, ok := targetIndex(target, choices)
		if !ok || idx < 0 || idx >= len(choices) {
			return nil, false, fmt.Errorf("target %s is not an index into the %d choices", target, len(choices))
		}
		return []string{choices[idx]}, false, nil
	}
	switch target.Kind {
	case harness.List:
		var out []string
		for _, e := range target.List {
			t, _ := e.Text()
			out = append(out, t)
		}
		return out, true, nil
	case harness.String:
		if l, ok := parsePyList(target.Str); ok && strings.HasPrefix(target.Str, "[") && ts.targetField == "" {
			return l, true, nil
		}
		return []string{target.Str}, false, nil
	}
	t, ok := target.Text()
	if !ok {
		return nil, false, fmt.Errorf("target %s is not text", target)
	}
	return []string{t}, false, nil
}

// choices returns the answer choices of a doc: the config's literal list, a
// doc field, or the continuations of the requests without the delimiter.
func (ts *taskScorer) choices(s *harness.Sample, dc *docContext) ([]string, error) {
	if ts.choiceList != nil {
		return ts.choiceList, nil
	}
	if ts.choiceField != "" {
		if v, ok := dc.field(ts.choiceField); ok && v.Kind == harness.List {
			out := make([]string, len(v.List))
			for i, e := range v.List {
				out[i], _ = e.Text()
			}
			return out, nil
		}
	}
	args, err := s.ArgumentsValue()
	if err != nil {
		return nil, fmt.Errorf("cannot read the choices: %v", err)
	}
	var out []string
	add := func(req harness.Value) {
		var cont harness.Value
		if req.Kind == harness.Object {
			cont, _ = req.Get("arg_1")
		} else if req.Kind == harness.List && len(req.List) > 1 {
			cont = req.List[1]
		}
		c, _ := cont.Text()
		out = append(out, strings.TrimPrefix(c, ts.targetDelim))
	}
	switch args.Kind {
	case harness.Object:
		for _, v := range args.Vals {
			add(v)
		}
	case harness.List:
		for _, v := range args.List {
			add(v)
		}
	}
	return out, nil
}

func targetIndex(target harness.Value, choices []string) (int, bool) {
	switch target.Kind {
	case harness.Number:
		if target.IsInt {
			return int(target.Num), true
		}
	case harness.String:
		if i, err := strconv.Atoi(strings.TrimSpace(target.Str)); err == nil {
			return i, true
		}
		for i, c := range choices {
			if c == target.Str {
				return i, true
			}
		}
		return -100, true
	}
	return 0, false
}

func (ts *taskScorer) rescoreLoglikelihood(s *harness.Sample, filter, outType string, dc *docContext, want []string) lineResult {
	var res lineResult
	if s.Resps.Kind != harness.List || s.Filtered.Kind != harness.List || len(s.Resps.List) != len(s.Filtered.List) || len(s.Resps.List) == 0 {
		res.err = "resps and filtered_resps do not have one entry per request"
		return res
	}
	// The default pipeline (take_first) keeps each request's first response.
	lls := make([]float64, len(s.Resps.List))
	greedy := make([]bool, len(s.Resps.List))
	for i, req := range s.Resps.List {
		if req.Kind != harness.List || len(req.List) == 0 {
			res.err = fmt.Sprintf("resps[%d] is not a list of responses", i)
			return res
		}
		first := req.List[0]
		if d := compareLL(first, s.Filtered.List[i]); d != "" && res.filteredDiff == "" {
			res.filteredDiff = d
		}
		ll, g, err := llPair(s.Filtered.List[i])
		if err != nil {
			res.err = fmt.Sprintf("filtered_resps[%d]: %v", i, err)
			return res
		}
		lls[i], greedy[i] = ll, g
	}
	res.filteredOK = true
	if ts.process == processTruthfulQAMC2 || ts.process == processTruthfulQAMC2Split {
		return ts.rescoreProcessMC2(res, lls, dc, want)
	}
	if ts.customProcess {
		res.unsupported = fmt.Sprintf("configs[%q].process_results is a task-specific function", ts.task)
		return res
	}
	if outType == "loglikelihood" {
		for _, name := range want {
			switch name {
			case "acc":
				v := 0.0
				if greedy[0] {
					v = 1
				}
				res.values = append(res.values, perDoc{name: name, value: v, kind: PyInt})
			case "perplexity":
				res.values = append(res.values, perDoc{name: name, value: lls[0], kind: PyFloat})
			default:
				res.unsupported = fmt.Sprintf("per-doc metric %q is not re-implemented", name)
			}
		}
		return res
	}
	// multiple_choice
	var choices []string
	needChoices := false
	for _, n := range want {
		if n == "acc_norm" || n == "acc_bytes" || n == "acc_mutual_info" {
			needChoices = true
		}
	}
	target := s.Target
	if ts.targetField != "" {
		if v, ok := dc.field(ts.targetField); ok {
			target = v
		}
	}
	// A target that is a choice's text (copa, whose doc_to_target returns
	// the correct choice) is mapped through choices.index, as lm-eval
	// does: plain acc needs the choices then too.
	if textTarget(target) {
		needChoices = true
	}
	nChoices := len(lls)
	if needChoices || ts.choiceList != nil || ts.choiceField != "" {
		c, err := ts.choices(s, dc)
		if err != nil {
			res.unsupported = err.Error()
			return res
		}
		choices = c
		nChoices = len(c)
	}
	var uncond []float64
	if 2*nChoices == len(lls) {
		if _, ok := ts.spec("acc_mutual_info"); ok || contains(want, "acc_mutual_info") {
			uncond = lls[nChoices:]
			lls = lls[:nChoices]
			if len(choices) > nChoices {
				choices = choices[:nChoices]
			}
		}
	}
	golds, multi, err := mcGold(target, choices, nChoices)
	if err != nil {
		res.unsupported = err.Error()
		return res
	}
	pred := argmax(lls)
	has := func(i int) bool {
		for _, g := range golds {
			if g == i {
				return true
			}
		}
		return false
	}
	score := func(i int) float64 {
		if has(i) {
			return 1
		}
		return 0
	}
	for _, name := range want {
		switch name {
		case "acc":
			res.values = append(res.values, perDoc{name: name, value: score(pred), kind: PyFloat})
		case "acc_norm", "acc_bytes":
			if len(choices) != len(lls) {
				res.unsupported = fmt.Sprintf("%d choices for %d log-likelihoods", len(choices), len(lls))
				continue
			}
			norm := make([]float64, len(lls))
			for i, ll := range lls {
				l := float64(len([]rune(choices[i])))
				if name == "acc_bytes" {
					l = float64(len(choices[i]))
				}
				norm[i] = ll / l
			}
			res.values = append(res.values, perDoc{name: name, value: score(argmax(norm)), kind: PyFloat})
		case "acc_mutual_info":
			if uncond == nil {
				res.unsupported = "acc_mutual_info without the unconditional log-likelihoods"
				continue
			}
			mi := make([]float64, len(lls))
			for i := range lls {
				mi[i] = lls[i] - uncond[i]
			}
			res.values = append(res.values, perDoc{name: name, value: score(argmax(mi)), kind: PyFloat})
		case "exact_match":
			v := 0.0
			if multi {
				for _, g := range golds {
					if g != -100 && greedy[g] {
						v = 1
					}
				}
			} else if golds[0] != -100 && greedy[golds[0]] {
				v = 1
			}
			res.values = append(res.values, perDoc{name: name, value: v, kind: PyInt})
		case "f1", "mcc":
			if multi {
				res.unsupported = "f1/mcc with multiple targets"
				continue
			}
			res.values = append(res.values, perDoc{name: name, pair: []float64{float64(golds[0]), float64(pred)}, kind: PyInt})
		default:
			res.unsupported = fmt.Sprintf("per-doc metric %q is not re-implemented", name)
		}
	}
	return res
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// textTarget reports whether a multiple-choice target is text rather than
// an index (or a list holding text), so that the choices are needed to
// find the gold.
func textTarget(v harness.Value) bool {
	switch v.Kind {
	case harness.String:
		if l, ok := parsePyList(v.Str); ok && strings.HasPrefix(v.Str, "[") {
			for _, e := range l {
				if _, err := strconv.Atoi(e); err != nil {
					return true
				}
			}
			return false
		}
		_, err := strconv.Atoi(v.Str)
		return err != nil
	case harness.List:
		for _, e := range v.List {
			if textTarget(e) {
				return true
			}
		}
	}
	return false
}

// mcGold is a multiple-choice doc's gold index (or indices): an int as is, a
// string through choices.index, a list for multiple targets; -100 marks a gold
// outside the choices, as lm-eval does.
func mcGold(target harness.Value, choices []string, n int) ([]int, bool, error) {
	one := func(v harness.Value) (int, error) {
		switch v.Kind {
		case harness.Number:
			if !v.IsInt {
				return 0, fmt.Errorf("target %s is not an index", v)
			}
			i := int(v.Num)
			if i >= n {
				i = -100
			}
			return i, nil
		case harness.String:
			// A string that is a choice maps through choices.index; lm-eval
			// v0.4.4+ also logs int targets as strings, so digits that are
			// not a choice are an index.
			for i, c := range choices {
				if c == v.Str {
					return i, nil
				}
			}
			if i, err := strconv.Atoi(v.Str); err == nil {
				if i >= n {
					i = -100
				}
				return i, nil
			}
			if choices == nil {
				return 0, fmt.Errorf("target %q needs the choices, which are unknown", v.Str)
			}
			return -100, nil
		}
		return 0, fmt.Errorf("target %s is neither an index nor a choice", v)
	}
	if target.Kind == harness.String && strings.HasPrefix(target.Str, "[") {
		if l, ok := parsePyList(target.Str); ok {
			target = harness.Value{Kind: harness.List}
			for _, s := range l {
				target.List = append(target.List, harness.Value{Kind: harness.String, Str: s})
			}
		}
	}
	if target.Kind == harness.List {
		var out []int
		for _, e := range target.List {
			i, err := one(e)
			if err != nil {
				return nil, false, err
			}
			out = append(out, i)
		}
		return out, true, nil
	}
	i, err := one(target)
	if err != nil {
		return nil, false, err
	}
	return []int{i}, false, nil
}

// argmax is numpy's argmax: the first maximum; a NaN wins at once.
func argmax(xs []float64) int {
	best := 0
	for i, x := range xs {
		if math.IsNaN(x) {
			return i
		}
		if x > xs[best] {
			best = i
		}
	}
	return best
}

func llPair(v harness.Value) (float64, bool, error) {
	if v.Kind != harness.List || len(v.List) != 2 {
		return 0, false, fmt.Errorf("expected [log-likelihood, is_greedy], found %s", v)
	}
	ll, ok := v.List[0].Float()
	if !ok {
		return 0, false, fmt.Errorf("log-likelihood %s is not a number", v.List[0])
	}
	g, ok := v.List[1].Truth()
	if !ok {
		return 0, false, fmt.Errorf("is_greedy %s is not a bool", v.List[1])
	}
	return ll, g, nil
}

func compareLL(first, logged harness.Value) string {
	a, ga, err1 := llPair(first)
	b, gb, err2 := llPair(logged)
	if err1 != nil || err2 != nil || math.Float64bits(a) != math.Float64bits(b) || ga != gb {
		return fmt.Sprintf("logged %s, first response %s", logged, first)
	}
	return ""
}

// parsePyList reads the repr of a Python list of strings or ints, which is
// how lm-eval v0.4.4+ logs a list target (str(target)).
func parsePyList(s string) ([]string, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	var out []string
	i := 1
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i < len(s) && s[i] == ']' && i == len(s)-1 {
			return out, true
		}
		if i >= len(s) {
			return nil, false
		}
		switch c := s[i]; {
		case c == '\'' || c == '"':
			var b strings.Builder
			i++
			for i < len(s) && s[i] != c {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					switch s[i] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					case 'r':
						b.WriteByte('\r')
					case '\\', '\'', '"':
						b.WriteByte(s[i])
					default:
						return nil, false // \x, \u escapes: not worth guessing
					}
				} else {
					b.WriteByte(s[i])
				}
				i++
			}
			if i >= len(s) {
				return nil, false
			}
			i++
			out = append(out, b.String())
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			out = append(out, s[i:j])
			i = j
		default:
			return nil, false
		}
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		if i == len(s)-1 && s[i] == ']' {
			return out, true
		}
		return nil, false
	}
}
