package kernel

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

// testKernel is a kernel running in this process, with a client over
// zmq4 connected to its shell, control and IOPub.
type testKernel struct {
	*client
	conn Connection
	log  *syncBuffer
	done chan error
}

func startKernel(t *testing.T, opts Options) *testKernel {
	t.Helper()
	p := freePorts(t, 5)
	opts.Connection = Connection{IP: "127.0.0.1", ShellPort: p[0], ControlPort: p[1], StdinPort: p[2], IOPubPort: p[3], HBPort: p[4],
		Key: "a-key", SignatureScheme: "hmac-sha256"}
	tk := &testKernel{conn: opts.Connection, log: &syncBuffer{}, done: make(chan error, 1)}
	opts.Log = tk.log
	ctx := context.Background()
	k, err := New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	go func() { tk.done <- k.Run(ctx) }()
	tk.client = tk.connect(t, "client-1")
	t.Cleanup(func() {
		tk.send(tk.control, tk.s, "shutdown_request", map[string]any{"restart": false})
		select {
		case <-tk.done:
		case <-time.After(5 * time.Second):
			t.Error("the kernel did not stop")
		}
	})
	return tk
}

// connect dials the kernel's shell, control and IOPub as a client with
// identity id, and waits until IOPub is connected too.
func (tk *testKernel) connect(t *testing.T, id string) *client {
	t.Helper()
	ctx := context.Background()
	c := &client{t: t, s: signer{key: []byte(tk.conn.Key)}, queues: map[zmq4.Socket]chan *message{}}
	opt := zmq4.WithID(zmq4.SocketIdentity(id))
	c.shell = zmq4.NewDealer(ctx, opt)
	c.control = zmq4.NewDealer(ctx, opt)
	c.iopub = zmq4.NewSub(ctx)
	for sock, port := range map[zmq4.Socket]int{c.shell: tk.conn.ShellPort, c.control: tk.conn.ControlPort, c.iopub: tk.conn.IOPubPort} {
		if err := sock.Dial(tk.conn.endpoint(port)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sock.Close() })
	}
	c.iopub.SetOption(zmq4.OptionSubscribe, "")
	for _, sock := range []zmq4.Socket{c.shell, c.control, c.iopub} {
		c.listen(sock)
	}
	for i := 0; ; i++ {
		c.send(c.shell, c.s, "kernel_info_request", map[string]any{})
		if r := c.recv(c.shell, 5*time.Second); r == nil || r.header.MsgType != "kernel_info_reply" {
			t.Fatalf("kernel_info: %+v", r)
		}
		if c.recv(c.iopub, 100*time.Millisecond) != nil {
			break
		}
		if i == 50 {
			t.Fatal("IOPub never connected")
		}
	}
	for c.recv(c.iopub, 100*time.Millisecond) != nil {
	}
	return c
}

// execute runs code and returns the execute_reply's content.
func (c *client) execute(code string) string {
	c.t.Helper()
	id := c.send(c.shell, c.s, "execute_request", map[string]any{"code": code, "silent": false})
	for {
		r := c.recv(c.shell, 10*time.Second)
		if r == nil {
			c.t.Fatalf("no execute_reply to %q", code)
		}
		var parent header
		json.Unmarshal(r.parent, &parent)
		if parent.MsgID == id {
			return string(r.content)
		}
	}
}

// rawPeer speaks ZMTP by hand, to send what zmq4 would not.
type rawPeer struct {
	t *testing.T
	c net.Conn
}

func dialRaw(t *testing.T, port int) *rawPeer {
	t.Helper()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawPeer{t, c}
}

