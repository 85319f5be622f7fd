package simulate

import (
	"strings"

	"github.com/evalcapsule/evalcapsule/harness"
)

// mmluFamily is one of the two MMLU task groups the simulator writes over
// the same 57 subjects and synthetic questions: "mmlu", the loglikelihood
// one (lm_eval/tasks/mmlu/default), and "mmlu_llama", Meta's generative
// prompt (lm_eval/tasks/llama3/instruct/mmlu, lm-eval v0.4.8 and later).
type mmluFamily struct {
	group      string // the top group; its tasks are group + "_" + subject
	metric     string // "acc", "exact_match"
	filter     string // "none", "strict_match"
	generative bool
	since      [3]int
}

var (
	mmluLoglik = &mmluFamily{group: "mmlu", metric: "acc", filter: "none"}
	mmluLlama  = &mmluFamily{group: "mmlu_llama", metric: "exact_match", filter: "strict_match", generative: true, since: [3]int{0, 4, 8}}
)

func mmluFamilyNamed(name string) *mmluFamily {
	for _, f := range []*mmluFamily{mmluLoglik, mmluLlama} {
		if f.group == name {
			return f
		}
	}
	return nil
}

// task is the subject's task name in this family.
func (m *mmluFamily) task(s subject) string { return m.group + "_" + s.name }

// category is the name of category i's group ("mmlu_llama_stem").
func (m *mmluFamily) category(i int) string {
	return m.group + strings.TrimPrefix(categories[i].group, "mmlu")
}

// categoryVersion is the version of category i's group YAML: 2 for mmlu's;
// mmlu_llama's stem YAML says 0, the other three 1.
func (m *mmluFamily) categoryVersion(i int) int {
	switch {
	case !m.generative:
		return 2
	case category(i) == stem:
		return 0
	}
	return 1
}

// groupVersion is the top group's version (an int in the YAMLs and the
// results, where task versions are floats).
func (m *mmluFamily) groupVersion() int {
	if m.generative {
		return 1
	}
	return 2
}

// taskVersion is a subject task's version.
func (m *mmluFamily) taskVersion(c *config) float64 {
	if m.generative {
		return 1.0
	}
	return c.f.mmluVersion
}

// metricKey is the results' key of the family's metric ("acc,none").
func (m *mmluFamily) metricKey() string { return m.metric + "," + m.filter }

// alias is the subject's task_alias: its name in mmlu, its words in
// mmlu_llama.
func (m *mmluFamily) alias(s subject) string {
	if m.generative {
		return s.words()
	}
	return s.name
}

// mmlu_llama as _continuation_template_yaml (v0.4.9.1) defines it.
const (
	llamaMMLUDocToText   = "Given the following question and four candidate answers (A, B, C and D), choose the best answer.\nQuestion: {{question.strip()}}\nA. {{choices[0]}}\nB. {{choices[1]}}\nC. {{choices[2]}}\nD. {{choices[3]}}\nYour response should end with \"The best answer is [the_answer_letter]\" where the [the_answer_letter] is one of A, B, C or D."
	llamaMMLUDocToTarget = "{{['A.','B.','C.','D.'][answer]}}"
	llamaMMLUGenPrefix   = "The best answer is"
	// llamaMMLUArg1 is generation_kwargs as each request logs it.
	llamaMMLUArg1 = `{"do_sample": false, "until": ["."], "max_gen_toks": 10}`
)

// llamaMMLURegexes are the metric's regexes_to_ignore.
var llamaMMLURegexes = []string{"\\$", "\\.$"}

// llamaText renders llamaMMLUDocToText for d.
func (d *mmluDoc) llamaText() string {
	var b strings.Builder
	b.WriteString("Given the following question and four candidate answers (A, B, C and D), choose the best answer.\nQuestion: ")
	b.WriteString(pyStrip(d.question))
	for i, c := range d.choices {
		b.WriteString("\n" + letters[i] + ". " + c)
	}
	b.WriteString("\nYour response should end with \"The best answer is [the_answer_letter]\" where the [the_answer_letter] is one of A, B, C or D.")
	return b.String()
}

func (d *mmluDoc) llamaTarget() string { return letters[d.answer] + "." }

