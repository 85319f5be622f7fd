package analysis

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/evalcapsule/evalcapsule/analysis/internal/pyre"
	"github.com/evalcapsule/evalcapsule/harness"
)

// FailureClass is why an answer was scored wrong.
type FailureClass string

// The failure classes of a generated answer (output_type generate_until),
// tried in this order on every miss. They read the output's final answer:
// the output is first cut at the first of the task's stop sequences
// (generation_kwargs until) and at the first "Question:" (a few-shot turn
// the model went on with), and the final answer of what is left is, in this
// order:
//
//   - the content of its last \boxed{…};
//   - the number after its first "####" (GSM8K's answer line: what comes
//     after it is a run-on, not the answer);
//   - what follows its last "answer is" or "answer:" (any case): a number,
//     else the words up to the end of the sentence;
//   - else the number it concludes with: the result of its last
//     computation (the number after its last "=") when its last sentence
//     restates it ("The total is 40 + 24 = 64. Kylar pays $64 for the 16
//     glasses." concludes with 64), else the last number of its last
//     sentence, else its last number.
//
// The first three are a stated answer; the last is not.
const (
	// Truncation: the generation hit the length limit before a final
	// answer. lm-eval logs the text with the stop sequence cut off and no
	// token count, so the rule reads the text: it is at least
	// TruncationBytesPerToken bytes per allowed token long (max_gen_toks,
	// 256 by default), states no final answer, and does not end where a
	// sentence ends (".", "!", "?", a closing bracket or quote, or a "*" or
	// "$" that closes a mark, not one after a space or a line break, which
	// opens a list item or a formula).
	Truncation FailureClass = "truncation"
	// Format: the right answer in the wrong format: another filter of the
	// task (flexible-extract for gsm8k) scores the document right.
	Format FailureClass = "format"
	// Extraction: the output's final answer (above) is the reference
	// answer, but the filter took something else or found nothing
	// ("[invalid]"). A numeric reference (after the metric's
	// normalisation) matches a final answer of the same value, written with
	// or without thousands separators, "$", a trailing "." or trailing
	// zeros after a decimal point; another reference matches when it is a
	// word of its own in the final answer after the metric's normalisation
	// (see containsWord). A reference that appears in the output only as an
	// operand or an intermediate result is not extraction: the output
	// concluded with another answer.
	Extraction FailureClass = "extraction"
	// Reasoning: none of the above: the model's final answer is wrong.
	Reasoning FailureClass = "reasoning"
)

// The failure classes of a multiple-choice answer (output_type
// multiple_choice: MMLU, HellaSwag, ARC, COPA), under acc, acc_norm or
// acc_bytes, tried in this order. Each reads the scores the metric ranks the
// choices by: the log-likelihoods for acc, the log-likelihood over the
// choice's length in characters for acc_norm (in bytes for acc_bytes); the
// chosen choice is their first maximum, as numpy's argmax; and a choice's
// probability is the softmax of those scores over the choices.
const (
	// NormFlip: acc and acc_norm disagree on the document: the other
	// ranking (length-normalised for acc, raw for acc_norm and acc_bytes)
	// chooses the gold.
	NormFlip FailureClass = "norm-flip"
	// ConfidentWrong: the chosen choice's probability is at least
	// ConfidentMargin above the gold's.
	ConfidentWrong FailureClass = "confident-wrong"
	// NearMiss: the gold is ranked second (ties ranked as argmax breaks
	// them: the earlier choice first).
	NearMiss FailureClass = "near-miss"
	// Wrong: none of the above (or the gold is not among the choices).
	Wrong FailureClass = "wrong"
)

// FailureClasses lists the classes of a generated answer in the order they
// are tried.
var FailureClasses = []FailureClass{Truncation, Format, Extraction, Reasoning}

// ChoiceFailureClasses lists the classes of a multiple-choice answer in the
// order they are tried.
var ChoiceFailureClasses = []FailureClass{NormFlip, ConfidentWrong, NearMiss, Wrong}

// TruncationBytesPerToken is the truncation rule's bytes-per-token floor.
// It is a lower bound, not an average: BPE tokenizers average 3-5 bytes a
// token on English, but those that split numbers into single digits
// (Llama, LLaDA) write arithmetic at a little over 2.
const TruncationBytesPerToken = 2.0

// ConfidentMargin is how much more probable than the gold the chosen choice
// is in a ConfidentWrong miss.
const ConfidentMargin = 0.5

