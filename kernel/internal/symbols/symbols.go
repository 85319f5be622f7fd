// Package symbols holds the tables through which interpreted cells reach
// compiled packages: yaegi's symbol tables of the project's packages, of
// gonum plot and of the display package, written by yaegi's extract
// command. Regenerate them (and the documentation table, from the same
// package list) after changing an exported API:
//
//	go generate ./kernel/...
//
// The kernel's tests fail when they are out of date.
package symbols

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/traefik/yaegi/stdlib"
	"github.com/traefik/yaegi/stdlib/unrestricted"
)

//go:generate go run github.com/traefik/yaegi/cmd/yaegi@v0.16.1 extract github.com/evalcapsule/evalcapsule/harness github.com/evalcapsule/evalcapsule/harness/simulate github.com/evalcapsule/evalcapsule/analysis github.com/evalcapsule/evalcapsule/study github.com/evalcapsule/evalcapsule/capsule github.com/evalcapsule/evalcapsule/kernel/display github.com/evalcapsule/evalcapsule/examples
//go:generate go run github.com/traefik/yaegi/cmd/yaegi@v0.16.1 extract gonum.org/v1/plot gonum.org/v1/plot/plotter gonum.org/v1/plot/plotutil gonum.org/v1/plot/vg gonum.org/v1/plot/vg/draw
//go:generate go run ../gen docs -o ../docs/docs.json.gz

// Symbols maps "importpath/name" to the package's exported symbols, the
// form interp.Use takes. The generated files fill it.
var Symbols = map[string]map[string]reflect.Value{}

// Exec is os/exec, which yaegi leaves out of its standard library with
// the other calls that reach outside the interpreter. Cells may run
// commands (nvidia-smi, lm_eval --help); the unrestricted os.Exit and
// log.Fatal, which would end the kernel, stay out.
var Exec = map[string]map[string]reflect.Value{"os/exec/exec": unrestricted.Symbols["os/exec/exec"]}

// Paths returns the import paths of every package a cell can import: those
// of Symbols and of yaegi's standard library, sorted.
func Paths() []string {
	seen := map[string]bool{}
	for _, m := range []map[string]map[string]reflect.Value{Symbols, stdlib.Symbols} {
		for key := range m {
			i := strings.LastIndex(key, "/")
			if i < 0 || strings.HasPrefix(key, "github.com/traefik/yaegi") {
				continue // yaegi's own entries: MapTypes, the table itself
			}
			seen[key[:i]] = true
		}
	}
	seen["os/exec"] = true // from yaegi's unrestricted tables; see Exec
	seen["builtin"] = true // not a package, but where len and append are documented
	return slices.Sorted(maps.Keys(seen))
}
