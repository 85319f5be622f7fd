package kernel

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"slices"
	"strings"
)

// Redefinition. yaegi compiles a reference to a top-level name into a
// reference to the definition it has when the referring code is
// compiled: a function declared again, or a variable, is a new symbol
// (a new slot, for a variable), and what was compiled before keeps
// calling, reading and assigning the old one. The kernel therefore keeps
// every top-level declaration a cell made as a unit of source, and when a
// cell declares a name again it evaluates again, from their source, the
// units that refer to that name, and those that refer to them, in the
// order they were evaluated, so that all the code there is refers to one
// definition of each name: the latest.

// unit is a top-level declaration the kernel can evaluate again: a
// function, a var or const declaration (a group as a whole), or a type
// with all its methods.
type unit struct {
	kind  token.Token // token.FUNC, token.VAR, token.CONST or token.TYPE
	names []string    // what it declares; a type's unit declares the type
	// cell, line, col and text are where the declaration is and its
	// source (after the kernel's rewriting), for all but types, whose
	// source is in engine.types and engine.methods.
	cell, line, col int
	text            string
	seq             int // when it was last evaluated
}

// owns reports whether the latest declaration of name is u's.
func (e *engine) owns(u *unit, name string) bool { return e.owner[name] == u }

// source is what evaluates u again: its declaration with its line
// directive (a type's with its methods), the names declared anew since
// made blank, so that evaluating it does not undo their declaration.
func (e *engine) source(u *unit) string {
	if u.kind == token.TYPE {
		t := u.names[0]
		var b strings.Builder
		b.WriteString(e.types[t])
		for _, m := range slices.Sorted(maps.Keys(e.methods[t])) {
			b.WriteString(e.methods[t][m])
		}
		return b.String()
	}
	return directive(u.cell, u.line, u.col) + e.blanked(u)
}

// blanked is u's text with the names it no longer owns replaced by _.
func (e *engine) blanked(u *unit) string {
	if u.kind != token.VAR && u.kind != token.CONST {
		return u.text
	}
	superseded := false
	for _, n := range u.names {
		superseded = superseded || !e.owns(u, n)
	}
	if !superseded {
		return u.text
	}
	const prefix = "package p;"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", prefix+u.text, parser.SkipObjectResolution)
	if err != nil {
		return u.text
	}
	var edits []edit
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.ValueSpec); ok {
			for _, id := range s.Names {
				if id.Name != "_" && !e.owns(u, id.Name) {
					edits = append(edits, edit{off: fset.Position(id.Pos()).Offset - len(prefix), del: len(id.Name), ins: "_"})
				}
			}
		}
		return true
	})
	out := u.text
	for i := len(edits) - 1; i >= 0; i-- {
		d := edits[i]
		out = out[:d.off] + d.ins + out[d.off+d.del:]
	}
	return out
}

// refs are the names u's source uses that it does not declare itself.
func (e *engine) refs(u *unit) map[string]bool {
	out := map[string]bool{}
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p;"+e.source(u), 0)
	if err != nil {
		return out
	}
	for _, id := range f.Unresolved {
		out[id.Name] = true
	}
	return out
}

// declare records units just evaluated, in their order: the names they
// declare are theirs now, and the units that declared those names
// before keep the others (or go, when none is left).
func (e *engine) declare(us ...*unit) {
	for _, u := range us {
		for _, n := range u.names {
			e.release(n)
			e.owner[n] = u
		}
		e.seq++
		u.seq = e.seq
		e.units = append(e.units, u)
	}
}

// release takes name from the unit that declared it: a cell declared it
// anew.
func (e *engine) release(name string) {
	old := e.owner[name]
	if old == nil {
		return
	}
	delete(e.owner, name)
	for _, n := range old.names {
		if e.owns(old, n) {
			return
		}
	}
	e.units = slices.DeleteFunc(e.units, func(u *unit) bool { return u == old })
}

