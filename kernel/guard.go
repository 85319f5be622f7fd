package kernel

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/transport"
	"golang.org/x/sync/semaphore"
)

// The kernel's sockets listen through a guard: zmq4 reads a frame's
// length from the wire and allocates that many bytes before reading them
// (Conn.read, make([]byte, size)), so one connection claiming a frame of
// 2^40 bytes ended the process, before any message could be checked for
// its signature. zmq4 has no option for this, but it takes its listeners
// from a registry of transports: the kernel registers its own, whose
// connections follow the ZMTP 3 framing of what the peer sends and close
// the connection before zmq4 reads the length of a frame or message that
// is too large. The same wrapper bounds the other things a peer that
// never authenticates could hold: connections, time in the handshake, a
// message left half sent, a peer that stops reading what the kernel
// sends.
const (
	// defaultMaxMessage is Options.MaxMessageSize's default: larger than
	// any message a Jupyter client sends (a cell of 16 MB is large), far
	// smaller than what would exhaust memory.
	defaultMaxMessage = 256 << 20
	// smallChannelLimit bounds messages on IOPub (subscriptions) and the
	// heartbeat (pings): clients send nothing large there.
	smallChannelLimit = 1 << 20
	// handshakeFrameLimit bounds the frame before the peer is ready (its
	// READY command: a socket type and an identity).
	handshakeFrameLimit = 64 << 10
	// frameOverhead is what each frame costs besides its bytes, counted
	// in a message's size, so that a message of empty frames is bounded
	// too.
	frameOverhead = 64
	// defaultMaxConns bounds the connections of one channel, in the
	// handshake or open: a client opens one per channel.
	defaultMaxConns = 64
	// defaultHandshakeTimeout is how long a peer has to send its greeting
	// and READY command.
	defaultHandshakeTimeout = 10 * time.Second
	// defaultStallTimeout is how long a peer may leave a message half
	// sent, or not read anything of what the kernel sends it.
	defaultStallTimeout = 30 * time.Second
)

// guard is the limits on the kernel's peers, shared by its listeners.
type guard struct {
	maxMessage       int64 // bytes; 0: no limit
	maxConns         int
	handshakeTimeout time.Duration
	stallTimeout     time.Duration
	// budget bounds the bytes of messages being received, all
	// connections together: each may hold up to maxMessage.
	budget *semaphore.Weighted
	log    func(format string, args ...any)

	mu     sync.Mutex // of the log's rate
	tokens float64
	last   time.Time
	quiet  int // refusals not logged
}

func newGuard(opts Options, log func(string, ...any)) *guard {
	g := &guard{
		maxMessage:       opts.MaxMessageSize,
		maxConns:         defaultMaxConns,
		handshakeTimeout: defaultHandshakeTimeout,
		stallTimeout:     defaultStallTimeout,
		log:              log,
	}
	switch {
	case g.maxMessage == 0:
		g.maxMessage = defaultMaxMessage
	case g.maxMessage < 0:
		g.maxMessage = 0
	}
	if opts.handshakeTimeout > 0 {
		g.handshakeTimeout = opts.handshakeTimeout
	}
	if opts.stallTimeout > 0 {
		g.stallTimeout = opts.stallTimeout
	}
	if opts.maxConns > 0 {
		g.maxConns = opts.maxConns
	}
	if g.maxMessage > 0 {
		g.budget = semaphore.NewWeighted(2 * g.maxMessage)
	}
	return g
}

// refused logs why a connection was refused or closed. A peer that keeps
// trying is logged 20 times, then once a second.
func (g *guard) refused(channel string, c net.Conn, why error) {
	const burst = 20
	g.mu.Lock()
	now := time.Now()
	if g.last.IsZero() {
		g.tokens = burst
	} else {
		g.tokens = min(burst, g.tokens+now.Sub(g.last).Seconds())
	}
	g.last = now
	if g.tokens < 1 {
		g.quiet++
		g.mu.Unlock()
		return
	}
	g.tokens--
	more := ""
	if g.quiet > 0 {
		more = fmt.Sprintf(" (and %d connections closed since the last one logged)", g.quiet)
		g.quiet = 0
	}
	g.mu.Unlock()
	g.log("%s: closed a connection from %s: %v%s", channel, c.RemoteAddr(), why, more)
}

var guardSerial atomic.Int64

