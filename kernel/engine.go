package kernel

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"path"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/traefik/yaegi/interp"
	"github.com/traefik/yaegi/stdlib"

	"github.com/evalcapsule/evalcapsule/kernel/display"
	"github.com/evalcapsule/evalcapsule/kernel/internal/symbols"
)

// runtimePath is the import path of the kernel's own helpers in cells,
// which only the kernel's rewriting refers to.
const runtimePath = "evalcapsule.kernel/runtime"

// prelude defines what rewritten cells call: the recover that goroutines
// defer. It must be interpreted: recover works only in the deferred
// function itself.
const prelude = `import __kernel "` + runtimePath + `"

func __krecover(at string) {
	if r := recover(); r != nil {
		__kernel.GoPanic(at, r)
	}
}

// The cell's result, and what result and defineDynamic assign to: plain
// assignments, which yaegi's global type analysis does not see.
var __kr, __krecv, __kv0, __kv1, __kv2, __kv3, __kv4, __kv5, __kv6, __kv7 interface{}
var __kok bool
var __kps string
var __kpb []byte
var __kpe error`

// engine runs cells in one yaegi interpreter whose state lasts the
// kernel's life.
type engine struct {
	in *interp.Interpreter
	// exports is every package cells can import, by "path/name", for
	// completion and inspection (interp.Symbols cannot list them).
	exports interp.Exports

	// imports are the import specs ("name path") already evaluated: yaegi
	// rejects a second import of a package ("redeclared"), and re-running
	// a cell must work.
	imports map[string]bool
	// pkgNames maps the names cells refer to packages by to their paths.
	pkgNames map[string]string

	// cells are the cells run, by id, for tracebacks: positions in
	// errors and panics carry the id (see directive).
	cells map[int]cellSource
	// cur is the id of the running cell.
	cur int
	// types and methods are the latest declarations of types declared in
	// cells and of their methods: a type declared again is declared anew
	// with its methods (see forgetGlobal).
	types   map[string]string
	methods map[string]map[string]string
	// decls is the latest declaration of every name a cell declared at
	// top level, shown by inspect.
	decls map[string]string
	// aliases are the names under which the kernel imported packages for
	// its own use, by path.
	aliases map[string]string
	// vars are the variables statements of cells declared (x := 1).
	vars map[string]bool
	// units are the top-level declarations of cells, which a
	// redefinition evaluates again (see redefined); owner is the unit
	// that declares each name now, and seq counts evaluations of units.
	units []*unit
	owner map[string]*unit
	seq   int
	// shows are the display methods (HTML, String…) declared on types in
	// cells: those values' methods are not visible to compiled code.
	shows map[string]bool
	// serial counts executions, naming those kept out of the history.
	serial int
	// limits bound the memory and stack of cells.
	limits *limits
	// lastEval is the goroutine that started the last evaluation (see
	// evaluating).
	lastEval string
	// ctxVar is the variable ctx of cells (see setContext).
	ctxVar *context.Context
	// stderr is the cells' standard error.
	stderr io.Writer

	mu     sync.Mutex
	frames []string // the panic frames yaegi printed for the running cell
}

// outcome is what running a cell gave.
type outcome struct {
	result  display.Data
	err     *cellError
	payload []any // pager content for `symbol?`
}

