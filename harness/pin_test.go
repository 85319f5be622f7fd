package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pinnedRun is a planned, not simulated, run of lm-eval version at commit
// (which may be "").
func pinnedRun(t *testing.T, argv []string, version, commit string) string {
	t.Helper()
	dir := t.TempDir()
	rec := &RunRecord{Name: "r", Status: StatusPlanned, Argv: argv, Harness: HarnessInfo{Version: version, Commit: commit}}
	if err := WriteRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runPinned runs the job of dir with the environment captured through
// python ("" for the interpreter of the run's command line) and returns
// its record.
func runPinned(t *testing.T, dir, python string) *RunRecord {
	t.Helper()
	err := RunJob(context.Background(), dir, fakeExecutor{}, JobOptions{Capture: &CaptureOptions{Python: python, Timeout: 20 * time.Second}})
	rec, rerr := ReadRecord(dir)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if (err != nil) != (rec.Status != StatusDone) {
		t.Fatalf("RunJob: %v, status %s", err, rec.Status)
	}
	return rec
}

// A plain install into a virtual environment inside the user's own git
// repository is not an lm-eval checkout: the repository's commit is not
// lm-eval's, and a study pinning lm-eval's commit still runs.
func TestPinHarnessPlainInstallInUserRepository(t *testing.T) {
	user := t.TempDir()
	gitRepo(t, user, map[string]string{"notes.md": "mine\n", ".gitignore": ".venv/\n"})
	pkg := filepath.Join(user, ".venv", "lib", "python3.11", "site-packages", "lm_eval")
	os.MkdirAll(pkg, 0o755)
	os.WriteFile(filepath.Join(pkg, "__init__.py"), nil, 0o644)
	py := fakePython{version: "Python 3.11.9", freeze: "lm_eval==0.4.9.1\n", lmEval: "0.4.9.1", lmEvalDir: pkg}.
		write(t, filepath.Join(user, ".venv", "bin", "python3"))

	const pinned = "d021bf846218f1bb3bdc0603864789329476d464" // v0.4.9.1
	dir := pinnedRun(t, []string{py, "-m", "lm_eval", "--tasks", "gsm8k"}, "0.4.9.1", pinned)
	rec := runPinned(t, dir, py)
	if rec.Status != StatusDone || rec.Harness.Source != "installed" || rec.Harness.Commit != pinned || rec.Harness.Dirty {
		t.Errorf("status %s (%s), harness %+v; want done, installed, the pinned commit", rec.Status, rec.Error, rec.Harness)
	}
}

// Tags v0.4.0 and v0.4.6 carry package metadata 1.0.0 and 0.4.5: installed
// from the tag (here with pip from git, which pip freeze shows with the
// commit), they are those releases.
func TestPinHarnessTagMetadataQuirks(t *testing.T) {
	const (
		v040 = "c9bbec6e7de418b9082379da82797522eb173054"
		v045 = "0845b588303f1f59af98dd1c5bdbd78a9e75a1e2"
		v046 = "9d36354e6422db94c374dc476c093b1495370983"
	)
	fromGit := func(commit string) string {
		return "accelerate==1.10.1\nlm_eval @ git+https://github.com/EleutherAI/lm-evaluation-harness@" + commit + "\n"
	}
	for _, c := range []struct {
		name, pins, metadata, freeze string
		want                         string // "" for done, else the error's text
	}{
		{"v0.4.6 from its tag", "0.4.6", "0.4.5", fromGit(v046), ""},
		{"v0.4.0 from its tag", "0.4.0", "1.0.0", fromGit(v040), ""},
		{"v0.4.6 pinned, v0.4.5 installed from git", "0.4.6", "0.4.5", fromGit(v045),
			"lm-eval 0.4.5 is installed but the run pins 0.4.6: the v0.4.6 tag's own package says 0.4.5 too, which is accepted at that tag's commit " + v046 + ", but it is at " + v045},
		{"v0.4.6 pinned, 0.4.5 from PyPI", "0.4.6", "0.4.5", "lm_eval==0.4.5\n", "the installed lm-eval's commit is not known"},
		{"v0.4.5 pinned, the v0.4.6 tag installed", "0.4.5", "0.4.5", fromGit(v046),
			"lm-eval 0.4.6 is installed (commit " + v046 + ", the v0.4.6 tag, whose package says 0.4.5) but the run pins 0.4.5"},
		{"v0.4.5 from its tag", "0.4.5", "0.4.5", fromGit(v045), ""},
		{"1.0.0 is not v0.4.0 elsewhere", "0.4.0", "1.0.0", "lm_eval==1.0.0\n", "lm-eval 1.0.0 is installed but the run pins 0.4.0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			pkg := filepath.Join(tmp, "venv", "lib", "python3.11", "site-packages", "lm_eval")
			py := fakePython{version: "Python 3.11.9", freeze: c.freeze, lmEval: c.metadata, lmEvalDir: pkg}.write(t, filepath.Join(tmp, "venv", "bin", "python3"))
			rec := runPinned(t, pinnedRun(t, []string{py, "-m", "lm_eval"}, c.pins, ""), py)
			if c.want == "" {
				if rec.Status != StatusDone || rec.Harness.Commit == "" || rec.Harness.Source != "installed" {
					t.Errorf("status %s (%s), harness %+v; want done with the commit pip installed", rec.Status, rec.Error, rec.Harness)
				}
				return
			}
			if rec.Status != StatusFailed || !strings.Contains(rec.Error, c.want) {
				t.Errorf("status %s, error %q; want failed saying %q", rec.Status, rec.Error, c.want)
			}
		})
	}
}

