package kernel

import (
	"context"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/traefik/yaegi/interp"
)

// The interpreter's builtins and standard library are Go 1.22's as yaegi
// v0.16.1 knows it: min, max and clear are undefined, and slices, maps
// and cmp are empty, their API being generic (yaegi cannot extract it).
// The kernel declares min, max and clear in the interpreted package, and
// what notebooks use of slices, maps and cmp as generic functions under
// names of its own (__slices_Max), to which the cells' calls are rewritten
// (see rewriteBuiltins). Sorting goes through the compiled sort package.

// builtinsPath is the import path of the compiled half of the builtins.
const builtinsPath = "evalcapsule.kernel/builtins"

// builtinsPrelude declares the builtins; it runs after prelude.
const builtinsPrelude = `import __kbuiltins "` + builtinsPath + `"
import __ksort "sort"

type __kordered interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr | ~float32 | ~float64 | ~string
}

// min and max are Go's: a NaN argument gives NaN.
func min[T __kordered](x T, y ...T) T {
	for _, v := range y {
		if x != x {
			return x
		}
		if v != v || v < x {
			x = v
		}
	}
	return x
}

func max[T __kordered](x T, y ...T) T {
	for _, v := range y {
		if x != x {
			return x
		}
		if v != v || v > x {
			x = v
		}
	}
	return x
}

func clear(x interface{}) { __kbuiltins.Clear(x) }

func __kless[T __kordered](a, b T) bool { return a < b || (a != a && b == b) }

func __cmp_Compare[T __kordered](x, y T) int {
	xNaN, yNaN := x != x, y != y
	switch {
	case xNaN && yNaN:
		return 0
	case xNaN || x < y:
		return -1
	case yNaN || x > y:
		return +1
	}
	return 0
}

func __cmp_Less[T __kordered](x, y T) bool { return __kless(x, y) }

type __cmp_Ordered interface{ __kordered }

func __slices_Max[E __kordered](x []E) E {
	if len(x) < 1 {
		panic("slices.Max: empty list")
	}
	return max(x[0], x[1:]...)
}

func __slices_Min[E __kordered](x []E) E {
	if len(x) < 1 {
		panic("slices.Min: empty list")
	}
	return min(x[0], x[1:]...)
}

func __slices_Sort[E __kordered](x []E) {
	__ksort.SliceStable(x, func(i, j int) bool { return __kless(x[i], x[j]) })
}

func __slices_Sorted[E __kordered](x []E) []E {
	__slices_Sort(x)
	return x
}

func __slices_Collect[E any](x []E) []E { return x }

func __slices_SortFunc[E any](x []E, cmp func(a, b E) int) {
	__ksort.Slice(x, func(i, j int) bool { return cmp(x[i], x[j]) < 0 })
}

func __slices_SortStableFunc[E any](x []E, cmp func(a, b E) int) {
	__ksort.SliceStable(x, func(i, j int) bool { return cmp(x[i], x[j]) < 0 })
}

func __slices_IsSorted[E __kordered](x []E) bool {
	for i := len(x) - 1; i > 0; i-- {
		if __kless(x[i], x[i-1]) {
			return false
		}
	}
	return true
}

func __slices_Index[E comparable](s []E, v E) int {
	for i := range s {
		if v == s[i] {
			return i
		}
	}
	return -1
}

func __slices_IndexFunc[E any](s []E, f func(E) bool) int {
	for i := range s {
		if f(s[i]) {
			return i
		}
	}
	return -1
}

func __slices_Contains[E comparable](s []E, v E) bool { return __slices_Index(s, v) >= 0 }

func __slices_ContainsFunc[E any](s []E, f func(E) bool) bool { return __slices_IndexFunc(s, f) >= 0 }

func __slices_Equal[E comparable](s1, s2 []E) bool {
	if len(s1) != len(s2) {
		return false
	}
	for i := range s1 {
		if s1[i] != s2[i] {
			return false
		}
	}
	return true
}

func __slices_Reverse[E any](s []E) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

func __slices_Clone[E any](s []E) []E {
	if s == nil {
		return nil
	}
	return append([]E{}, s...)
}

func __slices_Compact[E comparable](s []E) []E {
	if len(s) < 2 {
		return s
	}
	i := 1
	for k := 1; k < len(s); k++ {
		if s[k] != s[k-1] {
			if i != k {
				s[i] = s[k]
			}
			i++
		}
	}
	return s[:i]
}

func __slices_BinarySearch[E __kordered](x []E, target E) (int, bool) {
	i := __ksort.Search(len(x), func(i int) bool { return !__kless(x[i], target) })
	return i, i < len(x) && (x[i] == target || (x[i] != x[i] && target != target))
}

func __maps_Keys[K comparable, V any](m map[K]V) []K {
	r := make([]K, 0, len(m))
	for k := range m {
		r = append(r, k)
	}
	return r
}

func __maps_Values[K comparable, V any](m map[K]V) []V {
	r := make([]V, 0, len(m))
	for _, v := range m {
		r = append(r, v)
	}
	return r
}

func __maps_Clone[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	r := make(map[K]V, len(m))
	for k, v := range m {
		r[k] = v
	}
	return r
}

func __maps_Copy[K comparable, V any](dst, src map[K]V) {
	for k, v := range src {
		dst[k] = v
	}
}

func __maps_Equal[K, V comparable](m1, m2 map[K]V) bool {
	if len(m1) != len(m2) {
		return false
	}
	for k, v1 := range m1 {
		if v2, ok := m2[k]; !ok || v1 != v2 {
			return false
		}
	}
	return true
}

func __maps_DeleteFunc[K comparable, V any](m map[K]V, del func(K, V) bool) {
	for k, v := range m {
		if del(k, v) {
			delete(m, k)
		}
	}
}
`

