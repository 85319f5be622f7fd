package analysis_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/internal/pynum"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// numpyPassAtK is code_eval's estimate_pass_at_k and lm-eval's mean of it,
// computed by Debian's numpy: per document 1 - prod(1 - k/arange(n-c+1,
// n+1)) (1.0 when n-c < k), the task's value sum(items)/len(items) over
// numpy scalars.
const numpyPassAtK = `
import sys, numpy as np
def est(n, c, k):
    if n - c < k:
        return 1.0
    return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))
n, k = int(sys.argv[1]), int(sys.argv[2])
cs = [int(c) for c in sys.argv[3].split(",")]
items = [np.array([est(n, c, k)]).mean() for c in cs]
print(" ".join(repr(float(x)) for x in items), repr(float(sum(items) / len(items))))
`

func numpyReference(t *testing.T, n, k int, passed []int) (items []float64, mean float64) {
	t.Helper()
	py := testenv.Python(t, "numpy")
	cs := make([]string, len(passed))
	for i, c := range passed {
		cs[i] = strconv.Itoa(c)
	}
	out, err := exec.Command(py, "-c", numpyPassAtK, strconv.Itoa(n), strconv.Itoa(k), strings.Join(cs, ",")).Output()
	if err != nil {
		t.Fatalf("numpy reference: %v", err)
	}
	f := strings.Fields(string(out))
	for _, s := range f {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, v)
	}
	return items[:len(items)-1], items[len(items)-1]
}

func TestPassAtKAgainstNumpy(t *testing.T) {
	for _, n := range []int{1, 2, 10, 64, 200} {
		for _, k := range []int{1, 2, 8, 10, 16, 32, 64} {
			if k > n {
				continue
			}
			var passed []int
			for c := 0; c <= n; c++ {
				passed = append(passed, c)
			}
			want, _ := numpyReference(t, n, k, passed)
			for c, w := range want {
				if got := analysis.PassAtK(n, c, k); math.Float64bits(got) != math.Float64bits(w) {
					t.Errorf("PassAtK(%d, %d, %d) = %v, numpy %v", n, c, k, got, w)
				}
			}
		}
	}
}

