package analysis_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
)

// lineMatching is the index of the first line matching the pattern, -1 if
// none does.
func lineMatching(lines []string, pattern string) int {
	re := regexp.MustCompile(pattern)
	return slices.IndexFunc(lines, re.MatchString)
}

// The text of an attribution says it is simulated, names the study and
// the units, and shows every claim: statement, path, sensitivity and, for a
// full factorial only, the Shapley values with the interaction.
func TestAttributionString(t *testing.T) {
	interaction := -0.005
	factorial := analysis.ClaimAttribution{Task: "gsm8k", Metric: "exact_match", Filter: "strict-match", Card: 0.45, Baseline: 0.265, Final: 0.365,
		Unexplained: 0.085, Statement: "gsm8k: 8.5 pts below the card.",
		Steps: []analysis.AttributionStep{
			{Name: "8-shot", Kind: "run", Value: 0.275, Delta: 0.01, CILow: 0, CIHigh: 0.025, P: 0.5, PHolm: 0.5},
			{Name: "chat template on", Kind: "run", Value: 0.335, Delta: 0.06, CILow: 0.03, CIHigh: 0.095, P: 0.0005, PHolm: 0.001},
		},
		Sensitivity: []analysis.Sensitivity{{Change: "apply_chat_template=true", Value: 0.33, Delta: 0.065, CILow: 0.035, CIHigh: 0.1, P: 0.0002, PHolm: 0.0006}},
		HolmFamily:  "Holm over this claim's 3 McNemar tests (2 steps, 1 variant)",
		Settings:    []analysis.SettingRow{{Setting: "num_fewshot", Card: "8", Baseline: "5", Final: "8", Match: true}, {Setting: "system_instruction", Card: "Be brief.", Match: false}},
		Shapley:     []analysis.ShapleyValue{{Setting: "8-shot", Value: 0.0075, CILow: -0.001, CIHigh: 0.02}, {Setting: "chat template on", Value: 0.0625, CILow: 0.03, CIHigh: 0.09}},
		Interaction: &interaction,
	}
	path := analysis.ClaimAttribution{Task: "arc_easy", Metric: "acc", Filter: "none", Card: 0.8, Baseline: 0.7, Final: 0.7, Unexplained: 0.1,
		Statement: "arc_easy: 10 pts below the card."}
	att := &analysis.Attribution{Study: "demo", Simulated: true, Claims: []analysis.ClaimAttribution{factorial, path}}
	s := att.String()
	lines := strings.Split(s, "\n")
	if !strings.HasPrefix(lines[0], "SIMULATED: ") || lines[1] != "study demo (scores in points, CIs at 95 %)" {
		t.Errorf("head:\n%s", s)
	}
	first, second := slices.Index(lines, factorial.Statement), slices.Index(lines, path.Statement)
	if first < 0 || second < first || lines[first+1] != "gsm8k exact_match (strict-match), points" || lines[second+1] != "arc_easy acc (none), points" {
		t.Fatalf("claims, each with its statement before its path:\n%s", s)
	}
	if i := lineMatching(lines, `^apply_chat_template=true +33\.00 +\+6\.50 +\[\+3\.50, \+10\.00\] +0\.0002 +0\.0006$`); i < first || i > second {
		t.Errorf("no sensitivity row with its Holm p in the first claim:\n%s", s)
	}
	if i := lineMatching(lines, `^chat template on +run +33\.50 +\+6\.00 +\[\+3\.00, \+9\.50\] +0\.0005 +0\.001$`); i < first || i > second {
		t.Errorf("no step row with its Holm p in the first claim:\n%s", s)
	}
	if i := slices.Index(lines, "Holm p: "+factorial.HolmFamily+"."); i < first || i > second {
		t.Errorf("no Holm family in the first claim:\n%s", s)
	}
	settings := slices.Index(lines, "settings: the card's against the runs'")
	if settings < first || settings > second || !regexp.MustCompile(`^setting +card +baseline +final run +match$`).MatchString(lines[settings+1]) ||
		!regexp.MustCompile(`^num_fewshot +8 +5 +8 +yes$`).MatchString(lines[settings+2]) ||
		!regexp.MustCompile(`^system_instruction +Be brief\. +– +– +NO$`).MatchString(lines[settings+3]) {
		t.Errorf("no settings table in the first claim:\n%s", s)
	}
	shapley := slices.Index(lines, "Shapley attribution (order-independent), points")
	if shapley < first || shapley > second {
		t.Fatalf("no Shapley table in the factorial claim:\n%s", s)
	}
	for i, want := range []string{`^setting +share of the total effect +95 % CI$`, `^8-shot +\+0\.75 +\[-0\.10, \+2\.00\]$`, `^chat template on +\+6\.25 +\[\+3\.00, \+9\.00\]$`, `^interaction \(no single setting\) +-0\.50$`} {
		if !regexp.MustCompile(want).MatchString(lines[shapley+1+i]) {
			t.Errorf("Shapley line %d %q, want %s", i, lines[shapley+1+i], want)
		}
	}
	if strings.Count(s, "Shapley") != 1 || strings.Count(s, "sensitivity:") != 1 || strings.Count(s, "settings:") != 1 || strings.Count(s, "Holm p:") != 1 {
		t.Errorf("a Shapley or sensitivity table for the claim that has none:\n%s", s)
	}
	att.Simulated, att.Study = false, ""
	if s := att.String(); strings.Contains(s, "SIMULATED") || !strings.HasPrefix(s, "(scores in points, CIs at 95 %)\n") {
		t.Errorf("not simulated, no study:\n%s", s)
	}
}

