package kernel

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"math/bits"
	"os"
	"reflect"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// What a cell may use. Go has no way to refuse memory or stack to one
// goroutine: an allocation the runtime cannot satisfy, or a stack that
// would pass its maximum, ends the process. So the kernel watches while a
// cell runs: every watchEvery it reads the heap and the stacks from
// runtime/metrics, and stops the cell (as an interrupt does, which
// unwinds interpreted code at once) when they pass the limits. The
// stacks grow by about a kilobyte per interpreted call, so deep
// recursion takes a good second to go from StackLimit to Go's maximum:
// ample time. The stopped cell's error goes out once its goroutine has
// ended (awaitStopped). A make in a cell, which can ask for any amount
// at once, is checked before it allocates (the rewriting calls
// __kernel.Alloc).
const (
	defaultStackLimit = 128 << 20
	// maxStackLimit: Go ends the process when a goroutine's stack would
	// double past 512 MiB (the maximum is 1 GB), and the kernel must stop
	// the cell before.
	maxStackLimit = 256 << 20
	// defaultMemoryLimit is the limit where the machine's memory is
	// unknown.
	defaultMemoryLimit = 4 << 30
	watchEvery         = 5 * time.Millisecond
	// lateAfter is how long a stopped cell may take to end before its
	// error says how long it went on (see awaitStopped): interpreted
	// code unwinds in well under that.
	lateAfter = time.Second
	// noteAfter is when a cell that does not end after it was stopped
	// says on its standard error what the kernel waits for.
	noteAfter = 2 * time.Second
	// bigAlloc is the size from which a make is checked against the heap
	// in use, not only against the limit.
	bigAlloc = 1 << 20
)

// Names of the errors of a cell stopped at a limit.
const (
	enameMemory = "MemoryError"
	enameStack  = "StackOverflow"
)

// limits are what the cells of one interpreter may use.
type limits struct {
	memory int64 // bytes of heap; 0: none
	stack  int64 // bytes of stack a cell may add; 0: none
	// heapCap is the heap the running cell may take the kernel to;
	// memory outside a cell.
	heapCap atomic.Int64
}

// newLimits resolves Options' values: 0 is the default, negative none.
func newLimits(memory, stack int64) *limits {
	switch {
	case memory == 0:
		memory = defaultMemoryLimit
		if m := machineMemory(); m > 0 {
			memory = m / 2
		}
	case memory < 0:
		memory = 0
	}
	switch {
	case stack == 0:
		stack = defaultStackLimit
	case stack < 0:
		stack = 0
	}
	l := &limits{memory: memory, stack: min(stack, maxStackLimit)}
	l.heapCap.Store(memory)
	return l
}

// limitError is a cell stopped, or an allocation refused, at a limit.
type limitError struct {
	ename string // enameMemory or enameStack
	msg   string
}

func (e *limitError) Error() string { return e.msg }

// Unwrap makes a stopped cell an interrupted one for the engine.
func (e *limitError) Unwrap() error { return context.Canceled }

// usage is what the runtime reports in use.
type usage struct{ heap, stacks int64 }

func readUsage() usage {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(s)
	return usage{int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())}
}

