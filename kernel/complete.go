package kernel

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// complete answers complete_request (Tab in the notebook): the members of
// a package or a value after a dot, otherwise the names in scope, Go's
// keywords and builtins, and package names.
func (k *Kernel) complete(m *message) {
	var req struct {
		Code      string `json:"code"`
		CursorPos int    `json:"cursor_pos"`
	}
	json.Unmarshal(m.content, &req)
	off := byteOffset(req.Code, req.CursorPos)
	matches, kinds, start := k.engine.completions(req.Code[:off])
	if matches == nil {
		matches = []string{} // Notebook's completer fails on null
	}
	// cursor_start counts code points, as cursor_pos does.
	cs := utf8.RuneCountInString(req.Code[:start])
	types := make([]map[string]any, len(matches))
	for i, mt := range matches {
		types[i] = map[string]any{"start": cs, "end": req.CursorPos, "text": mt, "type": kinds[i]}
	}
	k.reply(k.shell, m, "complete_reply", map[string]any{
		"status":       "ok",
		"matches":      matches,
		"cursor_start": cs,
		"cursor_end":   req.CursorPos,
		"metadata":     map[string]any{"_jupyter_types_experimental": types},
	})
}

// completions returns the completions of the text before the cursor, the
// kind of each (function, type, package…), and the byte offset where the
// completed word starts.
func (e *engine) completions(before string) (matches, kinds []string, start int) {
	start = len(before)
	for start > 0 && isNameByte(before[start-1]) {
		start--
	}
	word := before[start:]
	if i := strings.LastIndexByte(word, '.'); i >= 0 {
		dot := start + i
		head, prefix := before[exprStart(before, dot):dot], word[i+1:]
		start = dot + 1
		cands := e.members(head)
		return filter(cands, prefix), kindsOf(cands, filter(cands, prefix)), start
	}
	cands := map[string]string{}
	for _, kw := range keywords {
		cands[kw] = "keyword"
	}
	for name, kind := range predeclared {
		cands[name] = kind
	}
	for key := range e.exports {
		if i := strings.LastIndex(key, "/"); i >= 0 && !strings.HasPrefix(key, "github.com/traefik") {
			cands[key[i+1:]] = "module"
		}
	}
	for name := range e.pkgNames {
		cands[name] = "module"
	}
	for name, src := range e.decls {
		if strings.Contains(name, ".") || strings.HasPrefix(name, "__") {
			continue
		}
		cands[name] = declKind(src)
	}
	for name := range e.vars {
		if _, ok := cands[name]; !ok && !strings.HasPrefix(name, "__") {
			cands[name] = "instance"
		}
	}
	delete(cands, mainName)
	matches = filter(cands, word)
	return matches, kindsOf(cands, matches), start
}

// members are the names after head.: a package's exported symbols, or
// the fields and methods of the type of an expression (see exprType),
// which is never evaluated when that would call something.
func (e *engine) members(head string) map[string]string {
	out := map[string]string{}
	for _, p := range e.packagePaths(head) {
		for name, v := range e.exports[p+"/"+e.packageName(p)] {
			if token.IsExported(name) {
				out[name] = symbolKind(v)
			}
		}
	}
	if len(out) > 0 || head == "" {
		return out
	}
	x, err := parser.ParseExpr(head)
	if err != nil {
		return out
	}
	t, ok := e.exprType(x)
	if !ok {
		return out
	}
	if t.cell != "" {
		e.cellMembers(t, out)
		return out
	}
	rt := t.rt
	if rt.Kind() == reflect.Interface || rt.Kind() == reflect.Pointer {
		addMethods(rt, out)
	} else {
		addMethods(rt, out)
		if t.addressable {
			addMethods(reflect.PointerTo(rt), out)
		}
	}
	st := rt
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() == reflect.Struct && st.PkgPath() != "" {
		for i := range st.NumField() {
			if f := st.Field(i); f.IsExported() {
				out[f.Name] = "instance"
			}
		}
	}
	return out
}

func addMethods(t reflect.Type, out map[string]string) {
	for i := range t.NumMethod() {
		out[t.Method(i).Name] = "function"
	}
}

// exprInfo is what completion knows of an expression's type: a compiled
// type, or a type a cell declared (which reflection shows without its
// methods or names).
type exprInfo struct {
	rt          reflect.Type
	cell        string // the cell type's name, or ""
	ptr         bool   // a pointer to the cell type
	addressable bool   // pointer methods apply to a value of the type
}

