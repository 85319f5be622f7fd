package kernel

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"

	"github.com/traefik/yaegi/interp"
)

// Top-level declarations with an initial value (x := a.Claims[0],
// v, ok := m[k], var i any = a) go through yaegi's global type analysis,
// which cannot type some expressions on compiled types (an index of a
// compiled slice, the comma-ok forms) and fails with "constant definition
// loop", "nil type" or a nil dereference, before running anything. The
// kernel then evaluates the statements one at a time, and declares each
// such variable from its value: the value is assigned to a variable of
// type any (an assignment, which that analysis does not see), and the
// variable is declared with the value's type.

// maxValues is how many values one such declaration may have: the
// prelude's __kv0…__kv7.
const maxValues = 8

// typingFailure reports whether err is yaegi's global type analysis
// giving up, before anything ran, as opposed to an error in the cell.
func (e *engine) typingFailure(err error) bool {
	if err == nil || e.ran(err) {
		return false
	}
	var p interp.Panic
	if errors.As(err, &p) {
		err = fmt.Errorf("%v", p.Value)
	}
	msg := err.Error()
	for _, s := range []string{"definition loop", "nil type", "nil reflect type", "invalid memory address or nil pointer dereference", "SetBool on interface Value"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// stepwise evaluates the statements of a chunk one by one, declaring the
// variables yaegi cannot type from their values.
func (e *engine) stepwise(ctx context.Context, c chunk, text string) error {
	const prefix = "package p; func _() {"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", prefix+text+"\n}", parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	pos := func(p token.Pos) (off, line, col int) {
		off = fset.Position(p).Offset - len(prefix)
		l, cl := lineCol(text, off)
		if l == 1 {
			cl += c.col - 1
		}
		return off, c.line + l - 1, cl
	}
	for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
		start, line, col := pos(st.Pos())
		end, _, _ := pos(st.End())
		src := text[start:end]
		_, err := e.eval(ctx, line, col, src)
		if err == nil {
			e.declaredVars(src)
			continue
		}
		as, ok := st.(*ast.AssignStmt)
		if !ok || as.Tok != token.DEFINE || !e.typingFailure(err) {
			return err
		}
		var names []string
		for _, l := range as.Lhs {
			id, ok := l.(*ast.Ident)
			if !ok {
				return err
			}
			names = append(names, id.Name)
		}
		rs, rline, rcol := pos(as.Rhs[0].Pos())
		re, _, _ := pos(as.Rhs[len(as.Rhs)-1].End())
		commaOK := len(names) == 2 && len(as.Rhs) == 1 && isCommaOK(as.Rhs[0])
		if err := e.defineDynamic(ctx, names, text[rs:re], commaOK, rline, rcol); err != nil {
			return err
		}
	}
	return nil
}

// stepwiseVars evaluates var declarations one spec at a time, declaring
// those yaegi cannot type from their values. It handles chunks of var
// declarations only.
func (e *engine) stepwiseVars(ctx context.Context, c chunk, text string) (bool, error) {
	const prefix = "package p;"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", prefix+text, parser.SkipObjectResolution)
	if err != nil {
		return false, err
	}
	var specs []*ast.ValueSpec
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			return false, nil
		}
		for _, s := range g.Specs {
			specs = append(specs, s.(*ast.ValueSpec))
		}
	}
	pos := func(p token.Pos) (off, line, col int) {
		off = fset.Position(p).Offset - len(prefix)
		l, cl := lineCol(text, off)
		if l == 1 {
			cl += c.col - 1
		}
		return off, c.line + l - 1, cl
	}
	for _, s := range specs {
		start, line, col := pos(s.Pos())
		end, _, _ := pos(s.End())
		_, err := e.eval(ctx, line, col, "var "+text[start:end])
		if err == nil || !e.typingFailure(err) || len(s.Values) == 0 {
			if err != nil {
				return true, err
			}
			continue
		}
		var names []string
		for _, n := range s.Names {
			names = append(names, n.Name)
		}
		vs, vline, vcol := pos(s.Values[0].Pos())
		ve, _, _ := pos(s.Values[len(s.Values)-1].End())
		if s.Type != nil {
			ts, _, _ := pos(s.Type.Pos())
			te, _, _ := pos(s.Type.End())
			if _, err := e.eval(ctx, line, col, "var "+strings.Join(names, ", ")+" "+text[ts:te]); err != nil {
				return true, err
			}
			if _, err := e.evalAs(ctx, strings.Join(names, ", ")+" =", vline, vcol, text[vs:ve], ""); err != nil {
				return true, err
			}
			continue
		}
		commaOK := len(names) == 2 && len(s.Values) == 1 && isCommaOK(s.Values[0])
		if err := e.defineDynamic(ctx, names, text[vs:ve], commaOK, vline, vcol); err != nil {
			return true, err
		}
	}
	return true, nil
}