// provided are the functions of slices, maps and cmp the prelude
// declares. maps.Keys and maps.Values return iterators in Go (iter.Seq),
// which the interpreter cannot range over: they are provided only as the
// argument of slices.Sorted or slices.Collect, which gives a slice as Go
// does.
var provided = map[string][]string{
	"slices": {"BinarySearch", "Clone", "Collect", "Compact", "Contains", "ContainsFunc", "Equal", "Index",
		"IndexFunc", "IsSorted", "Max", "Min", "Reverse", "Sort", "SortFunc", "SortStableFunc", "Sorted"},
	"maps": {"Clone", "Copy", "DeleteFunc", "Equal", "Keys", "Values"},
	"cmp":  {"Compare", "Less", "Ordered"},
}

// useBuiltins declares min, max, clear and the slices, maps and cmp
// functions in the interpreter, and makes fmt and errors see the cells'
// error types (see fmtSeesErrors and errorsIs).
func (e *engine) useBuiltins() error {
	if err := e.in.Use(interp.Exports{builtinsPath + "/builtins": {"Clear": reflect.ValueOf(clearValue)}}); err != nil {
		return err
	}
	if _, err := e.in.Eval(builtinsPrelude); err != nil {
		return fmt.Errorf("kernel builtins: %w", err)
	}
	fmtSeesErrors(e.in)
	return e.in.Use(interp.Exports{"errors/errors": {
		"Is": reflect.ValueOf(errorsIs), "As": reflect.ValueOf(errorsAs),
	}})
}

// clearValue is Go's clear: a map loses its entries, a slice's elements
// become zero.
func clearValue(x any) {
	v := unwrapValue(reflect.ValueOf(x))
	switch {
	case !v.IsValid():
		panic("invalid argument: clear(nil)")
	case v.Kind() == reflect.Map || v.Kind() == reflect.Slice:
		if !v.IsNil() {
			v.Clear()
		}
	default:
		panic(fmt.Sprintf("invalid argument: clear takes a map or a slice, not %s", typeName(v.Type())))
	}
}