// newEngine returns an interpreter whose cells read stdin and write to
// stdout and stderr; goPanic receives the panics recovered in goroutines.
func newEngine(stdout, stderr io.Writer, stdin io.Reader, goPanic func(where string, value any)) (*engine, error) {
	e := &engine{
		exports:  interp.Exports{},
		imports:  map[string]bool{},
		pkgNames: map[string]string{},
		cells:    map[int]cellSource{},
		types:    map[string]string{},
		methods:  map[string]map[string]string{},
		decls:    map[string]string{},
		shows:    map[string]bool{},
		vars:     map[string]bool{},
		owner:    map[string]*unit{},
		aliases:  map[string]string{},
		limits:   newLimits(0, 0),
		stderr:   stderr,
	}
	// With special stdio, os.Stdout and friends in cells are the writers
	// given here, not the process's file descriptors (which Jupyter sends
	// to its log). yaegi reads the variable in New.
	old, had := os.LookupEnv("YAEGI_SPECIAL_STDIO")
	os.Setenv("YAEGI_SPECIAL_STDIO", "1")
	e.in = interp.New(interp.Options{
		Stdout: stdout,
		Stderr: panicFrames{e, stderr},
		Stdin:  stdin,
		Env:    os.Environ(),
	})
	if had {
		os.Setenv("YAEGI_SPECIAL_STDIO", old)
	} else {
		os.Unsetenv("YAEGI_SPECIAL_STDIO")
	}
	for _, s := range []interp.Exports{stdlib.Symbols, symbols.Symbols, symbols.Exec} {
		if err := e.in.Use(s); err != nil {
			return nil, err
		}
		maps.Copy(e.exports, s)
	}
	if err := useCellLogs(e.in, stderr); err != nil {
		return nil, err
	}
	alloc := func(typ, n any, name string) int { return e.limits.alloc(typ, n, name) }
	allocN := func(n, elem int, name string) int { return e.limits.allocN(n, elem, name) }
	if err := e.in.Use(interp.Exports{runtimePath + "/runtime": {
		"GoPanic": reflect.ValueOf(goPanic), "Alloc": reflect.ValueOf(alloc), "AllocN": reflect.ValueOf(allocN),
		"Background": reflect.ValueOf(context.Background), "BindContext": reflect.ValueOf(e.bindContext),
	}}); err != nil {
		return nil, err
	}
	if _, err := e.in.Eval(prelude + ctxPrelude); err != nil {
		return nil, fmt.Errorf("kernel prelude: %w", err)
	}
	if _, err := e.in.Eval(bindCtx); err != nil {
		return nil, fmt.Errorf("kernel prelude: %w", err)
	}
	if err := e.useBuiltins(); err != nil {
		return nil, err
	}
	return e, nil
}

// panicFrames is the interpreter's standard error. yaegi prints a line
// "file:line:col: panic: func(...)" for each frame a panic unwinds; those
// lines become the traceback instead of output.
type panicFrames struct {
	e    *engine
	next io.Writer
}

var panicFrameRE = regexp.MustCompile(`^(?:\S*:)?(\d+):(\d+): panic: (.*)\n$`)

func (p panicFrames) Write(b []byte) (int, error) {
	if panicFrameRE.Match(b) {
		p.e.mu.Lock()
		p.e.frames = append(p.e.frames, string(b[:len(b)-1]))
		p.e.mu.Unlock()
		return len(b), nil
	}
	return p.next.Write(b)
}

// chunk is consecutive items of one kind, evaluated together.
type chunk struct {
	kind       itemKind
	start, end int
	line, col  int
}

// run executes one cell named name ("In[3]").
func (e *engine) run(ctx context.Context, name, src string) outcome {
	ctx, stop := e.limits.watch(ctx)
	defer stop()
	ctx, cancel := context.WithCancel(ctx) // ctx ends with its cell
	defer cancel()
	e.setContext(ctx)
	e.begin(name, src)
	if topic, imports, ok := helpTopic(src); ok {
		if imports != "" {
			if err := e.importChunk(ctx, chunk{kind: itemImport, line: 1, col: 1}, imports); err != nil {
				return outcome{err: e.cellError(err)}
			}
		}
		return outcome{payload: []any{map[string]any{
			"source": "page", "start": 0,
			"data": map[string]any{"text/plain": e.help(topic)},
		}}}
	}
	items, err := splitCell(src)
	if err != nil {
		return outcome{err: e.compileError(e.scanError(err))}
	}
	if err := e.checkAssignments(src, items); err != nil {
		return outcome{err: e.compileError(err)}
	}
	src = rewrite(src, name, items, e.isInt, e.declared)
	if src, err = e.rewriteBuiltins(src, e.cur); err != nil {
		return outcome{err: e.compileError(err)}
	}
	if c, ok := e.cells[e.cur]; ok {
		c.code = src
		e.cells[e.cur] = c
	}
	if items, err = splitCell(src); err != nil {
		return outcome{err: e.compileError(err)}
	}

	// The last item is the cell's result when it is an expression.
	var last *item
	if n := len(items); n > 0 && items[n-1].kind == itemStmt {
		if _, err := parser.ParseExpr(src[items[n-1].start:items[n-1].end]); err == nil {
			last = &items[n-1]
			items = items[:n-1]
		}
	}
	declaresMain := false
	for _, c := range group(items) {
		text := src[c.start:c.end]
		var err error
		var changed map[string]bool
		var fresh []*unit
		switch c.kind {
		case itemImport:
			err = e.importChunk(ctx, c, text)
		case itemDecl:
			declaresMain = declaresMain || strings.Contains(text, mainName)
			if err = e.shadowing(declaredNames(text), c.line, c.col, text); err == nil {
				changed, fresh, err = e.declChunk(ctx, c, text)
			}
		case itemStmt:
			changed, err = e.stmtChunk(ctx, c, text)
		}
		if err != nil {
			return outcome{err: e.cellError(e.explain(err, c.kind, c.line, c.col, text))}
		}
		if err := e.redefined(ctx, changed, fresh); err != nil {
			return outcome{err: e.cellError(err)}
		}
	}
	// The value of the last line, then main: a func main runs after
	// the cell's statements, all of them.
	var data display.Data
	if last != nil {
		var cerr *cellError
		if data, cerr = e.result(ctx, *last, src[last.start:last.end]); cerr != nil {
			return outcome{err: cerr}
		}
	}
	if declaresMain {
		if _, ok := e.decls[mainName]; ok {
			if _, err := e.eval(ctx, 1, 1, mainName+"()"); err != nil {
				return outcome{err: e.cellError(err)}
			}
		}
	}
	return outcome{result: data}
}

