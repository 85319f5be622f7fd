package simulate

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// GSM8K as lm-eval 0.4.9.1 runs it (lm_eval/tasks/gsm8k/gsm8k.yaml, task
// version 3.0): 5-shot "Question: …\nAnswer: <solution>" prompts, greedy
// generation until "Question:", two filters and exact_match. The word
// problems are synthetic but shaped like GSM8K's: a few arithmetic steps with
// <<calculator>> annotations and a final "#### <number>" line.

// mathProblem is a word problem with its reference solution.
type mathProblem struct {
	question string
	steps    []string // solution lines before the last one
	// The last line is lastLead + "<<" + lastExpr + "=" + v + ">>" + v +
	// lastTail, with v the result; a simulated wrong answer substitutes v.
	lastLead, lastExpr, lastTail string
	answer                       int
	commaTarget                  bool // write the final "#### " number with thousands separators
}

type person struct{ name, subj, poss string }

var persons = []person{
	{"Maya", "she", "her"}, {"Liam", "he", "his"}, {"Sofía", "she", "her"},
	{"Noah", "he", "his"}, {"Chloé", "she", "her"}, {"Ravi", "he", "his"},
	{"Aiko", "she", "her"}, {"Mateo", "he", "his"}, {"Zoë", "she", "her"},
	{"Jonas", "he", "his"}, {"Amara", "she", "her"}, {"Kofi", "he", "his"},
	{"Leila", "she", "her"}, {"Björn", "he", "his"}, {"Priya", "she", "her"},
	{"Tomás", "he", "his"},
}

var sceneSetters = []string{
	"It is the first Saturday of the summer holidays.",
	"The town fair is coming up next week, and everyone is busy preparing for it.",
	"After a long week at work, the family finally has some time to plan ahead.",
	"The community centre is organising a fundraiser for the local library.",
	"A new school year is about to begin, and there is a lot to prepare.",
	"The weather forecast promised sunshine for the whole weekend.",
	"At the end of every month, the accounts have to be checked carefully.",
	"The neighbourhood has grown quickly over the past two years.",
	"Everyone in the club agreed to keep careful notes this season.",
	"The café on the corner has become a popular meeting place.",
	"It has been a busy spring for the small business on Main Street.",
	"The old farm at the edge of the village was bought by a young couple.",
}

func itoa(n int) string { return strconv.Itoa(n) }

// calc writes a GSM8K calculator annotation and its result: "<<a+b=c>>c".
func calc(expr string, v int) string { return "<<" + expr + "=" + itoa(v) + ">>" + itoa(v) }

// newProblem writes one synthetic GSM8K problem.
func newProblem(r *rng) mathProblem {
	m := problemBody(r)
	// Many GSM8K questions open with a scene-setting sentence.
	if r.chance(0.6) {
		m.question = pick(r, sceneSetters) + " " + m.question
	}
	return m
}

