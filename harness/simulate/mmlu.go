package simulate

import (
	"strconv"
	"strings"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// MMLU as lm-eval 0.4.9.1 runs it (lm_eval/tasks/mmlu/default): 57 subject
// tasks under four category groups under the group "mmlu". The subjects, their
// categories and their test-split sizes (14,042 questions in all) are those
// of cais/mmlu; the questions themselves are synthetic.

type category int

const (
	stem category = iota
	other
	socialSciences
	humanities
)

// categories lists the groups in the order of mmlu's task list in _mmlu.yaml,
// which is the order lm-eval evaluates, flattens and pools them in.
// alias is the group_alias of the category's group YAML (v0.4.4+);
// alias043 that of v0.4.3's subject YAMLs, which spelled one differently.
var categories = []struct {
	group, alias, alias043 string
}{
	stem:           {"mmlu_stem", "stem", "stem"},
	other:          {"mmlu_other", "other", "other"},
	socialSciences: {"mmlu_social_sciences", "social sciences", "social_sciences"},
	humanities:     {"mmlu_humanities", "humanities", "humanities"},
}

// questionStyle selects the shape of a subject's synthetic questions, so
// that prompt lengths vary across subjects as they do in MMLU (the history
// subjects quote long passages, the professional ones long vignettes).
type questionStyle int

const (
	styleShort questionStyle = iota
	styleMath
	styleVignette
	stylePassage
	styleScenarios
)

type subject struct {
	name     string // dataset_name; the task is "mmlu_" + name
	category category
	size     int // test split size in cais/mmlu
	style    questionStyle
}

// subjects is in evaluation order: categories as above, subjects sorted by
// name within each (the order of the mmlu_<category>_tasks tag).
var subjects = []subject{
	{"abstract_algebra", stem, 100, styleMath},
	{"anatomy", stem, 135, styleShort},
	{"astronomy", stem, 152, styleShort},
	{"college_biology", stem, 144, styleShort},
	{"college_chemistry", stem, 100, styleMath},
	{"college_computer_science", stem, 100, styleMath},
	{"college_mathematics", stem, 100, styleMath},
	{"college_physics", stem, 102, styleMath},
	{"computer_security", stem, 100, styleShort},
	{"conceptual_physics", stem, 235, styleShort},
	{"electrical_engineering", stem, 145, styleShort},
	{"elementary_mathematics", stem, 378, styleMath},
	{"high_school_biology", stem, 310, styleShort},
	{"high_school_chemistry", stem, 203, styleMath},
	{"high_school_computer_science", stem, 100, styleMath},
	{"high_school_mathematics", stem, 270, styleMath},
	{"high_school_physics", stem, 151, styleMath},
	{"high_school_statistics", stem, 216, styleMath},
	{"machine_learning", stem, 112, styleMath},

	{"business_ethics", other, 100, styleShort},
	{"clinical_knowledge", other, 265, styleShort},
	{"college_medicine", other, 173, styleVignette},
	{"global_facts", other, 100, styleShort},
	{"human_aging", other, 223, styleShort},
	{"management", other, 103, styleShort},
	{"marketing", other, 234, styleShort},
	{"medical_genetics", other, 100, styleShort},
	{"miscellaneous", other, 783, styleShort},
	{"nutrition", other, 306, styleShort},
	{"professional_accounting", other, 282, styleVignette},
	{"professional_medicine", other, 272, styleVignette},
	{"virology", other, 166, styleShort},

	{"econometrics", socialSciences, 114, styleMath},
	{"high_school_geography", socialSciences, 198, styleShort},
	{"high_school_government_and_politics", socialSciences, 193, styleShort},
	{"high_school_macroeconomics", socialSciences, 390, styleShort},
	{"high_school_microeconomics", socialSciences, 238, styleShort},
	{"high_school_psychology", socialSciences, 545, styleShort},
	{"human_sexuality", socialSciences, 131, styleShort},
	{"professional_psychology", socialSciences, 612, styleVignette},
	{"public_relations", socialSciences, 110, styleShort},
	{"security_studies", socialSciences, 245, styleVignette},
	{"sociology", socialSciences, 201, styleShort},
	{"us_foreign_policy", socialSciences, 100, styleShort},

	{"formal_logic", humanities, 126, styleMath},
	{"high_school_european_history", humanities, 165, stylePassage},
	{"high_school_us_history", humanities, 204, stylePassage},
	{"high_school_world_history", humanities, 237, stylePassage},
	{"international_law", humanities, 121, styleShort},
	{"jurisprudence", humanities, 108, styleShort},
	{"logical_fallacies", humanities, 163, styleShort},
	{"moral_disputes", humanities, 346, styleShort},
	{"moral_scenarios", humanities, 895, styleScenarios},
	{"philosophy", humanities, 311, styleShort},
	{"prehistory", humanities, 324, styleShort},
	{"professional_law", humanities, 1534, styleVignette},
	{"world_religions", humanities, 171, styleShort},
}

func (s subject) task() string { return "mmlu_" + s.name }

// subjectOrder returns the indices of subjects in evaluation order: that of
// the subjects list, reversed for v0.4.3 (see resolve).
func subjectOrder(f format) []int {
	order := make([]int, len(subjects))
	for i := range order {
		order[i] = i
		if f.childrenGroups {
			order[i] = len(subjects) - 1 - i
		}
	}
	return order
}

// words is the subject in prose, as in the task's description.
func (s subject) words() string { return strings.ReplaceAll(s.name, "_", " ") }

// description is the task's description as its YAML gives it. lm-eval
// renders it through Jinja and prepends it to every prompt: with its two
// trailing newlines since v0.4.4, with one before (Jinja's default drops a
// trailing newline), see promptDescription.
func (s subject) description() string {
	return "The following are multiple choice questions (with answers) about " + s.words() + ".\n\n"
}

// promptDescription is the description as it starts the prompt.
func (s subject) promptDescription(f format) string {
	d := s.description()
	if f.descriptionNewlines < 2 {
		d = strings.TrimSuffix(d, "\n")
	}
	return d
}

// mmluDoc is one row of cais/mmlu: the fields in the dataset's order,
// which is the order lm-eval logs and hashes them in.
type mmluDoc struct {
	question string
	subject  string
	choices  [4]string
	answer   int
}

var letters = [4]string{"A", "B", "C", "D"}

// newMMLUDoc writes a synthetic question of subject s.
func newMMLUDoc(r *rng, s subject) mmluDoc {
	topic := s.words()
	d := mmluDoc{subject: s.name, answer: r.intn(4)}
	switch s.style {
	case styleMath:
		a, b := r.between(2, 60), r.between(2, 60)
		d.question = pick(r, []string{
			"Let \\(G\\) be a " + pick(r, adjectives) + " " + pick(r, nouns) + " of order " + strconv.Itoa(a*b) + ". Which of the following must be true?",
			"Find the value of " + strconv.Itoa(a) + "x + " + strconv.Itoa(b) + " when x = " + strconv.Itoa(r.between(-9, 9)) + ".",
			"A " + pick(r, nouns) + " in " + topic + " has " + strconv.Itoa(a) + " " + pick(r, nouns) + "s and " + strconv.Itoa(b) + " constraints. " + sentence(r, topic) + " What is the resulting " + pick(r, nouns) + "?",
			"Statement 1 | " + sentence(r, topic) + " Statement 2 | " + sentence(r, topic),
		})
		if strings.HasPrefix(d.question, "Statement 1") {
			d.choices = [4]string{"True, True", "False, False", "True, False", "False, True"}
		} else {
			for i := range d.choices {
				switch r.intn(4) {
				case 0:
					d.choices[i] = strconv.Itoa(r.between(-20, 400))
				case 1:
					d.choices[i] = "\\frac{" + strconv.Itoa(r.between(1, 9)) + "}{" + strconv.Itoa(r.between(2, 12)) + "}"
				case 2:
					d.choices[i] = strconv.Itoa(r.between(1, 99)) + "." + strconv.Itoa(r.between(0, 9))
				default:
					d.choices[i] = phrase(r, topic)
				}
			}
		}
	case styleVignette:
		d.question = paragraph(r, topic, r.between(120, 420)) + " " +
			pick(r, []string{"Which of the following is the most likely explanation?",
				"Which of the following is the most appropriate next step?",
				"Is " + pick(r, people) + " likely to prevail?",
				"Which of the following best describes the " + pick(r, nouns) + "?"})
		for i := range d.choices {
			d.choices[i] = pick(r, []string{"Yes, because ", "No, because ", "", ""}) + strings.TrimSuffix(sentence(r, topic), ".")
			if r.chance(0.5) {
				d.choices[i] = phrase(r, topic)
			}
		}
	case stylePassage:
		d.question = "This question refers to the following information.\n" +
			pick(r, []string{"“", "\"", ""}) + paragraph(r, topic, r.between(350, 1200)) + "\n" +
			pick(r, []string{"—", "–"}) + capitalize(pick(r, people)) + ", " + strconv.Itoa(r.between(1510, 1990)) + "\n" +
			pick(r, []string{"The passage above is most likely a response to which of the following?",
				"Which of the following best explains the " + pick(r, nouns) + " described in the passage?",
				"The sentiments expressed in the passage most directly reflect which of the following?"})
		for i := range d.choices {
			d.choices[i] = strings.TrimSuffix(sentence(r, topic), ".")
		}
	case styleScenarios:
		d.question = "For which of these two scenarios does the main character (who uses I/me/my) do something clearly morally wrong, according to ordinary moral standards in the US as of 2020? Scenario 1 | I " +
			pick(r, verbs) + " the " + pick(r, nouns) + " of my " + pick(r, []string{"neighbor", "sister", "coworker", "teacher"}) + ". Scenario 2 | I " +
			pick(r, verbs) + " the " + pick(r, adjectives) + " " + pick(r, nouns) + " at the café."
		d.choices = [4]string{"Wrong, Wrong", "Wrong, Not wrong", "Not wrong, Wrong", "Not wrong, Not wrong"}
	default:
		stem := pick(r, []string{
			"Which of the following best describes the " + pick(r, adjectives) + " " + pick(r, nouns) + " in " + topic + "?",
			"Which of the following is true?",
			"According to " + pick(r, people) + ", the " + pick(r, nouns) + " " + pick(r, verbs) + " which of the following?",
			"The " + pick(r, nouns) + " of a " + pick(r, nouns) + " is ______.",
		})
		if r.chance(0.4) {
			stem = paragraph(r, topic, r.between(30, 160)) + " " + stem
		}
		d.question = stem
		for i := range d.choices {
			if r.chance(0.6) {
				d.choices[i] = phrase(r, topic)
			} else {
				d.choices[i] = strings.TrimSuffix(sentence(r, topic), ".")
			}
		}
	}
	// Some MMLU questions carry stray leading or trailing whitespace, which
	// the template's question.strip() removes from the prompt but which
	// stays in the logged (and hashed) doc.
	switch r.intn(50) {
	case 0:
		d.question += " "
	case 1:
		d.question += "\n"
	case 2:
		d.question = " " + d.question
	}
	return d
}

// text is doc_to_text: "{{question.strip()}}\nA. {{choices[0]}}\n…\nAnswer:".
func (d *mmluDoc) text() string {
	var b strings.Builder
	b.WriteString(pyStrip(d.question))
	for i, c := range d.choices {
		b.WriteString("\n")
		b.WriteString(letters[i])
		b.WriteString(". ")
		b.WriteString(c)
	}
	b.WriteString("\nAnswer:")
	return b.String()
}

// appendCompact appends the doc as json.dumps(doc, ensure_ascii=False).
func (d *mmluDoc) appendCompact(dst []byte) []byte {
	dst = append(dst, `{"question": `...)
	dst = pynum.AppendString(dst, d.question)
	dst = append(dst, `, "subject": `...)
	dst = pynum.AppendString(dst, d.subject)
	dst = append(dst, `, "choices": [`...)
	for i, c := range d.choices {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = pynum.AppendString(dst, c)
	}
	dst = append(dst, `], "answer": `...)
	dst = strconv.AppendInt(dst, int64(d.answer), 10)
	return append(dst, '}')
}

// appendIndent2 appends json.dumps(doc, indent=2, ensure_ascii=False), the
// text lm-eval hashes into doc_hash.
func (d *mmluDoc) appendIndent2(dst []byte) []byte {
	dst = append(dst, "{\n  \"question\": "...)
	dst = pynum.AppendString(dst, d.question)
	dst = append(dst, ",\n  \"subject\": "...)
	dst = pynum.AppendString(dst, d.subject)
	dst = append(dst, ",\n  \"choices\": ["...)
	for i, c := range d.choices {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, "\n    "...)
		dst = pynum.AppendString(dst, c)
	}
	dst = append(dst, "\n  ],\n  \"answer\": "...)
	dst = strconv.AppendInt(dst, int64(d.answer), 10)
	return append(dst, "\n}"...)
}

