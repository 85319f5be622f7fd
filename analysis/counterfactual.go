package analysis

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/evalcapsule/evalcapsule/analysis/internal/pyre"
	"github.com/evalcapsule/evalcapsule/harness"
)

// RegexError is a counterfactual pattern Python's re (as lm-eval compiles
// it) would refuse, or one that cannot be reproduced faithfully; the
// message gives the position in the pattern.
type RegexError struct {
	Pattern string
	Err     error
}

func (e *RegexError) Error() string { return e.Err.Error() }
func (e *RegexError) Unwrap() error { return e.Err }

// Counterfactual re-scores a generative task's logged responses under a
// regex filter of one's own (then take_first, as lm-eval's filters end) and
// the task's metric: the score the run would have had with that extraction,
// without running anything. The series is named filter "regex:<pattern>".
func Counterfactual(sc *Scores, task, metric, pattern string, groupSelect int) (*Series, error) {
	var base *Series
	for _, s := range sc.Series {
		if s.Task == task && s.Metric == metric {
			base = s
			break
		}
	}
	if base == nil {
		return nil, fmt.Errorf("%w: %s has no %s for task %q", ErrNoSeries, sc.Run.Output.Path(), metric, task)
	}
	out, _, err := counterfactual(sc, base, pattern, groupSelect)
	return out, err
}

// extraction is one document's logged filtered response and the regex's.
type extraction struct{ logged, regex string }

// counterfactual re-scores the lines of base's filter under the regex; it
// also returns each document's logged and recomputed extraction.
func counterfactual(sc *Scores, base *Series, pattern string, groupSelect int) (*Series, []extraction, error) {
	task, metric := base.Task, base.Metric
	re, err := pyre.Compile(pattern)
	if err != nil {
		return nil, nil, &RegexError{Pattern: pattern, Err: fmt.Errorf("counterfactual regex: %w", err)}
	}
	var cfg harness.Value
	if r := sc.Run.Output.Results; r != nil {
		cfg = r.Configs[task]
	}
	ts := newTaskScorer(task, cfg, versionRules{emptyTupleFallback: true})
	p := &pipeline{name: "regex:" + pattern, steps: []filterStep{
		regexFilter{re: re, groupSelect: groupSelect, fallback: "[invalid]", rules: versionRules{emptyTupleFallback: true}},
		takeFirst{},
	}}
	ts.pipelines = map[string]*pipeline{p.name: p}
	ts.pipelineErr = nil
	out := &Series{Task: task, Metric: metric, Filter: p.name, File: base.File, Kind: NumpyFloat}
	var ex []extraction
	r, err := base.File.Open()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	for {
		s, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		// The responses are the same under every filter: read one block
		// (the first, in files that do not log the filter).
		if s.Filter != "" && s.Filter != base.Filter {
			continue
		}
		if s.Filter == "" && len(out.Docs) == len(base.Docs) {
			break
		}
		if ot := outputType(ts, s); ot != "generate_until" {
			return nil, nil, fmt.Errorf("%w: task %q is %s: its logged responses are log-likelihoods of the choices, not text a regex could extract an answer from (only generate_until tasks have one)", ErrNotRecomputable, task, ot)
		}
		lr := ts.rescoreLine(s, p.name, []string{metric})
		if lr.err != "" {
			return nil, nil, fmt.Errorf("%w: %s line %d: %s", ErrNotRecomputable, base.File.Path, s.Line, lr.err)
		}
		pd, ok := findPerDoc(lr.values, metric)
		if !ok {
			return nil, nil, fmt.Errorf("%w: %s: %s cannot be re-scored: %s", ErrNotRecomputable, task, metric, lr.unsupported)
		}
		out.Docs = append(out.Docs, DocRef{DocID: s.DocID, DocHash: s.DocHash, PromptHash: s.PromptHash, Line: s.Line})
		out.Values = append(out.Values, pd.value)
		out.Kind = pd.kind
		var e extraction
		// The line's filtered_resps are the logged filter's only when the
		// line names it.
		if s.Filter != "" && s.Filtered.Kind == harness.List && len(s.Filtered.List) > 0 {
			e.logged, _ = s.Filtered.List[0].Text()
		}
		if len(lr.filtered) > 0 {
			e.regex = lr.filtered[0]
		}
		ex = append(ex, e)
	}
	if len(out.Docs) != len(base.Docs) {
		return nil, nil, fmt.Errorf("%w: %s: read %d documents for the counterfactual, expected %d (samples without a filter field: one block per filter)", ErrNotRecomputable, task, len(out.Docs), len(base.Docs))
	}
	return out, ex, nil
}

