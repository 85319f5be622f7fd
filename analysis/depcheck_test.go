package analysis_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the layering of DESIGN.md: harness and analysis
// import no OCI, Jupyter or interpreter code, harness (simulate included)
// does not import analysis, and internal/pynum, below both, imports only the
// standard library.
func TestDependencies(t *testing.T) {
	forbidden := []string{
		"oras.land/", "github.com/opencontainers/", "github.com/google/go-containerregistry",
		"github.com/go-zeromq/", "github.com/traefik/yaegi",
		"github.com/evalcapsule/evalcapsule/capsule", "github.com/evalcapsule/evalcapsule/kernel",
	}
	for _, pkg := range []string{"github.com/evalcapsule/evalcapsule/harness", "github.com/evalcapsule/evalcapsule/harness/simulate",
		"github.com/evalcapsule/evalcapsule/analysis"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
		if strings.Contains(pkg, "/harness") && strings.Contains(string(out), "evalcapsule/analysis\n") {
			t.Errorf("%s imports analysis: dependencies must point harness ← analysis", pkg)
		}
	}
	const pynum = "github.com/evalcapsule/evalcapsule/internal/pynum"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pynum).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pynum, err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != pynum {
			t.Errorf("%s depends on %s: it may import only the standard library", pynum, dep)
		}
	}
}
