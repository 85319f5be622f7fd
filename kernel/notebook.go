package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/evalcapsule/evalcapsule/kernel/internal/frontend"
)

// NotebookOptions configures ExecuteNotebook. The zero value runs the
// cells in the process's working directory, with no time limit, and stops
// at the first cell that fails.
type NotebookOptions struct {
	// Dir is the working directory of the cells: their relative paths and
	// os.Getwd see it, in interpreted and compiled code alike. "" leaves
	// the process's working directory as it is. See ExecuteNotebook for
	// why this is process-wide.
	Dir string
	// Env adds "KEY=value" entries to the environment of the cells, of
	// the compiled packages they call and of the programs they start.
	// Default: the process's environment only.
	Env []string
	// Timeout bounds each cell's run. A cell that runs longer is
	// interrupted, as an interrupt from a notebook would, and fails with
	// the error Timeout once it has stopped: a compiled call that does
	// not take the cell's ctx finishes first. Default 0: no limit.
	Timeout time.Duration
	// AllowErrors runs the cells after a cell that fails too, as
	// nbconvert's --allow-errors does. Default false: execution stops at
	// the first error, except in a cell tagged "raises-exception".
	AllowErrors bool
}

// NotebookResult is an executed notebook.
type NotebookResult struct {
	// Notebook is the notebook with its outputs, nbformat 4 JSON as
	// Jupyter writes it.
	Notebook []byte
	// Ran is the number of code cells run.
	Ran int
	// Errors are the cells that failed, in order: with AllowErrors all
	// of them, without it the one that stopped execution (and those
	// tagged "raises-exception" before it).
	Errors []CellError
}

// enameTimeout is the error of a cell that ran past NotebookOptions.Timeout.
const enameTimeout = "Timeout"

// notebookSlot serialises ExecuteNotebook: the working directory, the
// environment and the display package's publisher are the process's.
var notebookSlot = make(chan struct{}, 1)

