package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/internal/fixtures"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// TestMain lets the test binary stand in for the capsule command, so that
// scripts run it as a real process in their own working directory.
func TestMain(m *testing.M) {
	testscript.Main(testenv.Wrap(m), map[string]func(){
		"capsule": func() { os.Exit(run()) },
	})
}

// TestScripts runs the command-line scenarios in testdata/script. Besides
// testscript's own commands they have "exits CODE ARGS...", which runs
// capsule and requires exactly that exit code, and $FIXTURES, the real
// lm-eval outputs (see package internal/fixtures).
func TestScripts(t *testing.T) {
	// The scripts that read $FIXTURES skip without them ([!fixtures]);
	// under CI a missing fixtures folder fails here.
	lmEval := ""
	if os.Getenv("CI") != "" {
		lmEval = fixtures.Dir(t, "lm-eval")
	} else if root, err := fixtures.Root(); err == nil {
		if fi, err := os.Stat(filepath.Join(root, "lm-eval")); err == nil && fi.IsDir() {
			lmEval = filepath.Join(root, "lm-eval")
		}
	}
	// The container scripts put a static capsule in an image: build one.
	static := ""
	if os.Getenv("EVALCAPSULE_INTEGRATION") != "" {
		static = filepath.Join(t.TempDir(), "capsule-static")
		build := exec.Command("go", "build", "-o", static, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building a static capsule: %v\n%s", err, out)
		}
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", lmEval)
			// The integration scripts need services .ci/run starts.
			for _, k := range []string{"EVALCAPSULE_INTEGRATION", "SLURM_CONF", "CONTAINERS_CONF", "EVALCAPSULE_REGISTRY"} {
				env.Setenv(k, os.Getenv(k))
			}
			env.Setenv("CAPSULE_STATIC", static)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "fixtures":
				// The real lm-eval outputs: scripts/fetch-fixtures.
				if lmEval == "" {
					testenv.Note("the lm-eval fixtures", "scripts/fetch-fixtures")
				}
				return lmEval != "", nil
			case "integration":
				// Set by .ci/run once Slurm, podman and the registry are up.
				if os.Getenv("EVALCAPSULE_INTEGRATION") == "" {
					testenv.NoteIntegration()
					return false, nil
				}
				return true, nil
			}
			if module, ok := strings.CutPrefix(cond, "pymodule:"); ok {
				// [pymodule:pip]: Debian's python3 imports the module (a
				// scenario checks one behaviour with it, another without).
				return testenv.HasModule(module), nil
			}
			if part, ok := strings.CutPrefix(cond, "missing:"); ok {
				// [missing:python3] skip: the part is absent (under CI an
				// error naming it); listed after the tests.
				if _, found := testenv.Find(part); found {
					return false, nil
				}
				_, err := testenv.Missing(part)
				return err == nil, err
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: scriptCmds(map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// waitstatus RUN_DIR STATUS SECONDS: wait until run.json says STATUS.
			"waitstatus": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: waitstatus RUN_DIR STATUS SECONDS")
				}
				secs, _ := strconv.Atoi(args[2])
				deadline := time.Now().Add(time.Duration(secs) * time.Second)
				for {
					rec, err := harness.ReadRecord(ts.MkAbs(args[0]))
					if err == nil && rec.Status == args[1] {
						return
					}
					if time.Now().After(deadline) {
						st := "no run.json"
						if rec != nil {
							st = rec.Status
						}
						ts.Fatalf("%s: still %s after %ds, want %s", args[0], st, secs, args[1])
					}
					time.Sleep(100 * time.Millisecond)
				}
			},
			// simcode DIR [lie]: write a simulated humaneval run of four
			// problems (canonical, wrong, syntax error, fork bomb); with
			// lie, document 1 logs a pass its execution does not give.
			"simcode": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 1 || len(args) > 2 {
					ts.Fatalf("usage: simcode DIR [lie]")
				}
				docs := []simulate.CodeDoc{
					{Completions: []simulate.CodeKind{simulate.Canonical}},
					{Completions: []simulate.CodeKind{simulate.WrongAnswer}, Lie: len(args) == 2},
					{Completions: []simulate.CodeKind{simulate.SyntaxErr}},
					{Completions: []simulate.CodeKind{simulate.ForkBomb}},
				}
				if _, err := simulate.WriteCode(ts.MkAbs(args[0]), simulate.CodeOptions{Docs: docs}); err != nil {
					ts.Fatalf("%v", err)
				}
			},
			// stdoutenv NAME: set NAME to the last command's stdout, trimmed.
			"stdoutenv": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: stdoutenv NAME")
				}
				ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
			},
			// cmptree A B [PART]: the files under A and B (those whose path
			// holds PART) are identical.
			"cmptree": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 && len(args) != 3 {
					ts.Fatalf("usage: cmptree A B [PART]")
				}
				a, b := ts.MkAbs(args[0]), ts.MkAbs(args[1])
				seen := 0
				err := filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					rel, _ := filepath.Rel(a, p)
					if len(args) == 3 && !strings.Contains(rel, args[2]) {
						return nil
					}
					x, _ := os.ReadFile(p)
					y, err := os.ReadFile(filepath.Join(b, rel))
					if err != nil || !bytes.Equal(x, y) {
						return fmt.Errorf("%s differs", rel)
					}
					seen++
					return nil
				})
				if err == nil && seen == 0 {
					err = fmt.Errorf("%s is empty", a)
				}
				if (err != nil) != neg {
					ts.Fatalf("cmptree %s %s: %v", args[0], args[1], err)
				}
			},
			"exits": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 1 || neg {
					ts.Fatalf("usage: exits CODE ARGS...")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exits: %v", err)
				}
				got := 0
				if err := ts.Exec("capsule", args[1:]...); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						ts.Fatalf("capsule: %v", err)
					}
					got = ee.ExitCode()
				}
				if got != want {
					ts.Fatalf("capsule %v: exit code %d, want %d", args[1:], got, want)
				}
			},
		}),
	})
}

// scriptCmds adds the layout commands (layout_test.go) to cmds.
func scriptCmds(cmds map[string]func(ts *testscript.TestScript, neg bool, args []string)) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	for k, v := range layoutCmds {
		cmds[k] = v
	}
	return cmds
}