// llamaMMLUPrompt is the context lm-eval v0.4.9.1 builds for a test
// question of mmlu_llama: no description; each of the first k dev examples
// as "<text> The best answer is <target>\n\n", then the question,
// " " and gen_prefix. Under a chat template the examples and question form
// one user message (or, with fewshot_as_multiturn, a user and an assistant
// message per example), and gen_prefix opens an assistant message that the
// model continues (add_generation_prompt false, continue_final_message).
func llamaMMLUPrompt(c *config, s subject, d *mmluDoc) string {
	var shots [][2]string
	for i := 0; i < c.numFewshot; i++ {
		ex := newMMLUDoc(stream(c.DataSeed, "mmlu-dev/"+s.name, i), s)
		shots = append(shots, [2]string{ex.llamaText(), llamaMMLUGenPrefix + " " + ex.llamaTarget()})
	}
	question := d.llamaText()
	if !c.ChatTemplate {
		var b strings.Builder
		for _, ex := range shots {
			b.WriteString(ex[0] + " " + ex[1] + "\n\n")
		}
		b.WriteString(question + " " + llamaMMLUGenPrefix)
		return b.String()
	}
	var turns []chatTurn
	if c.FewshotAsMultiturn {
		for _, ex := range shots {
			turns = append(turns, chatTurn{"user", ex[0]}, chatTurn{"assistant", ex[1]})
		}
		turns = append(turns, chatTurn{"user", question})
	} else {
		var b strings.Builder
		for _, ex := range shots {
			b.WriteString(ex[0] + " " + ex[1] + "\n\n")
		}
		turns = append(turns, chatTurn{"user", b.String() + question})
	}
	var b strings.Builder
	for _, t := range turns {
		b.WriteString("<|" + t.role + "|>\n" + t.content + "<|end|>\n")
	}
	b.WriteString("<|assistant|>\n" + llamaMMLUGenPrefix)
	return b.String()
}

// llamaMMLURespond plays the model on one question: with probability acc
// it names the answer, otherwise a uniformly drawn wrong letter. Generation
// stops before the first "." (until), so no response holds one. Most
// responses are " X"; some decorate the letter (which the metric's
// ignore_punctuation forgives), some ramble past max_gen_toks without a
// letter of their own.
func llamaMMLURespond(r *rng, answer int, acc float64) string {
	fav := answer
	if !r.chance(acc) {
		fav = (answer + 1 + r.intn(3)) % 4
	}
	l := letters[fav]
	switch u := r.float64(); {
	case u < 0.84:
		return " " + l
	case u < 0.90:
		return " **" + l + "**"
	case u < 0.94:
		return " (" + l + ")"
	case u < 0.97:
		return " " + l + ": " + strings.ToLower(l) + "nswer"
	default:
		return "\n\nThe question asks which of the following"
	}
}

// llamaExactMatch is exact_match as mmlu_llama's metric_list sets it:
// regexes_to_ignore "\$" then "\.$" removed from both strings, then
// ignore_case and ignore_punctuation (string.punctuation deleted). No
// response or target holds a newline, so Python's "$" before a final
// newline does not arise.
func llamaExactMatch(prediction, reference string) float64 {
	norm := func(s string) string {
		s = strings.ReplaceAll(s, "$", "")
		s = strings.TrimSuffix(s, ".")
		s = strings.ToLower(s)
		return strings.Map(func(r rune) rune {
			if r < 128 && strings.ContainsRune(pyPunctuation, r) {
				return -1
			}
			return r
		}, s)
	}
	if norm(prediction) == norm(reference) {
		return 1
	}
	return 0
}

// pyPunctuation is Python's string.punctuation.
const pyPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// llamaMMLUConfig is configs["mmlu_llama_<subject>"]: the subject's YAML
// over _continuation_template_yaml, as TaskConfig.to_dict writes it.
func llamaMMLUConfig(c *config, s subject) *object {
	o := (&object{}).set("task", mmluLlama.task(s)).set("task_alias", s.words()).
		set("tag", mmluLlama.category(int(s.category))+"_tasks").
		set("dataset_path", "hails/mmlu_no_train").set("dataset_name", s.name).
		set("test_split", "test").
		set("fewshot_split", "dev").
		set("doc_to_text", llamaMMLUDocToText).
		set("doc_to_target", llamaMMLUDocToTarget).
		set("unsafe_code", false).
		set("description", "").
		set("target_delimiter", " ").
		set("fewshot_delimiter", "\n\n")
	if c.f.fewshotDataclass {
		o.set("fewshot_config", fewshotConfig("first_n", "dev", llamaMMLUDocToText, nil, llamaMMLUDocToTarget).set("gen_prefix", llamaMMLUGenPrefix))
	} else {
		o.set("fewshot_config", (&object{}).set("sampler", "first_n"))
	}
	return o.set("num_fewshot", c.numFewshot).
		set("metric_list", []any{(&object{}).
			set("metric", "exact_match").
			set("aggregation", "mean").
			set("higher_is_better", true).
			set("ignore_case", true).
			set("ignore_punctuation", true).
			set("regexes_to_ignore", llamaMMLURegexes)}).
		set("output_type", "generate_until").
		set("generation_kwargs", (&object{}).set("do_sample", false).set("until", []string{"."}).set("max_gen_toks", 10)).
		set("repeats", 1).
		set("filter_list", []any{(&object{}).set("name", "strict_match").set("filter", []any{
			(&object{}).set("function", "remove_whitespace"),
			(&object{}).set("function", "take_first")})}).
		set("should_decontaminate", false).
		set("gen_prefix", llamaMMLUGenPrefix).
		set("metadata", metadata(c, 1.0))
}

// sinceVersion is m.since as a release.
func (m *mmluFamily) sinceVersion() harness.Version {
	return harness.Version{m.since[0], m.since[1], m.since[2]}
}
