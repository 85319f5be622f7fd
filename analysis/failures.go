package analysis

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/evalcapsule/evalcapsule/analysis/internal/pyre"
	"github.com/evalcapsule/evalcapsule/harness"
)

// FailureClass is why a generated answer was scored wrong.
type FailureClass string

// The failure classes, tried in this order on every miss:
const (
	// Truncation: the generation hit the length limit before a stop
	// sequence. lm-eval logs the text with the stop sequence cut off and no
	// token count, so the rule reads the text: it is at least
	// TruncationBytesPerToken bytes per allowed token long (max_gen_toks,
	// 256 by default; BPE tokenizers average 3-5 bytes a token on English and
	// arithmetic) and does not end where a sentence or an answer ends
	// (".", "!", "?", a digit, a closing bracket or quote).
	Truncation FailureClass = "truncation"
	// Format: the right answer in the wrong format: another filter of the
	// task (flexible-extract for gsm8k) scores the document right.
	Format FailureClass = "format"
	// Extraction: the reference answer is in the output (as a number, or as
	// a word of its own after the metric's normalisation: see containsWord)
	// but the filter took something else, or found nothing ("[invalid]").
	Extraction FailureClass = "extraction"
	// Reasoning: none of the above: the model's answer is wrong.
	Reasoning FailureClass = "reasoning"
)

// FailureClasses lists the classes in the order they are tried.
var FailureClasses = []FailureClass{Truncation, Format, Extraction, Reasoning}

// TruncationBytesPerToken is the truncation rule's bytes-per-token floor.
const TruncationBytesPerToken = 2.5

// FailureOptions configures Failures. The zero value works.
type FailureOptions struct {
	// Metric and Filter select the score that decides a miss; default the
	// task's first metric and filter.
	Metric, Filter string
	// N is how many misses to sample for reading; 0 means 50.
	N int
	// Seed of the sample.
	Seed uint64
	// MaxGenToks overrides the length limit (default: the task's
	// generation_kwargs max_gen_toks, else lm-eval's 256).
	MaxGenToks int
	// TailBytes is how much of each output's end to show; 0 means 300.
	TailBytes int
	// Labels, when set, are hand labels by doc_id, compared with the
	// automatic classes.
	Labels map[int]FailureClass
}

// Failure is one missed document.
type Failure struct {
	// Task is the member task of a group's miss ("" for a task's own).
	Task   string       `json:"task,omitempty"`
	DocID  int          `json:"doc_id"`
	Class  FailureClass `json:"class"`
	Target string       `json:"target"`
	// Extracted is what each filter of the task took from the output.
	Extracted  map[string]string `json:"extracted"`
	OutputTail string            `json:"output_tail"`
	// Label is the hand label, if any.
	Label FailureClass `json:"label,omitempty"`
	Line  int          `json:"-"`
}

// FailureReport is the classified misses of one task.
type FailureReport struct {
	Task    string               `json:"task"`
	Metric  string               `json:"-"`
	Filter  string               `json:"-"`
	N       int                  `json:"-"` // documents scored
	NMisses int                  `json:"n_misses"`
	Classes map[FailureClass]int `json:"classes"`
	Samples []Failure            `json:"samples"`
	// Agreement compares hand labels with the automatic classes.
	Agreement *LabelAgreement `json:"agreement,omitempty"`
	// Unread names the members of a group that have no samples.
	Unread []string `json:"unread,omitempty"`
}

// LabelAgreement is how often hand labels agree with the automatic classes.
type LabelAgreement struct {
	Labelled int     `json:"labelled"`
	Agree    int     `json:"agree"`
	Kappa    float64 `json:"kappa"` // Cohen's kappa
	// Confusion[label][class] counts documents.
	Confusion map[FailureClass]map[FailureClass]int `json:"confusion"`
}

// docText is what failure reading needs of one document.
type docText struct {
	line      int
	target    string
	output    string
	extracted map[string]string
	scores    map[string]float64 // filter → metric value
}

