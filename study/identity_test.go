package study_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/study"
)

// recordingRunner stands in for lm-eval: it marks each run done, writes a
// placeholder output, and remembers the records it was given.
type recordingRunner struct{ ran *[]harness.RunRecord }

type noopExecutor struct{}

func (noopExecutor) Execute(ctx context.Context, rec *harness.RunRecord, out string, _ func(harness.Progress)) error {
	return os.WriteFile(filepath.Join(out, "placeholder"), []byte(rec.Harness.Version), 0o644)
}

func (r recordingRunner) Run(ctx context.Context, dir string, _ func(harness.Progress)) error {
	rec, err := harness.ReadRecord(dir)
	if err != nil {
		return err
	}
	*r.ran = append(*r.ran, *rec)
	return harness.RunJob(ctx, dir, noopExecutor{}, harness.JobOptions{})
}

const harnessStudy = `study: versions
model: {id: org/model}
card:
  claims:
    - {task: gsm8k, metric: exact_match, filter: strict-match, value: 0.4}
harness: {version: 0.4.9.1, image: "registry.example/lm-eval@sha256:` + "1111111111111111111111111111111111111111111111111111111111111111" + `"}
runner: {kind: container}
baseline: {model: hf, tasks: [gsm8k], num_fewshot: 5, log_samples: true}
steps:
  - {name: "8-shot", set: {num_fewshot: 8}}
variants:
  - {harness: {version: 0.4.3, image: "registry.example/lm-eval@sha256:` + "3333333333333333333333333333333333333333333333333333333333333333" + `", python: /venvs/lm-0.4.3/bin/python}}
  - {num_fewshot: 0}
`

func writeStudy(t *testing.T, dir, yaml string) *study.Study {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, study.FileName), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sweep(t *testing.T, s *study.Study, kind string, keep bool) ([]harness.RunRecord, *study.SweepResult, error) {
	t.Helper()
	var ran []harness.RunRecord
	sw, err := study.Sweep(context.Background(), s, study.SweepOptions{Runner: recordingRunner{&ran}, RunnerKind: kind, KeepStale: keep})
	return ran, sw, err
}

