package analysis_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

// small writes a small simulated study (SIMULATED: no model was run).
func small(t *testing.T, opts simulate.Options) simulate.Output {
	t.Helper()
	if opts.GSM8KDocs == 0 {
		opts.GSM8KDocs = 40
	}
	if opts.MMLUDocsPerSubject == 0 {
		opts.MMLUDocsPerSubject = 4
	}
	out, err := simulate.Generate(filepath.Join(t.TempDir(), "run"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func rescore(t *testing.T, paths ...string) *analysis.RescoreReport {
	t.Helper()
	outs, err := harness.Find(paths...)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func find(t *testing.T, rep *analysis.RescoreReport, task, metric, filter string) analysis.Check {
	t.Helper()
	for _, r := range rep.Runs {
		for _, c := range r.Checks {
			if c.Task == task && c.Metric == metric && c.Filter == filter {
				return c
			}
		}
	}
	t.Fatalf("no check %s %s,%s", task, metric, filter)
	return analysis.Check{}
}

func rewrite(t *testing.T, path string, f func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(f(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gsm8kSamples(t *testing.T, out simulate.Output) string {
	for _, p := range out.SamplesPaths {
		if strings.Contains(filepath.Base(p), "samples_gsm8k_") {
			return p
		}
	}
	t.Fatal("no gsm8k samples")
	return ""
}

func TestSimulatedStudyExact(t *testing.T) {
	out := small(t, simulate.Options{Seed: 3})
	rep := rescore(t, out.Dir)
	exact, differs, nr := rep.Counts()
	if differs+nr != 0 || exact < 60 {
		t.Fatalf("%d exact, %d differ, %d not recomputable:\n%s", exact, differs, nr, rep)
	}
	c := find(t, rep, "gsm8k", "exact_match", "flexible-extract")
	if c.Level != analysis.LevelRescored || c.N != 40 {
		t.Errorf("gsm8k flexible: %+v", c)
	}
	g := find(t, rep, "mmlu", "acc", "none")
	if g.Level != analysis.LevelGroup || g.N != 57*4 || !strings.Contains(g.Reason, "57 leaf tasks") {
		t.Errorf("mmlu: %+v", g)
	}
}

// TestTamperedSampleDiffers changes one logged filtered response and one
// per-doc value: both must be caught, naming the document.
func TestTamperedSampleDiffers(t *testing.T) {
	out := small(t, simulate.Options{Seed: 4, Tasks: []string{"gsm8k"}})
	path := gsm8kSamples(t, out)
	rewrite(t, path, func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		// line 3: claim exact_match 1 where the extraction says otherwise
		l := lines[2]
		if strings.Contains(l, `"exact_match": 0.0`) {
			l = strings.Replace(l, `"exact_match": 0.0`, `"exact_match": 1.0`, 1)
		} else {
			l = strings.Replace(l, `"exact_match": 1.0`, `"exact_match": 0.0`, 1)
		}
		lines[2] = l
		return strings.Join(lines, "")
	})
	rep := rescore(t, out.Dir)
	c := find(t, rep, "gsm8k", "exact_match", "strict-match")
	if c.Status != analysis.StatusDiffers || len(c.DocDiffs) != 1 || c.DocDiffs[0].DocID != 2 || c.DocDiffs[0].Line != 3 {
		t.Fatalf("tampered line not caught: %+v", c)
	}
	if !strings.Contains(c.Reason, "line 3 doc_id 2") {
		t.Errorf("reason does not name the line: %s", c.Reason)
	}
	if f := find(t, rep, "gsm8k", "exact_match", "flexible-extract"); f.Status != analysis.StatusExact {
		t.Errorf("the other filter: %+v", f)
	}
}

// TestSamplesWithoutFilterKey reads samples as lm-eval v0.4.3-v0.4.6 wrote
// them, without "filter" and "metrics": the filter of a line is the block it
// sits in.
func TestSamplesWithoutFilterKey(t *testing.T) {
	out := small(t, simulate.Options{Seed: 5, Tasks: []string{"gsm8k"}})
	re := regexp.MustCompile(`"filter": "[^"]*", "metrics": \[[^\]]*\], `)
	rewrite(t, gsm8kSamples(t, out), func(s string) string { return re.ReplaceAllString(s, "") })
	rep := rescore(t, out.Dir)
	for _, f := range []string{"strict-match", "flexible-extract"} {
		c := find(t, rep, "gsm8k", "exact_match", f)
		if c.Status != analysis.StatusExact || c.Level != analysis.LevelRescored || c.N != 40 {
			t.Errorf("%s: %+v", f, c)
		}
	}
	// Swapping the two blocks must be noticed: strict lines under the
	// flexible filter re-extract differently.
	rewrite(t, gsm8kSamples(t, out), func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		return strings.Join(append(append([]string{}, lines[40:80]...), lines[:40]...), "")
	})
	rep = rescore(t, out.Dir)
	if _, differs, _ := rep.Counts(); differs == 0 {
		t.Errorf("swapped filter blocks not detected:\n%s", rep)
	}
}

// TestSamplesOnly checks a folder with samples and no results file: every
// line is re-scored; aggregates are shown as recomputed only.
func TestSamplesOnly(t *testing.T) {
	out := small(t, simulate.Options{Seed: 6, Tasks: []string{"gsm8k"}})
	if err := os.Remove(out.ResultsPath); err != nil {
		t.Fatal(err)
	}
	rep := rescore(t, out.Dir)
	c := find(t, rep, "gsm8k", "exact_match", "strict-match")
	if c.Level != analysis.LevelRescored || c.Status != analysis.StatusExact || c.Reported.Set || !c.Recomputed.Set {
		t.Errorf("samples only: %+v", c)
	}
	if !strings.Contains(rep.Runs[0].LMEvalVersion, "no results file") {
		t.Errorf("version %q", rep.Runs[0].LMEvalVersion)
	}
}

// TestPython312Summation: a run under CPython 3.12 sums Python floats with
// Neumaier's compensation; the re-scorer must follow the version it reads.
func TestPython312Summation(t *testing.T) {
	out := small(t, simulate.Options{Seed: 7, PythonVersion: "3.12.1", MMLUDocsPerSubject: 40})
	rep := rescore(t, out.Dir)
	if _, differs, nr := rep.Counts(); differs+nr > 0 {
		t.Fatalf("3.12 run:\n%s", rep)
	}
	g := find(t, rep, "mmlu_professional_law", "acc", "none")
	if !strings.Contains(g.Reason, "neumaier") {
		t.Errorf("reason %q does not name the rule", g.Reason)
	}
	// Relabelled as 3.10, some stderrs no longer match: the rule matters.
	rewrite(t, out.ResultsPath, func(s string) string {
		return strings.Replace(s, "Python version: 3.12.1", "Python version: 3.10.12", 1)
	})
	rep = rescore(t, out.Dir)
	if _, differs, _ := rep.Counts(); differs == 0 {
		t.Errorf("the summation rule made no difference on %d MMLU stderrs", 57)
	}
}

func TestUnknownFilterType(t *testing.T) {
	out := small(t, simulate.Options{Seed: 8, Tasks: []string{"gsm8k"}})
	rewrite(t, out.ResultsPath, func(s string) string {
		return strings.Replace(s, `"function": "take_first"`, `"function": "take_frist"`, 1)
	})
	rep := rescore(t, out.Dir)
	c := find(t, rep, "gsm8k", "exact_match", "strict-match")
	if c.Level != analysis.LevelReaggregated || c.Status != analysis.StatusExact ||
		!strings.Contains(c.Reason, `unknown filter type "take_frist"`) || !strings.Contains(c.Reason, `configs["gsm8k"].filter_list[0].filter[1]`) {
		t.Errorf("%+v", c)
	}
}

func TestIncompleteSamples(t *testing.T) {
	out := small(t, simulate.Options{Seed: 9, Tasks: []string{"gsm8k"}})
	path := gsm8kSamples(t, out)
	rewrite(t, path, func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		return strings.Join(append(lines[:10:10], lines[40:]...), "")
	})
	rep := rescore(t, out.Dir)
	c := find(t, rep, "gsm8k", "exact_match", "strict-match")
	if c.Status != analysis.StatusNotRecomputable || !strings.Contains(c.Reason, path) || !strings.Contains(c.Reason, "has 10 lines") || !strings.Contains(c.Reason, "says 40") {
		t.Errorf("%+v", c)
	}
}

// TestDuplicateDocRefused: lm-eval logs each document once per filter, so
// a doc_id twice under one filter is an input error for every reader of
// the samples (rescore, and Load under scores, failures and compare),
// naming the file and both lines.
func TestDuplicateDocRefused(t *testing.T) {
	out := small(t, simulate.Options{Seed: 9, Tasks: []string{"gsm8k"}})
	path := gsm8kSamples(t, out)
	rewrite(t, path, func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		return lines[0] + s
	})
	check := func(what string, err error) {
		t.Helper()
		var fe *harness.FileError
		if !errors.As(err, &fe) || fe.Path != path || fe.Line != 2 || !errors.Is(err, harness.ErrNotLMEval) ||
			!strings.Contains(err.Error(), "doc_id 0 under filter \"strict-match\" is logged on lines 1 and 2") {
			t.Errorf("%s: got %v, want an error naming %s and lines 1 and 2", what, err, path)
		}
	}
	outs, err := harness.Find(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("Rescore", inputErr(rep))
	run, err := harness.Read(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = analysis.Load(context.Background(), run, analysis.RescoreOptions{})
	check("Load", err)
}

// TestRepeatedDocUnknownFilters: samples of lm-eval before v0.4.7 do not
// name their filter, and without a results file to give the task's filters
// the blocks of two filters repeat each doc_id legitimately: they are read,
// and the check only says so.
func TestRepeatedDocUnknownFilters(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for block := 0; block < 2; block++ {
		for id := 0; id < 3; id++ {
			fmt.Fprintf(&b, `{"doc_id": %d, "doc": {}, "target": "1", "arguments": [["q", {}]], "resps": [["1"]], "filtered_resps": ["1"], "exact_match": 1.0}`+"\n", id)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "samples_t_2024-06-01T00-00-00.000000.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := rescore(t, dir)
	c := find(t, rep, "t", "exact_match", "none")
	if c.Status == analysis.StatusExact || !strings.Contains(c.Reason, "doc_id 0 appears on lines 1 and 4") {
		t.Errorf("%+v", c)
	}
}

// TestRepeatedDocBlocks: lines before v0.4.7 take their filter from their
// block (n-samples' count per filter of the config). When the blocks fill
// the file exactly, a doc_id twice in one block is refused; when they do not
// (samples trimmed by hand), the check only notes it.
func TestRepeatedDocBlocks(t *testing.T) {
	write := func(effective int, ids []int) string {
		dir := t.TempDir()
		results := fmt.Sprintf(`{"results": {"t": {"exact_match,a": 1.0, "exact_match_stderr,a": 0.0, "exact_match,b": 1.0, "exact_match_stderr,b": 0.0, "alias": "t"}},
			"configs": {"t": {"output_type": "generate_until", "metric_list": [{"metric": "exact_match"}],
				"filter_list": [{"name": "a", "filter": [{"function": "take_first"}]}, {"name": "b", "filter": [{"function": "take_first"}]}]}},
			"n-samples": {"t": {"original": 10, "effective": %d}}}`, effective)
		var b strings.Builder
		for _, id := range ids {
			fmt.Fprintf(&b, `{"doc_id": %d, "doc": {}, "target": "1", "arguments": [["q", {}]], "resps": [["1"]], "filtered_resps": ["1"], "exact_match": 1.0}`+"\n", id)
		}
		os.WriteFile(filepath.Join(dir, "results_2024-06-01T00-00-00.000000.json"), []byte(results), 0o644)
		os.WriteFile(filepath.Join(dir, "samples_t_2024-06-01T00-00-00.000000.jsonl"), []byte(b.String()), 0o644)
		return dir
	}
	rescoreErr := func(dir string) error {
		outs, err := harness.Find(dir)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := analysis.Rescore(context.Background(), outs, analysis.RescoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return inputErr(rep)
	}
	// Blocks of 3 docs for filters a and b: doc 1 twice in block b.
	err := rescoreErr(write(3, []int{0, 1, 2, 1, 1, 2}))
	if !errors.Is(err, harness.ErrNotLMEval) || !strings.Contains(err.Error(), `doc_id 1 under filter "b" is logged on lines 4 and 5`) {
		t.Errorf("got %v", err)
	}
	// Each doc once per block: fine.
	if err := rescoreErr(write(3, []int{0, 1, 2, 0, 1, 2})); err != nil {
		t.Errorf("got %v", err)
	}
	// n-samples says 10 per filter, 6 lines: the blocks are not sure.
	if err := rescoreErr(write(10, []int{0, 1, 2, 0, 1, 2})); err != nil {
		t.Errorf("got %v", err)
	}
}

// inputErr is the error of the report's first input check, nil when every
// file was read.
func inputErr(rep *analysis.RescoreReport) error {
	if errs := rep.Errors(); len(errs) > 0 {
		return errs[0].Err
	}
	return nil
}