func (p *rawPeer) write(b ...byte) {
	p.t.Helper()
	if _, err := p.c.Write(b); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

func (p *rawPeer) read(n int) []byte {
	p.t.Helper()
	b := make([]byte, n)
	p.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(p.c, b); err != nil {
		p.t.Fatalf("read: %v", err)
	}
	return b
}

// greet exchanges greetings (ZMTP 3.0, NULL).
func (p *rawPeer) greet() {
	p.t.Helper()
	p.write(zmtpGreeting...)
	if g := p.read(64); g[0] != 0xff || g[9] != 0x7f || string(g[12:16]) != "NULL" {
		p.t.Fatalf("greeting % x", g)
	}
}

// ready sends a READY command for a socket of kind, and reads the
// kernel's.
func (p *rawPeer) ready(kind string) {
	p.t.Helper()
	body := []byte("\x05READY\x0bSocket-Type")
	body = binary.BigEndian.AppendUint32(body, uint32(len(kind)))
	body = append(body, kind...)
	p.write(append([]byte{0x04, byte(len(body))}, body...)...)
	h := p.read(2)
	if h[0] != 0x04 {
		p.t.Fatalf("the kernel's READY: flags %x", h[0])
	}
	p.read(int(h[1]))
}

// frameHeader sends the header of a long frame of size bytes.
func (p *rawPeer) frameHeader(flags byte, size uint64) {
	p.t.Helper()
	p.write(binary.BigEndian.AppendUint64([]byte{flags | flagLong}, size)...)
}

// closedWithin reports whether the kernel closes the connection within d.
func (p *rawPeer) closedWithin(d time.Duration) bool {
	p.c.SetReadDeadline(time.Now().Add(d))
	b := make([]byte, 4096)
	for {
		_, err := p.c.Read(b)
		var ne net.Error
		switch {
		case err == nil:
		case errors.As(err, &ne) && ne.Timeout():
			return false
		default:
			return true
		}
	}
}

// TestHostilePeers attacks a kernel on 127.0.0.1 before authentication: a
// frame header that claims 2^40 bytes, in the handshake and after it, a
// message over MaxMessageSize in small frames, a message left half sent, a
// peer that never speaks. Each connection is closed, the kernel logs why,
// and it goes on serving its client, the earlier cells' state intact, and
// new clients.
func TestHostilePeers(t *testing.T) {
	tk := startKernel(t, Options{MaxMessageSize: 1 << 20, handshakeTimeout: 500 * time.Millisecond, stallTimeout: 500 * time.Millisecond})
	if r := tk.execute("x := 41"); !strings.Contains(r, `"status":"ok"`) {
		t.Fatalf("x := 41: %s", r)
	}

	// A peer that connects and never speaks: zmq4 opened connections one
	// at a time, so no other client could connect while it waited.
	silent := dialRaw(t, tk.conn.ShellPort)
	time.Sleep(100 * time.Millisecond)
	dialRaw(t, tk.conn.ShellPort).greet()
	tk.connect(t, "client-2")
	if !silent.closedWithin(3 * time.Second) {
		t.Error("the connection that never spoke is still open after the handshake timeout")
	}

	for _, port := range []int{tk.conn.ShellPort, tk.conn.ControlPort, tk.conn.StdinPort, tk.conn.IOPubPort, tk.conn.HBPort} {
		p := dialRaw(t, port)
		p.greet()
		p.frameHeader(0x04, 1<<40) // a command of 1 TiB, in place of READY
		if !p.closedWithin(3 * time.Second) {
			t.Errorf("port %d: a command frame of 2^40 bytes did not close the connection", port)
		}
	}

	p := dialRaw(t, tk.conn.ShellPort)
	p.greet()
	p.ready("DEALER")
	p.frameHeader(0, 1<<40)
	if !p.closedWithin(3 * time.Second) {
		t.Error("a message frame of 2^40 bytes did not close the connection")
	}

	// 1.5 MiB in frames of 64 KiB: over MaxMessageSize, each frame under.
	p = dialRaw(t, tk.conn.ShellPort)
	p.greet()
	p.ready("DEALER")
	go func() {
		frame := make([]byte, 64<<10)
		for range 24 {
			hdr := binary.BigEndian.AppendUint64([]byte{flagMore | flagLong}, uint64(len(frame)))
			if _, err := p.c.Write(append(hdr, frame...)); err != nil {
				return
			}
		}
	}()
	if !p.closedWithin(3 * time.Second) {
		t.Error("a message of 1.5 MiB did not close the connection")
	}

	// IOPub takes subscriptions: zmq4 queued anything else for nobody.
	p = dialRaw(t, tk.conn.IOPubPort)
	p.greet()
	p.ready("SUB")
	p.write(0, 2, 1, 'k') // subscribe to "k"
	p.write(0, 2, 'h', 'i')
	if !p.closedWithin(3 * time.Second) {
		t.Error("a message on IOPub that is not a subscription did not close the connection")
	}

	// Half a message, then nothing.
	p = dialRaw(t, tk.conn.ShellPort)
	p.greet()
	p.ready("DEALER")
	p.frameHeader(0, 1000)
	p.write(make([]byte, 10)...)
	if !p.closedWithin(3 * time.Second) {
		t.Error("a message left half sent did not close the connection")
	}

	if r := tk.execute("x + 1"); !strings.Contains(r, `"status":"ok"`) {
		t.Errorf("x + 1 after the attacks: %s", r)
	}
	if r := tk.recvResult(); r != "42" {
		t.Errorf("x + 1 after the attacks: %q", r)
	}
	log := tk.log.String()
	for _, want := range []string{"a frame of 1099511627776 bytes, over the limit of 64 KiB", "a frame of 1099511627776 bytes, over the limit of 1 MiB",
		"a message of more than 1 MiB", "no ZMTP handshake within 500ms", "left a message half sent", "iopub: closed a connection from 127.0.0.1:",
		"it sent a message that is not a subscription"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}
	if t.Failed() {
		fmt.Fprintln(os.Stderr, log)
	}
}

// recvResult returns the text/plain of the next execute_result on IOPub.
func (c *client) recvResult() string {
	c.t.Helper()
	for {
		m := c.recv(c.iopub, 5*time.Second)
		if m == nil {
			return "(no execute_result)"
		}
		if m.header.MsgType != "execute_result" {
			continue
		}
		var r struct {
			Data map[string]any `json:"data"`
		}
		json.Unmarshal(m.content, &r)
		s, _ := r.Data["text/plain"].(string)
		return s
	}
}

// TestStalledSubscriber connects a peer to IOPub that subscribes and
// never reads: once the socket buffers are full, zmq4's publisher waited
// for it forever, and the other clients saw no more output. The kernel
// drops it after the stall timeout.
func TestStalledSubscriber(t *testing.T) {
	tk := startKernel(t, Options{stallTimeout: time.Second})
	p := dialRaw(t, tk.conn.IOPubPort)
	p.greet()
	p.ready("SUB")
	p.write(0, 1, 1) // subscribe to everything
	time.Sleep(100 * time.Millisecond)

	id := tk.send(tk.shell, tk.s, "execute_request", map[string]any{"code": `import ("fmt"; "strings")
line := strings.Repeat("x", 1<<20)
for i := 0; i < 32; i++ { fmt.Println(line) }`})
	printed := 0
	deadline := time.Now().Add(20 * time.Second)
	for {
		m := tk.recv(tk.iopub, time.Until(deadline))
		if m == nil {
			t.Fatalf("IOPub stopped after %d bytes of output", printed)
		}
		var parent header
		json.Unmarshal(m.parent, &parent)
		if parent.MsgID != id {
			continue
		}
		var c struct {
			Text  string `json:"text"`
			State string `json:"execution_state"`
		}
		json.Unmarshal(m.content, &c)
		printed += len(c.Text)
		if c.State == "idle" {
			break
		}
	}
	if printed != 32*(1<<20+1) {
		t.Errorf("printed %d bytes", printed)
	}
	if !strings.Contains(tk.log.String(), "iopub: closed a connection") || !strings.Contains(tk.log.String(), "read nothing of what the kernel sent for 1s") {
		t.Errorf("the log does not say the subscriber was dropped:\n%s", tk.log.String())
	}
}

// sendRaw sends a signed message whose content frame is content as is.
func (c *client) sendRaw(sock zmq4.Socket, msgType, content string) string {
	c.t.Helper()
	id := newID()
	h, _ := json.Marshal(header{MsgID: id, Session: "client-session", Username: "test", MsgType: msgType, Version: protocolVersion})
	parts := [][]byte{h, []byte("{}"), []byte("{}"), []byte(content)}
	frames := append([][]byte{delimiter, c.s.sign(parts...)}, parts...)
	if err := sock.Send(zmq4.NewMsgFrom(frames...)); err != nil {
		c.t.Fatal(err)
	}
	return id
}

// replyTo returns the next message on sock in reply to id.
func (c *client) replyTo(sock zmq4.Socket, id string) *message {
	c.t.Helper()
	for {
		r := c.recv(sock, 5*time.Second)
		if r == nil {
			return nil
		}
		var parent header
		json.Unmarshal(r.parent, &parent)
		if parent.MsgID == id {
			return r
		}
	}
}

// TestMalformedRequest sends validly signed requests whose content is not
// JSON, or not an object, or not of the request's fields: each is
// answered with an error reply on its channel, and logged.
func TestMalformedRequest(t *testing.T) {
	tk := startKernel(t, Options{})
	for _, c := range []struct {
		sock             zmq4.Socket
		msgType, content string
		reply, evalue    string
	}{
		{tk.shell, "execute_request", "this is not JSON", "execute_reply", "not a JSON object: invalid character"},
		{tk.shell, "execute_request", `{"code": 5}`, "execute_reply", "cannot unmarshal number"},
		{tk.shell, "complete_request", `["code"]`, "complete_reply", "not a JSON object: another JSON value"},
		{tk.shell, "history_request", `{"output": tru`, "history_reply", "not a JSON object"},
		{tk.control, "kernel_info_request", "\x00\xff", "kernel_info_reply", "not a JSON object"},
	} {
		id := tk.sendRaw(c.sock, c.msgType, c.content)
		r := tk.replyTo(c.sock, id)
		if r == nil {
			t.Errorf("%s %q: no reply", c.msgType, c.content)
			continue
		}
		var content struct {
			Status, Ename, Evalue string
		}
		json.Unmarshal(r.content, &content)
		if r.header.MsgType != c.reply || content.Status != "error" || content.Ename != enameMalformed || !strings.Contains(content.Evalue, c.evalue) {
			t.Errorf("%s %q: %s %s", c.msgType, c.content, r.header.MsgType, r.content)
		}
	}
	if !strings.Contains(tk.log.String(), "shell: malformed message: the content of this execute_request is not a JSON object") {
		t.Errorf("not logged:\n%s", tk.log.String())
	}
	if r := tk.execute("1 + 1"); !strings.Contains(r, `"status":"ok"`) {
		t.Errorf("1 + 1 after: %s", r)
	}
}
