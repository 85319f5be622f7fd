package analysis_test

import (
	"context"
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
	// A duplicated document is not something lm-eval writes.
	rewrite(t, path, func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		return lines[0] + s
	})
	rep = rescore(t, out.Dir)
	c = find(t, rep, "gsm8k", "exact_match", "strict-match")
	if c.Status == analysis.StatusExact || !strings.Contains(c.Reason, "doc_id 0 appears on lines 1 and 2") {
		t.Errorf("%+v", c)
	}
}
