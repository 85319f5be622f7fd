package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// ifevalPieces are the bits random responses are made of: the markup the
// checkers look for, and characters where Python's str and re differ from
// Go's defaults (Unicode spaces, digits and case folding).
var ifevalPieces = []string{
	"a", "b", "word", "Word", "WORD", "keyword", "KeyWord", "kiss", "KISS", "ſun", "K", "ı", "İ", "é", "ß",
	" ", " ", "  ", "\n", "\n\n", "\t", "\u00a0", "\x1c", "\u2003", "\u3000",
	"*", "**", "***", "******", "-", "- item", "* item", ",", ".", "!", "?", "'", `"`,
	"[name]", "[", "]", "<<Title>>", "<<>>", "<<", ">>", "SECTION 1", "Section ٣", "SECTION", "1", "٣", "2",
	"P.S.", "p.s. ", "P.P.S", "p. p. s", "My answer is yes.", "```json", "```", `{"a": [1, 2.5e3, NaN]}`, "{", "}", ":",
	"-Infinity", "1.", "01", "tschüß", "ΣΑΣ", "end phrase", "Is there anything else I can help with?",
}

var ifevalIDs = []string{
	"keywords:existence", "keywords:frequency", "keywords:forbidden_words", "keywords:letter_frequency",
	"language:response_language", "length_constraints:number_sentences", "length_constraints:number_paragraphs",
	"length_constraints:number_words", "length_constraints:nth_paragraph_first_word",
	"detectable_content:number_placeholders", "detectable_content:postscript",
	"detectable_format:number_bullet_lists", "detectable_format:constrained_response",
	"detectable_format:number_highlighted_sections", "detectable_format:multiple_sections",
	"detectable_format:json_format", "detectable_format:title", "combination:two_responses",
	"combination:repeat_prompt", "startend:end_checker", "change_case:capital_word_frequency",
	"change_case:english_capital", "change_case:english_lowercase", "punctuation:no_comma", "startend:quotation",
}

// randomIFEvalKwargs draws the kwargs an instruction needs, with every other
// key of the dataset's schema present as null, as the HF rows have them.
func randomIFEvalKwargs(rng *rand.Rand, id string) map[string]any {
	kw := map[string]any{}
	for _, k := range []string{"num_highlights", "relation", "num_words", "num_placeholders", "prompt_to_repeat",
		"num_paragraphs", "postscript_marker", "first_word", "keyword", "frequency", "num_sentences", "keywords",
		"section_spliter", "num_sections", "end_phrase", "forbidden_words", "language", "letter", "let_frequency",
		"let_relation", "capital_frequency", "capital_relation", "nth_paragraph", "num_bullets"} {
		kw[k] = nil
	}
	n := func() int { return 1 + rng.Intn(4) }
	words := []string{"word", "kiss", "keyword", "sun", "k", "i", "is there", "tschüß", "é"}
	relation := func() string { return []string{"less than", "at least"}[rng.Intn(2)] }
	switch id {
	case "keywords:existence":
		kw["keywords"] = []string{words[rng.Intn(len(words))], words[rng.Intn(len(words))]}
	case "keywords:frequency":
		kw["keyword"], kw["frequency"], kw["relation"] = words[rng.Intn(len(words))], n(), relation()
	case "keywords:forbidden_words":
		kw["forbidden_words"] = []string{words[rng.Intn(len(words))], words[rng.Intn(len(words))]}
	case "keywords:letter_frequency":
		kw["letter"], kw["let_frequency"], kw["let_relation"] = []string{"a", "k", "s", "I", "K"}[rng.Intn(5)], n(), relation()
	case "length_constraints:number_paragraphs", "detectable_content:number_placeholders",
		"detectable_format:number_bullet_lists", "detectable_format:number_highlighted_sections":
		key := map[string]string{"length_constraints:number_paragraphs": "num_paragraphs",
			"detectable_content:number_placeholders": "num_placeholders",
			"detectable_format:number_bullet_lists":  "num_bullets", "detectable_format:number_highlighted_sections": "num_highlights"}[id]
		kw[key] = n()
	case "length_constraints:number_words":
		kw["num_words"], kw["relation"] = 1+rng.Intn(30), relation()
	case "length_constraints:number_sentences":
		kw["num_sentences"], kw["relation"] = n(), relation()
	case "length_constraints:nth_paragraph_first_word":
		nps := n()
		kw["num_paragraphs"], kw["nth_paragraph"], kw["first_word"] = nps, 1+rng.Intn(nps), []string{"word", "a", "kiss"}[rng.Intn(3)]
	case "detectable_content:postscript":
		kw["postscript_marker"] = []string{"P.S.", "P.P.S", "Note"}[rng.Intn(3)]
	case "detectable_format:multiple_sections":
		kw["section_spliter"], kw["num_sections"] = []string{"SECTION", "Section", " PART "}[rng.Intn(3)], n()
	case "combination:repeat_prompt":
		kw["prompt_to_repeat"] = []string{"Word a", "KISS", " kiss "}[rng.Intn(3)]
	case "startend:end_checker":
		kw["end_phrase"] = []string{"end phrase", "Is there anything else I can help with?", "."}[rng.Intn(3)]
	case "language:response_language":
		kw["language"] = "en"
	case "change_case:capital_word_frequency":
		kw["capital_frequency"], kw["capital_relation"] = n(), relation()
	}
	return kw
}

func randomIFEvalResponse(rng *rand.Rand) string {
	var b strings.Builder
	for i, n := 0, rng.Intn(30); i < n; i++ {
		b.WriteString(ifevalPieces[rng.Intn(len(ifevalPieces))])
	}
	return b.String()
}