// outputType is the task's output type, from its config or else from the
// shape of a line's responses.
func outputType(ts *taskScorer, s *harness.Sample) string {
	if ts.outputType != "" {
		return ts.outputType
	}
	if t := inferOutputType(s); t != "" {
		return t
	}
	return "of an unknown output type"
}

// CounterfactualOptions configures CounterfactualScore. Task and Regex are
// required; the other fields' zero values work.
type CounterfactualOptions struct {
	Task string
	// Regex is the pattern, in Python's re syntax, applied to each logged
	// response as lm-eval's regex filter applies its regex_pattern.
	Regex string
	// GroupSelect picks the match as lm-eval's group_select does: 0 the
	// first, -1 the last (Python indexing into the list of matches).
	GroupSelect int
	// Filter is the logged filter compared with; "" means the task's only
	// filter, or "strict-match" when it has several.
	Filter string
	// Metric is the per-document metric; "" means exact_match.
	Metric string
	// Compare configures the paired bootstrap (resamples, level, seed).
	Compare CompareOptions
	// MaxFlips is how many documents that flip each way are listed; 0
	// means 5.
	MaxFlips int
}

// CounterfactualReport is the score of a task with a regex of one's own
// applied to its logged responses, against the logged filter's.
type CounterfactualReport struct {
	Path        string `json:"path"`         // the run's results file (or, without one, its samples files' pattern or folder)
	Task        string `json:"task"`         // the task re-scored
	Metric      string `json:"metric"`       // the per-document metric re-scored (exact_match unless one is named)
	Filter      string `json:"filter"`       // the logged filter compared with
	Regex       string `json:"regex"`        // the pattern applied to the logged responses, in Python's re syntax
	GroupSelect int    `json:"group_select"` // which match is taken, as lm-eval's group_select: 0 the first, -1 the last
	// Reported is what the results file says of metric,filter (absent
	// without one); Logged the mean of the logged per-document values,
	// Counterfactual the mean under the regex.
	Reported       Number  `json:"reported"`
	Logged         float64 `json:"logged"`         // the mean of the logged filter's per-document values, lm-eval's fraction for a [0, 1] metric
	Counterfactual float64 `json:"counterfactual"` // the mean of the per-document values under the regex, lm-eval's fraction for a [0, 1] metric
	// Comparison is the paired comparison: A the logged filter, B the
	// regex. Its BOnly documents are Gained (right only with the regex),
	// its AOnly Lost.
	Comparison Comparison `json:"comparison"`
	Gained     int        `json:"gained"` // documents whose value is higher under the regex than under the logged filter
	Lost       int        `json:"lost"`   // documents whose value is lower under the regex than under the logged filter
	// Flips lists the first documents that flip, gained ones first.
	Flips []Flip `json:"flips"`
}

// Flip is one document scored otherwise under the regex than under the
// logged filter.
type Flip struct {
	DocID int `json:"doc_id"` // the document's doc_id in the samples file
	Line  int `json:"line"`   // the document's line in the samples file (its element in a JSON array file), from 1
	// Gained: right with the regex, wrong with the logged filter.
	Gained bool    `json:"gained"`
	Logged string  `json:"logged"` // the logged filtered response
	Regex  string  `json:"regex"`  // what the regex extracts
	From   float64 `json:"from"`   // the document's value under the logged filter
	To     float64 `json:"to"`     // the document's value under the regex
}