// endpoint registers a transport for one channel and returns the
// endpoint that listens through it; limit bounds a message, subscriptions
// says that peers only subscribe. zmq4's registry has no way to remove a
// transport: each kernel adds five small entries.
func (g *guard) endpoint(channel, endpoint string, limit int64, subscriptions bool) (string, error) {
	proto, addr, ok := strings.Cut(endpoint, "://")
	if !ok {
		return "", fmt.Errorf("%w: endpoint %q", ErrConnection, endpoint)
	}
	network := "tcp"
	if proto == "ipc" {
		network = "unix"
	} else if proto != "tcp" {
		return "", fmt.Errorf("%w: transport %q", ErrConnection, proto)
	}
	name := fmt.Sprintf("evalcapsule-kernel-%d-%s-%s", guardSerial.Add(1), channel, proto)
	t := &guardTransport{g: g, channel: channel, limit: limit, subscriptions: subscriptions, inner: transport.New(network)}
	if err := zmq4.RegisterTransport(name, t); err != nil {
		return "", err
	}
	return name + "://" + addr, nil
}

// guardTransport is zmq4's net transport with guarded listeners.
type guardTransport struct {
	g       *guard
	channel string
	limit   int64 // bytes of a message; 0: none
	// subscriptions: peers may send subscriptions and commands only
	// (IOPub). zmq4's publisher queues anything else for a reader that
	// never comes, and a connection that sent it is never read again.
	subscriptions bool
	inner         transport.Transport
}

func (t *guardTransport) Dial(ctx context.Context, d transport.Dialer, addr string) (net.Conn, error) {
	return t.inner.Dial(ctx, d, addr)
}

func (t *guardTransport) Addr(ep string) (string, error) { return t.inner.Addr(ep) }

func (t *guardTransport) Listen(ctx context.Context, addr string) (net.Listener, error) {
	l, err := t.inner.Listen(ctx, addr)
	if err != nil {
		return nil, err
	}
	gl := &guardListener{
		Listener: l,
		t:        t,
		ready:    make(chan *guardConn),
		closed:   make(chan struct{}),
		slots:    make(chan struct{}, t.g.maxConns),
		pending:  map[*guardConn]bool{},
	}
	go gl.loop()
	return gl, nil
}

// guardListener hands zmq4 only connections whose peer has sent its
// greeting and READY command: zmq4 runs the handshake of each connection
// in its accept loop, so a peer that never spoke kept every later client
// out. The handshake is read in a goroutine of its own, within
// handshakeTimeout.
type guardListener struct {
	net.Listener
	t      *guardTransport
	ready  chan *guardConn
	closed chan struct{}
	once   sync.Once
	slots  chan struct{} // one per connection open

	mu      sync.Mutex
	pending map[*guardConn]bool // in the handshake
}

func (l *guardListener) loop() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			select {
			case <-l.closed:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors, say: try again shortly.
			select {
			case <-l.closed:
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		select {
		case l.slots <- struct{}{}:
		default:
			l.t.g.refused(l.t.channel, c, fmt.Errorf("%d connections are open already", cap(l.slots)))
			c.Close()
			continue
		}
		gc := &guardConn{Conn: c, l: l, f: framer{greeting: len(zmtpGreeting), limit: l.t.limit, subscriptions: l.t.subscriptions}}
		l.mu.Lock()
		l.pending[gc] = true
		l.mu.Unlock()
		go l.handshake(gc)
	}
}

func (l *guardListener) handshake(c *guardConn) {
	err := c.handshake(l.t.g.handshakeTimeout)
	l.mu.Lock()
	delete(l.pending, c)
	l.mu.Unlock()
	if err != nil {
		select {
		case <-l.closed: // the kernel is stopping
		default:
			l.t.g.refused(l.t.channel, c, err)
		}
		c.Close()
		return
	}
	select {
	case l.ready <- c:
	case <-l.closed:
		c.Close()
		return
	}
	// zmq4 reads again once it has opened the connection; a connection
	// it could not open (another socket type, another security) it
	// leaves open, unread.
	time.AfterFunc(l.t.g.handshakeTimeout, func() {
		if !c.served.Load() {
			c.Close()
		}
	})
}

// Accept returns the next connection whose peer completed its part of
// the handshake.
func (l *guardListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *guardListener) Close() error {
	err := net.ErrClosed
	l.once.Do(func() {
		close(l.closed)
		err = l.Listener.Close()
		l.mu.Lock()
		for c := range l.pending {
			c.Conn.Close() // its handshake fails and closes it
		}
		l.mu.Unlock()
	})
	return err
}

// zmtpGreeting is the greeting zmq4 sends, ZMTP 3.0 with the NULL
// mechanism: the guard sends it first, so that a peer that waits for it
// sends its own, and drops zmq4's when zmq4 writes it.
var zmtpGreeting = func() []byte {
	g := make([]byte, 64)
	g[0], g[9] = 0xff, 0x7f
	g[10], g[11] = 3, 0
	copy(g[12:32], zmq4.NullSecurity)
	return g
}()