// watch returns the context to run a cell in, which the watch cancels
// with a *limitError as cause when the cell passes a limit, and the
// function that ends the watch.
//
// The heap may not pass the memory limit, except that a cell starting
// with the heap above it (the values of earlier cells) has an eighth of
// the limit more than it started with: it can then free them.
func (l *limits) watch(ctx context.Context) (context.Context, func()) {
	if l.memory == 0 && l.stack == 0 {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	start := readUsage()
	heapCap := max(l.memory, start.heap+l.memory/8)
	if l.memory > 0 {
		l.heapCap.Store(heapCap)
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			u := readUsage()
			if l.stack > 0 && u.stacks-start.stacks > l.stack {
				cancel(&limitError{enameStack, fmt.Sprintf("the cell used more than %s of stack (unbounded recursion?) and was stopped", formatBytes(l.stack))})
				return
			}
			if l.memory > 0 && u.heap > heapCap {
				runtime.GC() // what is garbage does not count
				if u = readUsage(); u.heap > heapCap {
					cancel(&limitError{enameMemory, fmt.Sprintf("the cell used more than the kernel's memory limit of %s (%s in use) and was stopped; "+
						"what its variables hold stays allocated until they are set to nil", formatBytes(l.memory), formatBytes(u.heap))})
					return
				}
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
		l.heapCap.Store(l.memory)
	}
}

// evalCreator is how a goroutine dump names the goroutine that yaegi's
// EvalWithContext starts to evaluate (it returns when its context is done
// and leaves that goroutine running), followed by the id of the goroutine
// that called it.
const evalCreator = "created by github.com/traefik/yaegi/interp.(*Interpreter).EvalWithContext in goroutine "

// evaluate runs f, which calls EvalWithContext once, in a goroutine of its
// own, and returns that goroutine's id: the evaluation's goroutine is the
// one it created (see evaluating). A panic in f is raised again in the
// caller's goroutine.
func evaluate(f func()) (id string) {
	var failure any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { failure = recover() }()
		id = goroutineID()
		f()
	}()
	<-done
	if failure != nil {
		panic(failure)
	}
	return id
}

// goroutineID is the id of the calling goroutine, as goroutine dumps print
// it.
func goroutineID() string {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	id, _, _ := strings.Cut(s, " ")
	return id
}

// evaluating reports whether the goroutine of the evaluation that
// goroutine id started still runs. The dump keeps the last frames of a
// deep stack, and the line saying which goroutine created it.
func evaluating(id string) bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Contains(buf[:n], []byte(evalCreator+id+"\n"))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// awaitStopped waits until the evaluation that goroutine id started, whose
// context is done, has ended, and returns how long that took. yaegi
// returns at once, while the stopped goroutine unwinds its interpreted
// calls (a tenth of a second deep in recursion) or finishes the compiled
// call it is in, which may take any time: the next evaluation must not
// run in the interpreter meanwhile, and the cell is not over until its
// work is. After noteAfter, note is called once, to say what is awaited.
// The goroutines the cell started are not waited for.
func awaitStopped(id string, note func()) time.Duration {
	start := time.Now()
	noted := false
	for wait := watchEvery; evaluating(id); wait = min(2*wait, 100*time.Millisecond) {
		if !noted && time.Since(start) > noteAfter {
			note()
			noted = true
		}
		time.Sleep(wait)
	}
	return time.Since(start)
}

// lateStop is an evaluation stopped by its context that went on for
// late after it was done: it was in a compiled call that does not take
// the cell's context.
type lateStop struct {
	err  error
	late time.Duration
}

func (e *lateStop) Error() string { return e.err.Error() }
func (e *lateStop) Unwrap() error { return e.err }

// afterwards says how long the cell went on, for its error.
func (e *lateStop) afterwards(what string) string {
	return fmt.Sprintf("the cell was still running for %.1f s after it was %s, in a compiled call that does not take the cell's context "+
		"(pass ctx to the call to stop it at once)", e.late.Seconds(), what)
}

// alloc is __kernel.Alloc: a make in a cell calls it with a nil value of
// the type made, the length or capacity asked for and the type as the
// cell writes it, and makes what it returns (n). A make that would take
// the heap over the limit panics with a *limitError instead of
// allocating.
func (l *limits) alloc(typ any, n any, name string) int {
	count, ok := allocCount(n)
	if !ok || l.memory == 0 {
		return toInt(n)
	}
	var elem uintptr
	switch t := reflect.TypeOf(typ); {
	case t == nil:
		return toInt(n)
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Chan:
		elem = t.Elem().Size()
	case t.Kind() == reflect.Map:
		elem = t.Key().Size() + t.Elem().Size()
	default:
		return toInt(n)
	}
	l.check(count, uint64(elem), func() string { return fmt.Sprintf("make(%s, %d)", name, count) })
	return int(count)
}

// allocN is __kernel.AllocN, alloc for a make whose elements' size the
// rewriting knows (make([]int, n): 8), which costs a cell less.
func (l *limits) allocN(n, elem int, name string) int {
	if n >= 0 && l.memory > 0 {
		l.check(uint64(n), uint64(elem), func() string { return fmt.Sprintf("make(%s, %d)", name, n) })
	}
	return n
}

// check panics with a *limitError if count elements of elem bytes would
// take the heap over the limit; what says what was made.
func (l *limits) check(count, elem uint64, what func() string) {
	hi, size := bits.Mul64(count, elem)
	heapCap := l.heapCap.Load()
	refuse := func(inUse string) {
		if hi != 0 || size > math.MaxInt64 {
			size = math.MaxInt64
		}
		panic(&limitError{enameMemory, fmt.Sprintf("%s refused: %s, over the kernel's memory limit of %s%s",
			what(), formatBytes(int64(size)), formatBytes(l.memory), inUse)})
	}
	if hi != 0 || size > uint64(heapCap) {
		refuse("")
	}
	if size >= bigAlloc {
		h := readUsage().heap
		if h+int64(size) > heapCap {
			runtime.GC()
			if h = readUsage().heap; h+int64(size) > heapCap {
				refuse(fmt.Sprintf(" with %s in use", formatBytes(h)))
			}
		}
	}
}

// allocCount is n, a make's size argument, as a count; false for a
// negative or non-integer one, which make itself rejects.
func allocCount(n any) (uint64, bool) {
	v := reflect.ValueOf(n)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Int() < 0 {
			return 0, false
		}
		return uint64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint(), true
	case reflect.Float32, reflect.Float64: // an untyped constant, 1e6
		if f := v.Float(); f >= 0 && f == math.Trunc(f) && f < math.MaxInt64 {
			return uint64(f), true
		}
	}
	return 0, false
}

// toInt is n as make's argument; what make rejects stays rejected
// (negative: -1).
func toInt(n any) int {
	v := reflect.ValueOf(n)
	if v.Kind() >= reflect.Int && v.Kind() <= reflect.Int64 {
		return int(v.Int())
	}
	if c, ok := allocCount(n); ok && c <= math.MaxInt {
		return int(c)
	}
	return -1
}

// machineMemory is the memory of the machine, or of the cgroup the
// process is in when that is less, in bytes; 0 when unknown.
func machineMemory() int64 {
	var total int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				total = kb << 10
				break
			}
		}
		f.Close()
	}
	for _, file := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
}