// FailureOptions configures Failures. The zero value works.
type FailureOptions struct {
	// Metric and Filter select the score that decides a miss; default the
	// task's first metric and filter.
	Metric, Filter string
	// N is how many misses to sample for reading; 0 means 50, below 0 is
	// an error.
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
	// Code says whether a code task's completions are executed to find
	// and classify its misses (CodeFailureClasses); without Execute a code
	// task is ErrNotRecomputable.
	Code CodeOptions
	// Class, when set, draws the sample from the misses of this class
	// only; the counts of every class are still over all misses. A class
	// that is not one of the task's kind (FailureClasses for a generated
	// answer, ChoiceFailureClasses for multiple choice) is an ErrNoSeries.
	Class FailureClass
}

// Failure is one missed document.
type Failure struct {
	// Task is the member task of a group's miss ("" for a task's own).
	Task   string       `json:"task,omitempty"`
	DocID  int          `json:"doc_id"` // the document's doc_id in the samples file
	Class  FailureClass `json:"class"`  // the automatic class of the miss: one of FailureClasses, or of ChoiceFailureClasses for multiple choice
	Target string       `json:"target"` // the logged target's text; for multiple choice, its JSON when it is not a string (a gold index)
	// FinalAnswer is the generated output's final answer (see the
	// classes), "" when it has none.
	FinalAnswer string `json:"final_answer,omitempty"`
	// Extracted is what each filter of the task took from the output.
	Extracted  map[string]string `json:"extracted,omitempty"`
	OutputTail string            `json:"output_tail,omitempty"` // the generated output's last TailBytes bytes (300 by default), "…" in front when cut; left out for multiple choice
	// Gold and Chosen are, for a multiple-choice miss, the gold choice and
	// the one the metric chose; Gold is nil when the gold is not among the
	// choices.
	Gold   *ChoiceScore `json:"gold,omitempty"`
	Chosen *ChoiceScore `json:"chosen,omitempty"` // the choice the metric chose, for a multiple-choice miss; left out for a generated answer
	// Label is the hand label, if any.
	Label FailureClass `json:"label,omitempty"`
	Line  int          `json:"-"`
}

// ChoiceScore is one choice of a multiple-choice document as the metric
// ranked it.
type ChoiceScore struct {
	Index int    `json:"index"` // the choice's position among the document's choices, from 0
	Text  string `json:"text"`  // the choice's text as the task renders it
	// LogLikelihood is the logged log-likelihood of the choice.
	LogLikelihood float64 `json:"loglikelihood"`
	// Probability is the softmax over the choices of the scores the metric
	// ranks by.
	Probability float64 `json:"probability"`
	// Rank is 1 for the chosen choice.
	Rank int `json:"rank"`
}

// FailureReport is the classified misses of one task.
type FailureReport struct {
	Task    string `json:"task"` // the task (or group) whose misses these are
	Metric  string `json:"-"`
	Filter  string `json:"-"`
	N       int    `json:"-"`        // documents scored
	NMisses int    `json:"n_misses"` // the documents whose value of the metric under the filter is 0, over all of a group's members
	// MultipleChoice says the task is multiple choice: its classes are
	// ChoiceFailureClasses, not FailureClasses.
	MultipleChoice bool `json:"multiple_choice,omitempty"`
	// Code says the task is a code task (humaneval, mbpp): its classes
	// are CodeFailureClasses.
	Code    bool                 `json:"code,omitempty"`
	Classes map[FailureClass]int `json:"classes"` // the number of misses in each class of the task's kind, every class present (0 when none)
	// SampleClass is FailureOptions.Class: the class the sample was drawn
	// from, "" for all misses.
	SampleClass FailureClass `json:"sample_class,omitempty"`
	Samples     []Failure    `json:"samples"` // the seeded sample of misses (N, 50 by default, of SampleClass's or all), in the order the documents were read; empty, never null, without misses
	// Agreement compares hand labels with the automatic classes.
	Agreement *LabelAgreement `json:"agreement,omitempty"`
	// Unread names the members of a group that have no samples.
	Unread []string `json:"unread,omitempty"`
}

// ClassOrder is the report's classes in the order they are tried.
func (fr *FailureReport) ClassOrder() []FailureClass {
	if fr.MultipleChoice {
		return ChoiceFailureClasses
	}
	if fr.Code {
		return CodeFailureClasses
	}
	return FailureClasses
}