// The text of comparisons names the runs, has a row per comparison, shows
// a task's changed prompts once however many metrics and filters share
// them, and names the tasks not compared.
func TestComparisonsString(t *testing.T) {
	gsm := []analysis.PromptDiff{{DocID: 3, Diff: "-Question: x\n+Question: x·\n"}, {DocID: 8, Diff: "-a⏎\n+b⏎\n"}}
	cs := &analysis.Comparisons{A: "runs/baseline", B: "runs/chat", Skipped: []string{"mmlu (only in A)", "arc_easy (only in B)"},
		Comparisons: []analysis.Comparison{
			{Task: "gsm8k", Metric: "exact_match", Filter: "strict-match", N: 60, A: 0.15, B: 0.25, Delta: 0.1, PromptsChanged: 2, PromptDiffs: gsm},
			{Task: "gsm8k", Metric: "exact_match", Filter: "flexible-extract", N: 60, A: 0.2, B: 0.3, Delta: 0.1, PromptsChanged: 2, PromptDiffs: gsm},
			{Task: "hellaswag", Metric: "acc", Filter: "none", N: 40, A: 0.5, B: 0.5, PromptsChanged: 1, PromptDiffs: []analysis.PromptDiff{{DocID: 0, Diff: "-x\n+y"}}},
		}}
	s := cs.String()
	lines := strings.Split(s, "\n")
	if !strings.HasPrefix(lines[0], "A: runs/baseline, B: runs/chat (Δ = B − A in the unit of each row") {
		t.Errorf("runs not named: %q", lines[0])
	}
	for _, re := range []string{`^gsm8k +exact_match +strict-match +points +60 +15\.00 +25\.00 +\+10\.00 `, `^gsm8k +exact_match +flexible-extract +points +60 `, `^hellaswag +acc +none +points +40 `} {
		if lineMatching(lines, re) < 0 {
			t.Errorf("no row %s:\n%s", re, s)
		}
	}
	for _, head := range []string{"gsm8k doc_id 3: prompt A → B", "gsm8k doc_id 8: prompt A → B", "hellaswag doc_id 0: prompt A → B"} {
		if n := strings.Count(s, head); n != 1 {
			t.Errorf("%q shown %d times:\n%s", head, n, s)
		}
	}
	if i := slices.Index(lines, "gsm8k doc_id 3: prompt A → B"); i < 0 || lines[i+1] != "  -Question: x" || lines[i+2] != "  +Question: x·" {
		t.Errorf("diff not indented below its head:\n%s", s)
	}
	if i := slices.Index(lines, "hellaswag doc_id 0: prompt A → B"); i < 0 || lines[i+2] != "  +y" {
		t.Errorf("a diff without a final line end runs into the next line:\n%s", s)
	}
	if !strings.HasSuffix(s, "\nnot compared: mmlu (only in A); arc_easy (only in B)\n") {
		t.Errorf("tasks not compared not named last:\n%s", s)
	}
}