// mmluPrefix is the part of every prompt of a subject before the test
// question: the description and the first k dev examples (the first_n
// sampler), each "<doc_to_text> <letter>\n\n".
func mmluPrefix(seed int64, s subject, k int, f format) string {
	var b strings.Builder
	b.WriteString(s.promptDescription(f))
	for i := 0; i < k; i++ {
		ex := newMMLUDoc(stream(seed, "mmlu-dev/"+s.name, i), s)
		b.WriteString(ex.text())
		b.WriteString(" ")
		b.WriteString(letters[ex.answer])
		b.WriteString("\n\n")
	}
	return b.String()
}

// choiceScores are the simulated model's outputs for one question: the
// log-likelihood of each continuation " A" … " D" and whether it was the
// greedy token.
type choiceScores struct {
	ll     [4]float64
	greedy [4]bool
}

// scoreChoices plays the model on one question: with probability acc its
// favourite choice is the answer, otherwise a uniformly drawn wrong one. The
// favourite gets the largest probability, the other choices and the rest of
// the vocabulary share what is left, and the favourite is the greedy token
// only if it beats the most likely token outside the four letters.
//
// Products that feed a sum are wrapped in float64() so that no platform
// fuses them into a multiply-add: the bits must not depend on the machine.
func scoreChoices(r *rng, answer int, acc float64) choiceScores {
	fav := answer
	if !r.chance(acc) {
		fav = (answer + 1 + r.intn(3)) % 4
	}
	u := r.float64()
	if v := r.float64(); v > u {
		u = v // confidence skewed towards high
	}
	pFav := 0.26 + float64(0.73*u)
	letterShare := 0.3 + float64(0.65*r.float64()) // of what pFav leaves
	rest := float64(1-pFav) * letterShare
	var p [4]float64
	var w [4]float64
	var wsum float64
	for i := range w {
		if i != fav {
			w[i] = 0.05 + r.float64()
			wsum += w[i]
		}
	}
	var sc choiceScores
	var letterMass float64
	for i := range p {
		if i == fav {
			p[i] = pFav
		} else {
			p[i] = float64(rest*w[i]) / wsum
			if p[i] >= pFav {
				p[i] = float64(pFav * float64(0.5+float64(0.4*r.float64())))
			}
		}
		letterMass += p[i]
		sc.ll[i] = detLog(p[i])
	}
	topOther := float64(1-letterMass) * float64(0.2+float64(0.8*r.float64()))
	sc.greedy[fav] = pFav > topOther
	return sc
}

// argmax is numpy.argmax over the log-likelihoods: the first maximum wins.
func argmax(ll [4]float64) int {
	best := 0
	for i := 1; i < len(ll); i++ {
		if ll[i] > ll[best] {
			best = i
		}
	}
	return best
}