// known reports whether a cell declared name before: declaring it again
// is a redefinition.
func (e *engine) known(name string) bool {
	_, decl := e.decls[name]
	_, typ := e.types[name]
	return decl || typ || e.vars[name] || e.owner[name] != nil
}

// dependents are the units that refer to a name in changed, or to a name
// of another dependent, in the order they were evaluated. fresh units,
// evaluated with the change, depend only on the others.
func (e *engine) dependents(changed map[string]bool, fresh []*unit) []*unit {
	refs := map[*unit]map[string]bool{}
	in := map[*unit]bool{}
	redone := map[string]bool{}
	var out []*unit
	for grew := true; grew; {
		grew = false
		for _, u := range e.units {
			if in[u] {
				continue
			}
			if refs[u] == nil {
				refs[u] = e.refs(u)
			}
			isFresh := slices.Contains(fresh, u)
			hit := false
			for n := range refs[u] {
				if redone[n] || !isFresh && changed[n] {
					hit = true
					break
				}
			}
			if !hit {
				continue
			}
			in[u], grew = true, true
			out = append(out, u)
			for _, n := range u.names {
				if e.owns(u, n) {
					redone[n] = true
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b *unit) int { return a.seq - b.seq })
	return out
}

// redefined evaluates again the dependents of the names in changed,
// which the running cell declared anew (fresh are the units it
// declared). A dependent that no longer compiles is removed, and named
// in the error.
func (e *engine) redefined(ctx context.Context, changed map[string]bool, fresh []*unit) error {
	// ctx is the kernel's: a cell's own ctx holds in that cell only (see
	// setContext), and the functions that read ctx read the running
	// cell's context, so declaring it is no redefinition.
	delete(changed, ctxName)
	if len(changed) == 0 {
		return nil
	}
	deps := e.dependents(changed, fresh)
	if len(deps) == 0 {
		return nil
	}
	var b strings.Builder
	for _, u := range deps {
		if u.kind == token.TYPE {
			forgetGlobal(e.in, u.names[0])
		}
		for _, n := range u.names {
			forgetInstances(e.in, n)
		}
		b.WriteString(e.source(u))
	}
	_, err := e.evalRaw(ctx, b.String())
	if err == nil || e.ran(err) {
		// Ran: an initialiser panicked, or the cell was interrupted;
		// evaluating them one by one would run the others again.
		e.touch(deps)
		return err
	}
	// One at a time, to learn which fail.
	var failed []string
	for _, u := range deps {
		if err := e.evalUnit(ctx, u); err != nil {
			if e.ran(err) {
				return err
			}
			msg := strings.TrimSpace(err.Error())
			first, _, _ := strings.Cut(msg, "\n")
			if m := positionRE.FindString(first); m != "" {
				first = first[len(m):]
			}
			failed = append(failed, fmt.Sprintf("%s no longer compiles, and is removed until declared again: %s\n%s", e.describeUnit(u), clarify(first), msg))
			e.remove(u)
			continue
		}
		e.touch([]*unit{u})
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "\n"))
	}
	return nil
}

// evalUnit evaluates one unit again: a var declaration that yaegi cannot
// type goes stepwise, as when it was first declared.
func (e *engine) evalUnit(ctx context.Context, u *unit) error {
	if u.kind == token.TYPE {
		forgetGlobal(e.in, u.names[0])
	}
	_, err := e.evalRaw(ctx, e.source(u))
	if u.kind == token.VAR && e.typingFailure(err) {
		cur := e.cur
		e.cur = u.cell
		if handled, err2 := e.stepwiseVars(ctx, chunk{kind: itemDecl, line: u.line, col: u.col}, e.blanked(u)); handled {
			err = err2
		}
		e.cur = cur
	}
	return err
}

// touch marks units evaluated now.
func (e *engine) touch(us []*unit) {
	for _, u := range us {
		e.seq++
		u.seq = e.seq
	}
}

