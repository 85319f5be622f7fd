package kernel

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"
)

// mainName replaces the name main in cells: yaegi runs a main function of
// the interpreted package on every later evaluation of declarations, so a
// cell's func main would run again and again. The kernel runs it once,
// right after the cell that declares it.
const mainName = "main__"

// edit replaces src[off:off+del] with ins.
type edit struct {
	off, del int
	ins      string
}

// rewrite returns the cell with the changes that make yaegi run it as the
// go command would, none of which adds or removes a line, so that
// positions keep their line:
//
//   - a goroutine started with go gets a deferred recover first: a panic
//     in it would end the kernel. It is reported on the cell's standard
//     error instead. `go f(x)` becomes `go func() { defer …; f(x) }()`,
//     which evaluates x in the new goroutine rather than before it;
//   - closures in a loop see that iteration's loop variables, as since Go
//     1.22 (yaegi shares one variable across iterations): the body starts
//     by copying them, and the closures use the copies;
//   - range over an integer, which yaegi's compiler cannot handle, becomes
//     a three-clause loop when the integer is plainly one (a literal, len,
//     cap, arithmetic on those, or an integer variable of an earlier
//     cell; isInt says which names are);
//   - a top-level definition from one multi-value expression (a, b :=
//     f(), var a, b = f()) defines temporaries, then the names from them:
//     yaegi leaves variables of the first kind unmarked as global, so a
//     function called by another function reads them from its caller's
//     frame;
//   - an if, for, switch, select or block that declares variables runs in
//     a function literal called at once: at the top level, yaegi puts
//     those variables in the cell's scope, where they clobber the cell's
//     own, and fails on multi-value ones ("undefined");
//   - the size arguments of make go through __kernel.Alloc, which checks
//     them against the memory limit before anything is allocated:
//     make([]T, n) becomes make([]T, __kernel.Alloc(([]T)(nil), n, "[]T")),
//     or __kernel.AllocN(int(n), 8, "[]int") when the syntax gives the
//     size of an element, and a literal size that is small stays as it is;
//     unless a cell declared a make of its own (declared says which
//     names earlier cells declared);
//   - main is renamed (see mainName).
//
// Items that do not parse are left alone: yaegi reports their error.
func rewrite(src, cell string, items []item, isInt, declared func(name string) bool) string {
	var edits []edit
	copies := 0
	checkMake := declared == nil || !declared("make")
	for _, it := range items {
		if it.kind != itemStmt && it.kind != itemDecl {
			continue
		}
		edits = append(edits, rewriteItem(src, cell, it, &copies, isInt, checkMake)...)
	}
	edits = append(edits, renameMain(src)...)
	if len(edits) == 0 {
		return src
	}
	// Apply from the end, so offsets stay valid; insertions at one offset
	// keep the order they were made in.
	// An insertion and a replacement at one offset: the replacement goes
	// first, so that the insertion lands before the replaced text.
	slices.SortStableFunc(edits, func(a, b edit) int {
		if a.off != b.off {
			return b.off - a.off
		}
		return min(b.del, 1) - min(a.del, 1)
	})
	out := src
	for _, e := range edits {
		out = out[:e.off] + e.ins + out[e.off+e.del:]
	}
	return out
}

