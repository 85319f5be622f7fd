package kernel

import (
	"context"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/traefik/yaegi/interp"
)

type cellKey struct{}

// hooks are compiled functions that test cells call: Started says the
// cell runs, Is reports whether a context is the one of cell n, Block
// stands for compiled work that takes no context, Work for work that
// takes one.
type hooks struct {
	started chan struct{}
	release chan struct{}
	ended   atomic.Bool
}

func useHooks(t *testing.T, te *testEngine) *hooks {
	t.Helper()
	h := &hooks{started: make(chan struct{}, 1), release: make(chan struct{})}
	if err := te.in.Use(interp.Exports{"test/hooks/hooks": {
		"Started": reflect.ValueOf(func() { h.started <- struct{}{} }),
		"Is":      reflect.ValueOf(func(ctx context.Context, n int) bool { return ctx.Value(cellKey{}) == n }),
		"Block":   reflect.ValueOf(func() { <-h.release; h.ended.Store(true) }),
		"Work":    reflect.ValueOf(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }),
	}}); err != nil {
		t.Fatal(err)
	}
	if _, ename, evalue, _ := te.cell(`import "test/hooks"`); ename != "" {
		t.Fatalf("import: %s: %s", ename, evalue)
	}
	return h
}

// runAs runs src under a context that hooks.Is knows as cell n.
func (te *testEngine) runAs(ctx context.Context, n int, src string) outcome {
	te.n++
	return te.run(context.WithValue(ctx, cellKey{}, n), "In[x]", src)
}

// TestCellContext: ctx is the running cell's context, in the cell and in
// the functions cells declared; it ends with the cell; a cell that
// declares a ctx of its own has it, and the cells after it theirs again.
func TestCellContext(t *testing.T) {
	te := newTestEngine(t)
	useHooks(t, te)
	te.cell(`import "context"`)
	te.cell("func isCell(n int) bool { return hooks.Is(ctx, n) }\nvar kept context.Context")
	for n := 1; n <= 2; n++ {
		o := te.runAs(context.Background(), n, "kept = ctx\nhooks.Is(ctx, "+itoa(n)+") && isCell("+itoa(n)+") && ctx.Err() == nil")
		if r := plainText(o); r != "true" {
			t.Errorf("cell %d: %s", n, r)
		}
		if r, _, _, _ := te.cell("kept.Err() != nil"); r != "true" {
			t.Errorf("the context of cell %d did not end with it: %s", n, r)
		}
	}
	if r := plainText(te.runAs(context.Background(), 3, "ctx := context.Background()\nhooks.Is(ctx, 3)")); r != "false" {
		t.Errorf("a cell's own ctx: %s", r)
	}
	if r := plainText(te.runAs(context.Background(), 4, "hooks.Is(ctx, 4)")); r != "true" {
		t.Errorf("the cell after one that declared ctx: %s", r)
	}
	if r := plainText(te.runAs(context.Background(), 5, "var ctx = 5\nctx + 1")); r != "6" {
		t.Errorf("a ctx of another type: %s", r)
	}
}

// TestInterruptWaitsForCompiledCall: a cell interrupted in a compiled call
// that takes no context ends when the call returns, not before, and its
// error says how long it went on.
func TestInterruptWaitsForCompiledCall(t *testing.T) {
	te := newTestEngine(t)
	h := useHooks(t, te)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-h.started
		cancel()
		time.Sleep(lateAfter + 200*time.Millisecond)
		close(h.release)
	}()
	o := te.run(ctx, "In[2]", "hooks.Started()\nhooks.Block()\nfor {\n}")
	if !h.ended.Load() {
		t.Error("the cell returned before the compiled call it was in")
	}
	if o.err == nil || o.err.name != enameInterrupt || !strings.Contains(o.err.value, "the cell was still running for 1.") ||
		!strings.Contains(o.err.value, "s after it was interrupted, in a compiled call that does not take the cell's context") {
		t.Fatalf("got %+v", o.err)
	}
	if r, _, _, _ := te.cell("3"); r != "3" {
		t.Errorf("after the interrupt: %q", r)
	}
}

// TestInterruptStopsCompiledCall: a compiled call that takes the cell's
// ctx stops with the cell, which ends with a plain interrupt.
func TestInterruptStopsCompiledCall(t *testing.T) {
	te := newTestEngine(t)
	h := useHooks(t, te)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-h.started
		cancel()
	}()
	o := te.run(ctx, "In[3]", "hooks.Started()\nhooks.Work(ctx)\nfor {\n}")
	if o.err == nil || o.err.name != enameInterrupt || o.err.value != interruptedMsg {
		t.Fatalf("got %+v", o.err)
	}
}

func plainText(o outcome) string {
	if o.err != nil {
		return o.err.name + ": " + o.err.value
	}
	data, _ := o.result.MIMEBundle()
	s, _ := data["text/plain"].(string)
	return s
}

func itoa(n int) string { return string(rune('0' + n)) }
