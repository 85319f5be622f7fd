package study_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/study"
)

const smallStudy = `study: small
model: {id: simulated/model-1b}
card:
  claims:
    - {task: gsm8k, metric: exact_match, filter: strict-match, value: 0.4}
harness: {version: 0.4.9.1}
runner: {kind: simulated}
baseline: {model: hf, tasks: [gsm8k], num_fewshot: 5, limit: 20, log_samples: true}
steps:
  - {name: "8-shot", set: {num_fewshot: 8}}
`

// sweptStudy runs smallStudy with the simulated runner.
func sweptStudy(t *testing.T) *study.Study {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, study.FileName), []byte(smallStudy), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := study.Sweep(context.Background(), s, study.SweepOptions{Runner: simulate.Runner{Effects: simulate.DefaultEffects()}, RunnerKind: "simulated", Simulated: true})
	if err != nil || sw.Counts()["done"] != len(s.Plan()) {
		t.Fatalf("sweep: %v %v", err, sw.Counts())
	}
	return s
}

// A record is what the study plans, or each difference is named: the
// settings, a command line that is not lm-eval's for those settings, a
// command that does not start lm-eval.
func TestCheckRecord(t *testing.T) {
	s := sweptStudy(t)
	pr := s.Plan()[1]
	rec, err := harness.ReadRecord(s.RunDir(pr))
	if err != nil {
		t.Fatal(err)
	}
	if d := s.CheckRecord(pr, rec); len(d) != 0 {
		t.Fatalf("the sweep's own record: %q", d)
	}
	edit := func(f func(r *harness.RunRecord)) []string {
		r := *rec
		r.Argv = append([]string(nil), rec.Argv...)
		f(&r)
		return s.CheckRecord(pr, &r)
	}
	for _, c := range []struct {
		name string
		edit func(r *harness.RunRecord)
		want string // "" when the record is fine
	}{
		{"python -m lm_eval", func(r *harness.RunRecord) {
			r.Argv = append([]string{"/usr/bin/python3.11", "-m", "lm_eval"}, r.Argv[1:]...)
		}, ""},
		{"lm_eval by path", func(r *harness.RunRecord) { r.Argv[0] = "/opt/venv/bin/lm_eval" }, ""},
		{"a shell", func(r *harness.RunRecord) { r.Argv = []string{"/bin/sh", "-c", "id > f"} }, "has no --output_path"},
		{"a shell before lm-eval's arguments", func(r *harness.RunRecord) { r.Argv = append([]string{"/bin/sh", "-c", "id > f", "x"}, r.Argv[1:]...) }, "which is not lm_eval or python -m lm_eval"},
		{"no command", func(r *harness.RunRecord) { r.Argv = r.Argv[1:] }, "which is not lm_eval"},
		{"another argument", func(r *harness.RunRecord) { r.Argv = append(r.Argv, "--limit", "1") }, "is not the one study.yaml's settings give"},
		{"other settings", func(r *harness.RunRecord) { n := 3; r.Spec.NumFewshot = &n }, "num_fewshot 3, planned 8"},
		{"no output path", func(r *harness.RunRecord) { r.Argv = []string{"lm_eval"} }, "has no --output_path"},
		{"another name", func(r *harness.RunRecord) { r.Name = "baseline" }, `names itself "baseline"`},
	} {
		got := strings.Join(edit(c.edit), "; ")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A rerun never runs the command a record holds: a record whose command
// line is not the study's stops it before anything runs.
func TestRerunRefusesForeignCommands(t *testing.T) {
	s := sweptStudy(t)
	pr := s.Plan()[0]
	rec, err := harness.ReadRecord(s.RunDir(pr))
	if err != nil {
		t.Fatal(err)
	}
	rec.Argv = []string{"/bin/sh", "-c", "touch pwned"}
	if err := harness.WriteRecord(s.RunDir(pr), rec); err != nil {
		t.Fatal(err)
	}
	asked := false
	_, err = study.Rerun(context.Background(), s, t.TempDir(), study.RerunOptions{Runner: simulate.Runner{Effects: simulate.DefaultEffects()}, RunnerKind: "simulated",
		Confirm: func([]study.RerunCommand) error { asked = true; return nil }})
	if !errors.Is(err, study.ErrMismatch) || !strings.Contains(err.Error(), "/bin/sh") || asked {
		t.Errorf("rerun of a record with a shell command: %v (asked: %v)", err, asked)
	}
}

// The commands a rerun runs are rebuilt from the study, shown first, and a
// refusal stops it.
func TestRerunConfirm(t *testing.T) {
	s := sweptStudy(t)
	work := t.TempDir()
	var shown []study.RerunCommand
	stop := errors.New("not now")
	_, err := study.Rerun(context.Background(), s, work, study.RerunOptions{Runner: simulate.Runner{Effects: simulate.DefaultEffects()}, RunnerKind: "simulated",
		Command: []string{"python3", "-m", "lm_eval"}, Confirm: func(c []study.RerunCommand) error { shown = c; return stop }})
	if !errors.Is(err, stop) || len(shown) != len(s.Plan()) {
		t.Fatalf("refused: %v, %d commands shown", err, len(shown))
	}
	want, _ := s.Argv(s.Plan()[1], []string{"python3", "-m", "lm_eval"}, filepath.Join(work, "runs", s.Plan()[1].Name)+"/output")
	if strings.Join(shown[1].Argv, " ") != strings.Join(want, " ") || shown[1].Run != s.Plan()[1].Name {
		t.Errorf("shown %q, want %q", shown[1].Argv, want)
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Errorf("a refused rerun wrote %v", entries)
	}
	cmps, err := study.Rerun(context.Background(), s, t.TempDir(), study.RerunOptions{Runner: simulate.Runner{Effects: simulate.DefaultEffects()}, RunnerKind: "simulated",
		Confirm: func([]study.RerunCommand) error { return nil }})
	if err != nil || len(cmps) != len(s.Plan()) || !cmps[0].OK {
		t.Errorf("confirmed rerun: %v %+v", err, cmps)
	}
}

// A credential in the settings never reaches run.json: the study file is
// refused at its line, the value not repeated.
func TestStudyRefusesSecrets(t *testing.T) {
	token := "hf_" + strings.Repeat("T0k", 12)
	yaml := strings.Replace(smallStudy, "limit: 20,", "limit: 20, model_args: {token: "+token+"},", 1)
	_, err := study.Parse("study.yaml", []byte(yaml))
	if !errors.Is(err, study.ErrStudy) || !strings.Contains(err.Error(), "study.yaml:8: baseline.model_args.token: this is a Hugging Face token: pass it in the environment") || strings.Contains(err.Error(), token) {
		t.Errorf("a token in model_args: %v", err)
	}
}

// Two sweeps of one study: the second is refused, saying who holds it, and
// runs once the first has ended.
func TestSweepLock(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, study.FileName), []byte(smallStudy), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var once bool
	slow := study.SweepOptions{Runner: simulate.Runner{Effects: simulate.DefaultEffects(), Pace: 300 * time.Millisecond}, RunnerKind: "simulated", Simulated: true, Parallel: 1,
		Events: func(ev study.RunEvent) {
			if ev.Status == harness.StatusRunning && !once {
				once = true
				close(started)
			}
		}}
	done := make(chan error)
	go func() {
		_, err := study.Sweep(context.Background(), s, slow)
		done <- err
	}()
	<-started
	_, err = study.Sweep(context.Background(), s, study.SweepOptions{Runner: simulate.Runner{Effects: simulate.DefaultEffects()}, RunnerKind: "simulated", Simulated: true})
	if !errors.Is(err, study.ErrBusy) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("a second sweep: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sw, err := study.Sweep(context.Background(), s, study.SweepOptions{Runner: simulate.Runner{Effects: simulate.DefaultEffects()}, RunnerKind: "simulated", Simulated: true})
	if err != nil || sw.Counts()["skipped"] != len(s.Plan()) {
		t.Errorf("a sweep after the first: %v %v", err, sw)
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, ".*")); len(entries) != 0 {
		t.Errorf("left in the study: %v", entries)
	}
}
