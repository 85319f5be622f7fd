package layout

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the package to the standard library and the OCI
// image-spec types (with go-digest, which they are built on).
func TestDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	const self = "github.com/evalcapsule/evalcapsule/capsule/internal/layout"
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", self).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := []string{"github.com/opencontainers/image-spec/", "github.com/opencontainers/go-digest"}
	var seen bool
	for _, p := range strings.Fields(string(out)) {
		if p == self {
			seen = true
			continue
		}
		if !allowedPath(p, allowed) {
			t.Errorf("package layout depends on %s", p)
		}
	}
	if !seen {
		t.Errorf("go list did not list %s:\n%s", self, out)
	}
}

func allowedPath(p string, allowed []string) bool {
	for _, a := range allowed {
		if p == strings.TrimSuffix(a, "/") || strings.HasPrefix(p, a) {
			return true
		}
	}
	return false
}
