package simulate

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// debianPython is the interpreter the byte-format tests compare against:
// Debian's CPython with its stdlib json, not whatever python3 is first on
// PATH (which may be a pyenv build or a virtualenv with other packages).
const debianPython = "/usr/bin/python3"

// runPython runs script with Debian's Python and returns its stdout. The
// tests that call it check this package against CPython itself, so a
// missing interpreter is a failure, not a skip.
func runPython(t testing.TB, script string, stdin []byte, args ...string) string {
	t.Helper()
	testenv.Python(t)
	cmd := exec.Command(debianPython, append([]string{"-c", script}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), "PYTHONIOENCODING=utf-8", "PYTHONHASHSEED=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s\nstdout:\n%s", debianPython, err, stderr.String(), stdout.String())
	}
	return stdout.String()
}

// pythonVersion is the version of Debian's Python, e.g. "3.11.2".
func pythonVersion(t testing.TB) string {
	t.Helper()
	return strings.TrimSpace(runPython(t, "import platform; print(platform.python_version())", nil))
}

// TestMain lists the parts outside Go that tests skipped for.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