func problemBody(r *rng) mathProblem {
	p := persons[r.intn(len(persons))]
	name := p.name
	if r.chance(0.3) {
		name = persons[r.intn(len(persons))].name + "’s neighbour " + p.name
	}
	var m mathProblem
	switch r.intn(11) {
	case 0: // shopping
		a, pr, b, q := r.between(2, 12), r.between(2, 25), r.between(2, 15), r.between(1, 9)
		x, y := a*pr, b*q
		m.question = name + " buys " + itoa(a) + " notebooks for $" + itoa(pr) + " each and " + itoa(b) + " pens for $" + itoa(q) + " each. How much does " + p.subj + " spend in all?"
		m.steps = []string{
			"The notebooks cost " + itoa(a) + " * $" + itoa(pr) + " = $" + calc(itoa(a)+"*"+itoa(pr), x) + ".",
			"The pens cost " + itoa(b) + " * $" + itoa(q) + " = $" + calc(itoa(b)+"*"+itoa(q), y) + ".",
		}
		m.lastLead, m.lastExpr, m.lastTail = "In all, "+p.subj+" spends $"+itoa(x)+" + $"+itoa(y)+" = $", itoa(x)+"+"+itoa(y), "."
		m.answer = x + y
	case 1: // shared remainder
		k, e, s := r.between(2, 6), r.between(3, 40), r.between(20, 200)
		b := r.between(5, s-5)
		rem := k * e
		a := s + rem
		m.question = "A bakery bakes " + itoa(a) + " loaves of bread every day. It sells " + itoa(b) + " loaves in the morning and " + itoa(s-b) + " loaves in the afternoon, and gives the rest in equal shares to " + itoa(k) + " shelters. How many loaves does each shelter get?"
		m.steps = []string{
			"The bakery sells " + itoa(b) + " + " + itoa(s-b) + " = " + calc(itoa(b)+"+"+itoa(s-b), s) + " loaves.",
			"That leaves " + itoa(a) + " - " + itoa(s) + " = " + calc(itoa(a)+"-"+itoa(s), rem) + " loaves.",
		}
		m.lastLead, m.lastExpr, m.lastTail = "Each shelter gets "+itoa(rem)+" / "+itoa(k)+" = ", itoa(rem)+"/"+itoa(k), " loaves."
		m.answer = e
	case 2: // distance
		v1, h1, v2, h2 := 5*r.between(6, 14), r.between(1, 6), 5*r.between(4, 14), r.between(1, 5)
		d1, d2 := v1*h1, v2*h2
		m.question = name + " drives at " + itoa(v1) + " miles per hour for " + itoa(h1) + " hours, then at " + itoa(v2) + " miles per hour for " + itoa(h2) + " hours. How many miles does " + p.subj + " drive altogether?"
		m.steps = []string{
			"In the first part " + p.subj + " drives " + itoa(v1) + " * " + itoa(h1) + " = " + calc(itoa(v1)+"*"+itoa(h1), d1) + " miles.",
			"In the second part " + p.subj + " drives " + itoa(v2) + " * " + itoa(h2) + " = " + calc(itoa(v2)+"*"+itoa(h2), d2) + " miles.",
		}
		m.lastLead, m.lastExpr, m.lastTail = "Altogether "+p.subj+" drives "+itoa(d1)+" + "+itoa(d2)+" = ", itoa(d1)+"+"+itoa(d2), " miles."
		m.answer = d1 + d2
	case 3: // discount
		price, pct, ship := 20*r.between(2, 20), 5*r.between(2, 10), r.between(3, 15)
		disc := price * pct / 100
		sale := price - disc
		m.question = "A jacket costs $" + itoa(price) + ". The store takes " + itoa(pct) + "% off, and " + name + " pays $" + itoa(ship) + " for shipping. How much does " + p.subj + " pay in total?"
		m.steps = []string{
			"The discount is " + itoa(pct) + "/100 * $" + itoa(price) + " = $" + calc(itoa(pct)+"/100*"+itoa(price), disc) + ".",
			"The sale price is $" + itoa(price) + " - $" + itoa(disc) + " = $" + calc(itoa(price)+"-"+itoa(disc), sale) + ".",
		}
		m.lastLead, m.lastExpr, m.lastTail = "With shipping, "+p.subj+" pays $"+itoa(sale)+" + $"+itoa(ship)+" = $", itoa(sale)+"+"+itoa(ship), "."
		m.answer = sale + ship
	case 4: // saving
		half, weeks := r.between(10, 60), r.between(3, 30)
		w, goal := 2*half, half*weeks
		m.question = name + " earns $" + itoa(w) + " a week walking dogs and saves half of it. " + capitalize(p.subj) + " wants to buy a bike that costs $" + itoa(goal) + ". How many weeks will " + p.subj + " need to save?"
		m.steps = []string{p.name + " saves " + itoa(w) + " / 2 = $" + calc(itoa(w)+"/2", half) + " each week."}
		m.lastLead, m.lastExpr, m.lastTail = capitalize(p.subj)+" needs "+itoa(goal)+" / "+itoa(half)+" = ", itoa(goal)+"/"+itoa(half), " weeks."
		m.answer = weeks
	case 5: // ages
		a, k := r.between(4, 15), r.between(2, 3)
		s := a * k
		d := r.between(1, s-1)
		bro := s - d
		m.question = p.name + " is " + itoa(a) + " years old. " + capitalize(p.poss) + " sister is " + itoa(k) + " times as old as " + p.name + ", and " + p.poss + " brother is " + itoa(d) + " years younger than the sister. What is the sum of their ages?"
		m.steps = []string{
			"The sister is " + itoa(a) + " * " + itoa(k) + " = " + calc(itoa(a)+"*"+itoa(k), s) + " years old.",
			"The brother is " + itoa(s) + " - " + itoa(d) + " = " + calc(itoa(s)+"-"+itoa(d), bro) + " years old.",
		}
		m.lastLead, m.lastExpr, m.lastTail = "Together they are "+itoa(a)+" + "+itoa(s)+" + "+itoa(bro)+" = ", itoa(a)+"+"+itoa(s)+"+"+itoa(bro), " years old."
		m.answer = a + s + bro
	case 6: // garden
		rows, cols, per := r.between(3, 12), r.between(4, 15), r.between(5, 30)
		plants := rows * cols
		total := plants * per
		give := r.between(1, total/2)
		m.question = "A garden has " + itoa(rows) + " rows with " + itoa(cols) + " tomato plants in each row. Each plant gives " + itoa(per) + " tomatoes. " + name + " gives " + itoa(give) + " tomatoes to the neighbours. How many tomatoes does " + p.subj + " keep?"
		m.steps = []string{
			"There are " + itoa(rows) + " * " + itoa(cols) + " = " + calc(itoa(rows)+"*"+itoa(cols), plants) + " plants.",
			"They give " + itoa(plants) + " * " + itoa(per) + " = " + calc(itoa(plants)+"*"+itoa(per), total) + " tomatoes.",
		}
		m.lastLead, m.lastExpr, m.lastTail = capitalize(p.subj)+" keeps "+itoa(total)+" - "+itoa(give)+" = ", itoa(total)+"-"+itoa(give), " tomatoes."
		m.answer = total - give
	case 7: // profit, large numbers written with separators
		a, b := 1000*r.between(40, 400), 1000*r.between(5, 90)
		pct := []int{10, 20, 25, 50}[r.intn(4)]
		c := a + b
		profit := c * pct / 100
		m.question = "A company buys a building for $" + withCommas(a) + " and spends $" + withCommas(b) + " on repairs. It sells the building for " + itoa(pct) + "% more than it spent in total. How much profit does it make?"
		m.steps = []string{"The company spends $" + withCommas(a) + " + $" + withCommas(b) + " = $" + "<<" + itoa(a) + "+" + itoa(b) + "=" + itoa(c) + ">>" + withCommas(c) + " in total."}
		m.lastLead, m.lastExpr, m.lastTail = "The profit is "+itoa(pct)+"/100 * $"+withCommas(c)+" = $", itoa(pct)+"/100*"+itoa(c), "."
		m.answer = profit
		m.commaTarget = r.chance(0.3)
	case 8: // pages
		a := r.between(8, 60)
		t := 2 * a
		b := r.between(1, t-1)
		w := t - b
		m.question = name + " read " + itoa(a) + " pages on Monday and twice as many on Tuesday. On Wednesday " + p.subj + " read " + itoa(b) + " pages fewer than on Tuesday. How many pages did " + p.subj + " read in the three days?"
		m.steps = []string{
			"On Tuesday " + p.subj + " read " + itoa(a) + " * 2 = " + calc(itoa(a)+"*2", t) + " pages.",
			"On Wednesday " + p.subj + " read " + itoa(t) + " - " + itoa(b) + " = " + calc(itoa(t)+"-"+itoa(b), w) + " pages.",
		}
		m.lastLead, m.lastExpr, m.lastTail = "In total "+p.subj+" read "+itoa(a)+" + "+itoa(t)+" + "+itoa(w)+" = ", itoa(a)+"+"+itoa(t)+"+"+itoa(w), " pages."
		m.answer = a + t + w
	case 9: // festival
		n, mins, brk := r.between(3, 8), 5*r.between(16, 30), 5*r.between(1, 6)
		films := n * mins
		breaks := (n - 1) * brk
		m.question = "A film festival shows " + itoa(n) + " films that are " + itoa(mins) + " minutes long each, with a " + itoa(brk) + "-minute break between consecutive films. How many minutes does the festival last?"
		m.steps = []string{
			"The films take " + itoa(n) + " * " + itoa(mins) + " = " + calc(itoa(n)+"*"+itoa(mins), films) + " minutes.",
			"There are " + itoa(n) + " - 1 = " + calc(itoa(n)+"-1", n-1) + " breaks, which take " + itoa(n-1) + " * " + itoa(brk) + " = " + calc(itoa(n-1)+"*"+itoa(brk), breaks) + " minutes.",
		}
		m.lastLead, m.lastExpr, m.lastTail = "The festival lasts "+itoa(films)+" + "+itoa(breaks)+" = ", itoa(films)+"+"+itoa(breaks), " minutes."
		m.answer = films + breaks
	default: // fractions of a class
		j, f := r.between(1, 5), 5*r.between(2, 18)
		n := 80 * j
		walk := n / 4
		rest := n - walk
		bus := rest * f / 100
		m.question = "A school has " + itoa(n) + " students. A quarter of them walk to school and " + itoa(f) + "% of the rest take the bus. How many students neither walk nor take the bus?"
		m.steps = []string{
			itoa(n) + " / 4 = " + calc(itoa(n)+"/4", walk) + " students walk.",
			"That leaves " + itoa(n) + " - " + itoa(walk) + " = " + calc(itoa(n)+"-"+itoa(walk), rest) + " students.",
			itoa(f) + "% of them, " + itoa(rest) + " * " + itoa(f) + " / 100 = " + calc(itoa(rest)+"*"+itoa(f)+"/100", bus) + ", take the bus.",
		}
		m.lastLead, m.lastExpr, m.lastTail = "So "+itoa(rest)+" - "+itoa(bus)+" = ", itoa(rest)+"-"+itoa(bus), " students neither walk nor take the bus."
		m.answer = rest - bus
	}
	return m
}