// rewriteBuiltins rewrites the calls of a cell to min, max, and the
// slices, maps and cmp functions the kernel provides, and refuses what
// the interpreter would get wrong or fail on without a position (range
// over a function, maps.Keys elsewhere than in slices.Sorted or
// slices.Collect), naming the construct and its line. Lines keep their
// numbers. cell is the running cell's id, for the encoded positions of
// the error (see directive).
//
//   - min(a, b) and max(a, b), of Go 1.21, go to generic functions;
//     yaegi infers their type argument from the first argument, so
//     constants go last (min(0, x) becomes min(x, 0)), and calls of
//     constants only are computed (min(1, 2.5) is 1.0);
//   - slices.Max becomes __slices_Max (a function of the prelude), and so
//     on for each function provided.
func (e *engine) rewriteBuiltins(src string, cell int) (string, error) {
	items, err := splitCell(src)
	if err != nil {
		return src, nil // the engine reports it
	}
	pkgs := map[string]string{} // local name → slices, maps or cmp
	for name, p := range e.pkgNames {
		if _, ok := provided[p]; ok {
			pkgs[name] = p
		}
	}
	// The cell's own min, max or clear replaces the kernel's.
	own := map[string]bool{}
	for _, it := range items {
		if it.kind == itemImport {
			continue
		}
		prefix, suffix := "package p;", ""
		if it.kind == itemStmt {
			prefix, suffix = "package p; func _() {", "\n}"
		}
		f, err := parser.ParseFile(token.NewFileSet(), "", prefix+src[it.start:it.end]+suffix, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, name := range topNames(f, it.kind) {
			if (name == "min" || name == "max" || name == "clear") && !e.declared(name) {
				forgetGlobal(e.in, name)
				own[name] = true
			}
		}
	}
	structs := map[string]bool{} // struct types the cell declares
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
			if g, ok := d.(*ast.GenDecl); ok {
				for _, sp := range g.Specs {
					if ts, ok := sp.(*ast.TypeSpec); ok {
						_, structs[ts.Name.Name] = ts.Type.(*ast.StructType)
					}
				}
			}
		}
	}
	var edits []edit
	for _, it := range items {
		text := src[it.start:it.end]
		if it.kind == itemImport {
			f, err := parser.ParseFile(token.NewFileSet(), "", "package p;"+text, parser.ImportsOnly)
			if err != nil {
				continue
			}
			for _, spec := range f.Imports {
				p, _ := strconv.Unquote(spec.Path.Value)
				if _, ok := provided[p]; !ok {
					continue
				}
				name := p
				if spec.Name != nil {
					name = spec.Name.Name
				}
				pkgs[name] = p
			}
			continue
		}
		prefix, suffix := "package p;", ""
		if it.kind == itemStmt {
			prefix, suffix = "package p; func _() {", "\n}"
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "", prefix+text+suffix, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		base := it.start - len(prefix)
		off := func(p token.Pos) int { return fset.Position(p).Offset + base }
		fail := func(n ast.Node, format string, args ...any) error {
			line, col := lineCol(src, off(n.Pos()))
			return fmt.Errorf("%d:%d: %s", cell*cellLines+line, col, fmt.Sprintf(format, args...))
		}
		pkgOf := func(x ast.Expr) (string, string, bool) {
			sel, ok := x.(*ast.SelectorExpr)
			if !ok {
				return "", "", false
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return "", "", false
			}
			p, ok := pkgs[id.Name]
			return p, sel.Sel.Name, ok
		}
		// iterArgs are the maps.Keys and maps.Values calls that are the
		// argument of slices.Sorted or slices.Collect.
		iterArgs := map[ast.Node]bool{}
		var ferr error
		ast.Inspect(f, func(n ast.Node) bool {
			if ferr != nil {
				return false
			}
			switch n := n.(type) {
			case *ast.CallExpr:
				if p, name, ok := pkgOf(n.Fun); ok && p == "slices" && (name == "Sorted" || name == "Collect") && len(n.Args) == 1 {
					if c, ok := n.Args[0].(*ast.CallExpr); ok {
						if p2, name2, ok := pkgOf(c.Fun); ok && p2 == "maps" && (name2 == "Keys" || name2 == "Values") {
							iterArgs[c] = true
						} else {
							ferr = fail(n, "slices.%s takes an iterator (iter.Seq), which the kernel's interpreter does not have; it takes maps.Keys(m) or maps.Values(m) only", name)
						}
					}
				}
				if p, name, ok := pkgOf(n.Fun); ok && p == "maps" && (name == "Keys" || name == "Values") && !iterArgs[n] {
					ferr = fail(n, "maps.%s returns an iterator (iter.Seq), which the kernel's interpreter cannot range over: write slices.Sorted(maps.%[1]s(m)) or slices.Collect(maps.%[1]s(m)) for a slice, or range over the map", name)
					return false
				}
				if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "min" || id.Name == "max") && !e.declared(id.Name) && !own[id.Name] && !nested(n.Args, pkgOf) {
					edits = append(edits, e.minMax(src, n, off)...)
				}
			case *ast.SelectorExpr:
				p, name, ok := pkgOf(n)
				if !ok {
					return true
				}
				if !slices.Contains(provided[p], name) {
					ferr = fail(n, "%s.%s is not available in the kernel: of package %s it has %s", p, name, p, strings.Join(provided[p], ", "))
					return false
				}
				edits = append(edits, edit{off: off(n.Pos()), del: off(n.End()) - off(n.Pos()), ins: "__" + p + "_" + name})
				return false
			case *ast.CompositeLit:
				edits = append(edits, e.interfaceFields(n, off)...)
			case *ast.FuncDecl:
				if t := receiverType(n.Recv); n.Name.Name == "Error" && t != "" && !pointerRecv(n.Recv) && (structs[t] || e.isStruct(t)) {
					ferr = fail(n, "method Error of struct type %s has a value receiver, which the kernel's interpreter does not show to fmt and errors: declare func (x *%[1]s) Error() string and use &%[1]s{…}", t)
					return false
				}
			case *ast.RangeStmt:
				if what := e.funcRange(n.X, funcs); what != "" {
					ferr = fail(n, "range over a function (%s; Go 1.23 iterators) is not supported by the kernel's interpreter: call it with a yield function instead", what)
					return false
				}
			}
			return true
		})
		if ferr != nil {
			return src, ferr
		}
	}
	return applyEdits(src, edits), nil
}