// Failures classifies every miss of a generative task and returns a seeded
// sample of them to read, with each filter's extraction and the output's
// tail. A group (mmlu_llama) is read over its member tasks: every member's
// misses are classified and the sample is drawn from all of them, each
// naming its task; hand labels, which are by doc_id, apply to tasks only.
func Failures(sc *Scores, task string, opts FailureOptions) (*FailureReport, error) {
	tasks := []string{task}
	if r := sc.Run.Output.Results; r != nil && r.IsGroup(task) {
		if _, ok := sc.firstSeries(task); !ok {
			tasks = r.Leaves(task)
			opts.Labels = nil
		}
	}
	var unread []string
	if len(tasks) > 1 {
		// Members without samples (a run cut short, samples trimmed) are
		// named, not read.
		var read []string
		for _, t := range tasks {
			if _, ok := sc.firstSeries(t); ok {
				read = append(read, t)
			} else {
				unread = append(unread, t)
			}
		}
		if len(read) == 0 {
			return nil, fmt.Errorf("%w: %s has no samples of any member of group %q", ErrNoSeries, sc.Run.Output.Path(), task)
		}
		tasks = read
	}
	first, ok := sc.firstSeries(tasks[0])
	if !ok {
		return nil, fmt.Errorf("%w: %s has no samples of task %q", ErrNoSeries, sc.Run.Output.Path(), tasks[0])
	}
	if opts.Metric == "" {
		opts.Metric = first.Metric
	}
	if opts.Filter == "" {
		opts.Filter = first.Filter
	}
	rep := &FailureReport{Task: task, Metric: opts.Metric, Filter: opts.Filter, Classes: map[FailureClass]int{}, Unread: unread}
	for _, c := range FailureClasses {
		rep.Classes[c] = 0
	}
	var misses []Failure
	for _, t := range tasks {
		n, ms, err := taskMisses(sc, t, opts)
		if err != nil {
			return nil, err
		}
		if len(tasks) > 1 {
			for i := range ms {
				ms[i].Task = t
			}
		}
		rep.N += n
		misses = append(misses, ms...)
	}
	for _, f := range misses {
		rep.Classes[f.Class]++
	}
	rep.NMisses = len(misses)
	if opts.Labels != nil {
		rep.Agreement = agreement(misses)
	}
	n := opts.N
	if n == 0 {
		n = 50
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x6661696c75726573))
	perm := rng.Perm(len(misses))
	if n > len(perm) {
		n = len(perm)
	}
	pick := perm[:n]
	sort.Ints(pick)
	for _, i := range pick {
		rep.Samples = append(rep.Samples, misses[i])
	}
	if rep.Samples == nil {
		rep.Samples = []Failure{}
	}
	return rep, nil
}

// firstSeries is the task's first series in the samples.
func (sc *Scores) firstSeries(task string) (*Series, bool) {
	for _, s := range sc.Series {
		if s.Task == task {
			return s, true
		}
	}
	return nil, false
}

// taskMisses classifies the misses of one task under opts.Metric and
// opts.Filter; n is the number of documents scored.
func taskMisses(sc *Scores, task string, opts FailureOptions) (n int, misses []Failure, err error) {
	metric, filter := opts.Metric, opts.Filter
	series, ok := sc.Find(task, metric, filter)
	if !ok {
		if _, any := sc.firstSeries(task); !any {
			return 0, nil, fmt.Errorf("%w: %s has no samples of task %q", ErrNoSeries, sc.Run.Output.Path(), task)
		}
		return 0, nil, fmt.Errorf("%w: task %q has no %s under filter %q", ErrNoSeries, task, metric, filter)
	}
	cfg := harness.Value{}
	if r := sc.Run.Output.Results; r != nil {
		cfg = r.Configs[task]
	}
	if ot, ok := cfg.Get("output_type"); ok && ot.Kind == harness.String && ot.Str != "generate_until" {
		return 0, nil, fmt.Errorf("%w: failure classes are for generated answers; %s is %s", ErrNotRecomputable, task, ot.Str)
	}
	maxToks := opts.MaxGenToks
	if maxToks == 0 {
		maxToks = 256
		if gk, ok := cfg.Get("generation_kwargs"); ok {
			if m, ok := gk.Get("max_gen_toks"); ok && m.Kind == harness.Number {
				maxToks = int(m.Num)
			}
		}
	}
	docs, order, err := readDocTexts(series.File, metric)
	if err != nil {
		return 0, nil, err
	}
	var em *exactMatch
	if ts := newTaskScorer(task, cfg, versionRules{emptyTupleFallback: true}); ts.exact[metric] != nil {
		em = ts.exact[metric]
	}
	for _, id := range order {
		d := docs[id]
		n++
		score, ok := d.scores[filter]
		if !ok || score != 0 {
			continue
		}
		f := Failure{DocID: id, Target: d.target, Extracted: d.extracted, Line: d.line, Class: classify(d, filter, maxToks, em)}
		f.OutputTail = tail(d.output, opts.tailBytes())
		if l, ok := opts.Labels[id]; ok {
			f.Label = l
		}
		misses = append(misses, f)
	}
	return n, misses, nil
}