// solution is the dataset's "answer" field: the worked solution ending in
// "#### <number>". lm-eval uses all of it as the target.
func (m *mathProblem) solution() string {
	var b strings.Builder
	for _, s := range m.steps {
		b.WriteString(s)
		b.WriteString("\n")
	}
	b.WriteString(m.lastLead)
	b.WriteString(calc(m.lastExpr, m.answer))
	b.WriteString(m.lastTail)
	b.WriteString("\n#### ")
	if m.commaTarget {
		b.WriteString(withCommas(m.answer))
	} else {
		b.WriteString(itoa(m.answer))
	}
	return b.String()
}

// gsm8kDoc is one row of the gsm8k "main" config, fields in dataset order.
type gsm8kDoc struct{ question, answer string }

func (d *gsm8kDoc) appendCompact(dst []byte) []byte {
	dst = append(dst, `{"question": `...)
	dst = pynum.AppendString(dst, d.question)
	dst = append(dst, `, "answer": `...)
	dst = pynum.AppendString(dst, d.answer)
	return append(dst, '}')
}

func (d *gsm8kDoc) appendIndent2(dst []byte) []byte {
	dst = append(dst, "{\n  \"question\": "...)
	dst = pynum.AppendString(dst, d.question)
	dst = append(dst, ",\n  \"answer\": "...)
	dst = pynum.AppendString(dst, d.answer)
	return append(dst, "\n}"...)
}

