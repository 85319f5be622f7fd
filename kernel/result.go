package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"

	"github.com/traefik/yaegi/interp"

	"github.com/evalcapsule/evalcapsule/kernel/display"
)

// Builtins with one value, and builtins that are statements (copy returns
// a count nobody wants to see).
var (
	valueBuiltins = map[string]bool{"len": true, "cap": true, "append": true, "make": true, "new": true,
		"complex": true, "real": true, "imag": true, "min": true, "max": true, "recover": true}
	stmtBuiltins = map[string]bool{"print": true, "println": true, "panic": true, "close": true,
		"delete": true, "clear": true, "copy": true}
)

var errorType = reflect.TypeFor[error]()

// unknownArity says the number of values of a call could not be learned
// without running it (a conversion to a named type, a generic function).
const unknownArity = -1

// result evaluates the expression that ends a cell and returns what to
// show (see the display package's documentation for the rules). The value
// of an interpreted expression cannot tell a call with no result from one
// with a result (yaegi returns a stale value for the former), so the
// number of values comes from the type of the function called, found by
// evaluating the callee alone.
func (e *engine) result(ctx context.Context, it item, text string) (display.Data, *cellError) {
	fset := token.NewFileSet()
	x, err := parser.ParseExprFrom(fset, "", text, 0)
	if err != nil {
		_, err := e.eval(ctx, it.line, it.col, text)
		return display.Data{}, e.errorOrNil(err, it, text)
	}
	expr, n, lastErr := text, 1, false
	if call, ok := ast.Unparen(x).(*ast.CallExpr); ok {
		expr, n, lastErr, err = e.arity(ctx, it, text, fset, call)
		if err != nil {
			return display.Data{}, e.cellError(err)
		}
	}
	switch {
	case n == 0 || n > 1 && !lastErr:
		_, err := e.eval(ctx, it.line, it.col, expr)
		return display.Data{}, e.errorOrNil(err, it, text)
	case n > 1:
		// Only the error of several values is looked at: a non-nil
		// error fails the cell.
		v, err := e.evalAs(ctx, strings.Repeat("_, ", n-1)+"__kpe =", it.line, it.col, expr, "\n__kpe")
		if err != nil {
			return display.Data{}, e.errorOrNil(err, it, text)
		}
		if v = unwrapValue(v); v.IsValid() && v.CanInterface() {
			if err, ok := v.Interface().(error); ok && err != nil {
				return display.Data{}, e.cellError(resultError{typ: fmt.Sprintf("%T", err), err: err.Error()})
			}
		}
		return display.Data{}, nil
	}
	lhs, tail := "__kr =", "\n__kr"
	if _, ok := ast.Unparen(x).(*ast.CompositeLit); ok {
		// yaegi assigns a composite literal of a compiled type by
		// replacing the variable's value, which leaves __kr holding that
		// type and refusing every later value: a conversion assigns it as
		// an interface.
		lhs, tail = "__kr = interface{}(", ",\n)\n__kr"
	}
	v, err := e.evalAs(ctx, lhs, it.line, it.col, expr, tail)
	if err != nil && n == unknownArity && !e.ran(err) && ctx.Err() == nil {
		// Perhaps it has no value: run it as a statement.
		if _, err2 := e.eval(ctx, it.line, it.col, expr); err2 == nil {
			return display.Data{}, nil
		}
	}
	if err != nil {
		return display.Data{}, e.errorOrNil(err, it, text)
	}
	return e.show(ctx, v)
}

// errorOrNil is the cell's error for err, if any: explained when the
// code did not run.
func (e *engine) errorOrNil(err error, it item, text string) *cellError {
	if err == nil {
		return nil
	}
	return e.cellError(e.explain(err, itemStmt, it.line, it.col, text))
}

// ran reports whether err comes from code that ran (a panic unwinding
// interpreted frames, an interrupt), not from compiling it.
func (e *engine) ran(err error) bool {
	var p interp.Panic
	return errors.As(err, &p) && e.hasFrames() || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// arity returns the number of values call has and whether the last is an
// error, and the expression to evaluate for it. A callee that itself
// calls (a.B().C()) is not evaluated twice: its receiver is evaluated
// once into __krecv, and the call made on that.
func (e *engine) arity(ctx context.Context, it item, text string, fset *token.FileSet, call *ast.CallExpr) (expr string, n int, lastErr bool, err error) {
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	expr = text
	fun := ast.Unparen(call.Fun)
	switch f := fun.(type) {
	case *ast.Ident:
		_, shadowed := e.decls[f.Name]
		switch {
		case valueBuiltins[f.Name] && !shadowed:
			return expr, 1, false, nil
		case stmtBuiltins[f.Name] && !shadowed:
			return expr, 0, false, nil
		}
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StructType, *ast.StarExpr:
		return expr, 1, false, nil // a conversion
	case *ast.IndexExpr, *ast.IndexListExpr:
		return expr, unknownArity, false, nil // a generic function, or a func from a slice
	}
	callee := text[off(fun.Pos()):off(fun.End())]
	if callsIn(fun) {
		sel, ok := fun.(*ast.SelectorExpr)
		if !ok {
			return expr, unknownArity, false, nil
		}
		recv := text[off(sel.X.Pos()):off(sel.X.End())]
		// Typed, so that the method can be called on it.
		if _, err := e.evalAs(ctx, "__krecv =", it.line, it.col+off(sel.X.Pos()), recv, ""); err != nil {
			return expr, 0, false, err
		}
		v, err := e.eval(ctx, it.line, it.col, "__krecv")
		if v = unwrapValue(v); err != nil || !v.IsValid() {
			return expr, unknownArity, false, nil
		}
		t := e.sourceType(v.Type())
		if t == "" {
			t = e.cellType(v.Type())
		}
		if t == "" {
			return expr, 0, false, fmt.Errorf("%d:%d: the interpreter cannot call a method on the result of a call of type %s here; assign it to a variable first",
				e.cur*cellLines+it.line, it.col, typeName(v.Type()))
		}
		callee = "__krecv.(" + t + ")." + sel.Sel.Name
		expr = callee + text[off(call.Lparen):off(call.Rparen)+1]
	}
	v, err := e.eval(ctx, it.line, it.col, callee)
	if v = unwrapValue(v); err != nil || !v.IsValid() || v.Kind() != reflect.Func {
		return expr, unknownArity, false, nil
	}
	t := v.Type()
	n = t.NumOut()
	return expr, n, n > 0 && t.Out(n-1).Implements(errorType), nil
}

// callsIn reports whether evaluating n would call a function or receive
// from a channel; the bodies of function literals do not count.
func callsIn(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			found = true
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				found = true
			}
		}
		return !found
	})
	return found
}

