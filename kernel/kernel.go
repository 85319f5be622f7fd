package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/evalcapsule/evalcapsule/kernel/internal/docs"
	"github.com/evalcapsule/evalcapsule/kernel/internal/frontend"
)

// Options configures a Kernel. Only Connection is required.
type Options struct {
	Connection Connection
	// Log receives the kernel's own log: rejected messages, protocol
	// errors. Default os.Stderr, which Jupyter shows in its own log.
	Log io.Writer
	// HistoryFile keeps the cells of every session, one JSON line each,
	// for history_request; "" keeps this session's only, in memory. A
	// cell or result over 1 MiB is kept cut, with a line saying so.
	HistoryFile string

	// MaxMessageSize bounds, in bytes, a message a peer sends on the
	// shell, control and stdin channels, frames and ZeroMQ framing
	// together (IOPub and the heartbeat take 1 MiB at most): the
	// connection of a peer that announces a larger frame is closed
	// before the frame is read, signed or not. Default 256 MiB, far more
	// than a Jupyter client sends (a cell of 16 MB with its outputs is a
	// large one); negative: no limit.
	MaxMessageSize int64
	// MemoryLimit bounds, in bytes, the heap of the kernel (the
	// interpreter and the values of cells) while a cell runs: a cell
	// that takes it over is stopped with a MemoryError, and a make that
	// would is refused. Default half the memory of the machine (or of
	// its cgroup); negative: no limit. See the package documentation for
	// what it cannot bound.
	MemoryLimit int64
	// StackLimit bounds, in bytes, the goroutine stacks a cell adds while
	// it runs (deep recursion): a cell that passes it is stopped with a
	// StackOverflow. Default 128 MiB, at most 256 MiB (Go ends the
	// process when a goroutine's stack would pass 512 MiB); negative: no
	// limit.
	StackLimit int64

	// For tests: the guard's timeouts and connection limit.
	handshakeTimeout, stallTimeout time.Duration
	maxConns                       int
}

// Kernel is a running Jupyter kernel: five sockets and a Go interpreter.
type Kernel struct {
	log     *log.Logger
	signer  signer
	session string // this kernel's session id, in every message it sends

	shell, control, stdin, iopub, hb *channel

	engine         *engine
	history        *history
	stdout, stderr *stream

	// shellQueue holds received shell requests: a cell that fails with
	// stop_on_error aborts the executions queued behind it.
	shellQueue chan *message
	// inputs carries input_reply messages to the cell waiting for them.
	inputs chan *message

	mu         sync.Mutex
	count      int                // execution_count
	cancel     context.CancelFunc // of the running cell, nil when idle
	cellDone   <-chan struct{}    // closed when the running cell is interrupted
	parent     *message           // the request the outputs belong to
	allowStdin bool
	// pendingInput is the rest of the last line the frontend sent, not
	// read yet by the cell.
	pendingInput string

	done     chan struct{} // closed by a shutdown request
	stopOnce sync.Once
}

// New binds the kernel's sockets as the connection says.
func New(ctx context.Context, opts Options) (*Kernel, error) {
	c := opts.Connection
	if err := c.check(); err != nil {
		return nil, err
	}
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	k := &Kernel{
		log:        log.New(opts.Log, "capsule kernel: ", log.LstdFlags),
		signer:     signer{key: []byte(c.Key)},
		session:    newID(),
		shellQueue: make(chan *message, 256),
		inputs:     make(chan *message, 1),
		done:       make(chan struct{}),
	}
	zlog := log.New(opts.Log, "capsule kernel: zmq4: ", log.LstdFlags)
	g := newGuard(opts, k.log.Printf)
	small := g.maxMessage
	if small > 0 {
		small = min(small, smallChannelLimit)
	}
	var err error
	bind := func(ch **channel, name string, kind zmq4.SocketType, port int, limit int64) {
		if err == nil {
			*ch, err = listen(ctx, name, kind, c.endpoint(port), zlog, g, limit)
		}
	}
	bind(&k.shell, "shell", zmq4.Router, c.ShellPort, g.maxMessage)
	bind(&k.control, "control", zmq4.Router, c.ControlPort, g.maxMessage)
	bind(&k.stdin, "stdin", zmq4.Router, c.StdinPort, g.maxMessage)
	bind(&k.iopub, "iopub", zmq4.Pub, c.IOPubPort, small)
	bind(&k.hb, "heartbeat", zmq4.Rep, c.HBPort, small)
	if err != nil {
		k.closeSockets()
		return nil, err
	}
	k.stdout = &stream{name: "stdout", k: k}
	k.stderr = &stream{name: "stderr", k: k}
	k.history, err = openHistory(opts.HistoryFile, k.session)
	if err != nil {
		k.log.Printf("history: %v (history kept in memory)", err)
	}
	k.engine, err = newEngine(k.stdout, k.stderr, inputReader{k}, k.goroutinePanic)
	if err != nil {
		k.closeSockets()
		return nil, err
	}
	k.engine.limits = newLimits(opts.MemoryLimit, opts.StackLimit)
	return k, nil
}