// gsm8kTrainSize is the size of the train split the few-shot examples are
// drawn from.
const gsm8kTrainSize = 7473

// gsm8kModel holds the planted behaviour of the simulated model on GSM8K.
type gsm8kModel struct {
	accuracy   float64 // reasons to the right number
	formatMiss float64 // finishes without "#### N"
	truncated  float64 // cut off before any final answer
	// churn is the share of documents whose correctness is drawn anew
	// (from the churn stream given to respond), so that a setting turns
	// some documents wrong as well as others right.
	churn float64
}

// respond writes the simulated model's generation for one problem: the
// text lm-eval would log in resps after cutting at the stop sequences.
func (g gsm8kModel) respond(r *rng, m *mathProblem) string {
	return g.respondTo(r, nil, m, "#### ")
}

// respondTo is respond for a task whose prompt asks for the final answer
// after lead ("#### ", "The final answer is "), with churn the document's
// stream for redrawing its correctness (nil when g.churn is 0).
func (g gsm8kModel) respondTo(r, churn *rng, m *mathProblem, lead string) string {
	// The three planted behaviours are decided by the stream's first three
	// draws: a document's outcomes then move monotonically with the rates,
	// so a run with a higher accuracy gets right every document a run with
	// a lower one gets right, as paired runs of one model do.
	correct := r.chance(g.accuracy)
	truncate := r.chance(g.truncated)
	miss := r.chance(g.formatMiss)
	if churn != nil && g.churn > 0 && churn.chance(g.churn) {
		correct = churn.chance(g.accuracy)
	}
	prose := lead != "#### " // the Llama prompts ask for reasoning in prose
	v := m.answer
	if !correct {
		switch r.intn(4) {
		case 0:
			v = m.answer * 10
		case 1:
			v = m.answer + r.between(1, 9)
		default:
			v = m.answer - r.between(1, 9)
		}
		if v == m.answer || v < 0 {
			v = m.answer + 11
		}
	}
	annotate := r.chance(0.6) && !prose // keep the <<…>> annotations, as GSM8K-trained models do
	commas := v >= 1000 && r.chance(0.4)
	num := itoa(v)
	if commas {
		num = withCommas(v)
	}

	var b strings.Builder
	if r.chance(0.9) {
		b.WriteString(" ") // the continuation of "Answer:"
	}
	for _, s := range m.steps {
		if !annotate {
			s = stripAnnotations(s)
		}
		b.WriteString(s)
		b.WriteString("\n")
	}
	b.WriteString(m.lastLead)
	if annotate {
		b.WriteString("<<" + m.lastExpr + "=" + itoa(v) + ">>")
	}
	b.WriteString(num)
	b.WriteString(m.lastTail)

	if truncate {
		// max_gen_toks ran out: the model rambled on and was cut mid-word,
		// before giving a final answer.
		b.WriteString("\nLet me double-check the " + pick(r, nouns) + " step by step. ")
		for _, s := range m.steps {
			b.WriteString(stripAnnotations(s))
			b.WriteString(" ")
		}
		// It goes on until the default 256 tokens are spent (about four
		// bytes each) and stops mid-sentence.
		limit := 900 + r.intn(250)
		for b.Len() < limit {
			b.WriteString("Then again, " + pick(r, nouns) + " ")
			for _, s := range m.steps {
				b.WriteString(stripAnnotations(s))
				b.WriteString(" ")
			}
		}
		text := b.String()
		cut := limit
		for cut > 0 && text[cut-1] != ' ' {
			cut--
		}
		return strings.TrimRight(text[:cut], " ") + pick(r, []string{" th", " so", " we", " and the", ""})
	}

	if miss {
		b.WriteString(pick(r, []string{
			"\nThe answer is " + num + ".",
			"\nSo the answer is $" + num + ".",
			"\nTherefore, the final answer is " + num,
			"\nAnswer: " + num,
			" The answer is: $" + num + ".",
		}))
	} else {
		end := ""
		if prose {
			end = "."
		}
		switch r.intn(50) {
		case 0:
			b.WriteString("\n" + lead + num + ".00") // strict captures "N.00": not the target
		case 1:
			b.WriteString("\n" + lead + "$" + num + end) // gsm8k's strict cannot match; flexible still can
		default:
			b.WriteString("\n" + lead + num + end)
		}
	}
	switch r.intn(20) {
	case 0:
		b.WriteString("\n\nI hope this helps!")
	case 1:
		// A trailing number: flexible-extract takes the last one, strict
		// still finds the "####" line.
		b.WriteString("\n\nThat is " + itoa(r.between(2, 9)) + " more than last time.")
	}
	if r.chance(0.4) {
		b.WriteString("\n\n") // the model went on with "Question:", cut by until
	}
	return b.String()
}