// stmtChunk evaluates statements, and returns the names they declared
// anew (x := 2 after x := 1).
func (e *engine) stmtChunk(ctx context.Context, c chunk, text string) (map[string]bool, error) {
	defs := definedNames(text)
	if err := e.shadowing(defs, c.line, c.col, text); err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	for _, d := range defs {
		if e.known(d.name) {
			changed[d.name] = true
		}
	}
	_, err := e.eval(ctx, c.line, c.col, text)
	if e.typingFailure(err) && len(e.undefined(itemStmt, text)) == 0 {
		err = e.stepwise(ctx, c, text)
	}
	if err != nil && !e.ran(err) {
		return nil, err
	}
	// Compiled, the variables are declared anew, even when the
	// statements then panicked.
	e.declaredVars(text)
	for n := range changed {
		// A variable of statements now: not a declaration's.
		e.release(n)
		delete(e.decls, n)
	}
	if err != nil {
		e.redefined(ctx, changed, nil)
		return nil, err
	}
	return changed, nil
}

// declaredVars records the variables the top-level statements of text
// declare.
func (e *engine) declaredVars(text string) {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p; func _() {"+text+"\n}", parser.SkipObjectResolution)
	if err != nil {
		return
	}
	for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, l := range st.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
						e.vars[id.Name] = true
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := st.Decl.(*ast.GenDecl); ok {
				for _, s := range g.Specs {
					if v, ok := s.(*ast.ValueSpec); ok {
						for _, id := range v.Names {
							e.vars[id.Name] = true
						}
					}
				}
			}
		}
	}
}

// isInt reports whether name is a variable or constant of integer kind
// that a cell declared.
func (e *engine) isInt(name string) bool {
	if !e.vars[name] {
		if _, ok := e.decls[name]; !ok {
			return false
		}
	}
	v, err := e.eval(context.Background(), 1, 1, name)
	if v = unwrapValue(v); err != nil || !v.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// group merges consecutive items of one kind; package clauses go.
func group(items []item) []chunk {
	var out []chunk
	for _, it := range items {
		if it.kind == itemPackage {
			continue
		}
		if n := len(out); n > 0 && out[n-1].kind == it.kind {
			out[n-1].end = it.end
			continue
		}
		out = append(out, chunk{kind: it.kind, start: it.start, end: it.end, line: it.line, col: it.col})
	}
	return out
}

// eval evaluates src, which starts at line:col of the running cell (see
// directive). A panic inside yaegi's compiler (it has some) is an error
// like any other.
func (e *engine) eval(ctx context.Context, line, col int, src string) (v reflect.Value, err error) {
	return e.evalAs(ctx, "", line, col, src, "")
}

// evalAs evaluates lhs, then expr at line:col of the running cell, then
// tail: lhs ("__kr :=") stays on a line of its own, so that the
// expression keeps its columns.
func (e *engine) evalAs(ctx context.Context, lhs string, line, col int, expr, tail string) (v reflect.Value, err error) {
	e.mu.Lock()
	e.frames = nil
	e.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = internalError{r}
		}
	}()
	src := lhs + directive(e.cur, line, col) + expr + tail
	if lhs == "" && strings.HasPrefix(strings.TrimSpace(expr), "func") {
		// yaegi takes source starting with func for a declaration, and a
		// function literal called at the top level would become a main
		// that runs again on every later evaluation.
		src = ";" + src
	}
	return e.evalIn(ctx, src)
}