// Run serves the notebook until a shutdown request (it then returns nil)
// or until ctx is done.
func (k *Kernel) Run(ctx context.Context) error {
	frontend.Set(publisher{k})
	defer frontend.Set(nil)
	go docs.Load() // decoding takes a moment: before the first inspect
	defer k.closeSockets()

	go k.heartbeat()
	go k.serve(k.control, k.handleControl)
	go k.serve(k.stdin, k.handleStdin)
	go k.serve(k.shell, func(m *message) { k.shellQueue <- m })
	go k.shellLoop()
	k.publish(nil, "status", map[string]any{"execution_state": "starting"})

	select {
	case <-k.done:
		// Let the replies and the last IOPub messages leave: the PUB
		// socket sends from its own queue.
		time.Sleep(100 * time.Millisecond)
		return nil
	case <-ctx.Done():
		k.Interrupt()
		return ctx.Err()
	}
}

// Interrupt stops the running cell, as a KeyboardInterrupt does in
// Python: its context is cancelled, interpreted code stops at once, a
// compiled call it is in runs until it returns.
func (k *Kernel) Interrupt() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cancel != nil {
		k.cancel()
	}
}

func (k *Kernel) stop() { k.stopOnce.Do(func() { close(k.done) }) }

func (k *Kernel) stopped() bool {
	select {
	case <-k.done:
		return true
	default:
		return false
	}
}

func (k *Kernel) closeSockets() {
	for _, ch := range []*channel{k.shell, k.control, k.stdin, k.iopub, k.hb} {
		if ch != nil {
			ch.close()
		}
	}
}

// heartbeat echoes every ping, from its own goroutine, so that a long
// cell does not make the client think the kernel died.
func (k *Kernel) heartbeat() {
	for {
		frames, err := k.hb.recv()
		if err != nil {
			return
		}
		if err := k.hb.send(frames); err != nil && !k.stopped() {
			k.log.Printf("heartbeat: %v", err)
		}
	}
}

// serve receives messages on ch, checks them and hands them to handle.
// Unsigned or forged messages are logged and dropped: they never reach a
// handler, so they can never run code.
func (k *Kernel) serve(ch *channel, handle func(*message)) {
	for {
		frames, err := ch.recv()
		if err != nil {
			if !k.stopped() && !errors.Is(err, context.Canceled) {
				k.log.Printf("%s: receive: %v", ch.name, err)
			}
			return
		}
		m, err := k.signer.decode(frames)
		if err != nil {
			k.log.Printf("%s: rejected a message: %v", ch.name, err)
			continue
		}
		if m.malformed != nil {
			k.log.Printf("%s: %v", ch.name, m.malformed)
		}
		handle(m)
	}
}

// shellLoop handles shell requests one at a time, in order, as Jupyter
// expects.
func (k *Kernel) shellLoop() {
	for {
		select {
		case <-k.done:
			return
		case m := <-k.shellQueue:
			k.handleShell(m)
		}
	}
}

func (k *Kernel) handleShell(m *message) {
	k.publish(m, "status", map[string]any{"execution_state": "busy"})
	defer k.publish(m, "status", map[string]any{"execution_state": "idle"})
	if m.malformed != nil {
		k.replyMalformed(k.shell, m, m.malformed)
		return
	}
	switch m.header.MsgType {
	case "execute_request":
		k.execute(m)
	case "kernel_info_request":
		k.reply(k.shell, m, "kernel_info_reply", kernelInfo())
	case "complete_request":
		k.complete(m)
	case "inspect_request":
		k.inspect(m)
	case "is_complete_request":
		k.isComplete(m)
	case "history_request":
		k.historyRequest(m)
	case "comm_info_request":
		k.reply(k.shell, m, "comm_info_reply", map[string]any{"status": "ok", "comms": map[string]any{}})
	case "comm_open":
		// No comm targets exist: the protocol says to close the comm.
		var c struct {
			CommID string `json:"comm_id"`
		}
		json.Unmarshal(m.content, &c)
		k.publish(m, "comm_close", map[string]any{"comm_id": c.CommID, "data": map[string]any{}})
	case "comm_msg", "comm_close":
	case "shutdown_request":
		k.shutdown(k.shell, m)
	case "interrupt_request":
		k.Interrupt()
		k.reply(k.shell, m, "interrupt_reply", map[string]any{"status": "ok"})
	default:
		k.log.Printf("shell: ignored a %s message", m.header.MsgType)
	}
}

