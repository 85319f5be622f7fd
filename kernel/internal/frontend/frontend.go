// Package frontend links the display package, which cells call, to the
// kernel that serves the notebook. It is internal so that only the kernel
// can connect itself; display falls back to plain text on stdout when no
// kernel is connected (a compiled program, a test).
package frontend

import "sync/atomic"

// Publisher sends one message on the kernel's IOPub channel, with the
// request being executed as its parent. Content must marshal to JSON.
type Publisher interface {
	Publish(msgType string, content any)
}

type holder struct{ p Publisher }

var current atomic.Pointer[holder]

// Set connects p, or disconnects with nil. A process serves one notebook,
// so one publisher at a time is enough.
func Set(p Publisher) {
	if p == nil {
		current.Store(nil)
		return
	}
	current.Store(&holder{p})
}

// Get returns the connected publisher, or nil.
func Get() Publisher {
	if h := current.Load(); h != nil {
		return h.p
	}
	return nil
}