// The text of a failure reading has the summary, the classes with shares,
// the members not read, the agreement with hand labels and a block per
// sampled miss.
func TestFailureReportString(t *testing.T) {
	fr := &analysis.FailureReport{Task: "mmlu_pro_plus", Metric: "exact_match", Filter: "custom-extract", N: 10, NMisses: 4,
		Classes:   map[analysis.FailureClass]int{analysis.Truncation: 1, analysis.Reasoning: 3},
		Unread:    []string{"mmlu_pro_plus_law", "mmlu_pro_plus_other"},
		Agreement: &analysis.LabelAgreement{Labelled: 2, Agree: 1, Kappa: 0.25},
		Samples: []analysis.Failure{
			{Task: "mmlu_pro_plus_health", DocID: 7, Class: analysis.Reasoning, Label: analysis.Format, Target: "step one\nThe answer is (B)", FinalAnswer: "C",
				Extracted: map[string]string{"custom-extract": "[invalid]", "flexible-extract": "C"}, OutputTail: "…so it is C.\nThe answer is C"},
			{Task: "mmlu_pro_plus_math", DocID: 12, Class: analysis.Truncation, Target: "(A)", Extracted: map[string]string{"custom-extract": "[invalid]"}, OutputTail: "…and then"},
		}}
	s := fr.String()
	lines := strings.Split(s, "\n")
	if lines[0] != "mmlu_pro_plus exact_match (custom-extract): 4 misses of 10 documents" {
		t.Errorf("summary %q", lines[0])
	}
	for _, re := range []string{`^truncation +1 +25\.0 %$`, `^reasoning +3 +75\.0 %$`, `^format +0 +0\.0 %$`,
		`^not read \(no samples\): mmlu_pro_plus_law, mmlu_pro_plus_other$`,
		`^hand labels: 2, of which 1 agree with the automatic class \(Cohen's κ 0\.25\)$`,
		`^a seeded sample of 2 misses$`} {
		if lineMatching(lines, re) < 0 {
			t.Errorf("no line %s:\n%s", re, s)
		}
	}
	i := slices.Index(lines, "mmlu_pro_plus_health doc_id 7: reasoning, hand label format")
	if i < 0 || lines[i+1] != "  target: The answer is (B)" || lines[i+2] != `  final answer: "C"` || lines[i+3] != `  extracted: custom-extract="[invalid]", flexible-extract="C"` ||
		lines[i+4] != "  output tail: …so it is C.⏎The answer is C" {
		t.Errorf("first miss:\n%s", s)
	}
	if j := slices.Index(lines, "mmlu_pro_plus_math doc_id 12: truncation"); j < i || lines[j+2] != "  final answer: none" || lines[j+4] != "  output tail: …and then" {
		t.Errorf("second miss, without a hand label:\n%s", s)
	}

	fr.Unread, fr.Agreement = nil, nil
	if s := fr.String(); strings.Contains(s, "not read") || strings.Contains(s, "hand labels") {
		t.Errorf("unread or agreement lines with neither:\n%s", s)
	}
	fr.Agreement = &analysis.LabelAgreement{}
	if s := fr.String(); !strings.Contains(s, "\nhand labels: none on a missed document\n") {
		t.Errorf("labels that cover no miss:\n%s", s)
	}
}
