package analysis_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the layering of DESIGN.md: harness and analysis
// import no OCI, Jupyter or interpreter code.
func TestDependencies(t *testing.T) {
	forbidden := []string{
		"oras.land/", "github.com/opencontainers/", "github.com/google/go-containerregistry",
		"github.com/go-zeromq/", "github.com/traefik/yaegi",
		"github.com/evalcapsule/evalcapsule/capsule", "github.com/evalcapsule/evalcapsule/kernel",
	}
	for _, pkg := range []string{"github.com/evalcapsule/evalcapsule/harness", "github.com/evalcapsule/evalcapsule/analysis"} {
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
		if pkg == "github.com/evalcapsule/evalcapsule/harness" && strings.Contains(string(out), "evalcapsule/analysis\n") {
			t.Errorf("harness imports analysis: dependencies must point harness ← analysis")
		}
	}
}