// LabelAgreement is how often hand labels agree with the automatic classes.
type LabelAgreement struct {
	Labelled int     `json:"labelled"` // the misses that have a hand label
	Agree    int     `json:"agree"`    // the labelled misses whose hand label is their automatic class
	Kappa    float64 `json:"kappa"`    // Cohen's kappa
	// Confusion[label][class] counts documents.
	Confusion map[FailureClass]map[FailureClass]int `json:"confusion"`
}

// docText is what failure reading needs of one generated document.
type docText struct {
	line      int
	target    string
	output    string
	extracted map[string]string
	scores    map[string]float64 // filter → metric value
}

// Failures classifies every miss of a task and returns a seeded sample of
// them to read. A generated answer's miss shows each filter's extraction,
// the final answer and the output's tail; a multiple-choice miss the gold
// and the chosen choice. A group (mmlu_llama) is read over its member
// tasks, which must all be generative or all multiple choice: every
// member's misses are classified and the sample is drawn from all of them,
// each naming its task; hand labels, which are by doc_id, apply to tasks
// only.
func Failures(sc *Scores, task string, opts FailureOptions) (*FailureReport, error) {
	if opts.N < 0 {
		return nil, fmt.Errorf("failure sample size %d: want 0 (the default, 50) or more", opts.N)
	}
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
	var misses []Failure
	for i, t := range tasks {
		n, mc, ms, err := taskMisses(sc, t, opts)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			rep.MultipleChoice = mc
			rep.Code = codeTaskOf(sc, t) != nil
		} else if mc != rep.MultipleChoice {
			return nil, fmt.Errorf("%w: group %q mixes multiple-choice and generative members (%s, %s)", ErrNotRecomputable, task, tasks[0], t)
		}
		if len(tasks) > 1 {
			for i := range ms {
				ms[i].Task = t
			}
		}
		rep.N += n
		misses = append(misses, ms...)
	}
	for _, c := range rep.ClassOrder() {
		rep.Classes[c] = 0
	}
	for _, f := range misses {
		rep.Classes[f.Class]++
	}
	rep.NMisses = len(misses)
	if opts.Labels != nil {
		rep.Agreement = agreement(misses)
	}
	if opts.Class != "" {
		if !slices.Contains(rep.ClassOrder(), opts.Class) {
			names := make([]string, len(rep.ClassOrder()))
			for i, c := range rep.ClassOrder() {
				names[i] = string(c)
			}
			return nil, fmt.Errorf("%w: class %q is not a class of %s's misses (%s)", ErrNoSeries, opts.Class, task, strings.Join(names, ", "))
		}
		var of []Failure
		for _, f := range misses {
			if f.Class == opts.Class {
				of = append(of, f)
			}
		}
		misses = of
		rep.SampleClass = opts.Class
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
// opts.Filter; n is the number of documents scored, mc whether the task is
// multiple choice.
func taskMisses(sc *Scores, task string, opts FailureOptions) (n int, mc bool, misses []Failure, err error) {
	metric, filter := opts.Metric, opts.Filter
	series, ok := sc.Find(task, metric, filter)
	if !ok {
		if _, any := sc.firstSeries(task); !any {
			return 0, false, nil, fmt.Errorf("%w: %s has no samples of task %q", ErrNoSeries, sc.Run.Output.Path(), task)
		}
		return 0, false, nil, fmt.Errorf("%w: task %q has no %s under filter %q", ErrNoSeries, task, metric, filter)
	}
	cfg := harness.Value{}
	if r := sc.Run.Output.Results; r != nil {
		cfg = r.Configs[task]
	}
	if ct := codeTaskOf(sc, task); ct != nil {
		n, misses, err = codeMisses(sc, series, ct, metric, opts)
		return n, false, misses, err
	}
	ts := newTaskScorer(task, cfg, versionRules{emptyTupleFallback: true})
	outType := ts.outputType
	if outType == "" {
		outType, err = sampleOutputType(series.File)
		if err != nil {
			return 0, false, nil, err
		}
	}
	switch outType {
	case "generate_until":
	case "multiple_choice":
		n, misses, err = choiceMisses(series.File, ts, metric, filter, opts.Labels)
		return n, true, misses, err
	default:
		return 0, false, nil, fmt.Errorf("%w: failure classes are for generated answers and multiple choice; %s is %s", ErrNotRecomputable, task, outType)
	}
	maxToks := opts.MaxGenToks
	var stops []string
	if gk, ok := ts.cfg.Get("generation_kwargs"); ok {
		if m, ok := gk.Get("max_gen_toks"); ok && m.Kind == harness.Number && maxToks == 0 {
			maxToks = int(m.Num)
		}
		if u, ok := gk.Get("until"); ok {
			switch u.Kind {
			case harness.String:
				stops = append(stops, u.Str)
			case harness.List:
				for _, e := range u.List {
					if s, ok := e.Text(); ok && s != "" {
						stops = append(stops, s)
					}
				}
			}
		}
	}
	if maxToks == 0 {
		maxToks = 256
	}
	docs, order, err := readDocTexts(series.File, metric)
	if err != nil {
		return 0, false, nil, err
	}
	em := ts.exact[metric]
	for _, id := range order {
		d := docs[id]
		n++
		score, ok := d.scores[filter]
		if !ok || score != 0 {
			continue
		}
		ans := finalAnswer(d.output, stops)
		f := Failure{DocID: id, Target: d.target, FinalAnswer: ans.text, Extracted: d.extracted, Line: d.line, Class: classify(d, ans, filter, maxToks, em)}
		f.OutputTail = tail(d.output, opts.tailBytes())
		if l, ok := opts.Labels[id]; ok {
			f.Label = l
		}
		misses = append(misses, f)
	}
	return n, false, misses, nil
}

// sampleOutputType is the output type of a task without a configuration,
// read from the shape of its first samples line.
func sampleOutputType(f harness.SampleFile) (string, error) {
	r, err := f.Open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	s, err := r.Next()
	if err == io.EOF {
		return "generate_until", nil
	}
	if err != nil {
		return "", err
	}
	return inferOutputType(s), nil
}

func (o FailureOptions) tailBytes() int {
	if o.TailBytes > 0 {
		return o.TailBytes
	}
	return 300
}

// classify applies the rules of the FailureClass constants of a generated
// answer, in order.
func classify(d *docText, ans answer, filter string, maxToks int, em *exactMatch) FailureClass {
	if truncated(d.output, ans, maxToks) {
		return Truncation
	}
	for f, s := range d.scores {
		if f != filter && s > 0 {
			return Format
		}
	}
	if ans.text != "" && sameAnswer(ans.text, d.target, em) {
		return Extraction
	}
	return Reasoning
}

func truncated(out string, ans answer, maxToks int) bool {
	t := strings.TrimRightFunc(out, unicode.IsSpace)
	if float64(len(t)) < TruncationBytesPerToken*float64(maxToks) || t == "" || ans.stated {
		return false
	}
	last, size := utf8.DecodeLastRuneInString(t)
	if last == '*' || last == '$' {
		// A closing mark ("**18**", "$18$") ends an answer; one after a
		// space or a line break opens a list item or a formula.
		before, _ := utf8.DecodeLastRuneInString(t[:len(t)-size])
		return unicode.IsSpace(before)
	}
	return !strings.ContainsRune(".!?)]}\"'", last)
}

// answer is the final answer of a generated output.
type answer struct {
	text   string
	stated bool // boxed, after "####", or after "answer is"/"answer:"
}

var (
	numberRE   = regexp.MustCompile(`-?\$?[0-9][0-9,]*(?:\.[0-9]+)?`)
	hashesRE   = regexp.MustCompile(`####[ \t]*`)
	answerIsRE = regexp.MustCompile(`(?i)answer(?:\s+is|\s*:)[ \t]*`)
	leadRE     = regexp.MustCompile(`^[\s*$(\\]*`)
)

// finalAnswer reads the final answer of a generated output by the rule
// documented at the FailureClass constants; stops are the task's stop
// sequences.
func finalAnswer(out string, stops []string) answer {
	cut := len(out)
	for _, s := range append(stops, "Question:") {
		if i := strings.Index(out, s); i >= 0 && i < cut {
			cut = i
		}
	}
	t := out[:cut]
	if i := strings.LastIndex(t, `\boxed{`); i >= 0 {
		return answer{text: strings.TrimSpace(braced(t[i+len(`\boxed{`):])), stated: true}
	}
	if loc := hashesRE.FindStringIndex(t); loc != nil {
		rest := t[loc[1]:]
		if m := numberRE.FindStringIndex(rest); m != nil && m[0] == 0 {
			return answer{text: strings.TrimRight(rest[:m[1]], ".,"), stated: true}
		}
		return answer{text: firstLine(rest), stated: true}
	}
	if locs := answerIsRE.FindAllStringIndex(t, -1); locs != nil {
		rest := t[locs[len(locs)-1][1]:]
		lead := leadRE.FindString(rest)
		if m := numberRE.FindStringIndex(rest[len(lead):]); m != nil && m[0] == 0 {
			return answer{text: strings.TrimRight(rest[len(lead):len(lead)+m[1]], ".,"), stated: true}
		}
		return answer{text: sentence(rest), stated: true}
	}
	return answer{text: concluded(t)}
}

var resultRE = regexp.MustCompile(`=\s*\$?(-?[0-9][0-9,]*(?:\.[0-9]+)?)`)

// concluded is the number an output without a stated answer concludes
// with: the result of its last computation (the number after its last
// "=") when its last sentence restates it, else the last number of its
// last sentence, else its last number.
func concluded(t string) string {
	t = strings.TrimRightFunc(t, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(".!?", r) })
	last := t
	for _, end := range []string{"\n", ". ", "! ", "? "} {
		if i := strings.LastIndex(last, end); i >= 0 {
			last = last[i+len(end):]
		}
	}
	clean := func(n string) string { return strings.TrimRight(n, ".,") }
	ns := numberRE.FindAllString(last, -1)
	if ms := resultRE.FindAllStringSubmatch(t, -1); ms != nil {
		result, _ := parseNumber(ms[len(ms)-1][1])
		for _, n := range ns {
			if v, ok := parseNumber(clean(n)); ok && result != nil && v.Cmp(result) == 0 {
				return clean(n)
			}
		}
	}
	if ns == nil {
		ns = numberRE.FindAllString(t, -1)
	}
	if ns == nil {
		return ""
	}
	return clean(ns[len(ns)-1])
}

