package kernel_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalcapsule/evalcapsule/kernel"
)

// inlineNotebook is an nbformat 4 notebook whose cells are code cells with
// these sources, unless a source starts with "markdown:".
func inlineNotebook(sources ...string) []byte {
	var cells []map[string]any
	for _, src := range sources {
		if md, ok := strings.CutPrefix(src, "markdown:"); ok {
			cells = append(cells, map[string]any{"cell_type": "markdown", "metadata": map[string]any{}, "source": md})
			continue
		}
		cells = append(cells, map[string]any{"cell_type": "code", "execution_count": nil, "metadata": map[string]any{},
			"outputs": []any{}, "source": src})
	}
	b, err := json.Marshal(map[string]any{"cells": cells, "metadata": map[string]any{}, "nbformat": 4, "nbformat_minor": 5})
	if err != nil {
		panic(err)
	}
	return b
}

// nbOutput is an output as the notebook stores it.
type nbOutput struct {
	OutputType     string                     `json:"output_type"`
	Name           string                     `json:"name"`
	Text           []string                   `json:"text"`
	Data           map[string]json.RawMessage `json:"data"`
	Metadata       map[string]any             `json:"metadata"`
	ExecutionCount int                        `json:"execution_count"`
	Ename          string                     `json:"ename"`
	Evalue         string                     `json:"evalue"`
	Traceback      []string                   `json:"traceback"`
}

type nbCell struct {
	CellType       string          `json:"cell_type"`
	ExecutionCount *int            `json:"execution_count"`
	Metadata       map[string]any  `json:"metadata"`
	Source         json.RawMessage `json:"source"`
	Outputs        []nbOutput      `json:"outputs"`
}