// show is the bundle of the cell's value v, held in __kr.
func (e *engine) show(ctx context.Context, v reflect.Value) (display.Data, *cellError) {
	v = unwrapValue(v)
	if !v.IsValid() || !v.CanInterface() {
		return display.Data{}, nil
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if v.IsNil() {
			return display.Data{}, nil
		}
	}
	x := v.Interface()
	if err, ok := x.(error); ok {
		return display.Data{}, e.cellError(resultError{typ: fmt.Sprintf("%T", x), err: err.Error()})
	}
	d := display.Of(x)
	if len(e.shows) == 0 || v.Type().PkgPath() != "" {
		return d, nil
	}
	// A type declared in a cell: compiled code does not see its methods,
	// interpreted code does, on __kr asserted to that type.
	t := e.cellType(v.Type())
	if t == "" {
		return d, nil
	}
	recv := "__kr.(" + t + ")"
	methods := e.methods[strings.TrimPrefix(t, "*")]
	text := func(m string) (string, bool) {
		if _, ok := methods[m]; !ok {
			return "", false
		}
		r, err := e.eval(ctx, 1, 1, "__kps = "+recv+"."+m+"()\n__kps")
		if r = unwrapValue(r); err != nil || !r.IsValid() || r.Kind() != reflect.String {
			return "", false
		}
		return r.String(), true
	}
	bytes := func(m string) ([]byte, bool) {
		if _, ok := methods[m]; !ok {
			return nil, false
		}
		r, err := e.eval(ctx, 1, 1, "__kpb, __kpe = "+recv+"."+m+"()\n__kpe == nil")
		if r = unwrapValue(r); err != nil || !r.IsValid() || r.Kind() != reflect.Bool || !r.Bool() {
			return nil, false
		}
		b, err := e.eval(ctx, 1, 1, "__kpb")
		if b = unwrapValue(b); err != nil || !b.IsValid() || b.Kind() != reflect.Slice {
			return nil, false
		}
		return b.Bytes(), true
	}
	if s, ok := text("Error"); ok {
		return display.Data{}, e.cellError(resultError{typ: t, err: s})
	}
	str, hasString := text("String")
	if hasString {
		d = d.With(display.Text(str))
	}
	if s, ok := text("HTML"); ok {
		d = d.With(display.HTML(s))
	}
	if s, ok := text("Markdown"); ok {
		d = d.With(display.Markdown(s))
		if !hasString {
			d = d.With(display.Text(s)) // rather than a dump of the fields
		}
	}
	if b, ok := bytes("PNG"); ok {
		d = d.With(display.PNG(b))
	}
	if b, ok := bytes("SVG"); ok {
		d = d.With(display.SVG(string(b)))
	}
	if b, ok := bytes("JSON"); ok {
		d = d.With(display.MIME("application/json", json.RawMessage(b)))
	}
	return d, nil
}

// cellType is the name of the type declared in a cell that values of t
// have ("T", or "*T" for a pointer to one), or "": reflection shows such
// types without their names. Methods with a pointer receiver are found
// only on pointers, as in Go.
func (e *engine) cellType(t reflect.Type) string {
	for name := range e.types {
		v, err := e.eval(context.Background(), 1, 1, "*new("+name+")")
		if v = unwrapValue(v); err != nil || !v.IsValid() {
			continue
		}
		switch {
		case v.Type() == t:
			return name
		case t.Kind() == reflect.Pointer && t.Elem() == v.Type():
			return "*" + name
		}
	}
	return ""
}

// evalExpr evaluates one expression as a cell's last line, for
// user_expressions.
func (e *engine) evalExpr(ctx context.Context, expr string) (display.Data, *cellError) {
	e.begin("<user expression>", expr)
	return e.result(ctx, item{line: 1, col: 1}, expr)
}
