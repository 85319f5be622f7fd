package kernel

import (
	"encoding/json"
	"fmt"
	"os"
)

// Connection is a Jupyter connection file: where the kernel listens and
// the key that signs every message. The client that starts the kernel
// (jupyter_client, the notebook server) writes it.
type Connection struct {
	Transport   string `json:"transport"` // "tcp" (default) or "ipc"
	IP          string `json:"ip"`        // default 127.0.0.1
	ShellPort   int    `json:"shell_port"`
	ControlPort int    `json:"control_port"`
	StdinPort   int    `json:"stdin_port"`
	IOPubPort   int    `json:"iopub_port"`
	HBPort      int    `json:"hb_port"`
	// Key signs messages with SignatureScheme; an empty key turns signing
	// off, which jupyter_client does only when asked to.
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"` // "hmac-sha256"
	KernelName      string `json:"kernel_name,omitempty"`
}

// ReadConnection reads and checks a connection file.
func ReadConnection(path string) (Connection, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Connection{}, err
	}
	var c Connection
	if err := json.Unmarshal(b, &c); err != nil {
		return Connection{}, fmt.Errorf("%w: %s: %v", ErrConnection, path, err)
	}
	if err := c.check(); err != nil {
		return Connection{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func (c *Connection) check() error {
	if c.Transport == "" {
		c.Transport = "tcp"
	}
	if c.IP == "" {
		c.IP = "127.0.0.1" // never every interface unless the file says so
	}
	if c.Transport != "tcp" && c.Transport != "ipc" {
		return fmt.Errorf("%w: transport %q (tcp or ipc)", ErrConnection, c.Transport)
	}
	if c.Key != "" && c.SignatureScheme != "hmac-sha256" {
		return fmt.Errorf("%w: signature scheme %q (only hmac-sha256)", ErrConnection, c.SignatureScheme)
	}
	for _, p := range []int{c.ShellPort, c.ControlPort, c.StdinPort, c.IOPubPort, c.HBPort} {
		if p <= 0 || p > 65535 {
			return fmt.Errorf("%w: port %d", ErrConnection, p)
		}
	}
	return nil
}

// endpoint is the ZeroMQ address of one channel, as jupyter_client forms
// it: tcp://ip:port, or ipc://ip-port for the ipc transport.
func (c Connection) endpoint(port int) string {
	if c.Transport == "ipc" {
		return fmt.Sprintf("ipc://%s-%d", c.IP, port)
	}
	ip := c.IP
	if ip == "*" {
		ip = "0.0.0.0" // ZeroMQ's "every interface", in Go's notation
	}
	return fmt.Sprintf("tcp://%s:%d", ip, port)
}
