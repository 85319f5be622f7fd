package main

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/gate"
)

var marshaler = reflect.TypeFor[json.Marshaler]()

// snake is the one style of every key the commands' --json prints.
var snake = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestJSONStyle: every field the commands print with --json has a
// snake_case key of its own (or is left out with "-"), through every
// nested struct of the project's packages. Types of other modules (OCI
// descriptors) keep their formats' names; a type with a MarshalJSON of
// its own writes what it chooses, and is not walked (its tests check it).
func TestJSONStyle(t *testing.T) {
	printed := []any{
		analysis.Attribution{}, analysis.Comparisons{}, analysis.FailureReport{},
		analysis.RescoreReport{}, analysis.CodeExecution{}, analysis.CounterfactualReport{}, analysis.Uncertainties{},
		analysis.RescoreCoverage{},
		capsule.Differences{}, capsule.Inspection{}, capsule.PackResult{},
		capsule.ReplayReport{}, capsule.Verification{},
		demoResult{}, showReport{}, dryRunPlan{}, &gate.Result{}, suiteCheckpoint{}, historyJSON{},
	}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, where string)
	walk = func(typ reflect.Type, where string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		if p := typ.PkgPath(); p != "main" && !strings.HasPrefix(p, "github.com/evalcapsule/evalcapsule") {
			return
		}
		seen[typ] = true
		if typ.Implements(marshaler) || reflect.PointerTo(typ).Implements(marshaler) {
			return
		}
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				walk(f.Type, where)
				continue
			}
			if !snake.MatchString(name) {
				t.Errorf("%s.%s (in %s): JSON key %q, want a snake_case name in its json tag", typ, f.Name, where, name)
			}
			walk(f.Type, where+"."+name)
		}
	}
	for _, v := range printed {
		walk(reflect.TypeOf(v), reflect.TypeOf(v).String())
	}
}