// remove forgets a unit that no longer compiles, and the names it
// declared.
func (e *engine) remove(u *unit) {
	for _, n := range u.names {
		if !e.owns(u, n) {
			continue
		}
		forgetGlobal(e.in, n)
		delete(e.owner, n)
		delete(e.decls, n)
		delete(e.vars, n)
		if u.kind == token.TYPE {
			for m := range e.methods[n] {
				delete(e.decls, n+"."+m)
			}
			delete(e.types, n)
			delete(e.methods, n)
		}
	}
	e.units = slices.DeleteFunc(e.units, func(v *unit) bool { return v == u })
}

// describeUnit names a unit and where it was declared: "func g (In[2],
// line 1)".
func (e *engine) describeUnit(u *unit) string {
	var names []string
	for _, n := range u.names {
		if e.owns(u, n) && !strings.HasPrefix(n, "__") {
			names = append(names, strings.ReplaceAll(n, mainName, "main"))
		}
	}
	s := u.kind.String() + " " + strings.Join(names, ", ")
	cell, line := u.cell, u.line
	if u.kind == token.TYPE {
		if src, ok := e.types[u.names[0]]; ok {
			cell, line = directiveCell(src)
		}
	}
	if c, ok := e.cells[cell]; ok && line > 0 {
		s += fmt.Sprintf(" (%s, line %d)", c.name, line)
	}
	return s
}

// directiveCell decodes the cell and line of the first line directive in
// src.
func directiveCell(src string) (cell, line int) {
	const mark = "//line :"
	i := strings.Index(src, mark)
	if i < 0 {
		return 0, 0
	}
	var enc, col int
	if _, err := fmt.Sscanf(src[i+len(mark):], "%d:%d", &enc, &col); err != nil {
		return 0, 0
	}
	return enc / cellLines, enc % cellLines
}

// definedNames are the variables the top-level statements of text
// define (x := …, var x …), with their offsets in text.
func definedNames(text string) []usedName {
	const prefix = "package p; func _() {"
	f, err := parser.ParseFile(token.NewFileSet(), "", prefix+text+"\n}", parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var out []usedName
	add := func(id *ast.Ident) {
		if id.Name != "_" {
			out = append(out, usedName{id.Name, int(id.Pos()) - 1 - len(prefix)})
		}
	}
	for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, l := range st.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := st.Decl.(*ast.GenDecl); ok {
				for _, s := range g.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, id := range s.Names {
							add(id)
						}
					case *ast.TypeSpec:
						add(s.Name)
					}
				}
			}
		}
	}
	return out
}

// declaredNames are the names the top-level declarations of text
// declare (methods excepted), with their offsets in text.
func declaredNames(text string) []usedName {
	const prefix = "package p;"
	f, err := parser.ParseFile(token.NewFileSet(), "", prefix+text, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var out []usedName
	add := func(id *ast.Ident) {
		if id.Name != "_" {
			out = append(out, usedName{id.Name, int(id.Pos()) - 1 - len(prefix)})
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				add(d.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, id := range s.Names {
						add(id)
					}
				case *ast.TypeSpec:
					add(s.Name)
				}
			}
		}
	}
	return out
}

// shadowing refuses a top-level declaration of a name an import of a
// cell gave a package: Go refuses it in a file, and in the kernel it
// would hide the package from every later cell.
func (e *engine) shadowing(names []usedName, line, col int, text string) error {
	var msgs []string
	for _, n := range names {
		p, ok := e.pkgNames[n.name]
		if !ok {
			continue
		}
		l, c := lineCol(text, n.offset)
		if l == 1 {
			c += col - 1
		}
		msgs = append(msgs, fmt.Sprintf("%d:%d: %s already declared through import of package %q: a top-level %s would hide the package from every later cell; choose another name",
			e.cur*cellLines+line+l-1, c, n.name, p, n.name))
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "\n"))
}
