package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

// client is a minimal Jupyter client over zmq4, to test the protocol
// without Python: the tests through Debian's jupyter_client are in
// jupyter_test.go.
type client struct {
	t              *testing.T
	s              signer
	shell, control zmq4.Socket
	iopub          zmq4.Socket
	queues         map[zmq4.Socket]chan *message
}

// listen reads sock from one goroutine into a queue.
func (c *client) listen(sock zmq4.Socket) {
	q := make(chan *message, 100)
	c.queues[sock] = q
	go func() {
		for {
			msg, err := sock.Recv()
			if err != nil {
				return
			}
			m, err := c.s.decode(msg.Frames)
			if err != nil {
				c.t.Errorf("kernel sent a bad message: %v", err)
				continue
			}
			q <- m
		}
	}()
}

func freePorts(t *testing.T, n int) []int {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

func (c *client) send(sock zmq4.Socket, s signer, msgType string, content any) string {
	c.t.Helper()
	frames, err := s.encode("client-session", nil, msgType, nil, content)
	if err != nil {
		c.t.Fatal(err)
	}
	m, _ := s.decode(frames)
	if err := sock.Send(zmq4.NewMsgFrom(frames...)); err != nil {
		c.t.Fatal(err)
	}
	return m.header.MsgID
}

// recv returns the next message on sock, or nil after timeout.
func (c *client) recv(sock zmq4.Socket, timeout time.Duration) *message {
	c.t.Helper()
	select {
	case m := <-c.queues[sock]:
		return m
	case <-time.After(timeout):
		return nil
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestProtocol runs a kernel in this process and talks to it over ZeroMQ:
// kernel_info, execute with the IOPub sequence, a forged request, an
// interrupt, shutdown.
func TestProtocol(t *testing.T) {
	p := freePorts(t, 5)
	conn := Connection{IP: "127.0.0.1", ShellPort: p[0], ControlPort: p[1], StdinPort: p[2], IOPubPort: p[3], HBPort: p[4],
		Key: "a-key", SignatureScheme: "hmac-sha256"}
	var log syncBuffer
	ctx := context.Background()
	k, err := New(ctx, Options{Connection: conn, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()

	c := &client{t: t, s: signer{key: []byte(conn.Key)}, queues: map[zmq4.Socket]chan *message{}}
	id := zmq4.WithID(zmq4.SocketIdentity("client-1"))
	c.shell = zmq4.NewDealer(ctx, id)
	c.control = zmq4.NewDealer(ctx, id)
	c.iopub = zmq4.NewSub(ctx)
	for sock, port := range map[zmq4.Socket]int{c.shell: conn.ShellPort, c.control: conn.ControlPort, c.iopub: conn.IOPubPort} {
		if err := sock.Dial(conn.endpoint(port)); err != nil {
			t.Fatal(err)
		}
		defer sock.Close()
	}
	c.iopub.SetOption(zmq4.OptionSubscribe, "")
	for _, sock := range []zmq4.Socket{c.shell, c.control, c.iopub} {
		c.listen(sock)
	}

	// kernel_info, until IOPub is connected too (its messages before the
	// subscription took effect are lost, as with any PUB socket).
	var iopubReady bool
	for i := 0; i < 50 && !iopubReady; i++ {
		c.send(c.shell, c.s, "kernel_info_request", map[string]any{})
		r := c.recv(c.shell, 5*time.Second)
		if r == nil || r.header.MsgType != "kernel_info_reply" {
			t.Fatalf("kernel_info: %+v", r)
		}
		iopubReady = c.recv(c.iopub, 100*time.Millisecond) != nil
	}
	for c.recv(c.iopub, 100*time.Millisecond) != nil {
	}

	msgID := c.send(c.shell, c.s, "execute_request", map[string]any{"code": "6 * 7", "silent": false})
	r := c.recv(c.shell, 10*time.Second)
	if r == nil || !strings.Contains(string(r.content), `"status":"ok"`) {
		t.Fatalf("execute_reply: %+v", r)
	}
	var seq []string
	for len(seq) == 0 || seq[len(seq)-1] != "idle" {
		m := c.recv(c.iopub, 5*time.Second)
		if m == nil {
			t.Fatalf("IOPub ended after %v", seq)
		}
		var parent header
		json.Unmarshal(m.parent, &parent)
		if parent.MsgID != msgID {
			continue
		}
		name := m.header.MsgType
		if name == "status" {
			var st struct {
				State string `json:"execution_state"`
			}
			json.Unmarshal(m.content, &st)
			name = st.State
		}
		if name == "execute_result" && !strings.Contains(string(m.content), `"text/plain":"42"`) {
			t.Errorf("execute_result %s", m.content)
		}
		seq = append(seq, name)
	}
	if got := strings.Join(seq, " "); got != "busy execute_input execute_result idle" {
		t.Errorf("IOPub sequence %q", got)
	}

	// A forged request gets no reply and runs nothing.
	c.send(c.shell, signer{key: []byte("wrong")}, "execute_request", map[string]any{"code": "forged := 1"})
	if m := c.recv(c.shell, 500*time.Millisecond); m != nil {
		t.Errorf("a forged request got a reply: %s", m.header.MsgType)
	}
	if !strings.Contains(log.String(), "invalid message signature") {
		t.Errorf("the rejection was not logged: %s", log.String())
	}

	// An interrupt on control stops a cell that never ends.
	c.send(c.shell, c.s, "execute_request", map[string]any{"code": "for {\n}"})
	time.Sleep(200 * time.Millisecond)
	c.send(c.control, c.s, "interrupt_request", map[string]any{})
	if m := c.recv(c.control, 5*time.Second); m == nil || m.header.MsgType != "interrupt_reply" {
		t.Fatalf("interrupt_reply: %+v", m)
	}
	r = c.recv(c.shell, 5*time.Second)
	if r == nil || !strings.Contains(string(r.content), `"ename":"Interrupted"`) {
		t.Fatalf("reply of the interrupted cell: %+v", r)
	}
	c.send(c.shell, c.s, "execute_request", map[string]any{"code": "forged"})
	if r := c.recv(c.shell, 5*time.Second); r == nil || !strings.Contains(string(r.content), "undefined: forged") {
		t.Errorf("the forged request ran: %+v", r)
	}

	c.send(c.control, c.s, "shutdown_request", map[string]any{"restart": false})
	if m := c.recv(c.control, 5*time.Second); m == nil || m.header.MsgType != "shutdown_reply" {
		t.Fatalf("shutdown_reply: %+v", m)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the kernel did not stop")
	}
}