// CounterfactualScore answers "what would this task score with this
// regex": it re-scores the logged responses of the task under the regex
// (then take_first, with lm-eval's fallback "[invalid]") and the task's
// metric and compares the result, document by document, with the logged
// filter's values, with the paired bootstrap CI of the difference and the
// documents that flip each way. With the logged filter's own pattern it
// reproduces that filter's score exactly. Only generative tasks
// (generate_until) can be asked; an invalid pattern is a *RegexError.
func CounterfactualScore(sc *Scores, opts CounterfactualOptions) (*CounterfactualReport, error) {
	metric := opts.Metric
	if metric == "" {
		metric = "exact_match"
	}
	var filters []string
	var base *Series
	for _, s := range sc.Series {
		if s.Task != opts.Task || s.Metric != metric {
			continue
		}
		filters = append(filters, s.Filter)
		if s.Filter == opts.Filter || (opts.Filter == "" && s.Filter == "strict-match") {
			base = s
		}
	}
	switch {
	case len(filters) == 0:
		return nil, fmt.Errorf("%w: %s has no per-document %s for task %q (tasks: %s)", ErrNoSeries, sc.Run.Output.Path(), metric, opts.Task, seriesTasks(sc))
	case base == nil && opts.Filter == "" && len(filters) == 1:
		base, _ = sc.Find(opts.Task, metric, filters[0])
	case base == nil && opts.Filter == "":
		return nil, fmt.Errorf("%w: task %q logs %s under the filters %s: name the one to compare with", ErrNoSeries, opts.Task, metric, strings.Join(filters, ", "))
	case base == nil:
		return nil, fmt.Errorf("%w: task %q logs %s under the filters %s, not %q", ErrNoSeries, opts.Task, metric, strings.Join(filters, ", "), opts.Filter)
	}
	cf, ex, err := counterfactual(sc, base, opts.Regex, opts.GroupSelect)
	if err != nil {
		return nil, err
	}
	cmp, err := CompareSeries(base, cf, opts.Compare)
	if err != nil {
		return nil, err
	}
	rep := &CounterfactualReport{Path: sc.Run.Output.Path(), Task: opts.Task, Metric: metric, Filter: base.Filter,
		Regex: opts.Regex, GroupSelect: opts.GroupSelect, Logged: base.Mean(), Counterfactual: cf.Mean(), Comparison: cmp,
		Flips: []Flip{}}
	if r := sc.Run.Output.Results; r != nil {
		if t, ok := r.Task(opts.Task); ok {
			for _, m := range t.Metrics {
				if m.Metric == metric && m.Filter == base.Filter {
					rep.Reported = numberOf(m.Value)
				}
			}
		}
	}
	maxFlips := opts.MaxFlips
	if maxFlips <= 0 {
		maxFlips = 5
	}
	// Paired by doc_id, as the comparison pairs them (files without a
	// filter field give the counterfactual the first block's lines).
	at := make(map[int]int, len(cf.Docs))
	for j, d := range cf.Docs {
		at[d.DocID] = j
	}
	var gained, lost []Flip
	for i, d := range base.Docs {
		j, ok := at[d.DocID]
		if !ok {
			continue
		}
		from, to := base.Values[i], cf.Values[j]
		if from == to {
			continue
		}
		f := Flip{DocID: d.DocID, Line: cf.Docs[j].Line, Gained: to > from, Logged: ex[j].logged, Regex: ex[j].regex, From: from, To: to}
		if f.Gained {
			rep.Gained++
			gained = append(gained, f)
		} else {
			rep.Lost++
			lost = append(lost, f)
		}
	}
	rep.Flips = append(rep.Flips, gained[:min(len(gained), maxFlips)]...)
	rep.Flips = append(rep.Flips, lost[:min(len(lost), maxFlips)]...)
	return rep, nil
}

func seriesTasks(sc *Scores) string {
	seen := map[string]bool{}
	var names []string
	for _, s := range sc.Series {
		if !seen[s.Task] {
			seen[s.Task] = true
			names = append(names, fmt.Sprintf("%q", s.Task))
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
