package kernel

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// step is a cell and what it must show: its text/plain result, or an
// error whose value contains evalue, and its standard output.
type step struct {
	src, result, evalue, stdout string
}

// runSteps runs the steps in one interpreter, in order.
func runSteps(t *testing.T, steps []step) *testEngine {
	t.Helper()
	te := newTestEngine(t)
	for i, s := range steps {
		result, ename, evalue, stdout := te.cell(s.src)
		switch {
		case s.evalue == "" && ename != "":
			t.Errorf("step %d %q: %s: %s", i, s.src, ename, evalue)
		case s.evalue != "" && !strings.Contains(evalue, s.evalue):
			t.Errorf("step %d %q: error %s: %q, want one with %q", i, s.src, ename, evalue, s.evalue)
		case s.evalue == "" && result != s.result:
			t.Errorf("step %d %q: result %q, want %q", i, s.src, result, s.result)
		}
		if stdout != s.stdout {
			t.Errorf("step %d %q: stdout %q, want %q", i, s.src, stdout, s.stdout)
		}
	}
	return te
}

// TestRedefinition checks that code declared before a redefinition sees
// the new definition, as the model in doc.go says.
func TestRedefinition(t *testing.T) {
	t.Run("function", func(t *testing.T) {
		runSteps(t, []step{
			{src: "func f(a int) int { return a }"},
			{src: "func g() int { return f(5) }"},
			{src: "func k() int { return g() + 1 }"},
			{src: "k()", result: "6"},
			{src: "func f(a int) int { return -a }"},
			{src: "g()", result: "-5"},
			{src: "k()", result: "-4"},
			// A function value made before keeps the code it was made of.
			{src: "old := func() int { return f(1) }"},
			{src: "func f(a int) int { return 10 * a }"},
			{src: "old()", result: "-1"},
			{src: "k()", result: "51"},
			// A generic function is instantiated anew.
			{src: "func Double[T int | float64](x T) T { return 2 * x }"},
			{src: "func useD() int { return Double(3) }"},
			{src: "useD()", result: "6"},
			{src: "func Double[T int | float64](x T) T { return 3 * x }"},
			{src: "useD()", result: "9"},
			{src: "Double(4)", result: "12"},
			// A var whose initialiser is a function literal calls the new f.
			{src: "var handler = func() int { return f(1) }"},
			{src: "func f(a int) int { return 7 * a }"},
			{src: "handler()", result: "7"},
		})
	})
	t.Run("variable", func(t *testing.T) {
		runSteps(t, []step{
			{src: "var rate = 1"},
			{src: "func h() int { return rate }"},
			{src: "var total = rate * 10"},
			{src: "rate = 4"},
			{src: "h()", result: "4"},
			{src: "var rate = 2"},
			{src: "h()", result: "2"},
			// An initialiser that refers to the name runs again.
			{src: "total", result: "20"},
			{src: "rate = 3"},
			{src: "h()", result: "3"},
			{src: "rate", result: "3"},
			// Declared by a statement, then by another.
			{src: "x := 1"},
			{src: "func hx() int { return x }"},
			{src: "x := 2"},
			{src: "hx()", result: "2"},
			{src: "x = 5"},
			{src: "hx()", result: "5"},
			// From a statement's variable to a declaration's, and back.
			{src: "var x = 7"},
			{src: "hx()", result: "7"},
			{src: "x := 8"},
			{src: "hx()", result: "8"},
		})
	})
	t.Run("method and type", func(t *testing.T) {
		runSteps(t, []step{
			{src: "type T struct{ N int }"},
			{src: "func (t T) V() int { return 1 + t.N }"},
			{src: "func useT() int { return T{}.V() }"},
			{src: "var t0 T"},
			{src: "func useT0() int { return t0.V() }"},
			{src: "t1 := T{}"},
			{src: "useT() + 10*useT0()", result: "11"},
			{src: "func (t T) V() int { return 2 + t.N }"},
			{src: "useT()", result: "2"},
			{src: "useT0()", result: "2"},
			// A value made by a statement keeps its type, and its methods.
			{src: "t1.V()", result: "1"},
			{src: "type T struct{ N, M int }"},
			{src: "func useM() int { return T{M: 4}.M + T{N: 1}.V() }"},
			{src: "useM()", result: "7"},
		})
	})
	t.Run("groups and compiled values", func(t *testing.T) {
		runSteps(t, []step{
			{src: "func base() int { return 1 }"},
			{src: "var (\n\tp1 = base()\n\tp2 = 10 * base()\n)"},
			{src: "var p1 = 100"},
			{src: "func base() int { return 2 }"},
			// p1 was declared again on its own: the group keeps p2.
			{src: "p1 + p2", result: "120"},
			{src: `import "github.com/evalcapsule/evalcapsule/analysis"`},
			{src: `func claims() analysis.Attribution { return analysis.Attribution{Claims: []analysis.ClaimAttribution{{Task: "a"}}} }`},
			{src: "var first = claims().Claims[0]"},
			{src: `func claims() analysis.Attribution { return analysis.Attribution{Claims: []analysis.ClaimAttribution{{Task: "b"}}} }`},
			{src: "first.Task", result: "b"},
		})
	})
	t.Run("a dependent that no longer compiles", func(t *testing.T) {
		te := runSteps(t, []step{
			{src: "func f(a int) int { return a }"},
			{src: "func g() int { return f(5) }"},
			{src: "func k() int { return g() }"},
			{src: "func f(a, b int) int { return a + b }", evalue: "func g (In[2], line 1) no longer compiles, and is removed until declared again: not enough arguments in call to f"},
			{src: "g()", evalue: "undefined: g"},
			{src: "f(1, 2)", result: "3"},
			{src: "func g() int { return f(5, 1) }"},
			{src: "g()", result: "6"},
		})
		o := te.run(context.Background(), "In[9]", "func f(a int) int { return a }")
		tb := strings.Join(o.err.traceback, "\n")
		for _, want := range []string{"func g (In[7], line 1) no longer compiles", "In[7], line 1", "func g() int { return f(5, 1) }", "too many arguments"} {
			if !strings.Contains(tb, want) {
				t.Errorf("traceback lacks %q:\n%s", want, tb)
			}
		}
	})
}

