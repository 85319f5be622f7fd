package kernel

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
)

// sendTimeout bounds a send: zmq4 waits up to its socket timeout (five
// minutes by default) for a peer to connect before the first send.
const sendTimeout = 10 * time.Second

// channel is one of the kernel's sockets. Sends are serialised per socket:
// zmq4 does not document its sockets as safe for concurrent sends, and
// several goroutines publish (the cell's output, the display package,
// heartbeat-independent control replies).
type channel struct {
	name string
	sock zmq4.Socket
	mu   sync.Mutex
}

// listen binds a socket of kind on endpoint, through g, which refuses
// messages over limit bytes (0: none); zmq4 logs its own connection
// errors to logger.
func listen(ctx context.Context, name string, kind zmq4.SocketType, endpoint string, logger *log.Logger, g *guard, limit int64) (*channel, error) {
	guarded, err := g.endpoint(name, endpoint, limit, kind == zmq4.Pub)
	if err != nil {
		return nil, fmt.Errorf("%s channel: %w", name, err)
	}
	opts := []zmq4.Option{zmq4.WithTimeout(sendTimeout), zmq4.WithLogger(logger)}
	var sock zmq4.Socket
	switch kind {
	case zmq4.Router:
		sock = zmq4.NewRouter(ctx, opts...)
	case zmq4.Pub:
		sock = zmq4.NewPub(ctx, opts...)
	default:
		sock = zmq4.NewRep(ctx, opts...)
	}
	if err := sock.Listen(guarded); err != nil {
		sock.Close()
		return nil, fmt.Errorf("%s channel: %w", name, err)
	}
	return &channel{name: name, sock: sock}, nil
}

func (c *channel) send(frames [][]byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sock.SendMulti(zmq4.NewMsgFrom(frames...))
}

func (c *channel) recv() ([][]byte, error) {
	m, err := c.sock.Recv()
	if err != nil {
		return nil, err
	}
	return m.Frames, nil
}

func (c *channel) close() error { return c.sock.Close() }
