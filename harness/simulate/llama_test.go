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
