package kernel

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"strings"
)

// explain replaces a compile error of yaegi with "undefined: name" when
// text (an item of the running cell at line:col) uses a name nothing
// defines. yaegi words that mistake after its internals ("constant
// definition loop", "CFG post-order panic"), and it is the most common
// one in a notebook: a package not imported yet, a cell not run yet.
func (e *engine) explain(err error, kind itemKind, line, col int, text string) error {
	if err == nil || e.ran(err) {
		return err
	}
	names := e.undefined(kind, text)
	if len(names) == 0 {
		return err
	}
	var msgs []string
	for _, n := range names {
		l, c := lineCol(text, n.offset)
		if l == 1 {
			c += col - 1
		}
		msg := fmt.Sprintf("%d:%d: undefined: %s", e.cur*cellLines+line+l-1, c, n.name)
		if paths := e.packagePaths(n.name); len(paths) > 0 {
			msg += fmt.Sprintf(` (import "%s" first)`, paths[0])
		}
		msgs = append(msgs, msg)
	}
	return errors.New(strings.Join(msgs, "\n"))
}

type usedName struct {
	name   string
	offset int // in the item's text
}

// undefined returns the names text uses that are not Go's predeclared
// names, packages imported by a cell, or names cells declared: the
// parser's unresolved identifiers, less those.
func (e *engine) undefined(kind itemKind, text string) []usedName {
	prefix, suffix := "package p;", ""
	if kind == itemStmt {
		prefix, suffix = "package p; func _() {", "\n}"
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", prefix+text+suffix, 0)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []usedName
	for _, id := range f.Unresolved {
		n := id.Name
		if seen[n] || n == "_" || n == ctxName || strings.HasPrefix(n, "__") || predeclared[n] != "" {
			continue
		}
		if _, ok := e.pkgNames[n]; ok {
			continue
		}
		if _, ok := e.decls[n]; ok {
			continue
		}
		if e.vars[n] {
			continue
		}
		seen[n] = true
		out = append(out, usedName{n, fset.Position(id.Pos()).Offset - len(prefix)})
	}
	return out
}
