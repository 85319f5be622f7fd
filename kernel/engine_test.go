package kernel

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// testEngine is an interpreter with its output in buffers.
type testEngine struct {
	*engine
	mu             sync.Mutex
	stdout, stderr bytes.Buffer
	n              int
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func newTestEngine(t *testing.T) *testEngine {
	t.Helper()
	te := &testEngine{}
	e, err := newEngine(lockedWriter{&te.mu, &te.stdout}, lockedWriter{&te.mu, &te.stderr}, strings.NewReader(""),
		func(where string, v any) {
			fmt.Fprintf(lockedWriter{&te.mu, &te.stderr}, "panic in a goroutine started at %s: %v\n", where, v)
		})
	if err != nil {
		t.Fatal(err)
	}
	te.engine = e
	return te
}

// cell runs src and returns the text/plain result, the error's name and
// value ("" when none) and what the cell printed.
func (te *testEngine) cell(src string) (result, ename, evalue, stdout string) {
	te.n++
	o := te.run(context.Background(), fmt.Sprintf("In[%d]", te.n), src)
	data, _ := o.result.MIMEBundle()
	result, _ = data["text/plain"].(string)
	if o.err != nil {
		ename, evalue = o.err.name, o.err.value
	}
	te.mu.Lock()
	defer te.mu.Unlock()
	stdout = te.stdout.String()
	te.stdout.Reset()
	return result, ename, evalue, stdout
}

// TestCells runs cells in one interpreter, as a notebook does, and checks
// what each shows.
func TestCells(t *testing.T) {
	te := newTestEngine(t)
	for _, c := range []struct {
		name, src       string
		result, stdout  string
		ename, evalue   string // evalue: a substring
		noResult, fails bool
	}{
		{name: "expression", src: "6 * 7", result: "42"},
		{name: "string", src: `"a" + "b"`, result: "ab"},
		{name: "declaration and statement mixed", src: "var y = 10\ny * 2", result: "20"},
		{name: "import and call", src: `import "fmt"` + "\n" + `fmt.Println("hello, world")`, stdout: "hello, world\n", noResult: true},
		{name: "import again", src: `import "fmt"` + "\n" + `fmt.Sprint("again")`, result: "again"},
		{name: "import group with one new", src: "import (\"fmt\"; \"strings\")\nstrings.ToUpper(fmt.Sprint(\"x\"))", result: "X"},
		{name: "define", src: "x := 5", noResult: true},
		{name: "define again", src: "x := \"six\"\nx", result: "six"},
		{name: "void call", src: "func noop() {}\nnoop()", noResult: true},
		{name: "nil error", src: `import "strconv"` + "\n" + `strconv.Atoi("12")`, noResult: true},
		{name: "error of several values", src: `strconv.Atoi("zz")`, ename: "*strconv.NumError", evalue: `parsing "zz"`},
		{name: "error value", src: `import "errors"` + "\n" + `errors.New("bad")`, ename: "*errors.errorString", evalue: "bad"},
		{name: "undefined", src: "undefinedThing()", ename: enameCompile, evalue: "undefined: undefinedThing"},
		{name: "not imported", src: `os.Getenv("HOME")`, ename: enameCompile, evalue: `undefined: os (import "os" first)`},
		{name: "panic", src: "func div(a int) int { return a / (a - a) }\ndiv(3)", ename: enamePanic, evalue: "integer divide by zero"},
		{name: "goes on after panic", src: "1 + 1", result: "2"},
		{name: "type", src: "type T struct{ A int }\nfunc (t T) String() string { return fmt.Sprint(\"T\", t.A) }\nT{4}", result: "T4"},
		{name: "type declared again", src: "type T struct{ A, B int }\nfunc (t T) String() string { return fmt.Sprint(\"T\", t.A+t.B) }\nT{4, 5}", result: "T9"},
		{name: "method declared again", src: "func (t T) String() string { return fmt.Sprint(\"T*\", t.A*t.B) }\nT{4, 5}", result: "T*20"},
		{name: "pointer", src: "&T{1, 2}", result: "T*2"},
		{name: "loop variables per iteration", src: "var fs []func() int\nfor i := 0; i < 3; i++ { fs = append(fs, func() int { return i }) }\nfs[0]() + 10*fs[1]() + 100*fs[2]()", result: "210"},
		{name: "range over int", src: "s := 0\nfor i := range 4 { s += i }\ns", result: "6"},
		{name: "func literal runs once", src: `func() { fmt.Println("once") }()`, stdout: "once\n", noResult: true},
		{name: "after func literal", src: "2", result: "2"},
		{name: "main", src: "func main() { fmt.Println(\"main ran\") }", stdout: "main ran\n", noResult: true},
		{name: "main does not run again", src: "var z = 1", noResult: true},
		{name: "comma ok", src: "m := map[string]int{\"a\": 1}\nv, ok := m[\"a\"]\nv + 1", result: "2"},
		{name: "comma ok bool", src: "ok", result: "true"},
		{name: "index of a compiled slice", src: `import "github.com/evalcapsule/evalcapsule/analysis"` + "\n" +
			`a := analysis.Attribution{Claims: []analysis.ClaimAttribution{{Task: "x", Statement: "hi"}}}` + "\nc := a.Claims[0]\nc.Statement", result: "hi"},
		{name: "chained call", src: `strings.NewReplacer("a", "b").Replace("aaa")`, result: "bbb"},
		{name: "multi-line expression", src: "fmt.Sprint(\n\t\"x\",\n\t\"y\",\n)", result: "xy"},
		{name: "statement on last line", src: "n := 0\nn++", noResult: true},
		{name: "nil", src: "var p *int\np", noResult: true},
		{name: "define from two values", src: `n, err := strconv.Atoi("12")`, noResult: true},
		{name: "if block defines from two values", src: "if true {\n\tq, _ := strconv.Atoi(\"5\")\n\t_ = q\n}", noResult: true},
		{name: "for block defines from two values", src: `for i := 0; i < 2; i++ { k, e := strconv.Atoi("7"); _, _ = k, e }`, noResult: true},
		{name: "plain block defines from two values", src: `{ k, e := strconv.Atoi("7"); _, _ = k, e }`, noResult: true},
		{name: "switch defines from two values", src: "switch k, e := strconv.Atoi(\"8\"); e {\ncase nil:\n\tq, _ := strconv.Atoi(\"1\")\n\tfmt.Print(k + q)\n}", stdout: "9", noResult: true},
		{name: "select defines from two values", src: "ch := make(chan string, 1)\nch <- \"3\"\nselect {\ncase s, ok := <-ch:\n\tq, _ := strconv.Atoi(s)\n\tfmt.Print(q, ok)\n}", stdout: "3 true", noResult: true},
		{name: "block variables stay in their block", src: "if n, err := strconv.Atoi(\"99\"); err == nil { _ = n }\nfor n := 0; n < 5; n++ {}\n{ n, s := 7, 0; _, _ = n, s }\nn", result: "12"},
		{name: "block variable not defined after it", src: "if k2 := 7; k2 > 0 { _ = k2 }\nk2", ename: enameCompile, evalue: "undefined: k2"},
		{name: "define from a call of two values", src: "func pair() (int, int) { return 3, 4 }\nc, d := pair()", noResult: true},
		{name: "read by a function another calls", src: "func inner() int { return c * d }\nfunc outer() int { return inner() }\nouter()", result: "12"},
		{name: "read by a function another calls, same cell", src: "e1, e2 := pair()\nfunc inner1() int { return e1 * e2 }\nfunc outer1() int { return inner1() }\nouter1()", result: "12"},
		{name: "var of two values read by a function another calls", src: "var a1, b1 = pair()\nfunc inner2() int { return a1 * b1 }\nfunc outer2() int { return inner2() }\nouter2()", result: "12"},
		{name: "var group of two values", src: "var (\n\tg1      = 2\n\ta2, b2 int = pair()\n)\nfunc inner3() int { return g1 * a2 * b2 }\nfunc outer3() int { return inner3() }\nouter3()", result: "24"},
		{name: "value and error read by a function another calls", src: "func inner4() int {\n\tif err != nil {\n\t\treturn -1\n\t}\n\treturn n\n}\nfunc outer4() int { return inner4() }\nouter4()", result: "12"},
	} {
		t.Run(c.name, func(t *testing.T) {
			result, ename, evalue, stdout := te.cell(c.src)
			if ename != c.ename || !strings.Contains(evalue, c.evalue) {
				t.Errorf("error %s: %q, want %s: %q", ename, evalue, c.ename, c.evalue)
			}
			if c.ename != "" {
				return
			}
			if c.noResult && result != "" {
				t.Errorf("result %q, want none", result)
			}
			if !c.noResult && result != c.result {
				t.Errorf("result %q, want %q", result, c.result)
			}
			if stdout != c.stdout {
				t.Errorf("stdout %q, want %q", stdout, c.stdout)
			}
		})
	}
}

// TestRichValues checks the bundle of values with display methods,
// compiled and declared in a cell.
func TestRichValues(t *testing.T) {
	te := newTestEngine(t)
	te.cell(`import ("fmt"; "image"; "github.com/evalcapsule/evalcapsule/analysis"; "github.com/evalcapsule/evalcapsule/kernel/display")`)
	for _, c := range []struct {
		src  string
		want map[string]string // MIME type → substring
	}{
		{`display.HTML("<b>x</b>")`, map[string]string{"text/html": "<b>x</b>"}},
		{`display.Markdown("*x*")`, map[string]string{"text/markdown": "*x*"}},
		// Compiled project values render as tables, literals included; the
		// cells after them must still show their own values.
		{`analysis.ClaimAttribution{Task: "gsm8k", Metric: "exact_match", Filter: "strict-match", Card: 0.444, Baseline: 0.25, Final: 0.4,
	Steps: []analysis.AttributionStep{{Name: "8-shot", Kind: "run", Value: 0.4, Delta: 0.15}}}`,
			map[string]string{"text/html": "<table", "text/plain": "gsm8k exact_match (strict-match), points"}},
		{`&analysis.Comparisons{A: "baseline", B: "final", Comparisons: []analysis.Comparison{{Task: "gsm8k", Metric: "exact_match", Filter: "strict-match", N: 2, A: 0.5, B: 1}}}`,
			map[string]string{"text/html": "<table", "text/plain": "A: baseline, B: final"}},
		{`image.NewGray(image.Rect(0, 0, 2, 2))`, map[string]string{"image/png": "iVBOR", "text/plain": "*image.Gray 2×2"}},
		{"type Tab struct{ N int }\nfunc (t Tab) HTML() string { return fmt.Sprintf(\"<td>%d</td>\", t.N) }\nfunc (t Tab) Markdown() string { return \"|x|\" }\nTab{3}",
			map[string]string{"text/html": "<td>3</td>", "text/markdown": "|x|", "text/plain": "|x|"}}, // the Markdown, not a dump of the fields
		{"type Pic struct{}\nfunc (Pic) SVG() ([]byte, error) { return []byte(\"<svg/>\"), nil }\nPic{}", map[string]string{"image/svg+xml": "<svg/>"}},
	} {
		te.n++
		o := te.run(context.Background(), fmt.Sprintf("In[%d]", te.n), c.src)
		if o.err != nil {
			t.Errorf("%s: %s: %s", c.src, o.err.name, o.err.value)
			continue
		}
		data, _ := o.result.MIMEBundle()
		for mime, sub := range c.want {
			s, _ := data[mime].(string)
			if !strings.Contains(s, sub) {
				t.Errorf("%s: %s = %q, want it to contain %q", c.src, mime, s, sub)
			}
		}
	}
}

// TestTraceback checks that errors point at the cell's own lines.
func TestTraceback(t *testing.T) {
	te := newTestEngine(t)
	te.cell("func half(n int) int {\n\treturn n / (n - n)\n}")
	o := te.run(context.Background(), "In[7]", "x := 2\nhalf(x)")
	if o.err == nil {
		t.Fatal("no error")
	}
	tb := strings.Join(o.err.traceback, "\n")
	for _, want := range []string{"In[1], line 2, in half", "return n / (n - n)", "In[7], line 2", "half(x)"} {
		if !strings.Contains(tb, want) {
			t.Errorf("traceback lacks %q:\n%s", want, tb)
		}
	}
	o = te.run(context.Background(), "In[8]", "a := 1\n\nb := a +\n\tnothere")
	tb = strings.Join(o.err.traceback, "\n")
	if !strings.Contains(tb, "In[8], line 4") || !strings.Contains(tb, "undefined: nothere") {
		t.Errorf("traceback:\n%s", tb)
	}
}

// TestInterrupt cancels a cell that never ends.
func TestInterrupt(t *testing.T) {
	te := newTestEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	o := te.run(ctx, "In[1]", "for {\n}")
	if o.err == nil || o.err.name != enameInterrupt {
		t.Fatalf("got %+v, want an interrupt", o.err)
	}
	if r, _, _, _ := te.cell("3"); r != "3" {
		t.Errorf("after the interrupt: %q", r)
	}
}

// TestGoroutinePanic checks that a panic in a goroutine a cell started is
// recovered and reported.
func TestGoroutinePanic(t *testing.T) {
	te := newTestEngine(t)
	te.cell("import \"time\"\ngo func() { panic(\"boom\") }()\ntime.Sleep(50 * time.Millisecond)")
	te.cell("func boom() { panic(\"bang\") }\ngo boom()\ntime.Sleep(50 * time.Millisecond)")
	te.mu.Lock()
	defer te.mu.Unlock()
	for _, want := range []string{"started at In[1]:2:1: boom", "started at In[2]:2:1: bang"} {
		if !strings.Contains(te.stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", te.stderr.String(), want)
		}
	}
}

// TestHelp checks `name?` cells, which page the documentation.
func TestHelp(t *testing.T) {
	te := newTestEngine(t)
	for src, want := range map[string]string{
		"fmt.Println?":       "func Println(a ...any) (n int, err error)",
		"?analysis.Forest":   "func Forest(title string, rows []ForestRow) *Plot",
		"analysis.Plot.PNG?": "PNG returns the figure as PNG",
		"len?":               "func len(v Type) int",
	} {
		o := te.run(context.Background(), "In[1]", src)
		if len(o.payload) != 1 {
			t.Fatalf("%s: payload %v", src, o.payload)
		}
		text := o.payload[0].(map[string]any)["data"].(map[string]any)["text/plain"].(string)
		if !strings.Contains(text, want) {
			t.Errorf("%s: %q lacks %q", src, text, want)
		}
	}
}

// TestCompletions checks package members, names declared in cells and
// the members of a value.
func TestCompletions(t *testing.T) {
	te := newTestEngine(t)
	te.cell("import \"strings\"\ntype Point struct{ X, Y int }\npointA := Point{1, 2}\nvar sb strings.Builder")
	for before, want := range map[string][]string{
		"fmt.Spr":         {"Sprint", "Sprintf", "Sprintln"},
		"strings.ToUpp":   {"ToUpper", "ToUpperSpecial"},
		"x := point":      {"pointA"},
		"pointA.":         {"X", "Y"},
		"sb.Len":          {"Len"},
		"analysis.Uncert": {"Uncertainties", "Uncertainty"},
	} {
		got, _, _ := te.completions(before)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%q: %v, want %v", before, got, want)
		}
	}
}

// TestDescribe checks inspect_request's text.
func TestDescribe(t *testing.T) {
	te := newTestEngine(t)
	te.cell("import \"github.com/evalcapsule/evalcapsule/analysis\"\nfunc double(n int) int { return 2 * n }\nplot := analysis.Forest(\"t\", nil)")
	for name, want := range map[string]string{
		"fmt.Println":   "Println formats using the default formats",
		"analysis":      "package analysis",
		"double":        "func double(n int) int { return 2 * n }",
		"plot":          "plot *analysis.Plot",
		"plot.SVG":      "SVG returns the figure as SVG",
		"harness.Read":  "Read opens the run at path",
		"display.Of":    "func Of(v any) Data",
		"nosuchname":    "",
		"strings.Nope":  "",
		"plot.NoMethod": "",
	} {
		text, ok := te.describe(name)
		if want == "" {
			if ok {
				t.Errorf("%s: found %q", name, text)
			}
			continue
		}
		if !strings.Contains(text, want) {
			t.Errorf("%s: %q lacks %q", name, text, want)
		}
	}
}