// A variant may pin another lm-eval: its run gets that version's command
// line, its image (container runner) or its Python (local runner), and
// records that version.
func TestHarnessAsASetting(t *testing.T) {
	s := writeStudy(t, t.TempDir(), harnessStudy)
	plan := s.Plan()
	if got := []string{plan[0].Harness.Version, plan[1].Harness.Version, plan[2].Harness.Version, plan[3].Harness.Version}; !slices.Equal(got, []string{"0.4.9.1", "0.4.9.1", "0.4.3", "0.4.9.1"}) {
		t.Fatalf("harness versions %v", got)
	}
	ran, _, err := sweep(t, s, "container", false)
	if err != nil {
		t.Fatal(err)
	}
	v043, _ := harness.ParseVersion("0.4.3")
	want, _ := harness.Argv(plan[2].Spec, v043, "runs/"+plan[2].Name+"/output")
	for _, rec := range ran {
		if rec.Name != plan[2].Name {
			if rec.Harness.Version != "0.4.9.1" || rec.Image == nil || !strings.HasSuffix(rec.Image.Ref, "1111") {
				t.Errorf("%s: lm-eval %s, image %+v", rec.Name, rec.Harness.Version, rec.Image)
			}
			continue
		}
		if rec.Harness.Version != "0.4.3" || rec.Image == nil || !strings.HasSuffix(rec.Image.Ref, "3333") {
			t.Errorf("the 0.4.3 variant: lm-eval %s, image %+v", rec.Harness.Version, rec.Image)
		}
		if !slices.Equal(rec.Argv[1:], want) || rec.Argv[0] != "lm_eval" {
			t.Errorf("the 0.4.3 variant's argv %q, want lm_eval %q", rec.Argv, want)
		}
	}
	// The local runner starts the variant's lm-eval with its Python.
	s = writeStudy(t, t.TempDir(), strings.Replace(harnessStudy, "kind: container", "kind: local", 1))
	ran, _, err = sweep(t, s, "local", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range ran {
		py := rec.Name == s.Plan()[2].Name
		if (rec.Argv[0] == "/venvs/lm-0.4.3/bin/python") != py || (py && rec.Argv[1] != "-m") || rec.Image != nil {
			t.Errorf("%s: argv %q, image %+v", rec.Name, rec.Argv[:3], rec.Image)
		}
		if d := s.CheckRecord(planned(s, rec.Name), &rec); len(d) != 0 {
			t.Errorf("%s: the sweep's record does not check: %q", rec.Name, d)
		}
	}
	// The baseline's lm-eval is the study's.
	_, err = study.Parse("study.yaml", []byte(strings.Replace(harnessStudy, "num_fewshot: 5, log_samples", "num_fewshot: 5, harness: {version: 0.4.8}, log_samples", 1)))
	if !errors.Is(err, study.ErrStudy) || !strings.Contains(err.Error(), "baseline.harness") {
		t.Errorf("a harness in the baseline: %v", err)
	}
}

func planned(s *study.Study, name string) study.PlannedRun {
	for _, pr := range s.Plan() {
		if pr.Name == name {
			return pr
		}
	}
	return study.PlannedRun{}
}

// A done run whose identity changed is run again, saying why; nothing is
// reused silently; KeepStale refuses instead.
func TestStaleRunsRunAgain(t *testing.T) {
	dir := t.TempDir()
	s := writeStudy(t, dir, harnessStudy)
	if _, _, err := sweep(t, s, "container", false); err != nil {
		t.Fatal(err)
	}
	names := func(recs []harness.RunRecord) []string {
		var out []string
		for _, r := range recs {
			out = append(out, r.Name)
		}
		slices.Sort(out)
		return out
	}
	// Nothing changed: nothing runs.
	if ran, sw, err := sweep(t, s, "container", false); err != nil || len(ran) != 0 || sw.Counts()["skipped"] != 4 {
		t.Fatalf("a second sweep ran %v (%v)", names(ran), err)
	}
	// The study's lm-eval changes: every run that pins it runs again,
	// the variant with its own lm-eval does not.
	s = writeStudy(t, dir, strings.Replace(harnessStudy, "version: 0.4.9.1", "version: 0.4.9.2", 1))
	if _, _, err := sweep(t, s, "container", true); !errors.Is(err, study.ErrRunExists) || !strings.Contains(err.Error(), "lm-eval 0.4.9.1 → 0.4.9.2") {
		t.Errorf("KeepStale: %v", err)
	}
	ran, sw, err := sweep(t, s, "container", false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"baseline", "step-1-8-shot", s.Plan()[3].Name}
	slices.Sort(want)
	if got := names(ran); !slices.Equal(got, want) {
		t.Errorf("ran %v after the version changed, want %v", got, want)
	}
	for _, o := range sw.Runs {
		if o.Run.Name == "baseline" && (o.Status != harness.StatusDone || !strings.Contains(o.Stale, "lm-eval 0.4.9.1 → 0.4.9.2")) {
			t.Errorf("baseline: %s, stale %q", o.Status, o.Stale)
		}
	}
	// A step's setting changes: that step runs again, nothing else.
	s = writeStudy(t, dir, strings.Replace(strings.Replace(harnessStudy, "version: 0.4.9.1", "version: 0.4.9.2", 1), "num_fewshot: 8", "num_fewshot: 10", 1))
	ran, sw, err = sweep(t, s, "container", false)
	if err != nil || !slices.Equal(names(ran), []string{"step-1-8-shot"}) {
		t.Errorf("after the step changed: ran %v (%v)", names(ran), err)
	}
	for _, o := range sw.Runs {
		if o.Run.Name == "step-1-8-shot" && !strings.Contains(o.Stale, "num_fewshot 8, planned 10") {
			t.Errorf("the step's reason: %q", o.Stale)
		}
	}
	// A record from the plan before does not check against the plan now.
	rec, err := harness.ReadRecord(s.RunDir(s.Plan()[0]))
	if err != nil {
		t.Fatal(err)
	}
	s = writeStudy(t, dir, harnessStudy)
	if d := strings.Join(s.CheckRecord(s.Plan()[0], rec), "; "); !strings.Contains(d, "lm-eval 0.4.9.2, where study.yaml plans 0.4.9.1") {
		t.Errorf("CheckRecord of a record of another lm-eval: %q", d)
	}
}

// A study that does not pin its model's revision is warned about; one that
// does, in model or in model_args, is not.
func TestWarnsUnpinnedRevision(t *testing.T) {
	s, err := study.Parse("study.yaml", []byte(harnessStudy))
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], "org/model is not pinned to a revision") {
		t.Errorf("warnings %q", w)
	}
	for _, pinned := range []string{
		strings.Replace(harnessStudy, "model: {id: org/model}", "model: {id: org/model, revision: 0123abc}", 1),
		strings.Replace(harnessStudy, "num_fewshot: 5, log", "model_args: {revision: 0123abc}, num_fewshot: 5, log", 1),
	} {
		s, err := study.Parse("study.yaml", []byte(pinned))
		if err != nil {
			t.Fatal(err)
		}
		if w := s.Warnings(); len(w) != 0 {
			t.Errorf("a pinned revision warned: %q", w)
		}
	}
}

