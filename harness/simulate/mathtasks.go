package simulate

import (
	"regexp"
	"strings"

	"github.com/evalcapsule/evalcapsule/harness"
)

// mathTask is one task of the GSM8K family that the simulator writes: the
// same synthetic problems and planted model, with the prompt, target,
// answer phrase, filters and generation settings of the task's YAML in
// lm-eval 0.4.9.1 (gsm8k.yaml, gsm8k-cot-llama.yaml and
// llama3/instruct/gsm8k/gsm8k.yaml).
type mathTask struct {
	name    string
	version float64
	since   [3]int // the first release that has the task
	// docToText is the YAML's doc_to_text, recorded in configs; text
	// renders it for a question.
	docToText string
	text      func(question string) string
	// docToTarget is the YAML's doc_to_target; bareTarget says it yields
	// the number after "####" rather than the whole solution.
	docToTarget string
	bareTarget  bool
	// fixedShots: the few-shot examples are the YAML's own (first_n, at
	// most this many); 0: drawn from the train split (the default sampler).
	fixedShots int
	// finalLead starts the answer line the task's prompt asks for
	// ("#### ", "The final answer is ").
	finalLead string
	filters   []gsm8kFilter
	// until and genKwargs are generation_kwargs; arg1 is their text as
	// each request logs it.
	until     []string
	maxTokens int // max_gen_toks, 0 when the YAML sets none
	temp      any // temperature; nil when the YAML sets none
	arg1      string
	tags      []string
}

// flexibleFilter is the flexible-extract regex shared by the whole family.
var flexibleFilter = func(name string) gsm8kFilter { return gsm8kFilter{name, flexibleRE, -1} }

const llamaProblemText = "Given the following problem, reason and give a final answer to the problem.\nProblem: "
const llamaProblemTail = "\nYour response should end with \"The final answer is [answer]\" where [answer] is the response to the problem."

var mathTasks = []*mathTask{
	{
		name: "gsm8k", version: 3.0,
		docToText:   gsm8kDocToText,
		text:        func(q string) string { return "Question: " + q + "\nAnswer:" },
		docToTarget: "{{answer}}",
		finalLead:   "#### ",
		filters:     gsm8kFilters,
		until:       []string{"Question:", "</s>", "<|im_end|>"},
		temp:        0.0,
		arg1:        gsm8kArg1,
		tags:        []string{"math_word_problems"},
	},
	{
		name: "gsm8k_cot_llama", version: 3.0, since: [3]int{0, 4, 4},
		docToText:   "Given the following problem, reason and give a final answer to the problem.\nProblem: {{question}}\nYour response should end with \"The final answer is [answer]\" where [answer] is the response to the problem.\n",
		text:        func(q string) string { return llamaProblemText + q + llamaProblemTail + "\n" },
		docToTarget: "{{answer.split('####')[-1].strip() if answer is defined else target}}",
		bareTarget:  true, fixedShots: 8,
		finalLead: "The final answer is ",
		filters: []gsm8kFilter{
			{"strict-match", regexp.MustCompile(`The final answer is ((-?[$0-9.,]{2,})|(-?[0-9]+))`), -1},
			flexibleFilter("flexible-extract"),
		},
		until: []string{"<|eot_id|>", "<|start_header_id|>user<|end_header_id|>", "Q:", "</s>", "<|im_end|>"},
		arg1:  `{"until": ["<|eot_id|>", "<|start_header_id|>user<|end_header_id|>", "Q:", "</s>", "<|im_end|>"], "do_sample": false}`,
		tags:  []string{"math_word_problems"},
	},
	{
		name: "gsm8k_llama", version: 3.0,
		docToText:   "Given the following problem, reason and give a final answer to the problem.\nProblem: {{question}}\nYour response should end with \"The final answer is [answer]\" where [answer] is the response to the problem.",
		text:        func(q string) string { return llamaProblemText + q + llamaProblemTail },
		docToTarget: "{{answer.split('####')[-1].strip() if answer is defined else target}}",
		bareTarget:  true, fixedShots: 8,
		finalLead: "The final answer is ",
		filters: []gsm8kFilter{
			{"strict_match", regexp.MustCompile(`final answer is (\-?[0-9\.\,]+)`), -1},
			flexibleFilter("flexible_extract"),
		},
		maxTokens: 1024, temp: 0,
		arg1: `{"do_sample": false, "max_gen_toks": 1024, "temperature": 0, "until": []}`,
		tags: []string{"math_word_problems"},
	},
}

func mathTaskNamed(name string) *mathTask {
	for _, t := range mathTasks {
		if t.name == name {
			return t
		}
	}
	return nil
}

