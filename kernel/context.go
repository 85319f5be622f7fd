package kernel

import (
	"context"
	"fmt"
)

// ctxName is the variable that holds, while a cell runs, that cell's
// context: the prelude declares it, and the kernel sets it before each
// cell (see the package documentation).
const ctxName = "ctx"

// ctxPrelude declares ctx in the interpreter; bindCtx hands the kernel
// the variable, which compiled code can then set.
const (
	ctxPrelude = "\n// The running cell's context.\nvar " + ctxName + " = __kernel.Background()"
	bindCtx    = "__kernel.BindContext(&" + ctxName + ")"
)

// bindContext is __kernel.BindContext.
func (e *engine) bindContext(p *context.Context) { e.ctxVar = p }

// setContext makes ctx what cells read as ctx. A cell that declared a
// variable ctx of its own made a new variable (x := … at the top level
// declares x anew): it is bound again, so that the cells after it read
// their own context too. One of another type is the cell's, and left
// alone.
func (e *engine) setContext(ctx context.Context) {
	if e.ctxVar == nil {
		return
	}
	if e.declared(ctxName) {
		e.evalIn(context.Background(), bindCtx)
	}
	*e.ctxVar = ctx
}

// noteWaiting is said on the cell's standard error when a stopped cell
// does not end (see awaitStopped).
func (e *engine) noteWaiting() {
	fmt.Fprintln(e.stderr, "The cell was stopped; the kernel waits for the compiled call it is in to return. "+
		"A call that takes ctx returns at once.")
}