// stripAnnotations removes "<<…>>" calculator annotations.
func stripAnnotations(s string) string {
	for {
		i := strings.Index(s, "<<")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], ">>")
		if j < 0 {
			return s
		}
		s = s[:i] + s[i+j+2:]
	}
}

// The gsm8k filters and metric settings, from gsm8k.yaml. Every pattern is
// RE2-compatible, so Go's regexp finds the same matches as Python's re.
var (
	strictRE   = regexp.MustCompile(`#### (\-?[0-9\.\,]+)`)
	flexibleRE = regexp.MustCompile(`(-?[$0-9.,]{2,})|(-?[0-9]+)`)

	// regexes_to_ignore, applied in order. Python's "\.$" also matches
	// before a final newline, which "\.(\n?)\z" → "$1" reproduces.
	ignoreREs = []struct {
		re   *regexp.Regexp
		repl string
	}{
		{regexp.MustCompile(`,`), ""},
		{regexp.MustCompile(`\$`), ""},
		{regexp.MustCompile(`(?s).*#### `), ""},
		{regexp.MustCompile(`\.(\n?)\z`), "${1}"},
	}
)

const fallback = "[invalid]"

// gsm8kFilter is one entry of gsm8k's filter_list.
type gsm8kFilter struct {
	name        string
	re          *regexp.Regexp
	groupSelect int
}