// A variant's custom tasks are frozen into its run, hashed into its
// identity and recorded; editing one re-runs exactly that run.
func TestIncludePath(t *testing.T) {
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks")
	if err := os.MkdirAll(filepath.Join(tasks, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := "task: gsm8k_custom\ninclude: gsm8k.yaml\n"
	os.WriteFile(filepath.Join(tasks, "sub", "gsm8k_custom.yaml"), []byte(yaml), 0o644)
	s := writeStudy(t, dir, strings.Replace(harnessStudy, "  - {num_fewshot: 0}\n", "  - {num_fewshot: 0}\n  - {include_path: tasks}\n", 1))
	ran, _, err := sweep(t, s, "container", false)
	if err != nil {
		t.Fatal(err)
	}
	pr := s.Plan()[len(s.Plan())-1]
	var rec *harness.RunRecord
	for i := range ran {
		if ran[i].Name == pr.Name {
			rec = &ran[i]
		} else if ran[i].Includes != nil {
			t.Errorf("%s records includes", ran[i].Name)
		}
	}
	if rec == nil {
		t.Fatalf("%s did not run", pr.Name)
	}
	if !slices.Contains(rec.Argv, "runs/"+pr.Name+"/include") || len(rec.Includes) != 1 || !strings.HasPrefix(rec.Includes["sub/gsm8k_custom.yaml"], "sha256:") {
		t.Errorf("argv %q, includes %v", rec.Argv, rec.Includes)
	}
	frozen, err := os.ReadFile(filepath.Join(s.RunDir(pr), "include", "sub", "gsm8k_custom.yaml"))
	if err != nil || string(frozen) != yaml {
		t.Errorf("frozen copy: %q %v", frozen, err)
	}
	done, _ := harness.ReadRecord(s.RunDir(pr))
	if d := s.CheckRecord(pr, done); len(d) != 0 {
		t.Errorf("the record does not check: %q", d)
	}
	// Nothing changed: nothing runs; the task file changes: that run runs.
	if ran, _, err := sweep(t, s, "container", false); err != nil || len(ran) != 0 {
		t.Fatalf("a second sweep ran %d runs (%v)", len(ran), err)
	}
	os.WriteFile(filepath.Join(tasks, "sub", "gsm8k_custom.yaml"), []byte(yaml+"num_fewshot: 3\n"), 0o644)
	ran, sw, err := sweep(t, s, "container", false)
	if err != nil || len(ran) != 1 || ran[0].Name != pr.Name {
		t.Fatalf("after a task file changed: ran %d (%v)", len(ran), err)
	}
	for _, o := range sw.Runs {
		if o.Run.Name == pr.Name && !strings.Contains(o.Stale, "include_path file sub/gsm8k_custom.yaml changed") {
			t.Errorf("reason %q", o.Stale)
		}
	}
	// A link in the folder is refused before anything runs.
	os.Symlink("/etc/passwd", filepath.Join(tasks, "passwd.yaml"))
	if _, _, err := sweep(t, s, "container", false); !errors.Is(err, study.ErrStudy) || !strings.Contains(err.Error(), "passwd.yaml is a symbolic link") {
		t.Errorf("a link in include_path: %v", err)
	}
	// A folder outside the study is refused when the study is read.
	if _, err := study.Parse("study.yaml", []byte(strings.Replace(harnessStudy, "  - {num_fewshot: 0}\n", "  - {include_path: ../elsewhere}\n", 1))); !errors.Is(err, study.ErrStudy) {
		t.Errorf("include_path outside the study: %v", err)
	}
}