// isCommaOK reports whether x gives a value and a bool with two variables
// on the left: an index of a map, a type assertion, a receive.
func isCommaOK(x ast.Expr) bool {
	switch x := ast.Unparen(x).(type) {
	case *ast.IndexExpr, *ast.TypeAssertExpr:
		return true
	case *ast.UnaryExpr:
		return x.Op == token.ARROW
	}
	return false
}

// defineDynamic declares names with the values of rhs (at line:col of the
// running cell), evaluated once.
func (e *engine) defineDynamic(ctx context.Context, names []string, rhs string, commaOK bool, line, col int) error {
	if len(names) > maxValues {
		return fmt.Errorf("%d:%d: the interpreter cannot declare %d variables at once here; declare them with var first", e.cur*cellLines+line, col, len(names))
	}
	tmp := make([]string, len(names))
	for i := range names {
		tmp[i] = fmt.Sprintf("__kv%d", i)
	}
	if commaOK {
		tmp[1] = "__kok" // yaegi cannot set the bool of a comma-ok form into an any
	}
	if _, err := e.evalAs(ctx, strings.Join(tmp, ", ")+" =", line, col, rhs, ""); err != nil {
		return err
	}
	for i, name := range names {
		if name == "_" {
			continue
		}
		v, err := e.eval(ctx, line, col, tmp[i])
		if err != nil {
			return err
		}
		typ, assign := "interface{}", tmp[i]
		if v = unwrapValue(v); v.IsValid() && !(v.Kind() == reflect.Interface && v.IsNil()) {
			if t := e.sourceType(v.Type()); t != "" {
				typ = t
				if tmp[i] != "__kok" {
					assign += ".(" + t + ")"
				}
			}
		}
		if _, err := e.eval(ctx, line, col, "var "+name+" "+typ); err != nil {
			return err
		}
		if _, err := e.eval(ctx, line, col, name+" = "+assign); err != nil {
			return err
		}
		e.vars[name] = true
	}
	e.eval(ctx, line, col, strings.Join(tmp, ", ")+" = "+clearList(tmp))
	return nil
}

// clearList is the zero values that release the temporaries.
func clearList(tmp []string) string {
	vals := make([]string, len(tmp))
	for i, t := range tmp {
		vals[i] = "nil"
		if t == "__kok" {
			vals[i] = "false"
		}
	}
	return strings.Join(vals, ", ")
}

// sourceType writes t as Go source a cell can use, or "" when it cannot
// (a type declared in a cell, which reflection shows without its name). A
// compiled package the cells did not import is imported under an alias
// of the kernel's.
func (e *engine) sourceType(t reflect.Type) string {
	if t.Name() != "" {
		if t.PkgPath() == "" {
			return t.Name() // int, string, error
		}
		for name, p := range e.pkgNames {
			if p == t.PkgPath() {
				return name + "." + t.Name()
			}
		}
		alias, ok := e.aliases[t.PkgPath()]
		if !ok {
			alias = fmt.Sprintf("__kpkg%d", len(e.aliases))
			if _, err := e.eval(context.Background(), 1, 1, "import "+alias+" "+strconv.Quote(t.PkgPath())); err != nil {
				return ""
			}
			e.aliases[t.PkgPath()] = alias
		}
		return alias + "." + t.Name()
	}
	elem := func(t reflect.Type) string { return e.sourceType(t) }
	var s string
	switch t.Kind() {
	case reflect.Pointer:
		s = elem(t.Elem())
		if s != "" {
			s = "*" + s
		}
	case reflect.Slice:
		if s = elem(t.Elem()); s != "" {
			s = "[]" + s
		}
	case reflect.Array:
		if s = elem(t.Elem()); s != "" {
			s = fmt.Sprintf("[%d]%s", t.Len(), s)
		}
	case reflect.Map:
		k, v := elem(t.Key()), elem(t.Elem())
		if k != "" && v != "" {
			s = "map[" + k + "]" + v
		}
	case reflect.Interface:
		if t.NumMethod() == 0 {
			s = "interface{}"
		}
	}
	return s
}
