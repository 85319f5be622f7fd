package display

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"

	"github.com/evalcapsule/evalcapsule/kernel/internal/frontend"
)

// Show displays each value now, below the cell, in the forms Of finds.
// Nil values and empty Data show nothing.
func Show(values ...any) {
	for _, v := range values {
		publish("display_data", Of(v), "")
	}
}

// Clear removes the output the cell has shown so far.
func Clear() { clear(false) }

// ClearNext removes the cell's output when the next output arrives, not
// now: a loop that redraws a figure with ClearNext then Show does not
// flicker. A Handle is usually simpler.
func ClearNext() { clear(true) }

func clear(wait bool) {
	if p := frontend.Get(); p != nil {
		p.Publish("clear_output", map[string]any{"wait": wait})
	}
}

// A Handle is one output that can be replaced in place: every output shown
// through it (with Show, or the first Update) changes when Update is
// called, in this cell or a later one. It is Jupyter's display_id.
// A Handle is safe for use by several goroutines.
type Handle struct {
	id    string
	mu    sync.Mutex
	shown bool
}

// New returns a Handle that shows nothing yet: the first Update shows its
// value where the running cell's output is.
func New() *Handle {
	var b [12]byte
	rand.Read(b[:])
	return &Handle{id: hex.EncodeToString(b[:])}
}

// ID returns the display_id the notebook knows the output by.
func (h *Handle) ID() string { return h.id }

// Show displays v as a new output linked to h, which later Updates replace
// too.
func (h *Handle) Show(v any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.shown = true
	publish("display_data", Of(v), h.id)
}

// Update replaces the outputs linked to h with v, or shows v if h has not
// been shown yet.
func (h *Handle) Update(v any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.shown {
		h.shown = true
		publish("display_data", Of(v), h.id)
		return
	}
	publish("update_display_data", Of(v), h.id)
}

// publish sends d to the notebook, or prints its text form when no kernel
// is connected.
func publish(msgType string, d Data, id string) {
	if d.IsZero() {
		return
	}
	p := frontend.Get()
	if p == nil {
		fmt.Fprintln(os.Stdout, d.String())
		return
	}
	data, md := d.MIMEBundle()
	content := map[string]any{"data": data, "metadata": md, "transient": map[string]any{}}
	if id != "" {
		content["transient"] = map[string]any{"display_id": id}
	}
	p.Publish(msgType, content)
}