// exprType is the type of x: a variable, a field or index of one
// (evaluated: those call nothing), or a call of a function or method whose
// result type is known from its declaration, which is not called.
func (e *engine) exprType(x ast.Expr) (exprInfo, bool) {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return e.exprType(x.X)
	case *ast.CallExpr:
		return e.callType(x)
	case *ast.StarExpr:
		t, ok := e.exprType(x.X)
		switch {
		case !ok:
		case t.cell != "" && t.ptr:
			return exprInfo{cell: t.cell, addressable: true}, true
		case t.cell == "" && t.rt.Kind() == reflect.Pointer:
			return e.info(t.rt.Elem(), true), true
		}
		return exprInfo{}, false
	}
	if !pure(x) {
		return exprInfo{}, false
	}
	src := types.ExprString(x)
	if root := rootIdent(x); root == nil || !e.isGlobal(root.Name) && e.pkgNames[root.Name] == "" {
		return exprInfo{}, false
	}
	v, err := e.eval(context.Background(), 1, 1, src)
	if v = unwrapValue(v); err != nil || !v.IsValid() {
		return exprInfo{}, false
	}
	addressable := true
	if ix, ok := x.(*ast.IndexExpr); ok {
		// A map's element is not addressable.
		if b, err := e.eval(context.Background(), 1, 1, types.ExprString(ix.X)); err == nil && unwrapValue(b).Kind() == reflect.Map {
			addressable = false
		}
	}
	return e.info(v.Type(), addressable), true
}

// info names the cell type that values of t have, when one has them.
func (e *engine) info(t reflect.Type, addressable bool) exprInfo {
	if name := e.cellType(t); name != "" {
		return exprInfo{rt: t, cell: strings.TrimPrefix(name, "*"), ptr: strings.HasPrefix(name, "*"), addressable: addressable}
	}
	return exprInfo{rt: t, addressable: addressable}
}

// callType is the result type of a call, from the declaration of what it
// calls: a function or method a cell declared, or a compiled function or
// method.
func (e *engine) callType(call *ast.CallExpr) (exprInfo, bool) {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		if src, ok := e.decls[fn.Name]; ok && declKind(src) == "function" {
			return e.resultOf(src)
		}
	case *ast.SelectorExpr:
		if id, ok := fn.X.(*ast.Ident); ok && !e.isGlobal(id.Name) {
			for _, p := range e.packagePaths(id.Name) {
				if v, ok := e.exports[p+"/"+e.packageName(p)][fn.Sel.Name]; ok && v.Kind() == reflect.Func && v.Type().NumOut() > 0 {
					return e.info(v.Type().Out(0), false), true
				}
			}
			return exprInfo{}, false
		}
		recv, ok := e.exprType(fn.X)
		if !ok {
			return exprInfo{}, false
		}
		if recv.cell != "" {
			if src, ok := e.methods[recv.cell][fn.Sel.Name]; ok {
				return e.resultOf(src)
			}
			return exprInfo{}, false
		}
		m, ok := recv.rt.MethodByName(fn.Sel.Name)
		if !ok && recv.rt.Kind() != reflect.Pointer && recv.rt.Kind() != reflect.Interface {
			m, ok = reflect.PointerTo(recv.rt).MethodByName(fn.Sel.Name)
		}
		if !ok {
			return exprInfo{}, false
		}
		ft := m.Type
		if ft.NumOut() == 0 {
			return exprInfo{}, false
		}
		return e.info(ft.Out(0), false), true
	}
	return exprInfo{}, false
}

// resultOf is the type of the first result of a function declared in a
// cell: a type a cell declared, or a compiled one by package and name.
func (e *engine) resultOf(src string) (exprInfo, bool) {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p;"+stripDirectives(src), parser.SkipObjectResolution)
	if err != nil || len(f.Decls) != 1 {
		return exprInfo{}, false
	}
	fd, ok := f.Decls[0].(*ast.FuncDecl)
	if !ok || fd.Type.Results == nil || len(fd.Type.Results.List) == 0 {
		return exprInfo{}, false
	}
	return e.typeExpr(fd.Type.Results.List[0].Type)
}

// typeExpr resolves a type written in a cell: T or *T of a cell's type,
// or pkg.T or *pkg.T of a compiled package.
func (e *engine) typeExpr(t ast.Expr) (exprInfo, bool) {
	ptr := false
	if s, ok := t.(*ast.StarExpr); ok {
		ptr, t = true, s.X
	}
	switch t := t.(type) {
	case *ast.Ident:
		if _, ok := e.types[t.Name]; ok {
			return exprInfo{cell: t.Name, ptr: ptr}, true
		}
	case *ast.SelectorExpr:
		if id, ok := t.X.(*ast.Ident); ok {
			for _, p := range e.packagePaths(id.Name) {
				if v, ok := e.exports[p+"/"+e.packageName(p)][t.Sel.Name]; ok && v.Kind() == reflect.Pointer && v.IsNil() {
					rt := v.Type().Elem()
					if ptr {
						rt = reflect.PointerTo(rt)
					}
					return exprInfo{rt: rt}, true
				}
			}
		}
	}
	return exprInfo{}, false
}