func rewriteItem(src, cell string, it item, copies *int, isInt func(string) bool, checkMake bool) []edit {
	text := src[it.start:it.end]
	prefix := "package p;"
	if it.kind == itemStmt {
		prefix = "package p; func _() {"
		text += "\n}"
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", prefix+text, 0)
	if err != nil {
		return nil
	}
	base := it.start - len(prefix)
	off := func(p token.Pos) int { return fset.Position(p).Offset + base }
	var edits []edit
	insert := func(p token.Pos, s string) { edits = append(edits, edit{off: off(p), ins: s}) }

	// Items are cut at top-level semicolons: one statement or declaration.
	var top ast.Node
	if it.kind == itemStmt {
		if list := f.Decls[0].(*ast.FuncDecl).Body.List; len(list) == 1 {
			top = list[0]
		}
	} else if len(f.Decls) == 1 {
		top = f.Decls[0]
	}
	edits = append(edits, defineGlobals(top, off, copies)...)
	if declaresInBlock(top) {
		insert(top.Pos(), "func() { ")
		insert(top.End(), " }()")
	}

	// Loop variables that closures capture get a per-iteration copy.
	ast.Inspect(f, func(n ast.Node) bool {
		var vars []*ast.Ident
		var body *ast.BlockStmt
		switch n := n.(type) {
		case *ast.ForStmt:
			if as, ok := n.Init.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
				for _, e := range as.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						vars = append(vars, id)
					}
				}
			}
			body = n.Body
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if id, ok := e.(*ast.Ident); ok {
						vars = append(vars, id)
					}
				}
			}
			body = n.Body
		default:
			return true
		}
		objs := map[*ast.Object]string{}
		for _, id := range vars {
			if id.Name != "_" && id.Obj != nil {
				*copies++
				objs[id.Obj] = fmt.Sprintf("__lv%d_%s", *copies, id.Name)
			}
		}
		used := map[*ast.Object]bool{}
		for _, c := range closures(body) {
			ast.Inspect(c, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Obj != nil {
					if name, ok := objs[id.Obj]; ok {
						edits = append(edits, edit{off: off(id.Pos()), del: len(id.Name), ins: name})
						used[id.Obj] = true
					}
				}
				return true
			})
		}
		var decl strings.Builder
		for _, id := range vars {
			if used[id.Obj] {
				fmt.Fprintf(&decl, " %s := %s;", objs[id.Obj], id.Name)
			}
		}
		if decl.Len() > 0 {
			insert(body.Lbrace+1, decl.String())
		}
		return true
	})

	// Range over an integer.
	ast.Inspect(f, func(n ast.Node) bool {
		r, ok := n.(*ast.RangeStmt)
		if !ok || !intExpr(r.X, isInt) || fset.Position(r.X.Pos()).Line != fset.Position(r.X.End()).Line {
			return true
		}
		*copies++
		x := src[off(r.X.Pos()):off(r.X.End())]
		bound := fmt.Sprintf("__rn%d", *copies)
		switch key, _ := r.Key.(*ast.Ident); {
		case r.Key == nil:
			i := fmt.Sprintf("__ri%d", *copies)
			edits = append(edits, edit{off: off(r.Range), del: off(r.X.End()) - off(r.Range),
				ins: fmt.Sprintf("%s, %s := (%s)-(%s), %s; %s < %s; %s++", i, bound, x, x, x, i, bound, i)})
		case key != nil && r.Tok == token.DEFINE:
			edits = append(edits, edit{off: off(r.Key.Pos()), del: off(r.X.End()) - off(r.Key.Pos()),
				ins: fmt.Sprintf("%s, %s := (%s)-(%s), %s; %s < %s; %s++", key.Name, bound, x, x, x, key.Name, bound, key.Name)})
		case r.Tok == token.ASSIGN:
			k := src[off(r.Key.Pos()):off(r.Key.End())]
			edits = append(edits, edit{off: off(r.Key.Pos()), del: off(r.X.End()) - off(r.Key.Pos()),
				ins: fmt.Sprintf("%s = 0; %s < %s; %s++", k, k, x, k)})
		}
		return true
	})

	// A make asks for its memory first. The type is written again, on the
	// same line.
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || !checkMake || len(call.Args) < 2 {
			return true
		}
		if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "make" || id.Obj != nil {
			return true
		}
		typ := src[off(call.Args[0].Pos()):off(call.Args[0].End())]
		elem, known := makeElemSize(call.Args[0])
		if !known && strings.Contains(typ, "\n") {
			return true
		}
		name := strconv.Quote(types.ExprString(call.Args[0]))
		for _, a := range call.Args[1:] {
			if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.INT {
				if n, err := strconv.ParseInt(lit.Value, 0, 64); err == nil && (n == 0 || known && n*elem < 1<<20) {
					continue
				}
			}
			if known {
				insert(a.Pos(), "__kernel.AllocN(int(")
				insert(a.End(), fmt.Sprintf("), %d, %s)", elem, name))
			} else {
				insert(a.Pos(), "__kernel.Alloc(("+typ+")(nil), ")
				insert(a.End(), ", "+name+")")
			}
		}
		return true
	})

	// Goroutines recover their panics.
	ast.Inspect(f, func(n ast.Node) bool {
		g, ok := n.(*ast.GoStmt)
		if !ok {
			return true
		}
		line, col := lineCol(src, off(g.Pos()))
		where := fmt.Sprintf("%q", fmt.Sprintf("%s:%d:%d", cell, line, col))
		if lit, ok := g.Call.Fun.(*ast.FuncLit); ok {
			insert(lit.Body.Lbrace+1, " defer __krecover("+where+");")
		} else {
			insert(g.Call.Pos(), "func() { defer __krecover("+where+"); ")
			insert(g.Call.End(), " }()")
		}
		return true
	})
	return edits
}

// defineGlobals splits a definition from one multi-value expression into
// a definition of temporaries from it and one of the names from those,
// which yaegi marks global. Temporaries are named with n.
func defineGlobals(top ast.Node, off func(token.Pos) int, n *int) []edit {
	var edits []edit
	split := func(names []*ast.Ident, end token.Pos, format string) {
		var lhs, rhs []string
		for _, id := range names {
			if id.Name == "_" {
				continue
			}
			*n++
			tmp := fmt.Sprintf("__kd%d_%s", *n, id.Name)
			edits = append(edits, edit{off: off(id.Pos()), del: len(id.Name), ins: tmp})
			lhs, rhs = append(lhs, id.Name), append(rhs, tmp)
		}
		if len(lhs) > 0 {
			edits = append(edits, edit{off: off(end), ins: fmt.Sprintf(format, strings.Join(lhs, ", "), strings.Join(rhs, ", "))})
		}
	}
	switch top := top.(type) {
	case *ast.AssignStmt:
		if top.Tok != token.DEFINE || len(top.Lhs) < 2 || len(top.Rhs) != 1 {
			return nil
		}
		var names []*ast.Ident
		for _, l := range top.Lhs {
			id, ok := l.(*ast.Ident)
			if !ok {
				return nil
			}
			names = append(names, id)
		}
		split(names, top.End(), "; %s := %s")
	case *ast.GenDecl:
		if top.Tok != token.VAR {
			return nil
		}
		format := "; var %s = %s"
		if top.Lparen.IsValid() {
			format = "; %s = %s"
		}
		for _, s := range top.Specs {
			if v := s.(*ast.ValueSpec); len(v.Names) > 1 && len(v.Values) == 1 {
				split(v.Names, v.End(), format)
			}
		}
	}
	return edits
}