// ExecuteNotebook runs the code cells of a Jupyter notebook (nbformat 4
// JSON) in order, in one new interpreter, with the semantics of a kernel
// session, and returns the notebook with their outputs, as
// `jupyter nbconvert --to notebook --execute` writes it with this kernel,
// without Jupyter.
//
// Outputs are recorded as Jupyter's notebook client records them: the
// standard output and error of a cell are stream outputs, consecutive
// ones of one stream merged into one, with what a carriage return
// overwrites on its line removed; values shown are display_data, the
// cell's result an execute_result, a failure an error with its
// traceback. An update of a display handle replaces the outputs it showed
// in place, in whichever cell they are; a clear_output empties the
// cell's outputs, with wait when the next output comes. execution_count
// counts the cells run, from 1. Text is split into lines as nbformat
// stores it, and nothing that changes from run to run (no timestamps, no
// display ids) is written. Reading standard input fails (ErrNoStdin), as
// under nbconvert.
//
// Cells other than code, code cells that are blank or tagged
// "skip-execution", and the cells after one that stopped execution are
// written back as they were; so is everything else in the file, keys in
// their order, except the metadata's kernelspec and language_info, which
// name this kernel.
//
// When a cell fails, and AllowErrors is false and the cell is not tagged
// "raises-exception", ExecuteNotebook stops and returns the notebook with
// the outputs so far, the failing cell's error output included, and a
// *CellError. When ctx is done, the running cell is interrupted and the
// notebook so far returned with ctx's error. Input that is not an
// nbformat 4 notebook is an ErrNotebook, with no result.
//
// The interpreter runs in this process, which has one working directory
// and one environment: ExecuteNotebook sets Dir and adds Env for the whole
// process while it runs, and restores them when it returns. Calls are
// serialised (a second waits for the first), but nothing else in the
// process should depend on the working directory or those variables
// meanwhile, nor serve a notebook with a Kernel, whose displays would go
// to this notebook. A goroutine a cell started can outlive the call: it then sees the restored
// directory, what it prints is dropped, and what it shows goes where the
// display package sends it outside a notebook. Output printed between
// two cells is dropped too, as a notebook client drops it.
func ExecuteNotebook(ctx context.Context, in []byte, opts NotebookOptions) (NotebookResult, error) {
	nb, cells, err := readNotebook(in)
	if err != nil {
		return NotebookResult{}, err
	}
	for _, kv := range opts.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return NotebookResult{}, fmt.Errorf("environment entry %q is not KEY=value", kv)
		}
	}
	select {
	case notebookSlot <- struct{}{}:
	case <-ctx.Done():
		return NotebookResult{}, ctx.Err()
	}
	defer func() { <-notebookSlot }()
	restore, err := enterProcess(opts.Dir, opts.Env)
	if err != nil {
		return NotebookResult{}, err
	}
	defer restore()

	outs := newOutputs()
	stderr := outs.writer("stderr")
	e, err := newEngine(outs.writer("stdout"), stderr, noStdin{}, func(where string, value any) {
		fmt.Fprintf(stderr, "panic in a goroutine started at %s: %v\n", where, value)
	})
	if err != nil {
		return NotebookResult{}, err
	}
	prev := frontend.Get()
	frontend.Set(outs)
	defer frontend.Set(prev)

	var res NotebookResult
	var stop error
	for i, c := range cells {
		cell := c.(jsonObject)
		src, ok := runnable(cell)
		if !ok {
			continue
		}
		if ctx.Err() != nil {
			stop = ctx.Err()
			break
		}
		res.Ran++
		n := res.Ran
		cerr := runCell(ctx, e, outs, i, n, src, opts.Timeout)
		cell.set("execution_count", json.Number(strconv.Itoa(n)))
		cells[i] = cell
		if cerr == nil {
			continue
		}
		res.Errors = append(res.Errors, *cerr)
		if ctx.Err() != nil {
			stop = fmt.Errorf("cell %d (In[%d]): %w", i, n, ctx.Err())
			break
		}
		if !opts.AllowErrors && !hasTag(cell, "raises-exception") {
			stop = cerr
			break
		}
	}

	// Outputs are written last: a later cell may update an earlier one's.
	for i, c := range cells {
		list, ran := outs.of(i)
		if !ran {
			continue
		}
		v := make([]any, len(list))
		for j, out := range list {
			v[j] = out.nbformat()
		}
		cell := c.(jsonObject)
		cell.set("outputs", v)
		cells[i] = cell
	}
	nb.set("cells", cells)
	setKernelMetadata(&nb)
	res.Notebook = encodeNotebook(nb)
	return res, stop
}

// runCell runs cell i as In[n] and records its result or error.
func runCell(ctx context.Context, e *engine, outs *outputs, i, n int, src string, timeout time.Duration) *CellError {
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	outs.begin(i)
	o := e.run(cctx, fmt.Sprintf("In[%d]", n), src)
	ce := o.err
	if ce != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		msg := fmt.Sprintf("the cell ran longer than %v and was interrupted", timeout)
		if _, late, ok := strings.Cut(ce.value, interruptedMsg+"; "); ok {
			msg += "; " + late
		}
		ce = &cellError{name: enameTimeout, value: msg, traceback: []string{red(enameTimeout + ": " + msg)}}
	}
	var last *cellOutput
	switch {
	case ce != nil:
		last = &cellOutput{kind: "error", ename: ce.name, evalue: ce.value, traceback: ce.traceback}
	case !o.result.IsZero():
		data, md := o.result.MIMEBundle()
		last = &cellOutput{kind: "execute_result", data: bundleOf(data), metadata: bundleOf(md), count: n}
	}
	outs.end(last)
	if ce == nil {
		return nil
	}
	return &CellError{Cell: i, ExecutionCount: n, Name: ce.name, Value: ce.value, Traceback: ce.traceback}
}