// The Python recorded (its version, pip freeze, lm-eval's version) is the
// one that runs lm-eval, not the first python3 on PATH.
func TestRunJobRecordsLMEvalsPython(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	fakePython{version: "Python 3.9.0", freeze: "system-only==1.0\n", lmEval: "0.4.2"}.write(t, filepath.Join(bin, "python3"))
	venvPy := fakePython{version: "Python 3.11.9", freeze: "lm_eval==0.4.9.1\nvenv-only==2.0\n", lmEval: "0.4.9.1",
		lmEvalDir: filepath.Join(tmp, "venv", "lib", "python3.11", "site-packages", "lm_eval")}.write(t, filepath.Join(tmp, "venv", "bin", "python3"))
	// The entry point pip writes into the virtual environment.
	entry := "#!" + venvPy + "\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom lm_eval.__main__ import cli_evaluate\n"
	os.WriteFile(filepath.Join(bin, "lm_eval"), []byte(entry), 0o755)
	t.Setenv("PATH", bin)

	for _, argv := range [][]string{
		{"lm_eval", "--tasks", "gsm8k"},
		{venvPy, "-m", "lm_eval", "--tasks", "gsm8k"},
	} {
		rec := runPinned(t, pinnedRun(t, argv, "0.4.9.1", ""), "")
		e := rec.Env
		if rec.Status != StatusDone || e == nil || e.Python != venvPy || e.PythonVersion != "3.11.9" || e.LMEvalVersion != "0.4.9.1" ||
			len(e.Packages) != 2 || e.Packages[1].Name != "venv-only" {
			t.Errorf("%q: status %s (%s), environment %+v; want the virtual environment's Python", argv, rec.Status, rec.Error, e)
		}
	}
}