// declaresInBlock reports whether st is a statement with blocks that
// declares variables, in its blocks or its header, outside function
// literals (which have their own scope in yaegi too).
func declaresInBlock(st ast.Node) bool {
	switch st.(type) {
	case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt,
		*ast.SelectStmt, *ast.BlockStmt, *ast.LabeledStmt:
	default:
		return false
	}
	found := false
	ast.Inspect(st, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			found = found || n.Tok == token.DEFINE
		case *ast.RangeStmt:
			found = found || n.Tok == token.DEFINE
		case *ast.DeclStmt:
			found = true
		}
		return !found
	})
	return found
}

// lineCol returns the 1-based line and column (in bytes) of offset off
// in src.
func lineCol(src string, off int) (line, col int) {
	line = 1 + strings.Count(src[:off], "\n")
	return line, off - strings.LastIndexByte(src[:off], '\n')
}

// intExpr reports whether x is plainly an integer: a literal, len or cap,
// arithmetic on those, or a name isInt knows as an integer.
func intExpr(x ast.Expr, isInt func(string) bool) bool {
	switch x := x.(type) {
	case *ast.BasicLit:
		return x.Kind == token.INT
	case *ast.ParenExpr:
		return intExpr(x.X, isInt)
	case *ast.CallExpr:
		id, ok := x.Fun.(*ast.Ident)
		return ok && (id.Name == "len" || id.Name == "cap")
	case *ast.BinaryExpr:
		switch x.Op {
		case token.ADD, token.SUB, token.MUL, token.QUO, token.REM, token.SHL, token.SHR, token.AND, token.OR, token.XOR:
			return intExpr(x.X, isInt) && intExpr(x.Y, isInt)
		}
	case *ast.Ident:
		return isInt != nil && isInt(x.Name)
	}
	return false
}

// makeElemSize is the size of an element of the type made, typ, when the
// type says it: a slice, map or channel of predeclared types, pointers,
// slices and the like, but not of named or array types.
func makeElemSize(typ ast.Expr) (int64, bool) {
	switch t := ast.Unparen(typ).(type) {
	case *ast.ArrayType:
		if t.Len == nil {
			return typeSize(t.Elt)
		}
	case *ast.ChanType:
		return typeSize(t.Value)
	case *ast.MapType:
		k, ok1 := typeSize(t.Key)
		v, ok2 := typeSize(t.Value)
		return k + v, ok1 && ok2
	}
	return 0, false
}

// typeSize is the size of a value of type t on a 64-bit machine, for the
// types whose size the syntax says.
func typeSize(t ast.Expr) (int64, bool) {
	switch t := ast.Unparen(t).(type) {
	case *ast.Ident:
		n, ok := predeclaredSizes[t.Name]
		return n, ok
	case *ast.StarExpr, *ast.MapType, *ast.ChanType, *ast.FuncType:
		return 8, true
	case *ast.InterfaceType:
		return 16, true
	case *ast.ArrayType:
		return 24, t.Len == nil
	}
	return 0, false
}

var predeclaredSizes = map[string]int64{
	"bool": 1, "int8": 1, "uint8": 1, "byte": 1, "int16": 2, "uint16": 2,
	"int32": 4, "uint32": 4, "rune": 4, "float32": 4,
	"int": 8, "uint": 8, "int64": 8, "uint64": 8, "uintptr": 8, "float64": 8, "complex64": 8,
	"complex128": 16, "string": 16, "any": 16, "error": 16,
}

// closures returns what in body runs after the iteration that started it
// may have ended: function literals, and the calls of go statements (which
// rewrite wraps in one).
func closures(body *ast.BlockStmt) []ast.Node {
	var out []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			out = append(out, n)
			return false
		case *ast.GoStmt:
			out = append(out, n.Call)
			return false
		}
		return true
	})
	return out
}

// renameMain renames every identifier main that is not a field or method
// selector.
func renameMain(src string) []edit {
	if !strings.Contains(src, "main") {
		return nil
	}
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(src))
	var s scanner.Scanner
	s.Init(file, []byte(src), nil, 0)
	var edits []edit
	prev := token.ILLEGAL
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return edits
		}
		if tok == token.IDENT && lit == "main" && prev != token.PERIOD {
			edits = append(edits, edit{off: file.Offset(pos), del: len(lit), ins: mainName})
		}
		prev = tok
	}
}
