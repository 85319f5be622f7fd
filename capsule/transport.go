package capsule

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"oras.land/oras-go/v2/registry/remote/retry"
)

// DefaultIdleTimeout is how long a request to a registry may go without a
// byte coming or going before it fails (PullOptions.IdleTimeout).
const DefaultIdleTimeout = 60 * time.Second

// A request's default transfer timeout is transferBase plus the time its
// declared size takes at transferRate: a 200 MB samples layer gets 23
// minutes, a 4 GiB one (the blob limit) 4 h 43 min. That is generous for
// a slow link (2 Mbit/s) and still ends a registry that trickles a byte
// at a time.
const (
	transferBase = 10 * time.Minute
	transferRate = 256 << 10 // bytes per second
)

// transferTimeouts bound each HTTP request to a registry.
type transferTimeouts struct {
	// idle fails a request when no byte of its body or its response's
	// has moved for this long.
	idle time.Duration
	// total is the longest a request may take, its response read to the
	// end included; zero: transferBase plus its size at transferRate.
	total time.Duration
	// maxBytes is the most a response's Content-Length counts for in the
	// default total: a registry's claim, bounded by the blob limit.
	maxBytes int64
}

func newTransferTimeouts(idle, total time.Duration, maxBytes int64) transferTimeouts {
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBlobBytes
	}
	return transferTimeouts{idle: idle, total: total, maxBytes: maxBytes}
}

// forSize is the total timeout of a request that moves n bytes.
func (t transferTimeouts) forSize(n int64) time.Duration {
	if t.total > 0 {
		return t.total
	}
	n = min(max(n, 0), t.maxBytes)
	return transferBase + time.Duration(n/transferRate)*time.Second
}

// newHTTPClient is the HTTP client of a registry: oras-go's retries (of
// 5xx answers and dial timeouts) over round trips held to t.
func newHTTPClient(t transferTimeouts) *http.Client {
	return &http.Client{Transport: retry.NewTransport(&timeoutTransport{base: http.DefaultTransport, t: t})}
}

// timeoutError is a request to a registry that moved no byte for the
// idle timeout, or ran past its transfer timeout. It wraps ErrRegistry.
type timeoutError struct {
	host string
	idle bool
	d    time.Duration
}

func (e *timeoutError) Error() string {
	if e.idle {
		return fmt.Sprintf("no byte to or from %s for %s (IdleTimeout)", e.host, e.d)
	}
	return fmt.Sprintf("a request to %s took longer than %s (TransferTimeout)", e.host, e.d)
}

func (e *timeoutError) Unwrap() error { return ErrRegistry }

// timeoutTransport holds each round trip to its transferTimeouts: the
// idle timer restarts at every byte of the request's body and of the
// response's, and the total runs from the start of the request until its
// response is closed. Either cancels the request, which then fails with a
// *timeoutError.
type timeoutTransport struct {
	base http.RoundTripper
	t    transferTimeouts
}

func (t *timeoutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	w := &watchdog{ctx: ctx, cancel: cancel, host: req.URL.Host, t: t.t, start: time.Now()}
	w.idleTimer = time.AfterFunc(t.t.idle, func() { cancel(&timeoutError{host: w.host, idle: true, d: t.t.idle}) })
	w.armTotal(t.t.forSize(req.ContentLength))

	r := req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		r.Body = &watchedBody{ReadCloser: req.Body, w: w}
		if req.GetBody != nil {
			r.GetBody = func() (io.ReadCloser, error) {
				b, err := req.GetBody()
				if err != nil || b == nil || b == http.NoBody {
					return b, err
				}
				return &watchedBody{ReadCloser: b, w: w}, nil
			}
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		err = w.failure(err)
		w.stop()
		return nil, err
	}
	w.touch()
	if resp.ContentLength > 0 && t.t.total <= 0 {
		// The response's size is known now: its total may be longer.
		if d := t.t.forSize(resp.ContentLength); d > w.total && w.totalTimer.Stop() {
			w.armTotal(d)
		}
	}
	resp.Body = &watchedBody{ReadCloser: resp.Body, w: w, response: true}
	return resp, nil
}

// watchdog is the timers of one round trip.
type watchdog struct {
	ctx                   context.Context
	cancel                context.CancelCauseFunc
	host                  string
	t                     transferTimeouts
	start                 time.Time
	total                 time.Duration // of the armed total timer
	idleTimer, totalTimer *time.Timer
}

// armTotal (re)starts the total timer, to fire d after the start.
func (w *watchdog) armTotal(d time.Duration) {
	w.total = d
	w.totalTimer = time.AfterFunc(d-time.Since(w.start), func() { w.cancel(&timeoutError{host: w.host, d: d}) })
}

// touch restarts the idle timer: a byte moved.
func (w *watchdog) touch() { w.idleTimer.Reset(w.t.idle) }

// stop ends the round trip's timers and context.
func (w *watchdog) stop() {
	w.idleTimer.Stop()
	w.totalTimer.Stop()
	w.cancel(nil)
}

// failure is the error a round trip or a read fails with: the timeout
// that cancelled it, if one did.
func (w *watchdog) failure(err error) error {
	if te, ok := context.Cause(w.ctx).(*timeoutError); ok {
		return te
	}
	return err
}

// watchedBody is a request's or a response's body whose bytes restart the
// idle timer. Closing a response's ends its round trip.
type watchedBody struct {
	io.ReadCloser
	w        *watchdog
	response bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.touch()
	}
	switch {
	case err == io.EOF && b.response:
		// Read to the end: nothing left to time.
		b.w.stop()
	case err != nil && err != io.EOF:
		err = b.w.failure(err)
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.ReadCloser.Close()
	if b.response {
		b.w.stop()
	}
	return err
}
