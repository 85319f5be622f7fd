package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePython is what a fake Python interpreter answers: a tiny sh script
// that stands in for a real one in tests of what is recorded about the
// Python that runs lm-eval.
type fakePython struct {
	version   string // --version, e.g. "Python 3.11.9"
	freeze    string // -m pip freeze
	lmEval    string // importlib.metadata.version("lm_eval"); "" when not installed
	lmEvalDir string // the folder lm_eval is imported from
}

// write makes path an executable script answering as p does.
func (p fakePython) write(t *testing.T, path string) string {
	t.Helper()
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	script := "#!/bin/sh\n" +
		"case \"$1\" in\n" +
		"--version) echo " + q(p.version) + " ;;\n" +
		"-m) printf '%s' " + q(p.freeze) + " ;;\n" +
		"-c) case \"$2\" in\n" +
		"  *find_spec*|*__file__*) [ -n " + q(p.lmEvalDir) + " ] || { echo 'lm_eval is not installed' >&2; exit 1; }; echo " + q(p.lmEvalDir) + " ;;\n" +
		"  *metadata*) [ -n " + q(p.lmEval) + " ] || { echo 'lm_eval is not installed' >&2; exit 1; }; echo " + q(p.lmEval) + " ;;\n" +
		"  esac ;;\n" +
		"*) exit 2 ;;\n" +
		"esac\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
