package simulate

import (
	"testing"
)

// TestLinePlantsOneRegression checks the written scores: every task of
// every checkpoint is at least checkpoint 0's score, except the planted
// task of the planted checkpoint, which is below it by more than 2 points.
func TestLinePlantsOneRegression(t *testing.T) {
	_, outs, err := WriteLine(t.TempDir(), LineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != DefaultLineCheckpoints {
		t.Fatalf("%d checkpoints", len(outs))
	}
	primary := map[string]string{"gsm8k": "strict-match", "gsm8k_cot_llama": "strict-match", "gsm8k_llama": "strict_match", "mmlu": "none"}
	score := func(o Output, task string) float64 {
		for _, s := range o.Scores {
			if s.Task == task && s.Filter == primary[task] {
				return s.Value
			}
		}
		t.Fatalf("no %s %s score", task, primary[task])
		return 0
	}
	for i, o := range outs[1:] {
		for _, task := range LineTasks {
			d := score(o, task) - score(outs[0], task)
			planted := i+1 == LineRegressionCheckpoint && task == LineRegressionTask
			switch {
			case planted && d > -0.02:
				t.Errorf("checkpoint %d %s: %+.4f, want the planted drop", i+1, task, d)
			case !planted && d < 0:
				t.Errorf("checkpoint %d %s: %+.4f below checkpoint 0", i+1, task, d)
			}
		}
	}
}
