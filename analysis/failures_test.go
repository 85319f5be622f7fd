package analysis_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

func load(t *testing.T, path string) *analysis.Scores {
	t.Helper()
	run, err := harness.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := analysis.Load(context.Background(), run, analysis.RescoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestFailuresPhi3 reads the misses of the real phi-3 run (10 docs): the
// strict-match misses whose flexible extraction is right are format misses.
func TestFailuresPhi3(t *testing.T) {
	dir := filepath.Join(fixturesDir(t), "phi3mini-gsm8k-thesis", "gsm8k-phi-3-mini_2025-08-07T11-42-40.066002.json")
	sc := load(t, dir)
	rep, err := analysis.Failures(sc, "gsm8k", analysis.FailureOptions{Filter: "strict-match", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// strict 0.1 over 10 docs: 9 misses; flexible 0.8: 7 of them flexible-right.
	if rep.NMisses != 9 || rep.Classes[analysis.Format] != 7 {
		t.Fatalf("misses %d classes %v", rep.NMisses, rep.Classes)
	}
	for _, s := range rep.Samples {
		if s.Class == analysis.Format && s.Extracted["strict-match"] == s.Extracted["flexible-extract"] {
			t.Errorf("doc %d: format miss with equal extractions %v", s.DocID, s.Extracted)
		}
	}
}

func TestFailuresSimulated(t *testing.T) {
	out, err := simulate.Generate(filepath.Join(t.TempDir(), "run"), simulate.Options{Seed: 2, Tasks: []string{"gsm8k"}, GSM8KDocs: 400})
	if err != nil {
		t.Fatal(err)
	}
	sc := load(t, out.Dir)
	rep, err := analysis.Failures(sc, "gsm8k", analysis.FailureOptions{Filter: "strict-match", N: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Samples) != 50 {
		t.Fatalf("%d samples", len(rep.Samples))
	}
	for _, c := range analysis.FailureClasses {
		if rep.Classes[c] == 0 {
			t.Errorf("no %s miss among %d: %v", c, rep.NMisses, rep.Classes)
		}
	}
	// The same seed gives the same sample.
	again, _ := analysis.Failures(sc, "gsm8k", analysis.FailureOptions{Filter: "strict-match", N: 50, Seed: 1})
	for i := range rep.Samples {
		if rep.Samples[i].DocID != again.Samples[i].DocID {
			t.Fatal("sample not reproducible")
		}
	}
	// Hand labels beside the run are compared with the classes.
	os.MkdirAll(filepath.Join(sc.Run.Dir, "labels"), 0o755)
	first := rep.Samples[0]
	os.WriteFile(filepath.Join(sc.Run.Dir, "labels", "gsm8k.csv"), []byte("doc_id,class,note\n"+strconv.Itoa(first.DocID)+","+string(first.Class)+",agreed\n"), 0o644)
	labels, err := analysis.ReadLabels(sc.Run.Dir, "gsm8k")
	if err != nil {
		t.Fatal(err)
	}
	rep, _ = analysis.Failures(sc, "gsm8k", analysis.FailureOptions{Filter: "strict-match", Labels: labels})
	if rep.Agreement == nil || rep.Agreement.Labelled != 1 || rep.Agreement.Agree != 1 {
		t.Errorf("agreement %+v", rep.Agreement)
	}
}

func fixturesDir(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs("../../shared/fixtures/lm-eval")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the real lm-eval fixtures are missing (%v): CI must check out ../shared next to the repository", err)
	}
	return dir
}

// A group's misses are its members' (real gemma3 mmlu_pro_plus run, whose
// samples were trimmed to three subjects): counted over the members with
// samples, the others named, each sampled miss naming its subject.
func TestFailuresGroup(t *testing.T) {
	sc := load(t, filepath.Join(fixturesDir(t), "gemma3-12b-mmlu-pro-plus-pyfade", "results_2025-10-14T14-44-39.372006.json"))
	rep, err := analysis.Failures(sc, "mmlu_pro_plus", analysis.FailureOptions{Seed: 1, N: 100})
	if err != nil {
		t.Fatal(err)
	}
	leaves := sc.Run.Output.Results.Leaves("mmlu_pro_plus")
	n, misses, classes := 0, 0, map[analysis.FailureClass]int{}
	read := 0
	for _, leaf := range leaves {
		m, err := analysis.Failures(sc, leaf, analysis.FailureOptions{Metric: rep.Metric, Filter: rep.Filter, Seed: 1, N: 100})
		if err != nil {
			continue // no samples of this subject
		}
		read++
		n, misses = n+m.N, misses+m.NMisses
		for c, k := range m.Classes {
			classes[c] += k
		}
		for _, s := range m.Samples {
			found := false
			for _, g := range rep.Samples {
				found = found || (g.Task == leaf && g.DocID == s.DocID && g.Class == s.Class)
			}
			if !found {
				t.Errorf("%s doc %d (%s) not among the group's misses", leaf, s.DocID, s.Class)
			}
		}
	}
	if read != 3 || rep.N != n || rep.NMisses != misses || len(rep.Samples) != misses || len(rep.Unread) != len(leaves)-read {
		t.Errorf("group: %d documents, %d misses, %d sampled, %d unread; members: %d read, %d documents, %d misses of %d leaves",
			rep.N, rep.NMisses, len(rep.Samples), len(rep.Unread), read, n, misses, len(leaves))
	}
	for c, k := range classes {
		if rep.Classes[c] != k {
			t.Errorf("class %s: group %d, members %d", c, rep.Classes[c], k)
		}
	}
}
