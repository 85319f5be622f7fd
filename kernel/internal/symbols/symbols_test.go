// The //go:generate lines run yaegi's command, built from its own module
// (go 1.21): type aliases are resolved there, and must be here to compare.
//go:debug gotypesalias=0

package symbols_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/traefik/yaegi/extract"

	"github.com/evalcapsule/evalcapsule/kernel/internal/docs"
	"github.com/evalcapsule/evalcapsule/kernel/internal/symbols"
)

const regenerate = "run `go generate ./kernel/...` and commit the result"

// extracted returns the packages the //go:generate lines of symbols.go
// extract.
func extracted(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("symbols.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pkgs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "//go:generate ") || !strings.Contains(line, "/cmd/yaegi@") {
			continue
		}
		fields := strings.Fields(line)
		for i, f := range fields {
			if f == "extract" {
				pkgs = append(pkgs, fields[i+1:]...)
			}
		}
	}
	if len(pkgs) == 0 {
		t.Fatal("symbols.go has no yaegi extract line")
	}
	return pkgs
}

// TestSymbolsCurrent regenerates the symbol tables as the //go:generate
// lines do (yaegi's extract package is what its command runs) and
// compares them with the committed files: an exported symbol added to a
// package cells import, without regenerating, fails here.
func TestSymbolsCurrent(t *testing.T) {
	pkgs := extracted(t)
	rename := strings.NewReplacer("/", "-", ".", "_", "~", "_")
	var wg sync.WaitGroup
	for _, pkg := range pkgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			ext := extract.Extractor{Dest: "symbols"}
			path, err := ext.Extract(pkg, "symbols", &buf)
			if err != nil {
				t.Errorf("extract %s: %v", pkg, err)
				return
			}
			file := rename.Replace(path) + ".go"
			committed, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: %v; %s", pkg, err, regenerate)
				return
			}
			if !bytes.Equal(committed, buf.Bytes()) {
				t.Errorf("%s is out of date with %s:\n%s\n%s", file, pkg, firstDiff(string(committed), buf.String()), regenerate)
			}
		}()
	}
	wg.Wait()
	// A table no //go:generate line writes any more.
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if f == "symbols.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
		found := false
		for _, pkg := range pkgs {
			found = found || rename.Replace(pkg)+".go" == f
		}
		if !found {
			t.Errorf("%s is generated for no package of the //go:generate lines; delete it", f)
		}
	}
}

// TestDocsCurrent regenerates the documentation table and compares it with
// the committed one.
func TestDocsCurrent(t *testing.T) {
	fresh, err := docs.Extract(symbols.Paths())
	if err != nil {
		t.Fatal(err)
	}
	b, err := docs.Encode(fresh)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../docs/docs.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(b, committed) {
		return
	}
	old, err := docs.Decode(committed)
	if err != nil {
		t.Fatalf("docs.json.gz: %v; %s", err, regenerate)
	}
	n := 0
	for path, syms := range fresh {
		for name, e := range syms {
			if o, ok := old[path][name]; !ok || o != e {
				if n < 5 {
					t.Errorf("docs of %s.%s are out of date", path, name)
				}
				n++
			}
		}
	}
	for path, syms := range old {
		for name := range syms {
			if _, ok := fresh[path][name]; !ok {
				if n < 5 {
					t.Errorf("docs of %s.%s are no longer generated", path, name)
				}
				n++
			}
		}
	}
	t.Errorf("%d entries differ; %s", n, regenerate)
}

// TestNoGenericAPI checks that the packages cells import export no generic
// function or type: yaegi's extract skips them without a word, so a cell
// would find them undefined. It reads the source, as extract does.
func TestNoGenericAPI(t *testing.T) {
	for _, pkg := range extracted(t) {
		if !strings.HasPrefix(pkg, "github.com/evalcapsule/") {
			continue
		}
		t.Run(pkg, func(t *testing.T) {
			for _, g := range genericAPI(t, pkg) {
				t.Errorf("%s exports the generic %s, which cells cannot use: export concrete functions and types", pkg, g)
			}
		})
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  committed:   %s\n  regenerated: %s", i+1, x, y)
		}
	}
	return ""
}
