package kernel

import (
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"sync"
)

// cellOutput is one output of a code cell, as a notebook stores it.
type cellOutput struct {
	cell int    // index of the cell in the notebook
	kind string // output_type: stream, display_data, execute_result, error

	name, text string // stream

	data, metadata jsonObject // display_data, execute_result
	count          int        // execute_result

	ename, evalue string // error
	traceback     []string
}

// outputs collects what cells print and show as a notebook client
// (nbclient, which nbconvert runs) records the kernel's IOPub messages:
// clear_output empties the cell's outputs, now or, with wait, when the
// next output comes; update_display_data replaces in place the outputs
// shown with that display_id, in any cell; consecutive stream outputs of
// one name are one output. It is the engine's stdout and stderr and the
// display package's publisher while a notebook runs.
type outputs struct {
	mu        sync.Mutex
	cell      int // the running cell, -1 between cells: output then is dropped, as nbclient drops it
	cells     map[int][]*cellOutput
	clearNext bool
	displays  map[string][]*cellOutput
	partial   map[string][]byte // an incomplete UTF-8 character a stream ended with
}

func newOutputs() *outputs {
	return &outputs{cell: -1, cells: map[int][]*cellOutput{}, displays: map[string][]*cellOutput{}, partial: map[string][]byte{}}
}

// begin makes cell the running one, with no outputs.
func (o *outputs) begin(cell int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cell = cell
	o.cells[cell] = nil
	o.clearNext = false
}

// end flushes what the running cell printed, adds last (its result or
// error, if any) and stops collecting.
func (o *outputs) end(last *cellOutput) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, name := range []string{"stdout", "stderr"} {
		if b := o.partial[name]; len(b) > 0 {
			o.stream(name, string(b))
		}
	}
	clear(o.partial)
	if last != nil {
		o.addLocked(last)
	}
	o.cell = -1
}

// of returns the outputs of a cell that ran.
func (o *outputs) of(cell int) ([]*cellOutput, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	outs, ok := o.cells[cell]
	return outs, ok
}

func (o *outputs) addLocked(out *cellOutput) {
	if o.cell < 0 {
		return
	}
	if o.clearNext {
		o.clearLocked()
	}
	out.cell = o.cell
	outs := o.cells[o.cell]
	if n := len(outs); n > 0 && out.kind == "stream" && outs[n-1].kind == "stream" && outs[n-1].name == out.name {
		outs[n-1].text += out.text
		return
	}
	o.cells[o.cell] = append(outs, out)
}

// clearLocked removes the running cell's outputs, and its outputs from
// the display_id map.
func (o *outputs) clearLocked() {
	o.clearNext = false
	o.cells[o.cell] = nil
	for id, outs := range o.displays {
		kept := outs[:0]
		for _, out := range outs {
			if out.cell != o.cell {
				kept = append(kept, out)
			}
		}
		o.displays[id] = kept
	}
}

func (o *outputs) stream(name, text string) {
	o.addLocked(&cellOutput{kind: "stream", name: name, text: text})
}

// writer returns the standard output or error ("stdout", "stderr") of
// cells.
func (o *outputs) writer(name string) io.Writer { return streamWriter{o, name} }

type streamWriter struct {
	o    *outputs
	name string
}

// Write appends p to the cell's stream output, keeping back an
// incomplete UTF-8 character until the rest of it is written.
func (w streamWriter) Write(p []byte) (int, error) {
	o := w.o
	o.mu.Lock()
	defer o.mu.Unlock()
	b := append(o.partial[w.name], p...)
	n := completeUTF8(b)
	o.partial[w.name] = append([]byte(nil), b[n:]...)
	if n > 0 {
		o.stream(w.name, string(b[:n]))
	}
	return len(p), nil
}

// Publish records a message of the display package (frontend.Publisher).
func (o *outputs) Publish(msgType string, content any) {
	b, err := json.Marshal(content)
	if err != nil {
		return
	}
	var c struct {
		Data      json.RawMessage `json:"data"`
		Metadata  json.RawMessage `json:"metadata"`
		Transient struct {
			DisplayID string `json:"display_id"`
		} `json:"transient"`
		Wait bool `json:"wait"`
	}
	if json.Unmarshal(b, &c) != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if msgType == "clear_output" {
		if o.cell < 0 {
			return
		}
		if c.Wait {
			o.clearNext = true
		} else {
			o.clearLocked()
		}
		return
	}
	data, md := bundle(c.Data), bundle(c.Metadata)
	id := c.Transient.DisplayID
	if id != "" {
		for _, out := range o.displays[id] {
			out.data, out.metadata = data, md
		}
	}
	if msgType != "display_data" || o.cell < 0 {
		return // update_display_data only updates
	}
	out := &cellOutput{kind: "display_data", data: data, metadata: md}
	o.addLocked(out)
	if id != "" {
		o.displays[id] = append(o.displays[id], out)
	}
}

// bundle decodes a MIME bundle or its metadata; anything but an object is
// an empty one.
func bundle(raw json.RawMessage) jsonObject {
	v, err := decodeJSON(raw)
	if o, ok := v.(jsonObject); ok && err == nil {
		return o
	}
	return jsonObject{}
}

// crRE matches what a carriage return overwrites on its line: a progress
// bar printed with \r keeps its last state, as nbconvert's
// coalesce_streams keeps it.
var crRE = regexp.MustCompile(`[^\n]*\r([^\n])`)

// nbformat returns out as a notebook stores it, keys in nbformat's
// (sorted) order, text split into lines.
func (out *cellOutput) nbformat() jsonObject {
	switch out.kind {
	case "stream":
		return jsonObject{
			{"name", out.name},
			{"output_type", "stream"},
			{"text", splitLines(crRE.ReplaceAllString(out.text, "$1"))},
		}
	case "execute_result":
		return jsonObject{
			{"data", splitBundle(out.data)},
			{"execution_count", json.Number(strconv.Itoa(out.count))},
			{"metadata", out.metadata},
			{"output_type", "execute_result"},
		}
	case "error":
		tb := make([]any, len(out.traceback))
		for i, l := range out.traceback {
			tb[i] = l
		}
		return jsonObject{
			{"ename", out.ename},
			{"evalue", out.evalue},
			{"output_type", "error"},
			{"traceback", tb},
		}
	}
	return jsonObject{
		{"data", splitBundle(out.data)},
		{"metadata", out.metadata},
		{"output_type", "display_data"},
	}
}
