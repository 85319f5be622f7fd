package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func newSandbox(t *testing.T, opts Options) *Sandbox {
	t.Helper()
	testenv.Command(t, "bwrap")
	testenv.Python(t)
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVerdicts(t *testing.T) {
	s := newSandbox(t, Options{Timeout: time.Second})
	if !strings.HasPrefix(s.PythonVersion, "Python 3.") {
		t.Errorf("PythonVersion = %q", s.PythonVersion)
	}
	for _, c := range []struct {
		name, program string
		want          Outcome
		typ           string
	}{
		{"pass", "def f(x):\n    return x + 1\nassert f(1) == 2\nprint('noise')\n", Passed, ""},
		{"assertion", "assert 1 == 2\n", Failed, "AssertionError"},
		{"syntax", "def f(:\n", Failed, "SyntaxError"},
		{"exception", "1/0\n", Failed, "ZeroDivisionError"},
		{"infinite loop", "while True:\n    pass\n", TimedOut, ""},
		{"os.system disabled as in code_eval", "import os\nos.system('true')\n", Failed, "TypeError"},
		{"sleep past the timer in C", "import time\ntime.sleep(30)\n", TimedOut, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := s.Run(context.Background(), c.program)
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != c.want || r.Type != c.typ {
				t.Errorf("got %+v, want %s %s", r, c.want, c.typ)
			}
		})
	}
}

// TestHostile runs the completions a stranger's capsule could hold and
// checks each is contained: it does not pass, and the host is unchanged.
func TestHostile(t *testing.T) {
	s := newSandbox(t, Options{Timeout: 2 * time.Second})
	home := t.TempDir()
	secret := filepath.Join(home, "secret.txt")
	if err := os.WriteFile(secret, []byte("reviewer's key"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	outside := filepath.Join(t.TempDir(), "planted")
	for _, c := range []struct{ name, program string }{
		{"fork bomb", "import posix\nwhile True:\n    try:\n        posix.fork()\n    except OSError:\n        pass\n"},
		{"infinite loop ignoring the timer", "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass\n"},
		{"write outside its folder", "open(" + quote(outside) + ", 'w').write('x')\nopen('/usr/planted', 'w').write('x')\n"},
		{"open a socket", "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=1)\n"},
		{"read the reviewer's home", "print(open(" + quote(secret) + ").read())\nassert False\n"},
		{"environment holds nothing of the host", "import os\nassert 'EVAL' not in str(os.environ)\nassert os.environ['HOME'] == '/tmp'\nassert False, 'reached'\n"},
		{"10 GB allocation", "b = bytearray(10 * 1024**3)\n"},
		{"fill the disk", "open('big', 'wb').write(b'x' * (1 << 30))\n"},
		{"kill the parent", "import posix\nposix.kill(1, 9)\nposix.kill(-1, 9)\nassert False\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			r, err := s.Run(context.Background(), c.program)
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome == Passed {
				t.Errorf("passed: %+v", r)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
			t.Logf("%s: %s %s", r.Outcome, r.Type, r.Detail)
		})
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s was written outside the sandbox", outside)
	}
	if _, err := os.Stat("/usr/planted"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("/usr/planted was written")
	}
	if b, _ := os.ReadFile(secret); string(b) != "reviewer's key" {
		t.Errorf("the planted file changed: %q", b)
	}
	// Nothing the programs started survives them.
	if left := Leftovers(""); len(left) > 0 {
		t.Errorf("processes %v of the sandboxes are still running", left)
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

func TestMissingSandbox(t *testing.T) {
	_, err := New(context.Background(), Options{Bwrap: "/nonexistent/bwrap"})
	if !errors.Is(err, ErrNoSandbox) {
		t.Fatalf("err = %v, want ErrNoSandbox", err)
	}
}