func triSym(t ifTri) string { return [...]string{"F", "T", "?"}[t] }

// TestIFEvalAgainstPython checks every instruction, strict and loose, on
// random responses against Python running the documented rules with its own
// re, str and json (testdata/ifeval_ref.py).
func TestIFEvalAgainstPython(t *testing.T) {
	py := testenv.Python(t)
	rng := rand.New(rand.NewSource(19))
	const n = 4000
	var in bytes.Buffer
	var want []string
	enc := json.NewEncoder(&in)
	for i := 0; i < n; i++ {
		k := 1 + rng.Intn(3)
		doc := map[string]any{"key": i, "prompt": "p"}
		var ids []string
		var kws []map[string]any
		for j := 0; j < k; j++ {
			id := ifevalIDs[rng.Intn(len(ifevalIDs))]
			ids = append(ids, id)
			kws = append(kws, randomIFEvalKwargs(rng, id))
		}
		doc["instruction_id_list"], doc["kwargs"] = ids, kws
		resp := randomIFEvalResponse(rng)
		if err := enc.Encode(map[string]any{"doc": doc, "response": resp}); err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(doc)
		v, err := harness.ParseJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		r, err := scoreIFEval(v, resp)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		var got []string
		for j := range r.instStrict {
			got = append(got, triSym(r.instStrict[j])+triSym(r.instLoose[j]))
		}
		want = append(want, fmt.Sprintf("%s\t%q\t%s", strings.Join(got, " "), resp, strings.Join(ids, ",")))
	}
	lines := pyLines(t, py, "testdata/ifeval_ref.py", &in, n)
	bad, unknown := 0, 0
	for i, l := range lines {
		got, rest, _ := strings.Cut(want[i], "\t")
		unknown += strings.Count(got, "?")
		if got != l {
			bad++
			if bad <= 10 {
				t.Errorf("case %d: Go %s, Python %s (response, instructions: %s)", i, got, l, rest)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d cases differ", bad, n)
	}
	t.Logf("%d cases, %d instruction outcomes not recomputable (langdetect, punkt)", n, unknown)
}

// TestIFEvalKwargsDrawnAtRandom: a kwarg lm-eval drops as falsy and then
// draws at random leaves that instruction not recomputable, with the
// reason; an instruction lm-eval does not know is an error.
func TestIFEvalKwargsDrawnAtRandom(t *testing.T) {
	doc, err := harness.ParseJSON([]byte(`{"instruction_id_list": ["punctuation:no_comma", "detectable_format:number_highlighted_sections", "keywords:letter_frequency"],
		"kwargs": [{}, {"num_highlights": 0}, {"letter": "ß", "let_frequency": 2, "let_relation": "at least"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := scoreIFEval(doc, "no commas here")
	if err != nil {
		t.Fatal(err)
	}
	if r.instStrict[0] != ifYes || r.instStrict[1] != ifUnknown || r.instStrict[2] != ifUnknown || r.promptStrict != ifUnknown {
		t.Errorf("outcomes %v, prompt %v", r.instStrict, r.promptStrict)
	}
	if !strings.Contains(r.why, "num_highlights is missing") || !strings.Contains(r.why, `"ß" is not one letter a-z`) {
		t.Errorf("why: %s", r.why)
	}
	doc, _ = harness.ParseJSON([]byte(`{"instruction_id_list": ["keywords:key_sentences"], "kwargs": [{}]}`))
	if _, err := scoreIFEval(doc, "x"); err == nil || !strings.Contains(err.Error(), "INSTRUCTION_DICT") {
		t.Errorf("unregistered instruction: %v", err)
	}
}

// BenchmarkScoreIFEval scores a 6 KB response against five instructions,
// strict and loose.
func BenchmarkScoreIFEval(b *testing.B) {
	doc, err := harness.ParseJSON([]byte(`{"instruction_id_list": ["keywords:existence", "keywords:forbidden_words", "length_constraints:number_words", "detectable_format:number_highlighted_sections", "detectable_format:json_format"],
		"kwargs": [{"keywords": ["model", "score"]}, {"forbidden_words": ["never", "always"]}, {"num_words": 300, "relation": "at least"}, {"num_highlights": 3}, {}]}`))
	if err != nil {
		b.Fatal(err)
	}
	resp := strings.Repeat("The *model* writes a line about its score, and then another one.\n", 100)
	b.SetBytes(int64(len(resp)))
	for i := 0; i < b.N; i++ {
		if _, err := scoreIFEval(doc, resp); err != nil {
			b.Fatal(err)
		}
	}
}

// TestIFEvalOnlyItsTasks: ifeval_es has IFEval's metrics and
// process_results over its own checkers; it is not taken for IFEval.
func TestIFEvalOnlyItsTasks(t *testing.T) {
	cfg, err := harness.ParseJSON([]byte(`{"process_results": "def process_results(doc, results):\n    out_strict = test_instruction_following_strict(inp, response)\n    out_loose = test_instruction_following_loose(inp, response)\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	ms := []metricSpec{{name: "prompt_level_strict_acc"}, {name: "inst_level_strict_acc"}}
	for task, want := range map[string]bool{"ifeval": true, "leaderboard_ifeval": true, "ifeval_es": false, "ifeval_ca": false} {
		if got := isIFEvalConfig(task, cfg, ms); got != want {
			t.Errorf("%s: %v, want %v", task, got, want)
		}
	}
}