// braced is s up to the "}" that closes an opened "{".
func braced(s string) string {
	depth := 0
	for i, r := range s {
		switch r {
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return s[:i]
			}
			depth--
		}
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// sentence is s up to the end of its first sentence or line.
func sentence(s string) string {
	s = firstLine(s)
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(".!?", s[i]) >= 0 && (i+1 == len(s) || s[i+1] == ' ') {
			return strings.TrimSpace(s[:i+1])
		}
	}
	return s
}

// sameAnswer reports whether a final answer is the reference answer: the
// same number, or for a reference that is not a number, the reference as a
// word of its own in the answer, both after the metric's normalisation.
func sameAnswer(final, target string, em *exactMatch) bool {
	gold := target
	if em != nil {
		gold = em.normalize(target)
	}
	gold = strings.TrimSpace(gold)
	if gold == "" {
		return false
	}
	if g, ok := parseNumber(gold); ok {
		f, ok := parseNumber(final)
		return ok && f.Cmp(g) == 0
	}
	a := final
	if em != nil {
		a = em.normalize(final)
	}
	return containsWord(a, gold)
}

// parseNumber reads a number as a model or a reference writes it: with
// thousands separators, "$", a trailing ".".
func parseNumber(s string) (*big.Rat, bool) {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	if s == "" || numberRE.FindString(s) != s {
		return nil, false
	}
	s = strings.NewReplacer(",", "", "$", "").Replace(s)
	r, ok := new(big.Rat).SetString(s)
	return r, ok
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

// choiceMisses classifies the misses of a multiple-choice task under metric
// (acc, acc_norm or acc_bytes) and filter; n is the number of documents
// scored.
func choiceMisses(f harness.SampleFile, ts *taskScorer, metric, filter string, labels map[int]FailureClass) (n int, misses []Failure, err error) {
	var lengthOf func(string) float64
	switch metric {
	case "acc", "acc_norm":
		lengthOf = func(s string) float64 { return float64(utf8.RuneCountInString(s)) }
	case "acc_bytes":
		lengthOf = func(s string) float64 { return float64(len(s)) }
	default:
		return 0, nil, fmt.Errorf("%w: failure classes of a multiple-choice task are for acc, acc_norm and acc_bytes; %s is %s", ErrNotRecomputable, ts.task, metric)
	}
	r, err := f.Open()
	if err != nil {
		return 0, nil, err
	}
	defer r.Close()
	for {
		s, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, nil, err
		}
		lf := s.Filter
		if lf == "" {
			lf = "none"
		}
		if lf != filter {
			continue
		}
		n++
		v, ok := s.Value(metric)
		if !ok {
			continue
		}
		if x, ok := v.Float(); !ok || x != 0 {
			continue
		}
		miss, err := readChoices(s, ts, metric, lengthOf)
		if err != nil {
			return 0, nil, fmt.Errorf("%s:%d: doc_id %d: %w", f.Path, s.Line, s.DocID, err)
		}
		miss.DocID, miss.Line, miss.Target = s.DocID, s.Line, s.Target.String()
		if t, ok := s.Target.Text(); ok {
			miss.Target = t
		}
		if l, ok := labels[s.DocID]; ok {
			miss.Label = l
		}
		misses = append(misses, miss)
	}
	return n, misses, nil
}

