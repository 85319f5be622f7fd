package kernel

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strconv"
)

// yaegi indexes and slices through reflect, whose panics do not say
// what Go's do. The kernel words them as Go does ("runtime error: index
// out of range [5] with length 3"), reading the index and the length
// again when the expression that failed, at the position of the
// innermost frame, uses only literals and top-level names: the cell that
// panicked cannot have changed those since. Otherwise the message has
// Go's words without the numbers.
var boundsPanics = map[string]bool{ // reflect's message → whether of an index
	"reflect: slice index out of range":                     true,
	"reflect: array index out of range":                     true,
	"reflect: string index out of range":                    true,
	"reflect.Value.Slice: slice index out of bounds":        false,
	"reflect.Value.Slice: string slice index out of bounds": false,
	"reflect.Value.Slice3: slice index out of bounds":       false,
}

// boundsMessage is Go's message for a reflect panic of an index or a
// slice out of range, and value for any other panic.
func (e *engine) boundsMessage(value string, frames []string) string {
	index, ok := boundsPanics[value]
	if !ok {
		return value
	}
	generic := "runtime error: slice bounds out of range"
	if index {
		generic = "runtime error: index out of range"
	}
	if len(frames) == 0 {
		return generic
	}
	m := panicFrameRE.FindStringSubmatch(frames[0] + "\n")
	if m == nil {
		return generic
	}
	enc, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	cell, line, ok := e.position(enc)
	if !ok || cell.code == "" {
		return generic
	}
	defer func() { // evaluating resets them
		e.mu.Lock()
		e.frames = frames
		e.mu.Unlock()
	}()
	// Innermost first: xs[1][5] starts where xs[1] does.
	for _, x := range boundsExprs(cell.code, line, col) {
		if msg, ok := e.outOfRange(x); ok {
			return msg
		}
	}
	// yaegi points at the first statement of some runs of statements:
	// the expression of the cell that is out of range, if only one is.
	var found []string
	for _, x := range boundsExprs(cell.code, 0, 0) {
		if msg, ok := e.outOfRange(x); ok {
			found = append(found, msg)
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return generic
}

// outOfRange is Go's message for x, an index or slice expression of plain
// operands, when their values now put it out of range.
func (e *engine) outOfRange(x boundsExpr) (string, bool) {
	v, err := e.eval(context.Background(), 1, 1, x.x)
	v = unwrapValue(v)
	if err != nil || !v.IsValid() {
		return "", false
	}
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	var n, c int64
	switch v.Kind() {
	case reflect.Slice:
		n, c = int64(v.Len()), int64(v.Cap())
	case reflect.Array, reflect.String:
		n, c = int64(v.Len()), int64(v.Len())
	default:
		return "", false
	}
	ints := make([]int64, len(x.ops))
	for i, op := range x.ops {
		switch {
		case op != "":
			val, ok := e.intValue(op)
			if !ok {
				return "", false
			}
			ints[i] = val
		case i == 1: // s[a:]
			ints[i] = n
		}
	}
	if x.index {
		if i := ints[0]; i < 0 || i >= n {
			return fmt.Sprintf("runtime error: index out of range [%d] with length %d", i, n), true
		}
		return "", false
	}
	if len(ints) != 2 {
		return "", false // s[a:b:c]: Go's cases are many; the plain words do
	}
	lo, hi := ints[0], ints[1]
	switch {
	case hi > c && v.Kind() == reflect.Slice:
		return fmt.Sprintf("runtime error: slice bounds out of range [:%d] with capacity %d", hi, c), true
	case hi > n:
		return fmt.Sprintf("runtime error: slice bounds out of range [:%d] with length %d", hi, n), true
	case lo > hi:
		return fmt.Sprintf("runtime error: slice bounds out of range [%d:%d]", lo, hi), true
	}
	return "", false
}

// intValue evaluates src, an integer expression of plain operands.
func (e *engine) intValue(src string) (int64, bool) {
	v, err := e.eval(context.Background(), 1, 1, src)
	if v = unwrapValue(v); err != nil || !v.IsValid() {
		return 0, false
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int64(v.Uint()), true
	}
	return 0, false
}

// boundsExpr is an index (ops: the index) or slice expression (ops: low,
// high and max, "" where absent), as source.
type boundsExpr struct {
	index bool
	x     string
	ops   []string
	size  int // of its source
}

// boundsExprs are the index and slice expressions of plain operands
// around line:col of code (a cell as evaluated), innermost first; all of
// them for line 0.
func boundsExprs(code string, line, col int) []boundsExpr {
	items, err := splitCell(code)
	if err != nil {
		return nil
	}
	var out []boundsExpr
	for _, it := range items {
		if line > 0 && (it.line > line || lineOfOffset(code, it.end) < line) {
			continue
		}
		prefix, suffix := "package p;", ""
		if it.kind == itemStmt {
			prefix, suffix = "package p; func _() {", "\n}"
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "", prefix+code[it.start:it.end]+suffix, 0)
		if err != nil {
			continue
		}
		src := func(x ast.Expr) string {
			if x == nil {
				return ""
			}
			return code[fset.Position(x.Pos()).Offset-len(prefix)+it.start : fset.Position(x.End()).Offset-len(prefix)+it.start]
		}
		// The frame points into the expression: at its start, or at its
		// index when that is computed.
		at := func(n ast.Node) bool {
			if line == 0 {
				return true
			}
			l1, c1 := lineCol(code, fset.Position(n.Pos()).Offset-len(prefix)+it.start)
			l2, c2 := lineCol(code, fset.Position(n.End()).Offset-len(prefix)+it.start)
			return (l1 < line || l1 == line && c1 <= col) && (line < l2 || line == l2 && col < c2)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.IndexExpr:
				if at(n) && plain(n.X) && plain(n.Index) {
					out = append(out, boundsExpr{index: true, x: src(n.X), ops: []string{src(n.Index)}, size: int(n.End() - n.Pos())})
				}
			case *ast.SliceExpr:
				if at(n) && plain(n.X) && plain(n.Low) && plain(n.High) && plain(n.Max) {
					ops := []string{src(n.Low), src(n.High)}
					if n.Slice3 {
						ops = append(ops, src(n.Max))
					}
					out = append(out, boundsExpr{x: src(n.X), ops: ops, size: int(n.End() - n.Pos())})
				}
			}
			return true
		})
	}
	slices.SortStableFunc(out, func(a, b boundsExpr) int { return a.size - b.size })
	return out
}

// plain reports whether evaluating x again, at the top level, gives what
// it gave: literals, names not declared where x is (top-level ones),
// fields of those, arithmetic, len and cap.
func plain(x ast.Expr) bool {
	switch x := x.(type) {
	case nil:
		return true
	case *ast.BasicLit:
		return true
	case *ast.Ident:
		return x.Obj == nil
	case *ast.SelectorExpr:
		return plain(x.X)
	case *ast.ParenExpr:
		return plain(x.X)
	case *ast.UnaryExpr:
		return (x.Op == token.SUB || x.Op == token.ADD) && plain(x.X)
	case *ast.BinaryExpr:
		return plain(x.X) && plain(x.Y)
	case *ast.IndexExpr:
		return plain(x.X) && plain(x.Index)
	case *ast.CallExpr:
		id, ok := x.Fun.(*ast.Ident)
		return ok && id.Obj == nil && (id.Name == "len" || id.Name == "cap") && len(x.Args) == 1 && plain(x.Args[0])
	}
	return false
}

// lineOfOffset is the 1-based line of offset off in src.
func lineOfOffset(src string, off int) int {
	l, _ := lineCol(src, off)
	return l
}