// cellMembers adds the fields and methods of a type a cell declared, from
// its declaration: a cell is in package main, so the unexported ones too.
// Methods with a pointer receiver apply to pointers and addressable
// values, as in Go.
func (e *engine) cellMembers(t exprInfo, out map[string]string) {
	if src, ok := e.types[t.cell]; ok {
		f, err := parser.ParseFile(token.NewFileSet(), "", "package p;"+stripDirectives(src), parser.SkipObjectResolution)
		if err == nil && len(f.Decls) == 1 {
			if g, ok := f.Decls[0].(*ast.GenDecl); ok && len(g.Specs) == 1 {
				if st, ok := g.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType); ok {
					for _, fl := range st.Fields.List {
						for _, n := range fl.Names {
							out[n.Name] = "instance"
						}
						if len(fl.Names) == 0 {
							if id := rootIdent(fl.Type); id != nil {
								out[embeddedName(fl.Type)] = "instance"
							}
						}
					}
				}
			}
		}
	}
	for name, src := range e.methods[t.cell] {
		if !pointerReceiver(src) || t.ptr || t.addressable {
			out[name] = "function"
		}
	}
}

// embeddedName is the field name of an embedded field: T for T, *T and
// pkg.T.
func embeddedName(t ast.Expr) string {
	switch t := t.(type) {
	case *ast.StarExpr:
		return embeddedName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// pointerReceiver reports whether a method's declaration has a pointer
// receiver.
func pointerReceiver(src string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p;"+stripDirectives(src), parser.SkipObjectResolution)
	if err != nil || len(f.Decls) != 1 {
		return false
	}
	fd, ok := f.Decls[0].(*ast.FuncDecl)
	if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
		return false
	}
	_, ok = fd.Recv.List[0].Type.(*ast.StarExpr)
	return ok
}

// pure reports whether evaluating x calls nothing: names, fields, and
// indexes by literals or names.
func pure(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.Ident:
		return true
	case *ast.SelectorExpr:
		return pure(x.X)
	case *ast.IndexExpr:
		switch i := x.Index.(type) {
		case *ast.BasicLit, *ast.Ident:
			return pure(x.X)
		case *ast.SelectorExpr:
			return pure(x.X) && pure(i)
		}
	case *ast.ParenExpr:
		return pure(x.X)
	}
	return false
}

// rootIdent is the name an expression starts from: x in x.a[0].b.
func rootIdent(x ast.Expr) *ast.Ident {
	for {
		switch y := x.(type) {
		case *ast.Ident:
			return y
		case *ast.SelectorExpr:
			x = y.X
		case *ast.IndexExpr:
			x = y.X
		case *ast.StarExpr:
			x = y.X
		case *ast.ParenExpr:
			x = y.X
		default:
			return nil
		}
	}
}

func filter(cands map[string]string, prefix string) []string {
	out := []string{}
	for c := range cands {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

func kindsOf(cands map[string]string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = cands[n]
	}
	return out
}

// symbolKind names the kind of a symbol table entry for the frontend's
// completion icons.
func symbolKind(v reflect.Value) string {
	switch {
	case v.Kind() == reflect.Pointer && v.IsNil():
		return "class" // types are stored as nil pointers
	case v.Kind() == reflect.Func:
		return "function"
	}
	return "instance"
}

func declKind(src string) string {
	s := strings.TrimSpace(stripDirectives(src))
	switch {
	case strings.HasPrefix(s, "func"):
		return "function"
	case strings.HasPrefix(s, "type"):
		return "class"
	}
	return "instance"
}

var keywords = []string{"break", "case", "chan", "const", "continue", "default", "defer", "else",
	"fallthrough", "for", "func", "go", "goto", "if", "import", "interface", "map", "package",
	"range", "return", "select", "struct", "switch", "type", "var"}

var predeclared = map[string]string{
	"any": "class", "bool": "class", "byte": "class", "comparable": "class", "complex64": "class",
	"complex128": "class", "error": "class", "float32": "class", "float64": "class", "int": "class",
	"int8": "class", "int16": "class", "int32": "class", "int64": "class", "rune": "class",
	"string": "class", "uint": "class", "uint8": "class", "uint16": "class", "uint32": "class",
	"uint64": "class", "uintptr": "class",
	"true": "instance", "false": "instance", "iota": "instance", "nil": "instance",
	"append": "function", "cap": "function", "clear": "function", "close": "function",
	"complex": "function", "copy": "function", "delete": "function", "imag": "function",
	"len": "function", "make": "function", "max": "function", "min": "function", "new": "function",
	"panic": "function", "print": "function", "println": "function", "real": "function",
	"recover": "function",
}

// exprStart is where the expression ending at end starts: names and
// dots, and what brackets and parentheses enclose (outs[0], f(x).y).
func exprStart(s string, end int) int {
	i := end
	for i > 0 {
		c := s[i-1]
		switch {
		case isNameByte(c):
			i--
		case c == ']' || c == ')':
			open := byte('[')
			if c == ')' {
				open = '('
			}
			depth, j := 0, i-1
			for ; j >= 0; j-- {
				if s[j] == c {
					depth++
				} else if s[j] == open {
					if depth--; depth == 0 {
						break
					}
				}
			}
			if j < 0 {
				return i
			}
			i = j
		default:
			return i
		}
	}
	return i
}