// topNames are the names a parsed item declares at top level.
func topNames(f *ast.File, kind itemKind) []string {
	var out []string
	if kind == itemStmt {
		for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
			switch st := st.(type) {
			case *ast.AssignStmt:
				if st.Tok == token.DEFINE {
					for _, l := range st.Lhs {
						if id, ok := l.(*ast.Ident); ok {
							out = append(out, id.Name)
						}
					}
				}
			case *ast.DeclStmt:
				out = append(out, genNames(st.Decl)...)
			}
		}
		return out
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			if fd.Recv == nil {
				out = append(out, fd.Name.Name)
			}
			continue
		}
		out = append(out, genNames(d)...)
	}
	return out
}

func genNames(d ast.Decl) []string {
	g, ok := d.(*ast.GenDecl)
	if !ok {
		return nil
	}
	var out []string
	for _, s := range g.Specs {
		switch s := s.(type) {
		case *ast.TypeSpec:
			out = append(out, s.Name.Name)
		case *ast.ValueSpec:
			for _, n := range s.Names {
				out = append(out, n.Name)
			}
		}
	}
	return out
}

// pointerRecv reports whether a method's receiver is a pointer.
func pointerRecv(recv *ast.FieldList) bool {
	if recv == nil || len(recv.List) == 0 {
		return false
	}
	_, ok := recv.List[0].Type.(*ast.StarExpr)
	return ok
}

// isStruct reports whether an earlier cell declared name as a struct type.
func (e *engine) isStruct(name string) bool {
	src, ok := e.types[name]
	if !ok {
		return false
	}
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p;"+stripDirectives(src), parser.SkipObjectResolution)
	if err != nil || len(f.Decls) != 1 {
		return false
	}
	g, ok := f.Decls[0].(*ast.GenDecl)
	if !ok || len(g.Specs) != 1 {
		return false
	}
	_, ok = g.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType)
	return ok
}