// TestGoChecks checks what the kernel refuses, or words, as Go does.
func TestGoChecks(t *testing.T) {
	te := runSteps(t, []step{
		{src: `import "fmt"`},
		{src: `xx := fmt.Println("p")`, evalue: "assignment mismatch: 1 variable but fmt.Println returns 2 values"},
		{src: `var yy = fmt.Println("p")`, evalue: "assignment mismatch: 1 variable but fmt.Println returns 2 values"},
		{src: "func two() (int, int) { return 1, 2 }\nfunc one() int {\n\ta := two()\n\treturn a\n}", evalue: "assignment mismatch: 1 variable but two returns 2 values"},
		{src: "func none() {}\nv := none()", evalue: "none() (no value) used as value"},
		{src: `n, err := fmt.Println("ok")`, stdout: "ok\n"},
		// main runs after the cell's statements, its last line too.
		{src: "func main() { fmt.Println(\"main\") }\nfmt.Println(\"first\")\nfmt.Println(\"last\")", stdout: "first\nlast\nmain\n"},
		{src: "c := 1 +", evalue: "expected operand, found the end of the cell"},
		{src: "xs := []int{1, 2, 3}"},
		{src: "xs[5]", evalue: "runtime error: index out of range [5] with length 3"},
		{src: "i := 2\nys := xs[i:7]", evalue: "runtime error: slice bounds out of range [:7] with capacity 3"},
		{src: "func at(i int) int { return xs[i] }\nat(4)", evalue: "runtime error: index out of range"},
		{src: "fmt := 0", evalue: `fmt already declared through import of package "fmt"`},
		{src: "var fmt = 0", evalue: `fmt already declared through import of package "fmt"`},
		{src: `fmt.Sprint("still", 1)`, result: "still1"},
		{src: "strings := 1"},
		{src: `import "strings"`, evalue: `strings redeclared: a cell declared strings; import the package under another name`},
		{src: `import "example.com/nosuch"`, evalue: `cannot import "example.com/nosuch": cells can import the standard library and github.com/evalcapsule/evalcapsule/analysis`},
	})
	for src, want := range map[string]string{
		"a := 1\nb := a *\n\n":                                 "In[%d], line 2\n    b := a *\n            ^\nexpected operand, found the end of the cell",
		`import "example.com/nosuch"`:                          "no other package",
		"func q() int {\n\treturn 1 +\n}":                      "In[%d], line 3\n    }\n    ^\nexpected operand, found '}'",
		`zz := fmt.Sprint(1)` + "\n" + `zz2 := fmt.Println(2)`: "In[%d], line 2\n    zz2 := fmt.Println(2)\n    ^\nassignment mismatch",
	} {
		te.n++
		o := te.run(context.Background(), fmt.Sprintf("In[%d]", te.n), src)
		if o.err == nil {
			t.Errorf("%q: no error", src)
			continue
		}
		tb := strings.Join(o.err.traceback, "\n")
		if w := strings.ReplaceAll(want, "%d", fmt.Sprint(te.n)); !strings.Contains(tb, w) {
			t.Errorf("%q: traceback lacks %q:\n%s", src, w, tb)
		}
		if strings.Contains(tb, "GOPATH") {
			t.Errorf("%q: traceback names GOPATH:\n%s", src, tb)
		}
	}
}

// TestYaegiGenericCache checks that the field forgetInstances empties is
// where yaegi v0.16.1 has it: an upgrade that moves it fails here.
func TestYaegiGenericCache(t *testing.T) {
	te := newTestEngine(t)
	te.cell("func Id[T any](x T) T { return x }\nId(1)")
	g := field(reflect.ValueOf(te.in).Elem(), "generic")
	if !g.IsValid() || g.Kind() != reflect.Map || g.Len() == 0 {
		t.Fatalf("yaegi's generic instances are not in Interpreter.generic: %v", g)
	}
	forgetInstances(te.in, "Id")
	for _, k := range g.MapKeys() {
		if strings.HasPrefix(k.String(), "Id[") {
			t.Errorf("instance %s kept", k)
		}
	}
}