func executeCode(t *testing.T, dir string) *analysis.RunReport {
	t.Helper()
	testenv.Command(t, "bwrap")
	outs, err := harness.Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{Code: analysis.CodeOptions{Execute: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 {
		t.Fatalf("%d runs", len(rep.Runs))
	}
	return rep.Runs[0]
}

func codeCheck(t *testing.T, rr *analysis.RunReport, metric string) analysis.Check {
	t.Helper()
	for _, c := range rr.Checks {
		if c.Metric == metric {
			return c
		}
	}
	t.Fatalf("no check of %s in %+v", metric, rr.Checks)
	return analysis.Check{}
}

// TestCodeRescoreTenCompletions is the acceptance test: ten completions per
// problem (canonical, broken and hostile ones), pass@1 and pass@10
// re-scored by executing them, equal bit for bit to numpy's estimator over
// the planned verdicts and to what the results report.
func TestCodeRescoreTenCompletions(t *testing.T) {
	home := t.TempDir()
	planted := filepath.Join(home, ".evalcapsule-planted")
	if err := os.WriteFile(planted, []byte("reviewer's secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	C, W, S, R := simulate.Canonical, simulate.WrongAnswer, simulate.SyntaxErr, simulate.Raises
	docs := []simulate.CodeDoc{
		{Completions: []simulate.CodeKind{C, C, C, C, C, C, C, C, C, C}},
		{Completions: []simulate.CodeKind{C, C, C, W, S, R, simulate.Socket, simulate.ReadHome, C, W}},
		{Completions: []simulate.CodeKind{W, W, S, R, simulate.WriteOutside, simulate.Allocate10GB, W, W, S, R}},
		{Completions: []simulate.CodeKind{C, simulate.InfiniteLoop, W, W, W, W, W, W, W, W}},
		{Completions: []simulate.CodeKind{C, C, simulate.ForkBomb, C, C, C, C, C, C, W}},
	}
	dir := t.TempDir()
	out, err := simulate.WriteCode(filepath.Join(dir, "run"), simulate.CodeOptions{Docs: docs})
	if err != nil {
		t.Fatal(err)
	}
	rr := executeCode(t, dir)
	for _, k := range []int{1, 10} {
		c := codeCheck(t, rr, fmt.Sprintf("pass@%d", k))
		_, want := numpyReference(t, 10, k, out.Passed)
		if c.Level != analysis.LevelRescored || c.Status != analysis.StatusExact {
			t.Errorf("pass@%d: %s %s: %s", k, c.Level, c.Status, c.Reason)
		}
		if math.Float64bits(c.Recomputed.Value) != math.Float64bits(want) {
			t.Errorf("pass@%d recomputed %v, numpy %v", k, c.Recomputed.Value, want)
		}
		t.Logf("pass@%d: %s", k, c.Reason)
		if !strings.Contains(c.Reason, "executed in the bubblewrap sandbox with Python 3.") {
			t.Errorf("reason does not say where the programs ran: %s", c.Reason)
		}
	}
	if _, err := os.Stat("/usr/evalcapsule-planted"); !errors.Is(err, os.ErrNotExist) {
		t.Error("a completion wrote /usr/evalcapsule-planted")
	}
	if b, _ := os.ReadFile(planted); string(b) != "reviewer's secret" {
		t.Errorf("the planted file changed: %q", b)
	}
}

// TestCodeRescoreDiffers: a document whose logged pass@1 its execution
// does not give is reported differs, naming the document.
func TestCodeRescoreDiffers(t *testing.T) {
	C, W := simulate.Canonical, simulate.WrongAnswer
	docs := []simulate.CodeDoc{
		{Completions: []simulate.CodeKind{C}},
		{Completions: []simulate.CodeKind{W}, Lie: true},
		{Completions: []simulate.CodeKind{simulate.SyntaxErr}},
		{Completions: []simulate.CodeKind{C}},
	}
	dir := t.TempDir()
	if _, err := simulate.WriteCode(filepath.Join(dir, "run"), simulate.CodeOptions{Docs: docs}); err != nil {
		t.Fatal(err)
	}
	rr := executeCode(t, dir)
	c := codeCheck(t, rr, "pass@1")
	if c.Status != analysis.StatusDiffers {
		t.Fatalf("status %s: %s", c.Status, c.Reason)
	}
	if len(c.DocDiffs) != 1 || c.DocDiffs[0].DocID != 1 || !strings.Contains(c.Reason, "doc_id 1") {
		t.Errorf("doc diffs %+v, reason %s", c.DocDiffs, c.Reason)
	}
	_, want := numpyReference(t, 1, 1, []int{1, 0, 0, 1})
	if c.Recomputed.Value != want {
		t.Errorf("recomputed %v, want %v", c.Recomputed.Value, want)
	}
}

// Without execution, code tasks are re-aggregated and say how to execute.
func TestCodeRescoreNotExecuted(t *testing.T) {
	dir := t.TempDir()
	if _, err := simulate.WriteCode(filepath.Join(dir, "run"), simulate.CodeOptions{Docs: []simulate.CodeDoc{{Completions: []simulate.CodeKind{simulate.Canonical}}, {Completions: []simulate.CodeKind{simulate.WrongAnswer}}}}); err != nil {
		t.Fatal(err)
	}
	outs, err := harness.Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := codeCheck(t, rep.Runs[0], "pass@1")
	if c.Level != analysis.LevelReaggregated || c.Status != analysis.StatusExact || !strings.Contains(c.Reason, "--execute-code") {
		t.Errorf("%s %s: %s", c.Level, c.Status, c.Reason)
	}
}

func TestCodeRescoreNoSandbox(t *testing.T) {
	dir := t.TempDir()
	if _, err := simulate.WriteCode(filepath.Join(dir, "run"), simulate.CodeOptions{Docs: []simulate.CodeDoc{{Completions: []simulate.CodeKind{simulate.Canonical}}}}); err != nil {
		t.Fatal(err)
	}
	outs, _ := harness.Find(dir)
	_, err := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{Code: analysis.CodeOptions{Execute: true, Python: "/opt/python3"}})
	if !errors.Is(err, analysis.ErrNoSandbox) {
		t.Fatalf("err = %v, want ErrNoSandbox", err)
	}
}

// TestCodeFailures: each kind of broken completion lands in its class.
func TestCodeFailures(t *testing.T) {
	testenv.Command(t, "bwrap")
	docs := []simulate.CodeDoc{
		{Completions: []simulate.CodeKind{simulate.Canonical}},
		{Completions: []simulate.CodeKind{simulate.SyntaxErr}},
		{Completions: []simulate.CodeKind{simulate.WrongAnswer}},
		{Completions: []simulate.CodeKind{simulate.Raises}},
		{Completions: []simulate.CodeKind{simulate.Allocate10GB}},
	}
	dir := t.TempDir()
	if _, err := simulate.WriteCode(dir, simulate.CodeOptions{Docs: docs}); err != nil {
		t.Fatal(err)
	}
	run, err := harness.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := analysis.Load(context.Background(), run, analysis.RescoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.Failures(sc, "humaneval", analysis.FailureOptions{}); !errors.Is(err, analysis.ErrNotRecomputable) {
		t.Errorf("without execution: err = %v, want ErrNotRecomputable", err)
	}
	rep, err := analysis.Failures(sc, "humaneval", analysis.FailureOptions{Code: analysis.CodeOptions{Execute: true}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[analysis.FailureClass]int{analysis.SyntaxFailure: 1, analysis.AssertionFailure: 1, analysis.ExceptionFailure: 1, analysis.TimeoutFailure: 0, analysis.LimitFailure: 1}
	if rep.NMisses != 4 || !rep.Code || fmt.Sprint(rep.Classes) != fmt.Sprint(want) {
		t.Errorf("misses %d, code %v, classes %v; want 4, true, %v", rep.NMisses, rep.Code, rep.Classes, want)
	}
	for _, f := range rep.Samples {
		if f.DocID == 2 && !strings.Contains(f.Extracted["verdict"], "AssertionError") {
			t.Errorf("doc 2 verdict %q", f.Extracted["verdict"])
		}
	}
}

// TestCodeRescoreMBPP: mbpp's program is the response (take_first) and the
// three asserts of the logged target; its per-doc metric is pass_at_1.
func TestCodeRescoreMBPP(t *testing.T) {
	testenv.Command(t, "bwrap")
	tests := "assert square(2) == 4\nassert square(-3) == 9\nassert square(0) == 0"
	resps := []string{
		"def square(x):\n    return x * x\n",
		"def square(x):\n    return x + x\n",
		"def square(x) return x\n",
	}
	logged := []float64{1, 0, 0}
	dir := t.TempDir()
	var lines strings.Builder
	for i, r := range resps {
		line := map[string]any{
			"doc_id": i, "doc": map[string]any{"task_id": 900 + i, "text": "Write a function that squares a number.", "code": "", "test_list": strings.Split(tests, "\n")},
			"target": tests, "arguments": map[string]any{"gen_args_0": map[string]any{"arg_0": "You are an expert Python programmer...", "arg_1": map[string]any{"until": []string{"[DONE]"}, "do_sample": false}}},
			"resps": [][]string{{r}}, "filtered_resps": []string{r}, "filter": "none", "metrics": []string{"pass_at_1"},
			"doc_hash": "0", "prompt_hash": "0", "target_hash": "0", "pass_at_1": logged[i],
		}
		b, _ := json.Marshal(line)
		lines.Write(b)
		lines.WriteByte('\n')
	}
	mean := pynum.Mean(logged, pynum.Numpy, pynum.Naive)
	se := pynum.MeanStderr(logged, pynum.Numpy, pynum.Naive)
	results := fmt.Sprintf(`{"results": {"mbpp": {"alias": "mbpp", "pass_at_1,none": %s, "pass_at_1_stderr,none": %s}},
  "group_subtasks": {"mbpp": []},
  "configs": {"mbpp": {"task": "mbpp", "dataset_path": "google-research-datasets/mbpp", "unsafe_code": true, "output_type": "generate_until",
    "target_delimiter": "", "metric_list": [{"metric": "<function pass_at_1 at 0x7f00>", "aggregation": "mean", "higher_is_better": true}],
    "num_fewshot": 3, "metadata": {"version": 1.0}}},
  "versions": {"mbpp": 1.0}, "n-shot": {"mbpp": 3}, "higher_is_better": {"mbpp": {"pass_at_1": true}},
  "n-samples": {"mbpp": {"original": 3, "effective": 3}},
  "config": {"model": "hf", "model_args": "pretrained=x", "bootstrap_iters": 100000},
  "lm_eval_version": "0.4.9.1", "date": 1.0}`, pynum.AppendJSONFloat(nil, mean), pynum.AppendJSONFloat(nil, se))
	if err := os.WriteFile(filepath.Join(dir, "results_2026-01-15T10-00-00.000000.json"), []byte(results), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "samples_mbpp_2026-01-15T10-00-00.000000.jsonl"), []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rr := executeCode(t, dir)
	c := codeCheck(t, rr, "pass_at_1")
	if c.Level != analysis.LevelRescored || c.Status != analysis.StatusExact || c.Recomputed.Value != mean {
		t.Errorf("%s %s %v: %s", c.Level, c.Status, c.Recomputed.Value, c.Reason)
	}
	if rr.CodeExecution == nil || rr.CodeExecution.Programs != 3 {
		t.Errorf("code execution %+v", rr.CodeExecution)
	}
}