// nested reports whether args hold a call of min or max or a selector of
// slices, maps or cmp, rewritten on their own: the arguments of a min or
// max around them then stay in place.
func nested(args []ast.Expr, pkgOf func(ast.Expr) (string, string, bool)) bool {
	found := false
	for _, a := range args {
		ast.Inspect(a, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				found = found || n.Name == "min" || n.Name == "max"
			case *ast.SelectorExpr:
				_, _, ok := pkgOf(n)
				found = found || ok
			}
			return !found
		})
	}
	return found
}

// applyEdits applies non-overlapping edits, from the end.
func applyEdits(src string, edits []edit) string {
	// At one offset, a replacement goes before an insertion, so that the
	// insertion lands before the replaced text.
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].off != edits[j].off {
			return edits[i].off > edits[j].off
		}
		return edits[i].del > 0 && edits[j].del == 0
	})
	for _, e := range edits {
		src = src[:e.off] + e.ins + src[e.off+e.del:]
	}
	return src
}

// interfaceFields converts the values of a compiled struct's fields of
// interface type, in a composite literal, to that type: yaegi sets them
// without wrapping a cell's type in the interface (reflect.Set panics,
// "not assignable"), which a conversion in a return does.
// study.SweepOptions{Runner: r} becomes
// study.SweepOptions{Runner: func() harness.Runner { return r }()}.
func (e *engine) interfaceFields(lit *ast.CompositeLit, off func(token.Pos) int) []edit {
	t := lit.Type
	sel, ok := t.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok || e.isGlobal(id.Name) {
		return nil
	}
	var st reflect.Type
	for _, p := range e.packagePaths(id.Name) {
		if v, ok := e.exports[p+"/"+e.packageName(p)][sel.Sel.Name]; ok && v.Kind() == reflect.Pointer && v.IsNil() {
			st = v.Type().Elem()
			break
		}
	}
	if st == nil || st.Kind() != reflect.Struct {
		return nil
	}
	var edits []edit
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		f, ok := st.FieldByName(key.Name)
		if !ok || f.Type.Kind() != reflect.Interface || f.Type.NumMethod() == 0 {
			continue
		}
		if v, ok := kv.Value.(*ast.Ident); ok && v.Name == "nil" {
			continue
		}
		typ := e.sourceType(f.Type)
		if typ == "" {
			continue
		}
		edits = append(edits, edit{off: off(kv.Value.Pos()), ins: "func() " + typ + " { return "},
			edit{off: off(kv.Value.End()), ins: " }()"})
	}
	return edits
}

// minMax is the rewrite of a call of min or max: the constants go last,
// and a call of literals only is computed.
func (e *engine) minMax(src string, call *ast.CallExpr, off func(token.Pos) int) []edit {
	if len(call.Args) < 2 || call.Ellipsis.IsValid() {
		return nil
	}
	from, to := off(call.Args[0].Pos()), off(call.Args[len(call.Args)-1].End())
	if strings.Contains(src[from:to], "\n") {
		return nil // reordering would move lines
	}
	if v, ok := foldMinMax(call); ok {
		return []edit{{off: off(call.Pos()), del: off(call.End()) - off(call.Pos()), ins: v}}
	}
	var vars, consts []string
	for _, a := range call.Args {
		text := src[off(a.Pos()):off(a.End())]
		if e.constant(a) {
			consts = append(consts, text)
		} else {
			vars = append(vars, text)
		}
	}
	if len(vars) == 0 || len(consts) == 0 {
		return nil
	}
	return []edit{{off: from, del: to - from, ins: strings.Join(append(vars, consts...), ", ")}}
}

