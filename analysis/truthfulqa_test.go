package analysis

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTruthfulQAGenFixture re-scores the real truthfulqa_gen fixture (817
// and 20 documents, 12 metrics): every per-doc bleu/rouge value must be
// recomputed from the generation bit for bit, so every check is rescored
// and exact.
func TestTruthfulQAGenFixture(t *testing.T) {
	rep := rescorePaths(t, filepath.Join(fixtures(t), "harness-pr3032-truthfulqa-gen-gptneo125m"))
	if len(rep.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(rep.Runs))
	}
	n := 0
	for _, run := range rep.Runs {
		for _, c := range run.Checks {
			if c.Task != "truthfulqa_gen" {
				continue
			}
			n++
			// The run is macOS's: two bleu values of the 817-line file come
			// out of its exp/log an ulp away, and the reason must say so.
			libm := strings.Contains(c.Reason, "within the rounding of exp/log")
			wantLibm := strings.Contains(run.Path, "13-51-32") && (c.Metric == "bleu_max" || c.Metric == "bleu_diff")
			if libm != wantLibm {
				t.Errorf("%s: %s: libm note %v, want %v: %s", run.Path, c.Metric, libm, wantLibm, c.Reason)
			}
			if c.Level != LevelRescored || c.Status != StatusExact {
				t.Errorf("%s: %s %s at level %s: %s", run.Path, c.Metric, c.Status, c.Level, c.Reason)
				for _, d := range c.DocDiffs {
					t.Logf("  %+v", d)
				}
			}
		}
	}
	if n != 24 {
		t.Errorf("%d truthfulqa_gen checks, want 2 × 12", n)
	}
}

// TestTruthfulQAGenEditedResponse changes one generation of the 20-doc run
// (resps and filtered_resps alike): the logged bleu/rouge values of that
// line no longer follow from it, and the checks must say so.
func TestTruthfulQAGenEditedResponse(t *testing.T) {
	src := filepath.Join(fixtures(t), "harness-pr3032-truthfulqa-gen-gptneo125m", "results")
	dir := t.TempDir()
	const stamp = "2025-05-31T14-30-51.983293"
	res, err := os.ReadFile(filepath.Join(src, "truthfulqa_gen_neo125_"+stamp+".json"))
	if err != nil {
		t.Fatal(err)
	}
	samples, err := os.ReadFile(filepath.Join(src, "samples_truthfulqa_gen_"+stamp+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	old := `"\nA: I eat watermelon seeds."`
	if bytes.Count(samples, []byte(old)) != 2 {
		t.Fatalf("fixture changed: %q not found twice", old)
	}
	samples = bytes.ReplaceAll(samples, []byte(old), []byte(`"\nA: Nothing happens."`))
	if err := os.WriteFile(filepath.Join(dir, "truthfulqa_gen_neo125_"+stamp+".json"), res, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "samples_truthfulqa_gen_"+stamp+".jsonl"), samples, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := rescorePaths(t, dir)
	differs := map[string]bool{}
	for _, c := range rep.Runs[0].Checks {
		if c.Status == StatusDiffers && len(c.DocDiffs) > 0 && c.DocDiffs[0].DocID == 0 {
			differs[c.Metric] = true
		}
	}
	for _, m := range []string{"bleu_max", "rouge1_max", "rouge2_max", "rougeL_max"} {
		if !differs[m] {
			t.Errorf("%s: edited generation not reported (differing: %v)", m, differs)
		}
	}
}
