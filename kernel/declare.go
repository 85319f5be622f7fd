package kernel

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"strings"
)

// displayMethods are the methods through which a value shows itself. On a
// type declared in a cell, compiled code cannot see them, so the kernel
// calls them from interpreted code (see result).
var displayMethods = map[string]bool{
	"HTML": true, "Markdown": true, "PNG": true, "SVG": true, "JSON": true,
	"String": true, "Error": true,
}

// declChunk evaluates declarations. A type declared before, in this cell
// or another, is declared anew with its methods: the chunk's own, and the
// latest of the others (yaegi would otherwise keep the first definition).
// It returns the names declared anew (a type whose methods changed is
// declared anew) and the units declared, for redefined.
func (e *engine) declChunk(ctx context.Context, c chunk, text string) (changed map[string]bool, fresh []*unit, err error) {
	src := directive(e.cur, c.line, c.col) + text
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", "package p;"+src, parser.SkipObjectResolution)
	if list, ok := err.(scanner.ErrorList); ok && len(list) > 0 {
		// The parser's words, at the cell's line (src starts with its
		// directive).
		return nil, nil, fmt.Errorf("%d:%d: %s", list[0].Pos.Line, list[0].Pos.Column, list[0].Msg)
	}
	if err != nil {
		_, err = e.eval(ctx, c.line, c.col, text)
		return nil, nil, err
	}
	const shift = len("package p;")
	piece := func(from, to token.Pos) string {
		p := fset.Position(from)
		return rawDirective(p.Line, p.Column) + src[fset.Position(from).Offset-shift:fset.Position(to).Offset-shift]
	}
	newUnit := func(kind token.Token, from, to token.Pos) *unit {
		p := fset.Position(from)
		return &unit{kind: kind, cell: p.Line / cellLines, line: p.Line % cellLines, col: p.Column,
			text: src[p.Offset-shift : fset.Position(to).Offset-shift]}
	}
	newTypes := map[string]string{}
	newMethods := map[string]map[string]string{}
	names := map[string]string{} // declared name → its declaration
	var units []*unit            // funcs, vars and consts, then types
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			whole := piece(d.Pos(), d.End())
			var u *unit
			if d.Tok == token.VAR || d.Tok == token.CONST {
				u = newUnit(d.Tok, d.Pos(), d.End())
				units = append(units, u)
			}
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					// "type " before the spec: it may sit in a group.
					p := fset.Position(s.Pos())
					newTypes[s.Name.Name] = rawDirective(p.Line, p.Column-len("type ")) + "type " +
						src[p.Offset-shift:fset.Position(s.End()).Offset-shift]
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = whole
						if n.Name != "_" {
							u.names = append(u.names, n.Name)
						}
					}
				}
			}
		case *ast.FuncDecl:
			if d.Recv == nil {
				names[d.Name.Name] = piece(d.Pos(), d.End())
				if d.Name.Name != "init" && d.Name.Name != "_" {
					u := newUnit(token.FUNC, d.Pos(), d.End())
					u.names = []string{d.Name.Name}
					units = append(units, u)
				}
				continue
			}
			t := receiverType(d.Recv)
			if newMethods[t] == nil {
				newMethods[t] = map[string]string{}
			}
			newMethods[t][d.Name.Name] = piece(d.Pos(), d.End())
			if displayMethods[d.Name.Name] {
				e.shows[d.Name.Name] = true
			}
		}
	}

	// Types to declare anew, and what to replay with the chunk.
	var replay strings.Builder
	var reset []string
	for t := range e.types {
		_, redeclared := newTypes[t]
		if !redeclared && newMethods[t] == nil {
			continue
		}
		reset = append(reset, t)
		if !redeclared {
			replay.WriteString(e.types[t])
		}
		for m, s := range e.methods[t] {
			if _, ok := newMethods[t][m]; !ok {
				replay.WriteString(s)
			}
		}
	}
	for _, t := range reset {
		forgetGlobal(e.in, t)
	}
	for n := range names {
		forgetInstances(e.in, n)
	}
	for t := range newTypes {
		forgetInstances(e.in, t)
	}
	_, err = e.evalRaw(ctx, replay.String()+src)
	if e.typingFailure(err) && len(reset) == 0 && len(e.undefined(itemDecl, text)) == 0 {
		if handled, err2 := e.stepwiseVars(ctx, c, text); handled {
			err = err2
		}
	}
	if err != nil {
		// Put the types back as they were.
		for _, t := range reset {
			forgetGlobal(e.in, t)
			old := e.types[t]
			for _, s := range e.methods[t] {
				old += s
			}
			e.evalRaw(ctx, old)
		}
		return nil, nil, err
	}
	changed = map[string]bool{}
	for n := range names {
		if e.known(n) {
			changed[n] = true
		}
	}
	for t := range newTypes {
		if e.known(t) {
			changed[t] = true
		}
	}
	for _, t := range reset {
		changed[t] = true
	}
	// Types first: what else the chunk declares may use them.
	var types []*unit
	for t := range newTypes {
		types = append(types, &unit{kind: token.TYPE, names: []string{t}})
	}
	for _, t := range reset {
		if _, ok := newTypes[t]; !ok {
			types = append(types, &unit{kind: token.TYPE, names: []string{t}})
		}
	}
	units = append(types, units...)
	for n := range changed {
		delete(e.vars, n) // a declaration's now, if it was a statement's
	}
	for t, s := range newTypes {
		e.types[t] = s
		e.decls[t] = s
		if _, ok := newMethods[t]; !ok && e.methods[t] == nil {
			e.methods[t] = map[string]string{}
		}
	}
	for t, ms := range newMethods {
		if e.methods[t] == nil {
			e.methods[t] = map[string]string{}
		}
		for m, s := range ms {
			e.methods[t][m] = s
			e.decls[t+"."+m] = s
		}
	}
	for n, s := range names {
		e.decls[n] = s
	}
	e.declare(units...)
	return changed, units, nil
}

// evalRaw evaluates declarations that carry their own line directives.
func (e *engine) evalRaw(ctx context.Context, src string) (any, error) {
	e.mu.Lock()
	e.frames = nil
	e.mu.Unlock()
	v, err := func() (v any, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = internalError{r}
			}
		}()
		return e.evalIn(ctx, src)
	}()
	return v, err
}

// receiverType is the name of a method's receiver type: T for t T, *T or
// T[K].
func receiverType(recv *ast.FieldList) string {
	if recv == nil || len(recv.List) == 0 {
		return ""
	}
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