// guardConn is a connection whose incoming frames are checked before
// zmq4 reads their length.
type guardConn struct {
	net.Conn
	l *guardListener
	f framer
	// pre is the peer's greeting and READY command, read in the
	// handshake and not yet read by zmq4.
	pre []byte
	// swallow is the bytes of zmq4's greeting still to drop: the guard
	// sent it already.
	swallow int
	served  atomic.Bool // zmq4 read past the handshake
	// deadline: a read deadline is set (in the middle of a message).
	deadline bool
	wmu      sync.Mutex

	mu     sync.Mutex
	held   int64 // budget held for the message being received
	closed bool
	once   sync.Once
}

// handshake sends the kernel's greeting and reads the peer's greeting and
// first frame into pre.
func (c *guardConn) handshake(timeout time.Duration) error {
	c.Conn.SetDeadline(time.Now().Add(timeout))
	defer c.Conn.SetDeadline(time.Time{})
	if _, err := c.Conn.Write(zmtpGreeting); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	c.swallow = len(zmtpGreeting)
	buf := make([]byte, 4096)
	for c.f.frames == 0 {
		n := min(c.f.need(), len(buf))
		if _, err := readFull(c.Conn, buf[:n]); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return fmt.Errorf("no ZMTP handshake within %v", timeout)
			}
			return fmt.Errorf("handshake: %w", err)
		}
		if err := c.f.feed(buf[:n], c.reserve); err != nil {
			return err
		}
		c.pre = append(c.pre, buf[:n]...)
	}
	return nil
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (c *guardConn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	c.served.Store(true)
	stall := c.l.t.g.stallTimeout
	switch {
	case c.f.boundary():
		// zmq4 has passed the last message on: its budget is free, and
		// the peer may take its time before the next.
		c.release()
		if c.deadline {
			c.Conn.SetReadDeadline(time.Time{})
			c.deadline = false
		}
	default:
		c.Conn.SetReadDeadline(time.Now().Add(stall))
		c.deadline = true
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		if ferr := c.f.feed(p[:n], c.reserve); ferr != nil {
			return 0, c.refuse(ferr)
		}
	}
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() {
		return n, c.refuse(fmt.Errorf("it left a message half sent for %v", stall))
	}
	return n, err
}

func (c *guardConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	done := 0
	if c.swallow > 0 {
		n := min(c.swallow, len(p))
		off := len(zmtpGreeting) - c.swallow
		if string(p[:n]) != string(zmtpGreeting[off:off+n]) {
			return 0, c.refuse(errors.New("zmq4 sent another greeting than the guard did"))
		}
		c.swallow -= n
		p, done = p[n:], n
	}
	stall := c.l.t.g.stallTimeout
	for len(p) > 0 {
		c.Conn.SetWriteDeadline(time.Now().Add(stall))
		n, err := c.Conn.Write(p)
		done += n
		p = p[n:]
		var ne net.Error
		switch {
		case err == nil:
		case errors.As(err, &ne) && ne.Timeout() && n > 0:
			// Slow, not stalled.
		case errors.As(err, &ne) && ne.Timeout():
			return done, c.refuse(fmt.Errorf("it read nothing of what the kernel sent for %v", stall))
		default:
			return done, err
		}
	}
	return done, nil
}

// refuse logs why the connection ends and closes it; the error it returns
// is not a timeout, so that zmq4 drops the connection.
func (c *guardConn) refuse(why error) error {
	c.l.t.g.refused(c.l.t.channel, c, why)
	c.Close()
	return &guardError{why}
}

// reserve takes n bytes of the budget for the message being received,
// waiting for other connections' messages for up to the stall timeout.
func (c *guardConn) reserve(n int64) error {
	b := c.l.t.g.budget
	if b == nil {
		return nil
	}
	if !b.TryAcquire(n) {
		ctx, cancel := context.WithTimeout(context.Background(), c.l.t.g.stallTimeout)
		err := b.Acquire(ctx, n)
		cancel()
		if err != nil {
			return fmt.Errorf("the kernel was receiving %s from other connections for %v", formatBytes(2*c.l.t.g.maxMessage), c.l.t.g.stallTimeout)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		b.Release(n)
		return net.ErrClosed
	}
	c.held += n
	return nil
}

func (c *guardConn) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held > 0 {
		c.l.t.g.budget.Release(c.held)
		c.held = 0
	}
}

func (c *guardConn) Close() error {
	err := net.ErrClosed
	c.once.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.release()
		err = c.Conn.Close()
		<-c.l.slots
	})
	return err
}

// guardError is why the guard closed a connection.
type guardError struct{ err error }

func (e *guardError) Error() string   { return "connection closed by the kernel: " + e.err.Error() }
func (e *guardError) Unwrap() error   { return e.err }
func (e *guardError) Timeout() bool   { return false }
func (e *guardError) Temporary() bool { return false }

