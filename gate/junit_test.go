package gate

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// readJUnit is what a real JUnit consumer, Debian's python3-junitparser,
// reads of a file: one line per test case, "classname name result message".
const readJUnit = `
import sys
from junitparser import JUnitXml, Failure, Error, Skipped
xml = JUnitXml.fromfile(sys.argv[1])
for suite in xml:
    for case in suite:
        kinds = [type(r).__name__ for r in case.result] or ["Passed"]
        msg = case.result[0].message if case.result else ""
        print("\t".join([case.classname, case.name, ",".join(kinds), msg or ""]))
    print("suite\t%d\t%d\t%d\t%d" % (suite.tests, suite.failures, suite.errors, suite.skipped))
`

// TestJUnitReadByJunitparser gates the simulated line's checkpoint with
// the planted regression, and a checkpoint whose prompts changed, and has
// junitparser read the files: the failures are exactly the planted ones.
func TestJUnitReadByJunitparser(t *testing.T) {
	py := testenv.Python(t, "junitparser")
	sides := lineSides(t)
	p, err := ParsePolicy([]byte(linePolicy))
	if err != nil {
		t.Fatal(err)
	}
	read := func(r *Result) []string {
		t.Helper()
		var b bytes.Buffer
		if err := r.WriteJUnit(&b); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "report.xml")
		if err := os.WriteFile(f, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(py, "-c", readJUnit, f).CombinedOutput()
		if err != nil {
			t.Fatalf("junitparser: %v\n%s\n%s", err, out, b.String())
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}

	r, err := Evaluate(sides[0], sides[simulate.LineRegressionCheckpoint], p)
	if err != nil {
		t.Fatal(err)
	}
	lines := read(r)
	var failures []string
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) == 4 && f[2] == "Failure" {
			failures = append(failures, f[0]+" "+f[1])
			if !strings.Contains(f[3], "significant drop of") {
				t.Errorf("failure message %q lacks the numbers", f[3])
			}
		}
	}
	if want := []string{simulate.LineRegressionTask + " exact_match,strict-match"}; !slices.Equal(failures, want) {
		t.Errorf("junitparser read failures %q, want %q\n%s", failures, want, strings.Join(lines, "\n"))
	}
	if got := lines[len(lines)-1]; got != "suite\t7\t1\t0\t3" {
		t.Errorf("suite counts %q, want 7 tests, 1 failure, 0 errors, 3 skipped", got)
	}

	// A candidate whose gsm8k prompts changed: gsm8k is refused (an
	// error), the rest is gated.
	changed := *sides[1]
	changed.Identity.TaskHashes = map[string]string{}
	for k, v := range sides[1].Identity.TaskHashes {
		changed.Identity.TaskHashes[k] = v
	}
	changed.Identity.TaskHashes["gsm8k"] = "0000"
	r, err = Evaluate(sides[0], &changed, p)
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, l := range read(r) {
		if f := strings.Split(l, "\t"); len(f) == 4 && f[2] != "Passed" && f[2] != "Skipped" {
			errs = append(errs, f[0]+" "+f[2]+" "+f[3])
		}
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "gsm8k Error task_hashes of gsm8k changed") {
		t.Errorf("changed prompts: %q", errs)
	}
}