func (o FailureOptions) tailBytes() int {
	if o.TailBytes > 0 {
		return o.TailBytes
	}
	return 300
}

// classify applies the rules of the FailureClass constants, in order.
func classify(d *docText, filter string, maxToks int, em *exactMatch) FailureClass {
	if truncated(d.output, maxToks) {
		return Truncation
	}
	for f, s := range d.scores {
		if f != filter && s > 0 {
			return Format
		}
	}
	if answerInOutput(d.target, d.output, em) {
		return Extraction
	}
	return Reasoning
}

func truncated(out string, maxToks int) bool {
	t := strings.TrimRightFunc(out, unicode.IsSpace)
	if float64(len(t)) < TruncationBytesPerToken*float64(maxToks) || t == "" {
		return false
	}
	last := []rune(t)[len([]rune(t))-1]
	return !(strings.ContainsRune(".!?)]}\"'*$", last) || unicode.IsDigit(last))
}

var numberRE = regexp.MustCompile(`-?\$?[0-9][0-9,]*(?:\.[0-9]+)?`)

// answerInOutput reports whether the reference answer appears in the output:
// as a number equal to the normalised reference, or as text after the
// metric's normalisation.
func answerInOutput(target, output string, em *exactMatch) bool {
	gold := target
	if em != nil {
		gold = em.normalize(target)
	}
	gold = strings.TrimSpace(gold)
	if gold == "" {
		return false
	}
	clean := func(s string) string {
		s = strings.NewReplacer(",", "", "$", "").Replace(s)
		return strings.TrimSuffix(s, ".0")
	}
	if numberRE.MatchString(gold) && numberRE.FindString(gold) == gold {
		g := clean(gold)
		for _, n := range numberRE.FindAllString(output, -1) {
			if clean(strings.TrimRight(n, ".")) == g {
				return true
			}
		}
		return false
	}
	o := output
	if em != nil {
		o = em.normalize(output)
	}
	return containsWord(o, gold)
}