func TestLMEvalPython(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	os.MkdirAll(bin, 0o755)
	spaced := filepath.Join(tmp, "my envs", "venv", "bin", "python3")
	fakePython{}.write(t, spaced)
	onPath := fakePython{}.write(t, filepath.Join(bin, "python3.11"))
	script := func(name, body string) string {
		p := filepath.Join(bin, name)
		os.WriteFile(p, []byte(body), 0o755)
		return p
	}
	script("lm_eval", "#!/opt/venv/bin/python3\nimport sys\n")
	script("lm_eval-env", "#!/usr/bin/env python3.11\nimport sys\n")
	script("lm_eval-env-s", "#!/usr/bin/env -S PYTHONHASHSEED=0 python3.11 -u\nimport sys\n")
	// pip's launcher for an interpreter path with spaces.
	script("lm_eval-sh", "#!/bin/sh\n'''exec' \""+spaced+"\" \"$0\" \"$@\"\n' '''\n# -*- coding: utf-8 -*-\nimport sys\n")
	script("wrapper", "#!/bin/sh\nexec lm_eval \"$@\"\n")
	script("binary", "\x7fELF\x02\x01\x01")
	t.Setenv("PATH", bin)
	for _, c := range []struct {
		argv []string
		want string // "" for an error
	}{
		{[]string{"python3", "-m", "lm_eval"}, "python3"},
		{[]string{"/opt/conda/bin/python3.10", "-m", "lm_eval"}, "/opt/conda/bin/python3.10"},
		{[]string{"lm_eval", "--tasks", "gsm8k"}, "/opt/venv/bin/python3"},
		{[]string{filepath.Join(bin, "lm_eval")}, "/opt/venv/bin/python3"},
		{[]string{"lm_eval-env"}, onPath},
		{[]string{"lm_eval-env-s"}, onPath},
		{[]string{"lm_eval-sh"}, spaced},
		{[]string{"wrapper"}, ""},
		{[]string{"binary"}, ""},
		{[]string{"not-installed"}, ""},
		{nil, ""},
	} {
		got, err := lmEvalPython(c.argv)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("%q: %q, %v; want %q", c.argv, got, err, c.want)
		}
	}
}

// lm-eval exiting 0 is not a finished run unless it wrote its results
// (and samples, when the run logs them): it exits 0 when saving them
// fails.
func TestLMEvalExitZeroWithoutOutput(t *testing.T) {
	const (
		results = `mkdir -p "$1/m" && echo '{"results": {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": 0.5}}, "configs": {"gsm8k": {"task": "gsm8k"}}, "versions": {"gsm8k": 3}}' > "$1/m/results_2025-01-02T03-04-05.678901.json"`
		samples = `echo '{"doc_id": 0}' > "$1/m/samples_gsm8k_2025-01-02T03-04-05.678901.jsonl"`
	)
	for _, c := range []struct {
		name, script string
		logSamples   bool
		why          string // "" for done
	}{
		{"nothing written", "echo 'WARNING Could not save results' >&2; exit 0", true, "lm-eval exited 0 but wrote no results file"},
		{"results without samples", results, true, "lm-eval exited 0 but wrote no samples of gsm8k"},
		{"results, samples not logged", results, false, ""},
		{"results and samples", results + " && " + samples, true, ""},
		{"samples only", `mkdir -p "$1/m" && ` + samples, true, "lm-eval exited 0 but wrote samples and no results file"},
		{"a broken results file", `mkdir -p "$1/m" && echo '{"results": ' > "$1/m/results_2025-01-02T03-04-05.678901.json"`, true, "lm-eval exited 0 but its output cannot be read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			// argv gets --output_path OUT: $0 and $1 of the script.
			rec := &RunRecord{Name: "r", Status: StatusPlanned, Argv: []string{"sh", "-c", c.script}, Spec: RunSpec{LogSamples: c.logSamples}}
			if err := WriteRecord(dir, rec); err != nil {
				t.Fatal(err)
			}
			err := RunJob(context.Background(), dir, LMEval{}, JobOptions{})
			rec, _ = ReadRecord(dir)
			if c.why == "" {
				if err != nil || rec.Status != StatusDone {
					t.Fatalf("%v, status %s", err, rec.Status)
				}
				return
			}
			if !errors.Is(err, ErrNoOutput) || rec.Status != StatusFailed || !strings.Contains(rec.Error, c.why) ||
				rec.ExitCode == nil || *rec.ExitCode != 0 {
				t.Fatalf("%v: status %s, error %q, exit code %v; want failed, exit code 0, saying %q", err, rec.Status, rec.Error, rec.ExitCode, c.why)
			}
			if _, err := os.Stat(filepath.Join(dir, OutputDir)); !os.IsNotExist(err) {
				t.Error("a run without results has an output directory")
			}
		})
	}
}
