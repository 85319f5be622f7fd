package kernel

import (
	"strings"
	"testing"
)

// TestLanguage runs, in one interpreter, what the interpreter lacks of Go
// 1.21 and later and the kernel provides or refuses by name and line.
func TestLanguage(t *testing.T) {
	te := newTestEngine(t)
	for _, c := range []struct {
		name, src, result, stdout string
		evalue                    string // a substring of the error
	}{
		{name: "min of ints", src: "min(3, 1, 2)", result: "1"},
		{name: "max of literals is a float constant", src: "x := max(1, 2.5)\nx * 2", result: "5"},
		{name: "min with a constant first", src: "f := 2.5\nmin(0, f)", result: "0"},
		{name: "min of strings", src: `min("b", "a")`, result: "a"},
		{name: "max with NaN", src: "import \"math\"\nmath.IsNaN(max(f, math.NaN(), 1))", result: "true"},
		{name: "clear a map", src: "m := map[string]int{\"a\": 1}\nclear(m)\nlen(m)", result: "0"},
		{name: "clear a slice", src: "s := []int{1, 2}\nclear(s)\ns", result: "[0 0]"},
		{name: "slices.Max", src: "import \"slices\"\nk := slices.Max([]int{4, 9, 2})\nk", result: "9"},
		{name: "slices.Sort puts NaN first", src: "xs := []float64{3, math.NaN(), 1}\nslices.Sort(xs)\nxs", result: "[NaN 1 3]"},
		{name: "slices.Contains", src: `slices.Contains([]string{"a", "b"}, "b")`, result: "true"},
		{name: "sorted keys", src: "import \"maps\"\nslices.Sorted(maps.Keys(map[string]int{\"b\": 1, \"a\": 2}))", result: "[a b]"},
		{name: "cmp.Ordered and cmp.Compare", src: "import \"cmp\"\nfunc top[T cmp.Ordered](a, b T) int { return cmp.Compare(a, b) }\ntop(2, 1)", result: "1"},
		{name: "maps.Keys ranged", src: "for k := range maps.Keys(m) { _ = k }", evalue: "maps.Keys returns an iterator"},
		{name: "missing slices function", src: "slices.Chunk(xs, 2)", evalue: "slices.Chunk is not available in the kernel"},
		{name: "range over func", src: "func seq(yield func(int) bool) {}\nfor x := range seq { _ = x }", evalue: "range over a function (func seq"},
		{name: "own min", src: "func min(a, b int) int { return 7 }\nmin(1, 2)", result: "7"},
		{name: "error type printed", src: "import \"fmt\"\ntype myErr struct{ msg string }\nfunc (e *myErr) Error() string { return \"my: \" + e.msg }\nfmt.Println(&myErr{\"boom\"})", stdout: "my: boom\n"},
		{name: "%w, errors.Is and errors.As", src: "import \"errors\"\nvar base error = &myErr{\"x\"}\nw := fmt.Errorf(\"ctx: %w\", base)\nvar me *myErr\nfmt.Println(w, errors.Is(w, base), errors.As(w, &me), me.msg)", stdout: "ctx: my: x true true x\n"},
		{name: "value receiver of Error", src: "type valErr struct{ code int }\nfunc (v valErr) Error() string { return \"v\" }", evalue: "method Error of struct type valErr has a value receiver"},
		{name: "cell type in a compiled interface field", src: "import \"context\"\nimport \"github.com/evalcapsule/evalcapsule/harness\"\nimport \"github.com/evalcapsule/evalcapsule/study\"\ntype myRunner struct{ n int }\nfunc (r *myRunner) Run(ctx context.Context, dir string, progress func(harness.Progress)) error { r.n++; return nil }\nmr := &myRunner{}\no := study.SweepOptions{Runner: mr}\no.Runner.Run(context.Background(), \"\", nil)\nmr.n", result: "1"},
	} {
		result, _, evalue, stdout := te.cell(c.src)
		switch {
		case c.evalue != "":
			if !strings.Contains(evalue, c.evalue) {
				t.Errorf("%s: error %q, want one with %q", c.name, evalue, c.evalue)
			}
		case evalue != "":
			t.Errorf("%s: %s", c.name, evalue)
		case result != c.result || stdout != c.stdout:
			t.Errorf("%s: result %q stdout %q, want %q and %q", c.name, result, stdout, c.result, c.stdout)
		}
	}
}

// TestCompletionTypes checks completion after values of cell types,
// indexes and calls, and that no match is an empty list.
func TestCompletionTypes(t *testing.T) {
	te := newTestEngine(t)
	te.cell("type mt struct{ A int; b string }\nfunc (m mt) Val() int { return m.A }\nfunc (m *mt) Ptr() int { return m.A }\n" +
		"func mk() mt { return mt{} }\nx := mt{1, \"s\"}\nouts := []mt{{1, \"\"}}\nbyName := map[string]mt{}\nimport \"strings\"")
	for before, want := range map[string]string{
		"x.":                        "A Ptr Val b",
		"outs[0].":                  "A Ptr Val b",
		"byName[\"a\"].":            "A Val b", // not addressable
		"mk().":                     "A Val b",
		"strings.NewReader(\"\").L": "Len",
		"nosuchname":                "",
		"x.zz":                      "",
	} {
		got, _, _ := te.completions(before)
		if got == nil {
			t.Errorf("%q: nil, want a list", before)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%q: %v, want %v", before, got, want)
		}
	}
}
