package testenv

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestHidden asks for parts the parent test hides; it does something only
// when TestSkipOrFail runs it in a child process.
func TestHidden(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "" {
		t.Skip("run by TestSkipOrFail")
	}
	Command(t, "chromium")
	t.Log("chromium found")
}

func TestHiddenModule(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "" {
		t.Skip("run by TestSkipOrFail")
	}
	Python(t, "numpy", "sklearn")
	t.Log("modules found")
}

// child runs the named test of this binary with chromium and
// python3-sklearn hidden, and CI set or not.
func child(t *testing.T, run string, ci bool) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+run+"$", "-test.v")
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "CI=") && !strings.HasPrefix(e, "EVALCAPSULE_TESTENV_HIDE=") {
			env = append(env, e)
		}
	}
	env = append(env, "TESTENV_CHILD=1", "EVALCAPSULE_TESTENV_HIDE=chromium,python3-sklearn")
	if ci {
		env = append(env, "CI=1")
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running the child test: %v", err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// TestSkipOrFail checks that a hidden part skips a test with one line
// naming it and its install command, listed after the tests, and that
// under CI the same line fails the test.
func TestSkipOrFail(t *testing.T) {
	const line = "chromium is missing (no /usr/bin/chromium or /usr/bin/chromium-browser): apt install chromium"
	out, code := child(t, "TestHidden", false)
	if code != 0 || !strings.Contains(out, "--- SKIP: TestHidden") || !strings.Contains(out, line+"\n") ||
		strings.Contains(out, "chromium found") {
		t.Errorf("without CI: exit %d, want a skip saying %q:\n%s", code, line, out)
	}
	if !strings.Contains(out, "\nskipped for missing parts: chromium (apt install chromium)\n") {
		t.Errorf("without CI: no summary naming chromium:\n%s", out)
	}

	out, code = child(t, "TestHidden", true)
	if code != 1 || !strings.Contains(out, "--- FAIL: TestHidden") || !strings.Contains(out, line+ciNote) {
		t.Errorf("with CI: exit %d, want a failure saying %q:\n%s", code, line, out)
	}
	if strings.Contains(out, "skipped for missing parts") {
		t.Errorf("with CI: a failed test is listed as skipped:\n%s", out)
	}
}

func TestSkipOrFailModule(t *testing.T) {
	if _, ok := Find("python3"); !ok {
		t.Skip("no /usr/bin/python3 to hide a module of")
	}
	out, code := child(t, "TestHiddenModule", false)
	// numpy may be missing too, and is named only then; sklearn is hidden.
	if code != 0 || !strings.Contains(out, "--- SKIP: TestHiddenModule") || !strings.Contains(out, "python3-sklearn") ||
		!(strings.Contains(out, "/usr/bin/python3 cannot import sklearn)") || strings.Contains(out, "/usr/bin/python3 cannot import numpy, sklearn)")) {
		t.Errorf("without CI: exit %d, want a skip naming python3-sklearn:\n%s", code, out)
	}
	if !strings.Contains(out, "python3-sklearn (apt install python3-sklearn)") {
		t.Errorf("without CI: no summary naming python3-sklearn:\n%s", out)
	}
	out, code = child(t, "TestHiddenModule", true)
	if code != 1 || !strings.Contains(out, "--- FAIL: TestHiddenModule") || !strings.Contains(out, "python3-sklearn") || !strings.Contains(out, "apt install ") {
		t.Errorf("with CI: exit %d, want a failure naming python3-sklearn:\n%s", code, out)
	}
}

// TestQuietSummary: nothing missing, nothing printed.
func TestQuietSummary(t *testing.T) {
	out, code := child(t, "TestQuietSummary_none", false)
	if code != 0 || strings.Contains(out, "skipped for missing parts") {
		t.Errorf("exit %d, a summary with nothing skipped:\n%s", code, out)
	}
}

func TestMissing(t *testing.T) {
	t.Setenv("CI", "1")
	if _, err := Missing("python3"); err == nil || !strings.Contains(err.Error(), "python3 is missing: apt install python3") {
		t.Errorf("Missing under CI: %v, want an error with the install line", err)
	}
}

func TestEveryPartInstalls(t *testing.T) {
	for name, p := range programs {
		if !strings.HasPrefix(p.install, "apt install ") && !strings.HasPrefix(p.install, "go install ") {
			t.Errorf("%s: install %q is no apt or go install line", name, p.install)
		}
	}
}

func TestIntegrationChild(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "" {
		t.Skip("run by TestIntegrationSkip")
	}
	Integration(t, "a registry")
	t.Log("integration on")
}

// TestIntegrationSkip: without EVALCAPSULE_INTEGRATION an integration test
// skips saying what it needs, and the summary lists the integration suite;
// under CI it fails.
func TestIntegrationSkip(t *testing.T) {
	t.Setenv(IntegrationEnv, "")
	out, code := child(t, "TestIntegrationChild", false)
	if code != 0 || !strings.Contains(out, "--- SKIP: TestIntegrationChild") || !strings.Contains(out, "this test needs a registry") ||
		!strings.Contains(out, "skipped for missing parts: the integration suite (EVALCAPSULE_INTEGRATION=1") {
		t.Errorf("without CI: exit %d, want a skip and a summary naming the integration suite:\n%s", code, out)
	}
	out, code = child(t, "TestIntegrationChild", true)
	if code != 1 || !strings.Contains(out, "--- FAIL: TestIntegrationChild") {
		t.Errorf("with CI: exit %d, want a failure:\n%s", code, out)
	}
	t.Setenv(IntegrationEnv, "1")
	out, code = child(t, "TestIntegrationChild", false)
	if code != 0 || !strings.Contains(out, "integration on") {
		t.Errorf("with %s=1: exit %d, want the test to run:\n%s", IntegrationEnv, code, out)
	}
}
