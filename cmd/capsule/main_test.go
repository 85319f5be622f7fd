package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary stand in for the capsule command, so that
// scripts run it as a real process in their own working directory.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"capsule": func() { os.Exit(Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the command-line scenarios in testdata/script. Besides
// testscript's own commands they have "exits CODE ARGS...", which runs
// capsule and requires exactly that exit code, and $FIXTURES, the real
// lm-eval outputs in ../shared/fixtures.
func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs("../../../shared/fixtures/lm-eval")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fixtures); err != nil {
		t.Fatalf("the real lm-eval fixtures are missing (%v): CI must check out ../shared next to the repository", err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", fixtures)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
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
		},
	})
}
