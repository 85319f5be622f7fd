package capsule_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
	"github.com/evalcapsule/evalcapsule/study"
)

// A replay with ExecuteCode executes the study's humaneval completions:
// the document that logs a pass its program does not earn fails it.
func TestReplayExecutesCode(t *testing.T) {
	testenv.Command(t, "bwrap")
	dir := t.TempDir()
	yaml := strings.Replace(packStudyYAML, "tasks: [gsm8k], num_fewshot: 5", "tasks: [humaneval], num_fewshot: 0", 1)
	yaml = strings.Replace(yaml, "{task: gsm8k, metric: exact_match, filter: strict-match, value: 0.45}", "{task: humaneval, metric: pass@1, filter: create_test, value: 0.45}", 1)
	if err := os.WriteFile(filepath.Join(dir, "study.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, lie := range []bool{false, true} {
		out := filepath.Join(s.RunDir(s.Plan()[0]), harness.OutputDir)
		os.RemoveAll(out)
		docs := []simulate.CodeDoc{
			{Completions: []simulate.CodeKind{simulate.Canonical}},
			{Completions: []simulate.CodeKind{simulate.WrongAnswer}, Lie: lie},
			{Completions: []simulate.CodeKind{simulate.ReadHome}},
		}
		if _, err := simulate.WriteCode(out, simulate.CodeOptions{Docs: docs}); err != nil {
			t.Fatal(err)
		}
		rep := &capsule.ReplayReport{OK: true}
		if err := capsule.ReplayCode(context.Background(), s, capsule.ReplayOptions{ExecuteCode: true}, rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.CodeChecks) != 1 || len(rep.CodeExecution) != 1 || rep.CodeExecution[0].Programs != 3 {
			t.Fatalf("lie=%v: checks %+v, execution %+v", lie, rep.CodeChecks, rep.CodeExecution)
		}
		c := rep.CodeChecks[0]
		want := analysis.StatusExact
		if lie {
			want = analysis.StatusDiffers
		}
		if c.Status != want || rep.OK == lie || c.Level != analysis.LevelRescored {
			t.Errorf("lie=%v: %s %s, ok %v: %s", lie, c.Level, c.Status, rep.OK, c.Reason)
		}
	}
}