// evalIn evaluates src under ctx. When ctx is done first, it returns
// once the stopped evaluation has ended (see awaitStopped): a cell
// stopped at a limit with its *limitError, one that went on for a while
// with a *lateStop.
func (e *engine) evalIn(ctx context.Context, src string) (v reflect.Value, err error) {
	e.lastEval = evaluate(func() { v, err = e.in.EvalWithContext(ctx, src) })
	if err == nil || ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return v, err
	}
	late := awaitStopped(e.lastEval, e.noteWaiting)
	var le *limitError
	if errors.As(context.Cause(ctx), &le) {
		err = le
	}
	if late > lateAfter {
		err = &lateStop{err, late}
	}
	return v, err
}

// declared reports whether a cell declared name at top level.
func (e *engine) declared(name string) bool {
	_, ok := e.decls[name]
	return ok || e.vars[name]
}

// Positions. yaegi keys imports by the file name of positions, so a //line
// directive cannot name the cell: it keeps the file name and encodes the
// cell in the line number instead, id*cellLines + line, which the kernel
// decodes in messages and panic frames.
const (
	cellLines = 100000 // lines a cell may have
	maxCells  = 10000  // ids before they are reused: cellLines*maxCells < 1<<30, the scanner's limit
)

// cellSource is a cell as its traceback shows it.
type cellSource struct {
	name  string // "In[3]"
	lines []string
	code  string // the cell as evaluated, after rewrite: positions point into it
}

// begin registers a new cell and makes it the running one.
func (e *engine) begin(name, src string) {
	e.serial++
	e.cur = (e.serial-1)%maxCells + 1
	e.cells[e.cur] = cellSource{name: name, lines: strings.Split(src, "\n")}
}

// directive is the //line comment that puts what follows at line:col of
// cell id.
func directive(id, line, col int) string {
	return rawDirective(id*cellLines+line, col)
}

func rawDirective(encodedLine, col int) string {
	return "\n//line :" + strconv.Itoa(encodedLine) + ":" + strconv.Itoa(max(col, 1)) + "\n"
}

// position decodes an encoded line: the cell's name, its line and lines.
func (e *engine) position(encodedLine int) (cellSource, int, bool) {
	c, ok := e.cells[encodedLine/cellLines]
	return c, encodedLine % cellLines, ok && encodedLine >= cellLines
}

// importChunk evaluates the imports not evaluated before.
func (e *engine) importChunk(ctx context.Context, c chunk, text string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", "package p;"+text, parser.ImportsOnly)
	if err != nil {
		_, err = e.eval(ctx, c.line, c.col, text) // yaegi words the error
		return err
	}
	const shift = len("package p;")
	var fresh []*ast.ImportSpec
	var specs []string
	for _, spec := range f.Imports {
		if !e.imports[importKey(spec)] {
			fresh = append(fresh, spec)
			specs = append(specs, text[fset.Position(spec.Pos()).Offset-shift:fset.Position(spec.End()).Offset-shift])
		}
	}
	for _, spec := range fresh {
		p, _ := strconv.Unquote(spec.Path.Value)
		name := e.packageName(p)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		if name != "_" && name != "." && e.known(name) {
			pos := fset.Position(spec.Pos())
			l, col := lineCol(text, pos.Offset-shift)
			if l == 1 {
				col += c.col - 1
			}
			return fmt.Errorf("%d:%d: %s redeclared: a cell declared %s; import the package under another name (import x %s)",
				e.cur*cellLines+c.line+l-1, col, name, name, spec.Path.Value)
		}
	}
	switch {
	case len(fresh) == 0:
		return nil
	case len(fresh) < len(f.Imports):
		text = "import (" + strings.Join(specs, "; ") + ")"
	}
	if _, err := e.eval(ctx, c.line, c.col, text); err != nil {
		return err
	}
	for _, spec := range fresh {
		e.imports[importKey(spec)] = true
		p, _ := strconv.Unquote(spec.Path.Value)
		switch {
		case spec.Name == nil:
			e.pkgNames[e.packageName(p)] = p
		case spec.Name.Name != "_" && spec.Name.Name != ".":
			e.pkgNames[spec.Name.Name] = p
		}
	}
	return nil
}

func importKey(spec *ast.ImportSpec) string {
	if spec.Name != nil {
		return spec.Name.Name + " " + spec.Path.Value
	}
	return spec.Path.Value
}

// packageName is the name a package at path declares, from the symbol
// tables ("path/name"), or its last element.
func (e *engine) packageName(p string) string {
	for key := range e.exports {
		if strings.HasPrefix(key, p+"/") && !strings.Contains(key[len(p)+1:], "/") {
			return key[len(p)+1:]
		}
	}
	return path.Base(p)
}