// frameError is a frame or message over the limit.
type frameError struct {
	size  uint64 // of the frame
	limit int64
}

func (e *frameError) Error() string {
	if e.size > uint64(e.limit) {
		return fmt.Sprintf("a frame of %d bytes, over the limit of %s", e.size, formatBytes(e.limit))
	}
	return fmt.Sprintf("a message of more than %s", formatBytes(e.limit))
}

// ZMTP 3 frame flags.
const (
	flagMore    = 0x1
	flagLong    = 0x2
	flagCommand = 0x4
)

var errNotSubscription = errors.New("it sent a message that is not a subscription")

// framer follows the ZMTP 3 framing of a byte stream (the greeting, then
// frames: a flags byte, a size of 1 or 8 bytes, the body) without keeping
// the bytes, and checks each size when it is complete, before the reader
// that allocates by it sees its last byte.
type framer struct {
	greeting int   // bytes of the greeting still to come
	limit    int64 // bytes of a message, frames counted with frameOverhead; 0: none
	// subscriptions: messages must be subscriptions, one frame whose
	// first byte is 1 (subscribe) or 0 (cancel); commands pass.
	subscriptions bool
	firstByte     bool // the next body byte is a subscription's first
	hdr           [9]byte
	hdrN          int    // bytes of the current frame's header read
	body          uint64 // bytes of the current frame's body still to come
	inBody        bool
	more          bool  // the current frame is not its message's last
	msg           int64 // size of the message so far
	frames        int   // frames read whole
}

// boundary reports whether the stream is between two messages.
func (f *framer) boundary() bool {
	return f.greeting == 0 && f.hdrN == 0 && !f.inBody && f.msg == 0
}

// need is the number of bytes that end the current part: the greeting,
// the header or the body.
func (f *framer) need() int {
	switch {
	case f.greeting > 0:
		return f.greeting
	case f.inBody:
		return int(min(f.body, 1<<30))
	case f.hdrN == 0:
		return 1
	case f.hdr[0]&flagLong != 0:
		return 9 - f.hdrN
	default:
		return 2 - f.hdrN
	}
}

// feed follows p, the next bytes of the stream; reserve takes the bytes
// of each frame from a budget.
func (f *framer) feed(p []byte, reserve func(int64) error) error {
	for len(p) > 0 {
		switch {
		case f.greeting > 0:
			n := min(f.greeting, len(p))
			f.greeting -= n
			p = p[n:]
		case f.inBody:
			if f.firstByte {
				if p[0] > 1 {
					return errNotSubscription
				}
				f.firstByte = false
			}
			n := min(uint64(len(p)), f.body)
			f.body -= n
			p = p[n:]
			if f.body == 0 {
				f.endFrame()
			}
		default:
			f.hdr[f.hdrN] = p[0]
			f.hdrN++
			p = p[1:]
			size, ok := f.size()
			if !ok {
				continue
			}
			f.hdrN = 0
			f.more = f.hdr[0]&flagMore != 0
			if err := f.check(size, reserve); err != nil {
				return err
			}
			if f.subscriptions && f.frames > 0 && f.hdr[0]&flagCommand == 0 {
				if f.more || size == 0 {
					return errNotSubscription
				}
				f.firstByte = true
			}
			if size == 0 {
				f.endFrame()
			} else {
				f.body, f.inBody = size, true
			}
		}
	}
	return nil
}

// size is the current frame's size, when its header is complete.
func (f *framer) size() (uint64, bool) {
	switch {
	case f.hdr[0]&flagLong == 0 && f.hdrN == 2:
		return uint64(f.hdr[1]), true
	case f.hdr[0]&flagLong != 0 && f.hdrN == 9:
		return binary.BigEndian.Uint64(f.hdr[1:9]), true
	}
	return 0, false
}

func (f *framer) check(size uint64, reserve func(int64) error) error {
	limit := f.limit
	if f.frames == 0 && (limit == 0 || limit > handshakeFrameLimit) {
		limit = handshakeFrameLimit
	}
	if limit > 0 && (size > uint64(limit) || f.msg+int64(size)+frameOverhead > limit) {
		return &frameError{size: size, limit: limit}
	}
	cost := int64(min(size, 1<<62)) + frameOverhead
	f.msg += cost
	if reserve != nil && limit > 0 {
		return reserve(cost)
	}
	return nil
}

func (f *framer) endFrame() {
	f.inBody = false
	f.frames++
	if !f.more {
		f.msg = 0
	}
}

// formatBytes writes n in binary units, to a tenth: 256 MiB, 1.5 GiB.
func formatBytes(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	v := float64(n) / 1024
	u := 0
	for math.Round(v*10) >= 10240 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + " " + units[u]
}