// bundleOf is a MIME bundle (or its metadata) as the notebook stores it.
func bundleOf(m map[string]any) jsonObject {
	v, err := toJSONValue(m)
	if o, ok := v.(jsonObject); ok && err == nil {
		return o
	}
	return jsonObject{{"text/plain", fmt.Sprintf("(the output cannot be stored: %v)", err)}}
}

// noStdin is the standard input of cells run without a frontend.
type noStdin struct{}

func (noStdin) Read([]byte) (int, error) { return 0, ErrNoStdin }

// readNotebook decodes an nbformat 4 notebook and checks what
// ExecuteNotebook relies on: cells that are objects, code cells whose
// source is text.
func readNotebook(in []byte) (jsonObject, []any, error) {
	v, err := decodeJSON(in)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrNotebook, err)
	}
	nb, ok := v.(jsonObject)
	if !ok {
		return nil, nil, fmt.Errorf("%w: not a JSON object", ErrNotebook)
	}
	if major, _ := nb.get("nbformat"); major != json.Number("4") {
		return nil, nil, fmt.Errorf("%w: nbformat %v, want 4", ErrNotebook, major)
	}
	cv, _ := nb.get("cells")
	cells, ok := cv.([]any)
	if !ok {
		return nil, nil, fmt.Errorf("%w: no list of cells", ErrNotebook)
	}
	for i, c := range cells {
		cell, ok := c.(jsonObject)
		if !ok {
			return nil, nil, fmt.Errorf("%w: cell %d is not an object", ErrNotebook, i)
		}
		if t, _ := cell.get("cell_type"); t == "code" {
			src, _ := cell.get("source")
			if _, ok := joinText(src); !ok {
				return nil, nil, fmt.Errorf("%w: cell %d: source is not a string or a list of strings", ErrNotebook, i)
			}
		}
	}
	return nb, cells, nil
}

// runnable returns the source of a code cell to run: not blank, not
// tagged "skip-execution" (nbclient's rules).
func runnable(cell jsonObject) (string, bool) {
	if t, _ := cell.get("cell_type"); t != "code" {
		return "", false
	}
	v, _ := cell.get("source")
	src, _ := joinText(v)
	if strings.TrimSpace(src) == "" || hasTag(cell, "skip-execution") {
		return "", false
	}
	return src, true
}

func hasTag(cell jsonObject, tag string) bool {
	md, _ := cell.get("metadata")
	m, _ := md.(jsonObject)
	tags, _ := m.get("tags")
	list, _ := tags.([]any)
	for _, t := range list {
		if t == tag {
			return true
		}
	}
	return false
}

// setKernelMetadata names this kernel in the notebook's metadata, as
// nbclient records the language_info of the kernel that ran it.
func setKernelMetadata(nb *jsonObject) {
	v, _ := nb.get("metadata")
	md, _ := v.(jsonObject)
	md.set("kernelspec", jsonObject{{"display_name", DisplayName}, {"language", "go"}, {"name", SpecName}})
	if li, err := toJSONValue(kernelInfo()["language_info"]); err == nil {
		md.set("language_info", li)
	}
	nb.set("metadata", md)
}

// enterProcess makes dir the process's working directory and adds env
// to its environment; restore undoes both.
func enterProcess(dir string, env []string) (restore func(), err error) {
	var undo []func()
	restore = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if dir != "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
		if err := os.Chdir(dir); err != nil {
			return nil, err
		}
		undo = append(undo, func() { os.Chdir(wd) })
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		old, had := os.LookupEnv(k)
		if err := os.Setenv(k, v); err != nil {
			restore()
			return nil, fmt.Errorf("environment: %w", err)
		}
		undo = append(undo, func() {
			if had {
				os.Setenv(k, old)
			} else {
				os.Unsetenv(k)
			}
		})
	}
	return restore, nil
}