// target is the task's reference for a problem.
func (t *mathTask) target(m *mathProblem) string {
	if !t.bareTarget {
		return m.solution()
	}
	s := m.solution()
	return strings.TrimSpace(s[strings.LastIndex(s, "####")+len("####"):])
}

// shotTarget is a few-shot example's answer: the whole solution for gsm8k,
// for the Llama tasks the reasoning in prose ending in the phrase their
// prompt asks for.
func (t *mathTask) shotTarget(m *mathProblem) string {
	if !t.bareTarget {
		return m.solution()
	}
	var b strings.Builder
	for _, s := range m.steps {
		b.WriteString(stripAnnotations(s))
		b.WriteString(" ")
	}
	b.WriteString(m.lastLead + itoa(m.answer) + m.lastTail)
	b.WriteString(" The final answer is " + itoa(m.answer) + ".")
	return b.String()
}

// simChatTemplate is the chat template of the simulated model (made up: it
// is no real model's), recorded in the results as lm-eval records a
// tokenizer's.
const simChatTemplate = "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}<|end|>\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"

// chatTurn is one message of a chat-templated prompt.
type chatTurn struct{ role, content string }

// renderChat renders messages with simChatTemplate and the generation
// prompt, as lm-eval's apply_chat_template does.
func renderChat(turns []chatTurn) string {
	var b strings.Builder
	for _, t := range turns {
		b.WriteString("<|" + t.role + "|>\n" + t.content + "<|end|>\n")
	}
	b.WriteString("<|assistant|>\n")
	return b.String()
}

// fewshotPrompt is the context lm-eval builds from few-shot examples
// (text, target) and the test question's text: "text<delim>target\n\n"
// per example, then the question; under a chat template one user message
// holding all of it, or with fewshot_as_multiturn one user and one
// assistant message per example, then the question as the last user
// message.
func fewshotPrompt(c *config, examples [][2]string, delim, question string) string {
	if !c.ChatTemplate {
		var b strings.Builder
		for _, ex := range examples {
			b.WriteString(ex[0] + delim + ex[1] + "\n\n")
		}
		b.WriteString(question)
		return b.String()
	}
	if !c.FewshotAsMultiturn {
		c2 := *c
		c2.ChatTemplate = false
		return renderChat([]chatTurn{{"user", fewshotPrompt(&c2, examples, delim, question)}})
	}
	var turns []chatTurn
	for _, ex := range examples {
		turns = append(turns, chatTurn{"user", ex[0]}, chatTurn{"assistant", ex[1]})
	}
	return renderChat(append(turns, chatTurn{"user", question}))
}

// prompt is the context of one test question: k few-shot examples, drawn
// from the train split with r (gsm8k's default sampler) or the task's own
// first k.
func (t *mathTask) prompt(c *config, r *rng, question string) string {
	k := c.numFewshot
	examples := make([][2]string, 0, k)
	if t.fixedShots > 0 {
		for i := 0; i < k; i++ {
			ex := newProblem(stream(c.DataSeed, t.name+"-fewshot", i))
			examples = append(examples, [2]string{t.text(ex.question), t.shotTarget(&ex)})
		}
	} else {
		chosen := make([]int, 0, k)
		for len(chosen) < k {
			i := r.intn(gsm8kTrainSize)
			dup := false
			for _, c := range chosen {
				dup = dup || c == i
			}
			if dup {
				continue
			}
			chosen = append(chosen, i)
			ex := newProblem(stream(c.DataSeed, "gsm8k-train", i))
			examples = append(examples, [2]string{t.text(ex.question), t.shotTarget(&ex)})
		}
	}
	return fewshotPrompt(c, examples, t.targetDelimiter(c), t.text(question))
}

// targetDelimiter is " ", except for gsm8k_cot_llama from v0.4.10 (task
// version 4.0), whose YAML sets "".
func (t *mathTask) targetDelimiter(c *config) string {
	if t.name == "gsm8k_cot_llama" && !c.f.version.Less(harness.Version{0, 4, 10}) {
		return ""
	}
	return " "
}

// taskVersion is the task's version in the release c writes.
func (t *mathTask) taskVersion(c *config) float64 {
	if t.name == "gsm8k_cot_llama" && !c.f.version.Less(harness.Version{0, 4, 10}) {
		return 4.0
	}
	return t.version
}

// samples is fewshot_config.samples of a task with its own examples: the
// synthetic stand-ins for them, as {question, target}.
func (t *mathTask) samples(c *config) []any {
	var out []any
	for i := 0; i < t.fixedShots; i++ {
		ex := newProblem(stream(c.DataSeed, t.name+"-fewshot", i))
		out = append(out, (&object{}).set("question", ex.question).set("target", t.shotTarget(&ex)))
	}
	return out
}
