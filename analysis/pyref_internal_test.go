package analysis

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// pyLines runs a reference script of testdata under Debian's Python py
// with in on its stdin and returns its n lines of output: one per input
// case, in order.
func pyLines(t *testing.T, py, script string, in *bytes.Buffer, n int) []string {
	t.Helper()
	cmd := exec.Command(py, script)
	cmd.Stdin = in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", py, script, err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%s wrote %d lines for %d cases", script, len(lines), n)
	}
	return lines
}