// handleControl answers control requests as they come, also while a cell
// runs: that is what makes interrupt and shutdown work.
func (k *Kernel) handleControl(m *message) {
	if m.malformed != nil {
		k.replyMalformed(k.control, m, m.malformed)
		return
	}
	switch m.header.MsgType {
	case "interrupt_request":
		k.Interrupt()
		k.reply(k.control, m, "interrupt_reply", map[string]any{"status": "ok"})
	case "shutdown_request":
		k.shutdown(k.control, m)
	case "kernel_info_request":
		k.reply(k.control, m, "kernel_info_reply", kernelInfo())
	default:
		k.log.Printf("control: ignored a %s message", m.header.MsgType)
	}
}

func (k *Kernel) shutdown(ch *channel, m *message) {
	var c struct {
		Restart bool `json:"restart"`
	}
	json.Unmarshal(m.content, &c)
	content := map[string]any{"status": "ok", "restart": c.Restart}
	k.Interrupt()
	k.reply(ch, m, "shutdown_reply", content)
	k.publish(m, "shutdown_reply", content)
	k.stop()
}

// handleStdin passes input replies to the cell waiting for one.
func (k *Kernel) handleStdin(m *message) {
	if m.header.MsgType != "input_reply" {
		k.log.Printf("stdin: ignored a %s message", m.header.MsgType)
		return
	}
	select {
	case k.inputs <- m:
	default:
		k.log.Printf("stdin: an input_reply came with no input pending")
	}
}

// enameMalformed is the error of a reply to a request the kernel could not
// read.
const enameMalformed = "MalformedMessage"

// replyMalformed answers a request whose content the kernel cannot read
// with an error reply of the request's type ("execute_request":
// "execute_reply"); other messages have no reply.
func (k *Kernel) replyMalformed(ch *channel, m *message, err error) {
	base, ok := strings.CutSuffix(m.header.MsgType, "_request")
	if !ok {
		return
	}
	content := map[string]any{"status": "error", "ename": enameMalformed, "evalue": err.Error(),
		"traceback": []string{red(enameMalformed + ": " + err.Error())}}
	if base == "execute" {
		k.mu.Lock()
		content["execution_count"] = k.count
		k.mu.Unlock()
	}
	k.reply(ch, m, base+"_reply", content)
}

// reply sends a reply to m back to its sender on ch.
func (k *Kernel) reply(ch *channel, m *message, msgType string, content any) {
	frames, err := k.signer.encode(k.session, m.ids, msgType, m, content)
	if err == nil {
		err = ch.send(frames)
	}
	if err != nil && !k.stopped() {
		k.log.Printf("%s: %s: %v", ch.name, msgType, err)
	}
}

// publish sends a message on IOPub with parent as its parent header.
func (k *Kernel) publish(parent *message, msgType string, content any) {
	topic := []byte("kernel." + k.session + "." + msgType)
	frames, err := k.signer.encode(k.session, [][]byte{topic}, msgType, parent, content)
	if err == nil {
		err = k.iopub.send(frames)
	}
	if err != nil && !k.stopped() {
		k.log.Printf("iopub: %s: %v", msgType, err)
	}
}

// publisher is the display package's way to the notebook.
type publisher struct{ k *Kernel }

// Publish sends an output of the running cell (display_data,
// update_display_data, clear_output) after what it has printed so far.
func (p publisher) Publish(msgType string, content any) {
	p.k.flushStreams()
	p.k.publish(p.k.outputParent(), msgType, content)
}

func (k *Kernel) outputParent() *message {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.parent
}

func (k *Kernel) flushStreams() {
	k.stdout.flush()
	k.stderr.flush()
}

// goroutinePanic reports a panic that the kernel recovered in a goroutine
// a cell started, on the standard error of the cell running now.
func (k *Kernel) goroutinePanic(where string, value any) {
	fmt.Fprintf(k.stderr, "panic in a goroutine started at %s: %v\n", where, value)
	k.stderr.flush()
}

func kernelInfo() map[string]any {
	return map[string]any{
		"status":                 "ok",
		"protocol_version":       protocolVersion,
		"implementation":         "evalcapsule-go",
		"implementation_version": Version(),
		"language_info": map[string]any{
			"name":               "go",
			"version":            goVersion(),
			"mimetype":           "text/x-go",
			"file_extension":     ".go",
			"pygments_lexer":     "go",
			"codemirror_mode":    "go",
			"nbconvert_exporter": "script",
		},
		"banner": "evalcapsule Go kernel " + Version() + " (yaegi interpreter, Go " + goVersion() + ")\n" +
			"Cells import github.com/evalcapsule/evalcapsule/{harness,analysis,capsule,kernel/display} and gonum.org/v1/plot.",
		"help_links": []map[string]any{
			{"text": "Go packages", "url": "https://pkg.go.dev/"},
			{"text": "evalcapsule", "url": "https://pkg.go.dev/github.com/evalcapsule/evalcapsule"},
		},
		"debugger": false,
	}
}