var gsm8kFilters = []gsm8kFilter{
	{"strict-match", strictRE, 0},
	{"flexible-extract", flexibleRE, -1},
}

// apply is lm-eval's RegexFilter followed by take_first on one response:
// re.findall, the match at group_select, the first non-empty group of a
// tuple, the fallback when nothing matched, then str.strip().
func (f gsm8kFilter) apply(resp string) string {
	ms := f.re.FindAllStringSubmatch(resp, -1)
	if len(ms) == 0 {
		return fallback
	}
	i := f.groupSelect
	if i < 0 {
		i += len(ms)
	}
	m := ms[i]
	var s string
	switch len(m) {
	case 1:
		s = m[0]
	case 2:
		s = m[1]
	default:
		s = fallback
		for _, g := range m[1:] {
			if g != "" {
				s = g
				break
			}
		}
	}
	return pyStrip(s)
}

// exactMatch is exact_match_hf_evaluate with gsm8k's arguments
// (regexes_to_ignore as above, ignore_case true, ignore_punctuation false).
func exactMatch(prediction, reference string) float64 {
	for _, x := range ignoreREs {
		prediction = x.re.ReplaceAllString(prediction, x.repl)
		reference = x.re.ReplaceAllString(reference, x.repl)
	}
	// Both sides are ASCII here (filter output and the digits after "####"),
	// where strings.ToLower and Python's str.lower agree.
	if strings.ToLower(prediction) == strings.ToLower(reference) {
		return 1
	}
	return 0
}

// strictFast is the strict-match filter (regex "#### (\-?[0-9\.\,]+)",
// first match, take_first, strip) without the regexp engine: the coverage
// tests score hundreds of thousands of simulated answers. TestFastFilters
// checks it against the regexp on every generated answer.
func strictFast(resp string) string {
	for from := 0; ; {
		i := strings.Index(resp[from:], "#### ")
		if i < 0 {
			return fallback
		}
		j := from + i + len("#### ")
		k := j
		if k < len(resp) && resp[k] == '-' && k+1 < len(resp) && isStrictChar(resp[k+1]) {
			k++
		}
		e := k
		for e < len(resp) && isStrictChar(resp[e]) {
			e++
		}
		if e > k {
			return pyStrip(resp[j:e])
		}
		from += i + 1
	}
}

func isStrictChar(c byte) bool { return c >= '0' && c <= '9' || c == '.' || c == ',' }

// exactMatchFast is exactMatch with the four ignore-regexes done by string
// operations (same order, same effect).
func exactMatchFast(prediction, reference string) float64 {
	norm := func(s string) string {
		s = strings.ReplaceAll(s, ",", "")
		s = strings.ReplaceAll(s, "$", "")
		if i := strings.LastIndex(s, "#### "); i >= 0 {
			s = s[i+len("#### "):]
		}
		switch {
		case strings.HasSuffix(s, ".\n"):
			s = s[:len(s)-2] + "\n"
		case strings.HasSuffix(s, "."):
			s = s[:len(s)-1]
		}
		return strings.ToLower(s)
	}
	if norm(prediction) == norm(reference) {
		return 1
	}
	return 0
}