// constant reports whether x is a constant expression: literals, and
// names a cell declared const.
func (e *engine) constant(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.BasicLit:
		return true
	case *ast.ParenExpr:
		return e.constant(x.X)
	case *ast.UnaryExpr:
		return e.constant(x.X)
	case *ast.BinaryExpr:
		return e.constant(x.X) && e.constant(x.Y)
	case *ast.Ident:
		src, ok := e.decls[x.Name]
		return ok && strings.HasPrefix(strings.TrimSpace(stripDirectives(src)), "const")
	}
	return false
}

// foldMinMax computes a min or max of untyped literals, as the Go
// compiler does: the result is a constant of the widest kind.
func foldMinMax(call *ast.CallExpr) (string, bool) {
	var vals []constant.Value
	for _, a := range call.Args {
		v, ok := literal(a)
		if !ok {
			return "", false
		}
		vals = append(vals, v)
	}
	kind := vals[0].Kind()
	for _, v := range vals[1:] {
		switch {
		case v.Kind() == constant.String || kind == constant.String:
			if v.Kind() != kind {
				return "", false // mixed: the interpreter words the error
			}
		case v.Kind() > kind:
			kind = v.Kind()
		}
	}
	if kind == constant.Complex || kind == constant.Unknown {
		return "", false
	}
	op := token.LSS
	if call.Fun.(*ast.Ident).Name == "max" {
		op = token.GTR
	}
	best := vals[0]
	for _, v := range vals[1:] {
		if constant.Compare(v, op, best) {
			best = v
		}
	}
	switch kind {
	case constant.String:
		return best.ExactString(), true
	case constant.Float:
		f, _ := constant.Float64Val(constant.ToFloat(best))
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return "(" + s + ")", true
	case constant.Int:
		return "(" + best.ExactString() + ")", true
	}
	return "", false
}

// literal is the value of a literal, possibly signed.
func literal(x ast.Expr) (constant.Value, bool) {
	switch x := x.(type) {
	case *ast.BasicLit:
		v := constant.MakeFromLiteral(x.Value, x.Kind, 0)
		return v, v.Kind() != constant.Unknown
	case *ast.ParenExpr:
		return literal(x.X)
	case *ast.UnaryExpr:
		v, ok := literal(x.X)
		if !ok || (x.Op != token.SUB && x.Op != token.ADD) || v.Kind() == constant.String {
			return nil, false
		}
		return constant.UnaryOp(x.Op, v, 0), true
	}
	return nil, false
}

// funcRange says what x is when a range over it ranges over a function:
// a function literal, a function a cell declared (this one: funcs), a
// variable holding a function, or a call of a cell's function that
// returns one; "" otherwise.
func (e *engine) funcRange(x ast.Expr, funcs map[string]*ast.FuncDecl) string {
	decl := func(name string) *ast.FuncDecl {
		if fd, ok := funcs[name]; ok {
			return fd
		}
		src, ok := e.decls[name]
		if !ok || declKind(src) != "function" {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), "", "package p;"+stripDirectives(src), parser.SkipObjectResolution)
		if err != nil || len(f.Decls) != 1 {
			return nil
		}
		fd, _ := f.Decls[0].(*ast.FuncDecl)
		return fd
	}
	switch x := x.(type) {
	case *ast.ParenExpr:
		return e.funcRange(x.X, funcs)
	case *ast.FuncLit:
		return "a function literal"
	case *ast.Ident:
		if decl(x.Name) != nil {
			return "func " + x.Name
		}
		if e.vars[x.Name] {
			if v, err := e.eval(context.Background(), 1, 1, x.Name); err == nil && unwrapValue(v).Kind() == reflect.Func {
				return x.Name + ", a func"
			}
		}
	case *ast.CallExpr:
		id, ok := x.Fun.(*ast.Ident)
		if !ok {
			return ""
		}
		if fd := decl(id.Name); fd != nil && fd.Type.Results != nil && len(fd.Type.Results.List) == 1 {
			if _, ok := fd.Type.Results.List[0].Type.(*ast.FuncType); ok {
				return id.Name + "(…), which returns a func"
			}
		}
	}
	return ""
}