func cellsOf(t *testing.T, b []byte) []nbCell {
	t.Helper()
	var nb struct {
		Cells []nbCell `json:"cells"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		t.Fatalf("the executed notebook is not JSON: %v\n%s", err, b)
	}
	return nb.Cells
}

// nbText is a string or the lines of one, as nbformat stores text.
func nbText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var lines []string
	json.Unmarshal(raw, &lines)
	return strings.Join(lines, "")
}

// summary is a cell's outputs in brief: "stdout:a\n", "result[3]:42",
// "display:x", "error:panic:boom".
func summary(c nbCell) []string {
	out := []string{}
	for _, o := range c.Outputs {
		switch o.OutputType {
		case "stream":
			out = append(out, o.Name+":"+strings.Join(o.Text, ""))
		case "execute_result":
			out = append(out, fmt.Sprintf("result[%d]:%s", o.ExecutionCount, nbText(o.Data["text/plain"])))
		case "display_data":
			out = append(out, "display:"+nbText(o.Data["text/plain"]))
		case "error":
			out = append(out, "error:"+o.Ename+":"+o.Evalue)
		}
	}
	return out
}

func executeInline(t *testing.T, in []byte, opts kernel.NotebookOptions) ([]nbCell, kernel.NotebookResult, error) {
	t.Helper()
	res, err := kernel.ExecuteNotebook(context.Background(), in, opts)
	if res.Notebook == nil {
		t.Fatalf("no notebook returned: %v", err)
	}
	return cellsOf(t, res.Notebook), res, err
}

func TestExecuteNotebookOutputs(t *testing.T) {
	cells, res, err := executeInline(t, inlineNotebook(
		`import ("fmt"; "os")
fmt.Println("one")
fmt.Print("two\nthree")
fmt.Fprintln(os.Stderr, "warning")
fmt.Println()
fmt.Println("four")`,
		"6 * 7",
		"x := 1",
		`import "github.com/evalcapsule/evalcapsule/kernel/display"
display.Show(display.HTML("<b>shown</b>").With(display.Text("shown")))
display.Markdown("*result*")`,
		`for i := 0; i <= 100; i += 50 {
	fmt.Printf("\r%d%%", i)
}
fmt.Println()`,
	), kernel.NotebookOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 5 || len(res.Errors) != 0 {
		t.Errorf("ran %d, errors %v; want 5, none", res.Ran, res.Errors)
	}
	want := [][]string{
		{"stdout:one\ntwo\nthree", "stderr:warning\n", "stdout:\nfour\n"},
		{"result[2]:42"},
		{},
		{"display:shown", "result[4]:*result*"}, // Markdown's text/plain is its source
		{"stdout:100%\n"},
	}
	for i, c := range cells {
		if got := summary(c); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("cell %d: outputs %q, want %q", i, got, want[i])
		}
		if c.ExecutionCount == nil || *c.ExecutionCount != i+1 {
			t.Errorf("cell %d: execution_count %v, want %d", i, c.ExecutionCount, i+1)
		}
	}
	// Text is stored as nbformat stores it: split into lines, keys sorted.
	for _, frag := range []string{
		"\"text\": [\n      \"one\\n\",\n      \"two\\n\",\n      \"three\"\n     ]",
		"{\n     \"data\": {\n      \"text/plain\": [\n       \"42\"\n      ]\n     },\n     \"execution_count\": 2,\n     \"metadata\": {},\n     \"output_type\": \"execute_result\"\n    }",
		"\"text/markdown\": [\n       \"*result*\"\n      ]",
		"\"text/html\": [\n       \"<b>shown</b>\"\n      ]",
	} {
		if !bytes.Contains(res.Notebook, []byte(frag)) {
			t.Errorf("the notebook has no\n%s\nin\n%s", frag, res.Notebook)
		}
	}
}

// TestExecuteNotebookDisplayUpdates: an update replaces the output a
// handle showed, in its cell, and clear_output removes outputs now or,
// with wait, when the next output comes.
func TestExecuteNotebookDisplayUpdates(t *testing.T) {
	cells, _, err := executeInline(t, inlineNotebook(
		`import ("fmt"; "github.com/evalcapsule/evalcapsule/kernel/display")
h := display.New()
h.Update("step 1")
fmt.Println("working")
h.Update("step 2")
h.Show("step 2, again")`,
		`h.Update("done")`,
		`fmt.Println("gone")
display.Clear()
fmt.Println("kept")`,
		`fmt.Println("old frame")
display.ClearNext()
display.Show("new frame")
display.ClearNext()`,
		`g := display.New()
g.Show("cleared")
display.Clear()
g.Update("not shown: its output was cleared")
fmt.Println("after")`,
	), kernel.NotebookOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"display:done", "stdout:working\n", "display:done"},
		{},
		{"stdout:kept\n"},
		{"display:new frame"},
		{"stdout:after\n"},
	}
	for i, c := range cells {
		if got := summary(c); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("cell %d: outputs %q, want %q", i, got, want[i])
		}
	}
	if bytes.Contains(mustExecute(t, inlineNotebook(`import "github.com/evalcapsule/evalcapsule/kernel/display"`+"\n"+`display.New().Show(1)`)), []byte("display_id")) {
		t.Error("the notebook stores a display_id: it changes from run to run")
	}
}

func mustExecute(t *testing.T, in []byte) []byte {
	t.Helper()
	res, err := kernel.ExecuteNotebook(context.Background(), in, kernel.NotebookOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Notebook
}

// TestExecuteNotebookErrors: execution stops at the first error, unless
// errors are allowed, for the notebook or for the cell.
func TestExecuteNotebookErrors(t *testing.T) {
	in := inlineNotebook(`import "fmt"`+"\n"+`fmt.Println("before")`, `fmt.Println("partial")`+"\n"+`panic("boom")`, `"after"`)

	cells, res, err := executeInline(t, in, kernel.NotebookOptions{})
	var ce *kernel.CellError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want a *kernel.CellError", err)
	}
	if ce.Cell != 1 || ce.ExecutionCount != 2 || ce.Name != "panic" || ce.Value != "boom" {
		t.Errorf("error %+v, want cell 1, In[2], panic: boom", ce)
	}
	if msg := err.Error(); msg != "cell 1 (In[2]): panic: boom" {
		t.Errorf("error %q", msg)
	}
	if res.Ran != 2 || len(res.Errors) != 1 {
		t.Errorf("ran %d, errors %v; want 2, one", res.Ran, res.Errors)
	}
	if got, want := summary(cells[1]), []string{"stdout:partial\n", "error:panic:boom"}; !reflect.DeepEqual(got, want) {
		t.Errorf("failing cell: outputs %q, want %q", got, want)
	}
	if tb := strings.Join(cells[1].Outputs[1].Traceback, "\n"); !strings.Contains(tb, "In[2], line 2") || !strings.Contains(tb, `panic("boom")`) {
		t.Errorf("traceback does not point at the line:\n%s", tb)
	}
	if cells[2].ExecutionCount != nil || len(cells[2].Outputs) != 0 {
		t.Errorf("the cell after the error ran: %+v", cells[2])
	}

	cells, res, err = executeInline(t, in, kernel.NotebookOptions{AllowErrors: true})
	if err != nil {
		t.Fatalf("AllowErrors: %v", err)
	}
	if res.Ran != 3 || len(res.Errors) != 1 || res.Errors[0].Cell != 1 {
		t.Errorf("AllowErrors: ran %d, errors %v; want 3, cell 1", res.Ran, res.Errors)
	}
	if got := summary(cells[2]); !reflect.DeepEqual(got, []string{"result[3]:after"}) {
		t.Errorf("AllowErrors: last cell %q", got)
	}

	// A cell tagged raises-exception may fail.
	var nb map[string]any
	json.Unmarshal(in, &nb)
	nb["cells"].([]any)[1].(map[string]any)["metadata"] = map[string]any{"tags": []string{"raises-exception"}}
	tagged, _ := json.Marshal(nb)
	if _, res, err = executeInline(t, tagged, kernel.NotebookOptions{}); err != nil || res.Ran != 3 {
		t.Errorf("raises-exception: ran %d, error %v; want 3, none", res.Ran, err)
	}
}

func TestExecuteNotebookTimeout(t *testing.T) {
	start := time.Now()
	cells, _, err := executeInline(t, inlineNotebook(`import "fmt"`+"\n"+`fmt.Println("looping")`+"\n"+`for {
}`, `"not run"`), kernel.NotebookOptions{Timeout: 300 * time.Millisecond})
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
	var ce *kernel.CellError
	if !errors.As(err, &ce) || ce.Name != "Timeout" || ce.Cell != 0 {
		t.Fatalf("error %v, want a Timeout in cell 0", err)
	}
	if got := summary(cells[0]); len(got) != 2 || got[0] != "stdout:looping\n" || !strings.HasPrefix(got[1], "error:Timeout:the cell ran longer than 300ms") {
		t.Errorf("outputs %q", got)
	}
	if cells[1].ExecutionCount != nil {
		t.Error("the cell after the timeout ran")
	}
}

func TestExecuteNotebookCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(300 * time.Millisecond)
		cancel()
	}()
	res, err := kernel.ExecuteNotebook(ctx, inlineNotebook("for {\n}", `"not run"`), kernel.NotebookOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	cells := cellsOf(t, res.Notebook)
	if got := summary(cells[0]); len(got) != 1 || got[0] != "error:Interrupted:the cell was interrupted" {
		t.Errorf("outputs %q", got)
	}
}

// TestExecuteNotebookProcess: cells run in Dir with Env added, and the
// process gets its own back.
func TestExecuteNotebookProcess(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte("from data.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	const key = "EVALCAPSULE_NOTEBOOK_TEST"
	cells, _, err := executeInline(t, inlineNotebook(
		`import ("os"; "os/exec"; "strings")
b, err := os.ReadFile("data.txt")
string(b)`,
		`d, err := os.Getwd()
d`,
		`os.Getenv("`+key+`")`,
		`out, err := exec.Command("sh", "-c", "echo $`+key+`").Output()
strings.TrimSpace(string(out))`,
	), kernel.NotebookOptions{Dir: dir, Env: []string{key + "=set for the notebook"}})
	if err != nil {
		t.Fatal(err)
	}
	realDir, _ := filepath.EvalSymlinks(dir)
	for i, want := range []string{"from data.txt", realDir, "set for the notebook", "set for the notebook"} {
		if got := summary(cells[i]); len(got) != 1 || strings.TrimPrefix(got[0], fmt.Sprintf("result[%d]:", i+1)) != want {
			t.Errorf("cell %d: outputs %q, want %q", i, got, want)
		}
	}
	if now, _ := os.Getwd(); now != wd {
		t.Errorf("working directory %s after the call, want %s", now, wd)
	}
	if v, ok := os.LookupEnv(key); ok {
		t.Errorf("%s=%s after the call", key, v)
	}

	_, err = kernel.ExecuteNotebook(context.Background(), inlineNotebook("1"), kernel.NotebookOptions{Dir: filepath.Join(dir, "missing")})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing Dir: error %v, want ErrNotExist", err)
	}
	_, err = kernel.ExecuteNotebook(context.Background(), inlineNotebook("1"), kernel.NotebookOptions{Env: []string{"NOEQUALS"}})
	if err == nil {
		t.Error("an Env entry without = is accepted")
	}
}

// TestExecuteNotebookKeeps: what does not run is written back as it was:
// other cells, blank and skipped code cells, unknown keys in their order.
func TestExecuteNotebookKeeps(t *testing.T) {
	in := []byte(`{
 "metadata": {"zeta": {"b": 1, "a": 2}, "kernelspec": {"name": "python3"}},
 "nbformat_minor": 4,
 "nbformat": 4,
 "cells": [
  {"source": "# Title\nline 2", "cell_type": "markdown", "metadata": {"z": 1, "a": 2}},
  {"cell_type": "raw", "metadata": {}, "source": ["raw\n", "text"]},
  {"cell_type": "code", "execution_count": 7, "metadata": {}, "outputs": [{"output_type": "stream", "name": "stdout", "text": "old"}], "source": "  \n"},
  {"cell_type": "code", "execution_count": 8, "metadata": {"tags": ["skip-execution"]}, "outputs": [], "source": "panic(1)"},
  {"cell_type": "code", "execution_count": null, "metadata": {"custom": true}, "outputs": [{"output_type": "stream", "name": "stdout", "text": "stale"}], "source": ["1 +\n", "1"], "id": "abc"}
 ]
}`)
	res, err := kernel.ExecuteNotebook(context.Background(), in, kernel.NotebookOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
 "metadata": {
  "zeta": {
   "b": 1,
   "a": 2
  },
  "kernelspec": {
   "display_name": "Go (evalcapsule)",
   "language": "go",
   "name": "evalcapsule-go"
  },
  "language_info": {`
	if !strings.HasPrefix(string(res.Notebook), want) {
		t.Errorf("metadata:\n%s\nwant it to start with\n%s", res.Notebook, want)
	}
	for _, frag := range []string{
		`"source": "# Title\nline 2",
   "cell_type": "markdown",
   "metadata": {
    "z": 1,
    "a": 2
   }`,
		`"source": [
    "raw\n",
    "text"
   ]`,
		`"execution_count": 7,
   "metadata": {},
   "outputs": [
    {
     "output_type": "stream",
     "name": "stdout",
     "text": "old"
    }
   ],
   "source": "  \n"`,
		`"execution_count": 8,`,
		`"execution_count": 1,
   "metadata": {
    "custom": true
   },
   "outputs": [
    {
     "data": {
      "text/plain": [
       "2"
      ]
     },
     "execution_count": 1,
     "metadata": {},
     "output_type": "execute_result"
    }
   ],
   "source": [
    "1 +\n",
    "1"
   ],
   "id": "abc"`,
		`"nbformat_minor": 4,
 "nbformat": 4,`,
	} {
		if !strings.Contains(string(res.Notebook), frag) {
			t.Errorf("the notebook has no\n%s\nin\n%s", frag, res.Notebook)
		}
	}
	if res.Ran != 1 {
		t.Errorf("ran %d cells, want 1", res.Ran)
	}
}

func TestExecuteNotebookInvalid(t *testing.T) {
	for _, in := range []string{
		``,
		`not json`,
		`[]`,
		`{"nbformat": 3, "cells": []}`,
		`{"nbformat": 4}`,
		`{"nbformat": 4, "cells": [1]}`,
		`{"nbformat": 4, "cells": [{"cell_type": "code", "source": 1}]}`,
	} {
		res, err := kernel.ExecuteNotebook(context.Background(), []byte(in), kernel.NotebookOptions{})
		if !errors.Is(err, kernel.ErrNotebook) || res.Notebook != nil {
			t.Errorf("%q: error %v, notebook %q; want ErrNotebook and none", in, err, res.Notebook)
		}
	}
}

const tourNotebook = "../notebooks/kernel-tour.ipynb"

// tour is notebooks/kernel-tour.ipynb executed in this process, once for
// the tests that look at it.
var tour struct {
	once sync.Once
	res  kernel.NotebookResult
	took time.Duration
	err  error
}

func executedTour(t *testing.T) (kernel.NotebookResult, time.Duration) {
	t.Helper()
	tour.once.Do(func() {
		in, err := os.ReadFile(tourNotebook)
		if err != nil {
			tour.err = err
			return
		}
		start := time.Now()
		tour.res, tour.err = kernel.ExecuteNotebook(context.Background(), in,
			kernel.NotebookOptions{Dir: filepath.Dir(tourNotebook), Timeout: 5 * time.Minute})
		tour.took = time.Since(start)
	})
	if tour.err != nil {
		t.Fatal(tour.err)
	}
	return tour.res, tour.took
}

// TestExecuteNotebookTour runs notebooks/kernel-tour.ipynb in this
// process: every code cell but the last (which cleans up) shows
// something, with an HTML table and a PNG plot among them, and none fails.
func TestExecuteNotebookTour(t *testing.T) {
	res, took := executedTour(t)
	t.Logf("kernel-tour.ipynb: %d code cells in %v", res.Ran, took.Round(time.Millisecond))
	code, withOutputs := 0, 0
	var table, plot bool
	for i, c := range cellsOf(t, res.Notebook) {
		if c.CellType != "code" {
			continue
		}
		code++
		if len(c.Outputs) > 0 {
			withOutputs++
		}
		for _, o := range c.Outputs {
			if o.OutputType == "error" {
				t.Errorf("cell %d: %s: %s", i, o.Ename, o.Evalue)
			}
			table = table || strings.Contains(nbText(o.Data["text/html"]), "<table")
			if raw, ok := o.Data["image/png"]; ok {
				b, err := base64.StdEncoding.DecodeString(nbText(raw))
				if err != nil {
					t.Errorf("cell %d: image/png: %v", i, err)
				} else if _, err := png.DecodeConfig(bytes.NewReader(b)); err != nil {
					t.Errorf("cell %d: image/png: %v", i, err)
				}
				plot = true
			}
		}
	}
	if withOutputs < code-1 {
		t.Errorf("%d of %d code cells have outputs", withOutputs, code)
	}
	if !table || !plot {
		t.Errorf("HTML table shown: %v, PNG shown: %v; want both", table, plot)
	}
}

// TestExecuteNotebookLikeNbconvert executes notebooks/kernel-tour.ipynb
// both in this process and with nbconvert and the installed kernel: each
// cell has the same outputs, of the same types and MIME types.
func TestExecuteNotebookLikeNbconvert(t *testing.T) {
	j := requireJupyter(t)
	res, inProcess := executedTour(t)
	const nb = tourNotebook
	outDir := t.TempDir()
	cmd := exec.Command("/usr/bin/jupyter", "nbconvert", "--to", "notebook", "--execute",
		"--ExecutePreprocessor.kernel_name=evalcapsule-go", "--ExecutePreprocessor.timeout=600",
		"--output-dir", outDir, nb)
	cmd.Env = append(append([]string{}, j.env...), "XDG_DATA_HOME="+t.TempDir())
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nbconvert --execute %s: %v\n%s", nb, err, out)
	}
	t.Logf("kernel-tour.ipynb: in process %v, nbconvert %v", inProcess.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	b, err := os.ReadFile(filepath.Join(outDir, filepath.Base(nb)))
	if err != nil {
		t.Fatal(err)
	}

	shape := func(c nbCell) []string {
		var s []string
		for _, o := range c.Outputs {
			kind := o.OutputType
			if o.OutputType == "stream" {
				kind += ":" + o.Name
			}
			for _, mime := range slices.Sorted(maps.Keys(o.Data)) {
				kind += " " + mime
			}
			// Consecutive writes to one stream are one output in a front
			// end; whether nbclient gets them in one message or two
			// depends on timing.
			if o.OutputType == "stream" && len(s) > 0 && s[len(s)-1] == kind {
				continue
			}
			s = append(s, kind)
		}
		return s
	}
	ours, theirs := cellsOf(t, res.Notebook), cellsOf(t, b)
	if len(ours) != len(theirs) {
		t.Fatalf("%d cells, nbconvert %d", len(ours), len(theirs))
	}
	for i := range ours {
		if got, want := shape(ours[i]), shape(theirs[i]); !reflect.DeepEqual(got, want) {
			t.Errorf("cell %d: outputs %q, nbconvert %q", i, got, want)
		}
		if !reflect.DeepEqual(ours[i].ExecutionCount, theirs[i].ExecutionCount) {
			t.Errorf("cell %d: execution_count %v, nbconvert %v", i, ours[i].ExecutionCount, theirs[i].ExecutionCount)
		}
	}
}

// ExecuteNotebook runs a notebook's cells without Jupyter and returns it
// with their outputs.
func ExampleExecuteNotebook() {
	in := []byte(`{
 "cells": [
  {"cell_type": "markdown", "metadata": {}, "source": "Cells are Go."},
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [],
   "source": "import \"fmt\"\nfmt.Println(\"hello\")\n6 * 7"}
 ],
 "metadata": {},
 "nbformat": 4,
 "nbformat_minor": 5
}`)
	res, err := kernel.ExecuteNotebook(context.Background(), in, kernel.NotebookOptions{Timeout: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	var nb struct {
		Cells []struct {
			Outputs []json.RawMessage `json:"outputs"`
		} `json:"cells"`
	}
	json.Unmarshal(res.Notebook, &nb)
	fmt.Println(res.Ran, "code cell run")
	for _, o := range nb.Cells[1].Outputs {
		var b bytes.Buffer
		json.Compact(&b, o)
		fmt.Println(b.String())
	}
	// Output:
	// 1 code cell run
	// {"name":"stdout","output_type":"stream","text":["hello\n"]}
	// {"data":{"text/plain":["42"]},"execution_count":1,"metadata":{},"output_type":"execute_result"}
}
