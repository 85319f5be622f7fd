package kernel

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// streamDelay is how long printed output waits to be sent with what
// follows it: one message per burst of Prints rather than per Print, and
// still live output from a long cell.
const streamDelay = 50 * time.Millisecond

// streamLimit sends output at once when this much is waiting.
const streamLimit = 64 << 10

// stream is the standard output or error of cells: what they write is
// sent as stream messages, with the running cell as parent.
type stream struct {
	name string // "stdout" or "stderr"
	k    *Kernel

	mu    sync.Mutex
	buf   []byte
	timer *time.Timer
}

func (s *stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	if len(s.buf) >= streamLimit {
		s.send()
	} else if s.timer == nil {
		s.timer = time.AfterFunc(streamDelay, s.flush)
	}
	return len(p), nil
}

// flush sends what is waiting.
func (s *stream) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.send()
}

// send sends the buffer up to its last complete UTF-8 character: a
// character split between two writes stays whole. The lock is held while
// publishing, so that chunks cannot overtake each other.
func (s *stream) send() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	n := completeUTF8(s.buf)
	if n == 0 {
		return
	}
	text := string(s.buf[:n])
	s.buf = append(s.buf[:0], s.buf[n:]...)
	s.k.publish(s.k.outputParent(), "stream", map[string]any{"name": s.name, "text": text})
}

// takeLine sends the complete lines waiting and returns the last, partial
// line, removing it: the prompt a cell printed before reading input.
func (s *stream) takeLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := strings.LastIndexByte(string(s.buf), '\n') + 1
	prompt := string(s.buf[i:])
	s.buf = s.buf[:i]
	s.send()
	return prompt
}

// completeUTF8 is the length of the longest prefix of b that does not end
// inside a UTF-8 character. Invalid bytes count as complete: JSON encoding
// turns them into U+FFFD.
func completeUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// inputReader is the standard input of cells: each read that finds
// nothing buffered asks the frontend for a line (input_request on the
// stdin channel), with the partial line the cell printed as the prompt.
type inputReader struct{ k *Kernel }

func (r inputReader) Read(p []byte) (int, error) {
	r.k.mu.Lock()
	pending := r.k.pendingInput
	r.k.mu.Unlock()
	if pending == "" {
		line, err := r.k.requestInput(r.k.stdout.takeLine(), false)
		if err != nil {
			return 0, err
		}
		pending = line + "\n"
	}
	n := copy(p, pending)
	r.k.mu.Lock()
	r.k.pendingInput = pending[n:]
	r.k.mu.Unlock()
	return n, nil
}

var _ io.Reader = inputReader{}

// requestInput asks the frontend of the running cell for one line.
func (k *Kernel) requestInput(prompt string, password bool) (string, error) {
	k.mu.Lock()
	parent, allowed, cancel := k.parent, k.allowStdin, k.cancel
	k.mu.Unlock()
	if !allowed || parent == nil || cancel == nil {
		return "", ErrNoStdin
	}
	for len(k.inputs) > 0 { // a reply that came too late for an earlier request
		<-k.inputs
	}
	// The request goes to the identities of the shell request: the
	// client's stdin socket has the same identity as its shell socket.
	k.reply(k.stdin, parent, "input_request", map[string]any{"prompt": prompt, "password": password})
	k.mu.Lock()
	done := k.cellDone
	k.mu.Unlock()
	select {
	case m := <-k.inputs:
		var c struct {
			Value string `json:"value"`
		}
		if err := json.Unmarshal(m.content, &c); err != nil {
			return "", err
		}
		return c.Value, nil
	case <-done:
		return "", context.Canceled
	}
}