// readChoices reads a multiple-choice miss from its samples line: the
// log-likelihoods from filtered_resps, the choices as the re-scorer rebuilds
// them, the gold from the target, and classifies it.
func readChoices(s *harness.Sample, ts *taskScorer, metric string, lengthOf func(string) float64) (Failure, error) {
	var f Failure
	if s.Filtered.Kind != harness.List || len(s.Filtered.List) < 2 {
		return f, fmt.Errorf("%w: filtered_resps is not a list of [log-likelihood, is_greedy] pairs, one per choice", ErrNotRecomputable)
	}
	lls := make([]float64, len(s.Filtered.List))
	for i, p := range s.Filtered.List {
		ll, _, err := llPair(p)
		if err != nil {
			return f, fmt.Errorf("%w: filtered_resps[%d]: %v", ErrNotRecomputable, i, err)
		}
		lls[i] = ll
	}
	dc := &docContext{sample: s}
	choices, err := ts.choices(s, dc)
	if err != nil {
		return f, fmt.Errorf("%w: %v", ErrNotRecomputable, err)
	}
	if len(choices) != len(lls) {
		return f, fmt.Errorf("%w: %d choices for %d log-likelihoods", ErrNotRecomputable, len(choices), len(lls))
	}
	target := s.Target
	if ts.targetField != "" {
		if v, ok := dc.field(ts.targetField); ok {
			target = v
		}
	}
	golds, _, err := mcGold(target, choices, len(lls))
	if err != nil {
		return f, fmt.Errorf("%w: %v", ErrNotRecomputable, err)
	}
	raw := lls
	norm := make([]float64, len(lls))
	for i, ll := range lls {
		norm[i] = ll / lengthOf(choices[i])
	}
	// score ranks the choices for the metric, other for the other
	// normalisation.
	score, other := raw, norm
	if metric != "acc" {
		score, other = norm, raw
	}
	prob := softmax(score)
	rank := func(i int) int {
		r := 1
		for j, x := range score {
			if x > score[i] || (x == score[i] && j < i) {
				r++
			}
		}
		return r
	}
	choice := func(i int) *ChoiceScore {
		return &ChoiceScore{Index: i, Text: choices[i], LogLikelihood: lls[i], Probability: prob[i], Rank: rank(i)}
	}
	pred := argmax(score)
	f.Chosen = choice(pred)
	gold := -1
	for _, g := range golds {
		if g >= 0 && g < len(lls) && (gold < 0 || rank(g) < rank(gold)) {
			gold = g
		}
	}
	if gold == pred {
		return f, fmt.Errorf("%w: %s is logged 0, but the log-likelihoods rank the gold choice %d first", ErrNotRecomputable, metric, gold)
	}
	switch {
	case gold < 0:
		f.Class = Wrong
	case argmax(other) == gold:
		f.Class = NormFlip
	case prob[pred]-prob[gold] >= ConfidentMargin:
		f.Class = ConfidentWrong
	case rank(gold) == 2:
		f.Class = NearMiss
	default:
		f.Class = Wrong
	}
	if gold >= 0 {
		f.Gold = choice(gold)
	}
	return f, nil
}

// softmax is exp(x_i) / Σ exp(x_j), computed from the largest x.
func softmax(xs []float64) []float64 {
	hi := math.Inf(-1)
	for _, x := range xs {
		hi = math.Max(hi, x)
	}
	out := make([]float64, len(xs))
	var sum float64
	for i, x := range xs {
		out[i] = math.Exp(x - hi)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
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
	for _, k := range append(FailureClasses[:len(FailureClasses):len(FailureClasses)], ChoiceFailureClasses...) {
		if c == k {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: class %q is not one of truncation, format, extraction, reasoning (generated answers), norm-flip, confident-wrong, near-miss, wrong (multiple choice)", ErrLabels, s)
}
