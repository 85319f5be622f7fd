// Package kernel is a Jupyter kernel for Go, with the project's packages
// built in: cells import github.com/evalcapsule/evalcapsule/harness,
// analysis, capsule and kernel/display, and gonum.org/v1/plot, which run
// compiled, while the cells themselves are interpreted by yaegi.
//
// # Protocol
//
// The kernel speaks version 5.3 of the Jupyter messaging protocol over
// ZeroMQ (github.com/go-zeromq/zmq4, pure Go) on the five channels of the
// connection file, bound to 127.0.0.1 unless the file names another
// address. Every message is signed with HMAC-SHA256; an unsigned or
// forged message is logged and dropped before it is read. A signed
// request whose content is not a JSON object of its fields is answered
// with an error reply (ename MalformedMessage) and logged. Shell requests
// are served one at a time; control requests (interrupt, shutdown) and the
// heartbeat have goroutines of their own, so they are answered while a
// cell runs. Sends are serialised per socket.
//
// A peer is not trusted before its messages are checked, yet zmq4
// allocates the size a frame's header announces before reading it. The
// sockets therefore listen through a transport of the kernel's own,
// which follows the ZMTP 3 framing of what each peer sends and closes its
// connection, logging why, before zmq4 reads the size of a frame or
// message over Options.MaxMessageSize (256 MiB; 1 MiB on IOPub and the
// heartbeat), or of a READY command over 64 KiB. A peer must send its
// greeting and READY within 10 s; it is handshaken in a goroutine of its
// own, so that one that never speaks keeps no other client out (zmq4
// opened connections one at a time). A peer that leaves a message half
// sent for 30 s, or reads nothing of what the kernel sends it for 30 s (a
// subscriber that stalled IOPub for all), is dropped; so is one that
// sends IOPub anything but subscriptions. A channel takes 64 connections
// at most, and the messages being received, all connections together,
// hold at most twice MaxMessageSize. Other clients are served throughout.
//
// Supported requests: kernel_info, execute (with user_expressions,
// allow_stdin and stop_on_error), complete, inspect, is_complete,
// history (tail, range, search; a cell or result over 1 MiB is kept cut,
// with a line saying so), comm_info, interrupt, shutdown (and
// restart, which the client does by starting a new process). Interrupts
// work in both modes: interrupt_request on control ("message"), SIGINT
// ("signal"); see Interrupts. A cell reading standard input (fmt.Scanln, bufio on
// os.Stdin) sends input_request and waits for the reply.
//
// # Cells
//
// State lasts from cell to cell. A cell may mix imports, declarations and
// statements; the kernel cuts it into top-level items (go/scanner) and
// evaluates runs of one kind together, because yaegi takes either a file
// or a function body. Running a cell again works: imports already made
// are skipped. A func main in a cell runs once, after the cell's
// statements, its last line included. Positions in errors and panics are
// the cell's own lines ("In[3], line 5").
//
// A name has one definition at a time, the latest, and all code sees
// it, as if the notebook's declarations were one Go file. The kernel
// keeps the source of every top-level declaration of a cell: each func,
// each var or const declaration (a group as one), each type with its
// methods. When a cell declares a name again (a func, var, const or
// type declaration, a method, which makes its type anew, or a top-level
// x := of a statement), the kernel evaluates again, from their source,
// the declarations that refer to the name, then those that refer to
// those, in the order they were last evaluated:
//
//   - functions and methods declared before call the new function, read
//     and assign the new variable, and use the new type and methods; the
//     old variable is gone, so an assignment after the redefinition
//     (rate = 3) is seen by all of them, and a generic function is
//     instantiated anew. Assigning a variable (without
//     declaring it) changes nothing else and needs nothing evaluated:
//     every function reads the one variable;
//   - a var declaration whose initialiser refers to the name runs its
//     initialiser again, side effects included, and its variable is
//     declared anew with that value: what was assigned to it since is
//     lost, and what refers to it is evaluated again in turn. A var
//     declared again on its own leaves its group: the group's other
//     names are evaluated without it;
//   - statements are never run again, and values already computed stay
//     as they are: a variable that a statement defined (x := f()) keeps
//     its value, a function value made before (g := func() int { return
//     f(1) }) calls the old f, and a value of a type made before the type
//     or its methods were declared again keeps the old type and methods.
//     Run their cell again to remake them;
//   - a declaration that no longer compiles against the new definition
//     (a call with the old arguments) is removed, with the names it
//     declared, and the cell fails with an error naming it and the cell
//     and line it came from, and saying why; what refers to it is
//     removed too. Declare it again to bring it back.
//
// The one exception is ctx, the kernel's variable (see Interrupts): a
// cell that declares a ctx of its own has it in that cell only, and the
// functions that read ctx go on reading the running cell's context, so
// declaring ctx evaluates nothing again.
//
// A top-level name cannot be both a cell's and an imported package's,
// as in a Go file: fmt := 0 after import "fmt" is refused ("fmt already
// declared through import of package"), and so is an import whose name a
// cell declared; import the package under another name.
//
// Go's checks that yaegi lacks are made before a cell runs: a call of a
// package's function or a cell's that gives several values assigned to
// one variable is refused (assignment mismatch: 1 variable but
// fmt.Println returns 2 values), and so is a call of none used as a
// value. An index or slice out of range panics with Go's words
// ("runtime error: index out of range [5] with length 3"); the numbers
// are given when the operands are literals and top-level names, which
// the kernel reads again. A cell that ends in the middle of a statement
// is reported at its end.
//
// What a cell shows, and the rich output of values, is described in the
// documentation of package display.
//
// # Interrupts
//
// Every cell runs under a context of its own, which cells read as the
// predeclared variable ctx (a context.Context). An interrupt cancels it:
// interrupt_request in message mode, SIGINT in signal mode, the time
// limit of ExecuteNotebook, and a cell stopped at the memory or stack
// limit. Interpreted code stops at once; compiled code stops when it
// looks at ctx, so long work takes it:
//
//	sweep, err := study.Sweep(ctx, s, study.SweepOptions{Runner: r})
//	lo, hi, err := analysis.BootstrapMeanContext(ctx, xs, 100000, 0.95, 1)
//
// A cell is reported interrupted only once it has stopped: the kernel
// waits for the compiled call the cell is in to return (saying so on the
// cell's standard error after 2 s), and the error of a cell that went on
// for more than a second says for how long, which means that the call
// does not take ctx. The goroutines a cell started are not waited for.
//
// ctx ends with its cell: the cells after it have their own, and work
// that must outlive its cell takes context.Background(). A function
// declared in a cell that reads ctx reads the context of the cell that
// calls it. A cell may declare a ctx of its own (ctx, cancel :=
// context.WithTimeout(ctx, time.Minute)): it holds in that cell, and the
// cells after it read theirs again.
//
// A panic in a cell fails the cell; the kernel goes on. A panic in a
// goroutine a cell started is recovered too (each go statement is
// rewritten to defer a recover) and printed on the standard error of the
// cell running at the time. Closures in loops capture that iteration's
// variables, as in Go 1.22 and later, and range over an integer works when
// the integer is plainly one (a literal, len, an integer variable).
//
// Some top-level declarations defeat yaegi's type analysis (an element of
// a compiled slice, x := a.Claims[0]; the comma-ok forms, v, ok := m[k]):
// the kernel then runs the cell's statements one by one and declares such
// a variable with the type of its value, which for an interface is the
// dynamic type.
//
// # Memory and stack
//
// A cell with unbounded recursion, or one that allocates more than the
// machine has, used to end the process, and every cell's state with it:
// Go cannot refuse memory or stack to one goroutine, both are fatal
// errors of the runtime, which no recover catches. What can be bounded
// is bounded while a cell runs, and fails that cell only, as an
// interrupt would, with the state of the earlier cells intact:
//
//   - the stacks: a cell that grows the goroutine stacks by more than
//     Options.StackLimit (128 MiB; about a hundred thousand interpreted
//     calls deep) is stopped with a StackOverflow. yaegi runs interpreted
//     calls recursively on the Go stack, and Go ends the process when a
//     stack would pass 512 MiB; the kernel reads the stacks in use every
//     5 ms, and recursion takes a good second from the limit to that
//     end;
//   - the heap: a cell that takes the kernel's heap over
//     Options.MemoryLimit (half the machine's memory, or its cgroup's) is
//     stopped with a MemoryError, the heap read every 5 ms and garbage
//     collected before it counts. What the cell's variables hold stays
//     allocated until they are set to nil; a cell that starts above the
//     limit has an eighth of it more than it started with, so that it can
//     free them;
//   - a make in a cell, which can ask for any size at once, is checked
//     before it allocates (the kernel rewrites its sizes to go through a
//     check): one that would take the heap over the limit panics with a
//     MemoryError instead.
//
// What cannot be bounded in the process, and still ends it: one
// allocation in compiled code (strings.Repeat, bytes.Repeat, a compiled
// package's make, reflect.MakeSlice) or of a huge array type (var a
// [1 << 36]byte, new) that the system refuses, or that the system grants
// and the cell then fills past the machine's memory; an append that
// doubles a slice near the limit, which allocates the new slice at once;
// memory allocated faster than the kernel looks, within 5 ms, when that
// passes what the machine has; recursion in compiled code, which an
// interrupt does not stop (interpreted code calling itself through a
// compiled function, such as a less function of sort.Slice that sorts
// again, is stopped); and goroutines that outlive the cell that started
// them are watched only while a later cell runs. Against those only a
// bound outside the process, such as a cgroup's memory limit, keeps the
// machine safe, by ending the kernel.
//
// # Notebooks without Jupyter
//
// ExecuteNotebook runs a notebook file's code cells in this process, in a
// new interpreter with the kernel's semantics, and returns the notebook
// with their outputs as nbconvert --execute writes it (`capsule kernel
// execute`), under the default memory and stack limits. The process's
// working directory and environment are the cells' while it runs.
//
// # Limits
//
// yaegi interprets at about a hundredth of compiled speed: heavy work
// belongs in the compiled packages. Generic functions declared in cells
// are partly supported, and the compiled packages export no generic API
// (yaegi cannot extract it; a test checks). The standard library is Go
// 1.22's, without iter and unique; the kernel adds min, max and clear, and
// the common functions of slices, maps and cmp, as generic functions of
// the interpreter to which cells' calls are rewritten, and refuses with
// its line what the interpreter cannot run (range over a function; see
// builtins.go). An interrupt stops interpreted code at
// once, and the goroutines cells started; a compiled function that does
// not take ctx finishes first (see Interrupts). Compiled code does not see the methods of types
// declared in cells, except the display methods, which the kernel calls,
// Error (through fmt and errors), and those of an interface a value is
// converted to, as in a compiled struct's interface field.
// yaegi's compiler fails on some valid Go; the error says so.
package kernel
