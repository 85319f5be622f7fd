package layering

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/evalcapsule/evalcapsule"

// layers places every package of the module (a path and everything under
// it), from the bottom up: a package may import packages of its own layer
// or of layers below, never above.
var layers = [][]string{
	{"internal/pynum", "internal/buildinfo", "internal/quote", "internal/htmltest", "internal/testenv", "internal/fixtures", "internal/layering", "examples", "notebooks", "images"},
	{"harness"},
	{"analysis"},
	{"study", "gate"},
	{"capsule", "history"},
	{"kernel"},
	{"cmd"},
}

// Code that harness, analysis and study never depend on, not even through
// another package: OCI and registries, Jupyter's wire protocol, the
// interpreter.
var foreign = []string{
	"oras.land/", "github.com/opencontainers/", "github.com/google/go-containerregistry",
	"github.com/go-zeromq/", "github.com/traefik/yaegi",
}

// only lists the packages that may depend on nothing but the standard
// library and the module prefixes given.
var only = map[string][]string{
	"internal/pynum":          nil,
	"internal/buildinfo":      nil,
	"internal/fixtures":       {"github.com/evalcapsule/evalcapsule/internal/testenv"},
	"capsule/internal/layout": {"github.com/opencontainers/image-spec/", "github.com/opencontainers/go-digest"},
}

// pkg is what the checks read of a package: its path, its direct imports,
// and every package it depends on (non-standard ones).
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Standard   bool
}

// rank is the layer of a package of the module, -1 outside every layer.
func rank(path string) int {
	rel, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return -1
	}
	for i, layer := range layers {
		for _, p := range layer {
			if rel == p || strings.HasPrefix(rel, p+"/") {
				return i
			}
		}
	}
	return -1
}

// violations lists every rule the packages break.
func violations(pkgs []pkg, std func(string) bool) []string {
	var out []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		r := rank(p.ImportPath)
		if r < 0 {
			out = append(out, fmt.Sprintf("%s is in no layer: place it in layering_test.go", rel))
			continue
		}
		for _, imp := range p.Imports {
			if ri := rank(imp); strings.HasPrefix(imp, module+"/") && ri > r {
				out = append(out, fmt.Sprintf("%s imports %s, a layer above it", rel, strings.TrimPrefix(imp, module+"/")))
			}
		}
		if r <= rank(module+"/study") {
			for _, d := range p.Deps {
				for _, f := range foreign {
					if strings.HasPrefix(d, f) {
						out = append(out, fmt.Sprintf("%s depends on %s: no OCI, Jupyter or interpreter code below capsule", rel, d))
					}
				}
			}
		}
		if allowed, ok := only[rel]; ok {
			for _, d := range p.Deps {
				if std(d) || d == p.ImportPath || slices.ContainsFunc(allowed, func(a string) bool { return strings.HasPrefix(d, a) }) {
					continue
				}
				out = append(out, fmt.Sprintf("%s depends on %s: it may import only the standard library%s", rel, d, also(allowed)))
			}
		}
	}
	return out
}

func also(allowed []string) string {
	if len(allowed) == 0 {
		return ""
	}
	return " and " + strings.Join(allowed, ", ")
}

// TestLayers checks every package of the module against the layers.
func TestLayers(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps,Standard", "-deps", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	standard := map[string]bool{}
	d := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := d.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Standard {
			standard[p.ImportPath] = true
			continue
		}
		if strings.HasPrefix(p.ImportPath, module+"/") || p.ImportPath == module {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) < 15 {
		t.Fatalf("go list found %d packages of the module: %v", len(pkgs), pkgs)
	}
	for _, v := range violations(pkgs, func(p string) bool { return standard[p] }) {
		t.Error(v)
	}
}

// TestLayersCatchUpwardImports shows the checks failing: harness importing
// study, analysis depending on oras-go through another package, pynum
// importing a module, a package in no layer.
func TestLayersCatchUpwardImports(t *testing.T) {
	std := func(p string) bool { return !strings.Contains(p, ".") }
	pkgs := []pkg{
		{ImportPath: module + "/harness", Imports: []string{"fmt", module + "/study"}, Deps: []string{"fmt", module + "/study"}},
		{ImportPath: module + "/analysis", Imports: []string{module + "/harness"}, Deps: []string{module + "/harness", "oras.land/oras-go/v2"}},
		{ImportPath: module + "/internal/pynum", Imports: []string{"math", "golang.org/x/exp/constraints"}, Deps: []string{"math", "golang.org/x/exp/constraints"}},
		{ImportPath: module + "/capsule/internal/layout", Deps: []string{"os", "github.com/opencontainers/go-digest", "github.com/klauspost/compress/zstd"}},
		{ImportPath: module + "/newthing"},
		{ImportPath: module + "/capsule", Imports: []string{module + "/study", "oras.land/oras-go/v2"}, Deps: []string{"oras.land/oras-go/v2"}},
	}
	got := violations(pkgs, std)
	want := []string{
		"harness imports study, a layer above it",
		"analysis depends on oras.land/oras-go/v2: no OCI, Jupyter or interpreter code below capsule",
		"internal/pynum depends on golang.org/x/exp/constraints: it may import only the standard library",
		"capsule/internal/layout depends on github.com/klauspost/compress/zstd: it may import only the standard library and github.com/opencontainers/image-spec/, github.com/opencontainers/go-digest",
		"newthing is in no layer: place it in layering_test.go",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
