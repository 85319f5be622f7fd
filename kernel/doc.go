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
// forged message is logged and dropped before it is read. Shell requests
// are served one at a time; control requests (interrupt, shutdown) and the
// heartbeat have goroutines of their own, so they are answered while a
// cell runs. Sends are serialised per socket.
//
// Supported requests: kernel_info, execute (with user_expressions,
// allow_stdin and stop_on_error), complete, inspect, is_complete,
// history (tail, range, search), comm_info, interrupt, shutdown (and
// restart, which the client does by starting a new process). Interrupts
// work in both modes: interrupt_request on control ("message"), SIGINT
// ("signal"). A cell reading standard input (fmt.Scanln, bufio on
// os.Stdin) sends input_request and waits for the reply.
//
// # Cells
//
// State lasts from cell to cell. A cell may mix imports, declarations and
// statements; the kernel cuts it into top-level items (go/scanner) and
// evaluates runs of one kind together, because yaegi takes either a file
// or a function body. Running a cell again works: imports already made
// are skipped, and a type declared again is declared anew with its
// methods. A func main in a cell runs once, after the cell. Positions in
// errors and panics are the cell's own lines ("In[3], line 5").
//
// What a cell shows, and the rich output of values, is described in the
// documentation of package display.
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
// # Notebooks without Jupyter
//
// ExecuteNotebook runs a notebook file's code cells in this process, in a
// new interpreter with the kernel's semantics, and returns the notebook
// with their outputs as nbconvert --execute writes it (`capsule kernel
// execute`). The process's working directory and environment are the
// cells' while it runs.
//
// # Limits
//
// yaegi interprets at about a hundredth of compiled speed: heavy work
// belongs in the compiled packages. Generic functions declared in cells
// are partly supported, and the compiled packages export no generic API
// (yaegi cannot extract it; a test checks). The standard library is Go
// 1.22's, without iter and unique. An interrupt stops interpreted code at
// once, and the goroutines cells started; a compiled function it is in
// finishes first. Compiled code does not see the methods of types
// declared in cells, except the display methods, which the kernel calls.
// yaegi's compiler fails on some valid Go; the error says so.
package kernel
