package simulate_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

// The Llama GSM8K tasks the shipped examples use are written with their own
// filters and prompts, and the project's re-scorer re-derives every number
// from the samples through the filters the results' configs record: each
// filter rescored and exact, at every release that has the task, with and
// without a chat template.
func TestRescore_LlamaTasks(t *testing.T) {
	for _, v := range []string{"0.4.4", "0.4.9.1", "0.4.10"} {
		for _, chat := range []bool{false, true} {
			out, err := simulate.Generate(t.TempDir(), simulate.Options{Seed: 5, GSM8KDocs: 60, NumFewshot: 8, LMEvalVersion: v,
				Tasks: []string{"gsm8k_llama", "gsm8k_cot_llama", "gsm8k"}, ChatTemplate: chat, FewshotAsMultiturn: chat, Churn: 0.1})
			if err != nil {
				t.Fatal(err)
			}
			outs, err := harness.Find(out.Dir)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if exact, differs, nr := rep.Counts(); differs+nr != 0 || exact != 6 {
				t.Fatalf("%s chat %v: %d exact, %d differ, %d not recomputable:\n%s", v, chat, exact, differs, nr, rep)
			}
			filters := map[string]bool{}
			for _, c := range rep.Runs[0].Checks {
				filters[c.Task+","+c.Filter] = true
				if c.Level != analysis.LevelRescored {
					t.Errorf("%s: %s,%s only %s: %s", v, c.Task, c.Filter, c.Level, c.Reason)
				}
				if c.Recomputed.Value <= 0 || c.Recomputed.Value >= 1 {
					t.Errorf("%s: %s,%s = %v: no mix of right and wrong answers", v, c.Task, c.Filter, c.Recomputed.Value)
				}
			}
			for _, want := range []string{"gsm8k_llama,strict_match", "gsm8k_llama,flexible_extract", "gsm8k_cot_llama,strict-match", "gsm8k_cot_llama,flexible-extract", "gsm8k,strict-match"} {
				if !filters[want] {
					t.Errorf("%s: no check of %s (have %v)", v, want, filters)
				}
			}
			// A chat template shows in every prompt and in the results.
			var llama string
			for _, p := range out.SamplesPaths {
				if strings.Contains(p, "samples_gsm8k_llama_") {
					b, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					llama = string(b)
				}
			}
			if got := strings.Contains(llama, `<|assistant|>\n`); got != chat {
				t.Errorf("%s: chat template %v, chat-formatted prompts %v", v, chat, got)
			}
			if !strings.Contains(llama, `"target": "`) || !strings.Contains(llama, `The final answer is `) {
				t.Errorf("%s: gsm8k_llama samples lack the bare target or the answer phrase", v)
			}
		}
	}
	if _, err := simulate.Generate(t.TempDir(), simulate.Options{Tasks: []string{"gsm8k_cot_llama"}, LMEvalVersion: "0.4.3"}); err == nil || !strings.Contains(err.Error(), "not in lm-eval 0.4.3") {
		t.Errorf("gsm8k_cot_llama in 0.4.3: %v", err)
	}
	if _, err := simulate.Generate(t.TempDir(), simulate.Options{Tasks: []string{"gsm8k_llama"}, NumFewshot: 9}); err == nil || !strings.Contains(err.Error(), "only 8 few-shot examples") {
		t.Errorf("9-shot gsm8k_llama: %v", err)
	}
}

// mmlu_llama is written as lm-eval's llama3/instruct/mmlu YAMLs define it
// (generate_until, strict_match = remove_whitespace + take_first,
// exact_match ignoring case, punctuation, "$" and a final "."), and the
// re-scorer re-derives every subject's and every group's number exactly
// from the samples through the configs the results record.
func TestRescore_LlamaMMLU(t *testing.T) {
	for _, v := range []string{"0.4.8", "0.4.9.1", "0.4.10"} {
		for _, chat := range []bool{false, true} {
			out, err := simulate.Generate(t.TempDir(), simulate.Options{Seed: 3, MMLUDocsPerSubject: 12, LMEvalVersion: v,
				Tasks: []string{"mmlu_llama"}, ChatTemplate: chat, FewshotAsMultiturn: chat})
			if err != nil {
				t.Fatal(err)
			}
			outs, err := harness.Find(out.Dir)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			exact, differs, nr := rep.Counts()
			if differs+nr != 0 || exact != 57+4+1 {
				t.Fatalf("%s chat %v: %d exact, %d differ, %d not recomputable (want 62 exact):\n%s", v, chat, exact, differs, nr, rep)
			}
			seen := map[string]bool{}
			for _, c := range rep.Runs[0].Checks {
				seen[c.Task] = true
				if c.Metric != "exact_match" || c.Filter != "strict_match" {
					t.Errorf("%s: %s checked as %s,%s", v, c.Task, c.Metric, c.Filter)
				}
				want := analysis.LevelRescored
				if c.Task == "mmlu_llama" || c.Task == "mmlu_llama_stem" || c.Task == "mmlu_llama_other" ||
					c.Task == "mmlu_llama_social_sciences" || c.Task == "mmlu_llama_humanities" {
					want = analysis.LevelGroup
				}
				if c.Level != want {
					t.Errorf("%s: %s %s, want %s: %s", v, c.Task, c.Level, want, c.Reason)
				}
				if c.Recomputed.Value <= 0 || c.Recomputed.Value >= 1 {
					t.Errorf("%s: %s = %v: no mix of right and wrong answers", v, c.Task, c.Recomputed.Value)
				}
			}
			for _, want := range []string{"mmlu_llama", "mmlu_llama_stem", "mmlu_llama_humanities", "mmlu_llama_abstract_algebra", "mmlu_llama_world_religions"} {
				if !seen[want] {
					t.Errorf("%s: no check of %s", v, want)
				}
			}
			var aa string
			for _, p := range out.SamplesPaths {
				if strings.Contains(p, "samples_mmlu_llama_abstract_algebra_") {
					b, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					aa = string(b)
				}
			}
			// Each few-shot example ends in gen_prefix and its target: inside
			// the one prompt, or as an assistant turn of its own.
			shot := `The best answer is A.\n\n`
			if chat {
				shot = `<|assistant|>\nThe best answer is A.<|end|>`
			}
			for _, want := range []string{`"target": "A."`, `"target": "C."`, shot, `"arg_1": {"do_sample": false, "until": ["."], "max_gen_toks": 10}`, `"resps": [[" B"]], "filtered_resps": ["B"]`} {
				if !strings.Contains(aa, want) {
					t.Errorf("%s chat %v: abstract_algebra samples lack %s", v, chat, want)
				}
			}
			if got := strings.Contains(aa, `<|assistant|>\nThe best answer is"`); got != chat {
				t.Errorf("%s: chat template %v, prompts continuing the assistant's gen_prefix %v", v, chat, got)
			}
		}
	}
	if _, err := simulate.Generate(t.TempDir(), simulate.Options{Tasks: []string{"mmlu_llama"}, LMEvalVersion: "0.4.7"}); err == nil || !strings.Contains(err.Error(), "not in lm-eval 0.4.7") {
		t.Errorf("mmlu_llama in 0.4.7: %v", err)
	}
	if _, err := simulate.Generate(t.TempDir(), simulate.Options{Tasks: []string{"mmlu", "mmlu_llama"}}); err == nil || !strings.Contains(err.Error(), "one at a time") {
		t.Errorf("mmlu with mmlu_llama: %v", err)
	}
}
