package pynum

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// debianPython is the reference interpreter of the cross-checks: Debian's
// /usr/bin/python3 with its stdlib, not whatever python3 is first on PATH.
const debianPython = "/usr/bin/python3"

// runPython runs script with Debian's Python, feeding it stdin, and returns
// its standard output. A missing interpreter skips the test, and fails it
// under CI: these comparisons are what shows the ports are exact.
func runPython(t *testing.T, script string, stdin []byte) string {
	t.Helper()
	testenv.Python(t)
	cmd := exec.Command(debianPython, "-c", script)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), "PYTHONIOENCODING=utf-8")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s", debianPython, err, stderr.String())
	}
	return stdout.String()
}

// pythonRule returns the summation rule of the reference interpreter.
func pythonRule(t *testing.T) Summation {
	t.Helper()
	out := runPython(t, "import sys; print(sys.version_info[0], sys.version_info[1])", nil)
	var major, minor int
	if _, err := fmt.Sscan(out, &major, &minor); err != nil {
		t.Fatalf("parsing Python version %q: %v", out, err)
	}
	return SummationFor(major, minor)
}
func parseHex(t *testing.T, s string) float64 {
	t.Helper()
	switch s {
	case "inf":
		return math.Inf(1)
	case "nan":
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("parsing %q: %v", s, err)
	}
	return v
}

// same reports whether a and b are the same float64, NaN included.
func same(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b)
}

// TestMain lists the parts outside Go that tests skipped for.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