// containsWord reports whether word occurs in s as a word of its own: a
// letter or digit at its start or end is not joined to another one. A
// one-letter answer ("L") is in every sentence, but stands alone only where
// the model gave it.
func containsWord(s, word string) bool {
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	first, _ := utf8.DecodeRuneInString(word)
	last, _ := utf8.DecodeLastRuneInString(word)
	for i := 0; i <= len(s)-len(word); {
		j := strings.Index(s[i:], word)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(word)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if (start == 0 || !isWord(first) || !isWord(before)) && (end == len(s) || !isWord(last) || !isWord(after)) {
			return true
		}
		_, size := utf8.DecodeRuneInString(s[start:])
		i = start + size
	}
	return false
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	for cut < len(s) && !isRuneStart(s[cut]) {
		cut++
	}
	return "…" + s[cut:]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// readDocTexts reads, for every document of a task's samples file, the
// target, the raw output, each filter's extraction and metric value.
func readDocTexts(f harness.SampleFile, metric string) (map[int]*docText, []int, error) {
	r, err := f.Open()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	docs := map[int]*docText{}
	var order []int
	for {
		s, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		d, ok := docs[s.DocID]
		if !ok {
			d = &docText{line: s.Line, extracted: map[string]string{}, scores: map[string]float64{}}
			d.target, _ = s.Target.Text()
			if s.Resps.Kind == harness.List && len(s.Resps.List) > 0 && s.Resps.List[0].Kind == harness.List && len(s.Resps.List[0].List) > 0 {
				d.output, _ = s.Resps.List[0].List[0].Text()
			}
			docs[s.DocID] = d
			order = append(order, s.DocID)
		}
		filter := s.Filter
		if filter == "" {
			filter = "none"
		}
		if s.Filtered.Kind == harness.List && len(s.Filtered.List) > 0 {
			d.extracted[filter], _ = s.Filtered.List[0].Text()
		}
		if v, ok := s.Value(metric); ok {
			if x, ok := v.Float(); ok {
				d.scores[filter] = x
			}
		}
	}
	return docs, order, nil
}

func agreement(fs []Failure) *LabelAgreement {
	a := &LabelAgreement{Confusion: map[FailureClass]map[FailureClass]int{}}
	labelCount := map[FailureClass]int{}
	classCount := map[FailureClass]int{}
	for _, f := range fs {
		if f.Label == "" {
			continue
		}
		a.Labelled++
		if f.Label == f.Class {
			a.Agree++
		}
		if a.Confusion[f.Label] == nil {
			a.Confusion[f.Label] = map[FailureClass]int{}
		}
		a.Confusion[f.Label][f.Class]++
		labelCount[f.Label]++
		classCount[f.Class]++
	}
	if a.Labelled == 0 {
		return a
	}
	po := float64(a.Agree) / float64(a.Labelled)
	var pe float64
	for c, n := range labelCount {
		pe += float64(n) / float64(a.Labelled) * float64(classCount[c]) / float64(a.Labelled)
	}
	if pe == 1 {
		a.Kappa = 1
	} else {
		a.Kappa = (po - pe) / (1 - pe)
	}
	return a
}

// ReadLabels reads hand labels of a task from the run directory: a CSV file
// labels/<task>.csv (header doc_id,class; extra columns such as a note are
// kept out) or a JSON file labels/<task>.json ({"<doc_id>": "<class>"}).
// A run without labels returns nil and no error.
func ReadLabels(runDir, task string) (map[int]FailureClass, error) {
	base := filepath.Join(runDir, "labels", task)
	if b, err := os.ReadFile(base + ".json"); err == nil {
		var raw map[string]string
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, fmt.Errorf("%s.json: %w: %v", base, ErrLabels, err)
		}
		out := map[int]FailureClass{}
		for k, v := range raw {
			var id int
			if _, err := fmt.Sscan(k, &id); err != nil {
				return nil, fmt.Errorf("%s.json: %w: key %q is not a doc_id", base, ErrLabels, k)
			}
			c, err := parseClass(v)
			if err != nil {
				return nil, fmt.Errorf("%s.json: doc_id %d: %w", base, id, err)
			}
			out[id] = c
		}
		return out, nil
	}
	f, err := os.Open(base + ".csv")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s.csv: %w: %v", base, ErrLabels, err)
	}
	out := map[int]FailureClass{}
	for i, row := range rows {
		if i == 0 && len(row) > 0 && strings.EqualFold(strings.TrimSpace(row[0]), "doc_id") {
			continue
		}
		if len(row) < 2 {
			return nil, fmt.Errorf("%s.csv:%d: %w: expected doc_id,class", base, i+1, ErrLabels)
		}
		var id int
		if _, err := fmt.Sscan(strings.TrimSpace(row[0]), &id); err != nil {
			return nil, fmt.Errorf("%s.csv:%d: %w: %q is not a doc_id", base, i+1, ErrLabels, row[0])
		}
		c, err := parseClass(row[1])
		if err != nil {
			return nil, fmt.Errorf("%s.csv:%d: %w", base, i+1, err)
		}
		out[id] = c
	}
	return out, nil
}

func parseClass(s string) (FailureClass, error) {
	c := FailureClass(pyre.Lower(strings.TrimSpace(s)))
	for _, k := range FailureClasses {
		if c == k {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: class %q is not one of truncation, format, extraction, reasoning", ErrLabels, s)
}
