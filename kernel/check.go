package kernel

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
)

// checkAssignments refuses what Go refuses and yaegi accepts: a call of
// several values assigned to one variable (x := fmt.Println("p"), which
// yaegi gives the first value), or a call of none used as a value. The
// number of values is known for the functions of packages and the
// functions cells declare; other calls are left to yaegi.
func (e *engine) checkAssignments(src string, items []item) error {
	// The functions the cell declares, which its other items may call.
	funcs := map[string]*ast.FuncDecl{}
	for _, it := range items {
		if it.kind != itemDecl {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), "", "package p;"+src[it.start:it.end], parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	var msgs []string
	for _, it := range items {
		if it.kind != itemStmt && it.kind != itemDecl {
			continue
		}
		text := src[it.start:it.end]
		prefix, suffix := "package p;", ""
		if it.kind == itemStmt {
			prefix, suffix = "package p; func _() {", "\n}"
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "", prefix+text+suffix, 0)
		if err != nil {
			continue
		}
		at := func(p token.Pos) string {
			l, c := lineCol(text, fset.Position(p).Offset-len(prefix))
			if l == 1 {
				c += it.col - 1
			}
			return fmt.Sprintf("%d:%d: ", e.cur*cellLines+it.line+l-1, c)
		}
		check := func(pos token.Pos, vars int, rhs []ast.Expr) {
			if len(rhs) != 1 {
				return
			}
			call, ok := ast.Unparen(rhs[0]).(*ast.CallExpr)
			if !ok {
				return
			}
			n, ok := e.results(call.Fun, funcs)
			if !ok || n == vars {
				return
			}
			callee := text[fset.Position(call.Fun.Pos()).Offset-len(prefix) : fset.Position(call.Fun.End()).Offset-len(prefix)]
			if n == 0 {
				msgs = append(msgs, at(call.Pos())+callee+"() (no value) used as value")
				return
			}
			msgs = append(msgs, fmt.Sprintf("%sassignment mismatch: %s but %s returns %s", at(pos), plural(vars, "variable"), callee, plural(n, "value")))
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if n.Tok == token.DEFINE || n.Tok == token.ASSIGN {
					check(n.Pos(), len(n.Lhs), n.Rhs)
				}
			case *ast.ValueSpec:
				check(n.Pos(), len(n.Names), n.Values)
			}
			return true
		})
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// results is the number of values a call of fun gives, when fun is a
// function of an imported package, of the running cell (funcs) or of an
// earlier one.
func (e *engine) results(fun ast.Expr, funcs map[string]*ast.FuncDecl) (int, bool) {
	switch f := ast.Unparen(fun).(type) {
	case *ast.SelectorExpr:
		pkg, ok := f.X.(*ast.Ident)
		if !ok || pkg.Obj != nil || e.known(pkg.Name) {
			return 0, false
		}
		p, ok := e.pkgNames[pkg.Name]
		if !ok {
			return 0, false
		}
		v, ok := e.exports[p+"/"+e.packageName(p)][f.Sel.Name]
		if !ok || v.Kind() != reflect.Func {
			return 0, false
		}
		return v.Type().NumOut(), true
	case *ast.Ident:
		var decl *ast.FuncDecl
		switch {
		case f.Obj != nil:
			decl, _ = f.Obj.Decl.(*ast.FuncDecl)
		case funcs[f.Name] != nil:
			decl = funcs[f.Name]
		case e.owner[f.Name] != nil && e.owner[f.Name].kind == token.FUNC:
			file, err := parser.ParseFile(token.NewFileSet(), "", "package p;"+e.owner[f.Name].text, parser.SkipObjectResolution)
			if err == nil && len(file.Decls) == 1 {
				decl, _ = file.Decls[0].(*ast.FuncDecl)
			}
		}
		if decl == nil || decl.Recv != nil || decl.Type.TypeParams != nil {
			return 0, false
		}
		return decl.Type.Results.NumFields(), true
	}
	return 0, false
}

// plural is "1 variable", "2 variables".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
