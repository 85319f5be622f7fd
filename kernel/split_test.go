package kernel

import (
	"strings"
	"testing"
)

func TestSplitCell(t *testing.T) {
	src := `package main

import "fmt"

var y = 10
for i := 0; i < 3; i++ {
	fmt.Println(i)
}
if x := []int{1}; len(x) > 0 {
}
func f() {}
func (t T) M() {}
func() { fmt.Println() }()
type T struct{}; x := 1
y * 2 // the result`
	items, err := splitCell(src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, []string{"stmt", "decl", "import", "package"}[it.kind]+": "+strings.Fields(src[it.start:it.end])[0])
	}
	want := []string{"package: package", "import: import", "decl: var", "stmt: for", "stmt: if", "decl: func", "decl: func",
		"stmt: func()", "decl: type", "stmt: x", "stmt: y"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("items:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if last := items[len(items)-1]; src[last.start:last.end] != "y * 2 // the result" || last.line != 15 || last.col != 1 {
		t.Errorf("last item %q at %d:%d", src[last.start:last.end], last.line, last.col)
	}
	if _, err := splitCell("s := \"open"); err == nil {
		t.Error("an unterminated string split without error")
	}
}

func TestCompleteness(t *testing.T) {
	for code, want := range map[string]string{
		"x := 1":            "complete",
		"if true {\n}":      "complete",
		"":                  "complete",
		"func f() {":        "incomplete",
		"x := []int{1,":     "incomplete",
		"y := 1 +":          "incomplete",
		"s := `raw":         "incomplete",
		"a.\n":              "incomplete",
		"}":                 "invalid",
		"x := )":            "invalid",
		`"unterminated`:     "invalid",
		"f(]":               "invalid",
		"for i := 0; i < 3": "complete",
	} {
		if got, _ := completeness(code); got != want {
			t.Errorf("%q: %s, want %s", code, got, want)
		}
	}
	if _, indent := completeness("func f() {\n\tif x {"); indent != "\t\t" {
		t.Errorf("indent %q", indent)
	}
}

func TestRewrite(t *testing.T) {
	src := "for i := 0; i < 3; i++ {\n\tgo work(i)\n}\nfunc main() {}\nmain()"
	items, _ := splitCell(src)
	out := rewrite(src, "In[1]", items, nil, nil)
	if strings.Count(out, "\n") != strings.Count(src, "\n") {
		t.Errorf("lines changed:\n%s", out)
	}
	for _, want := range []string{`defer __krecover("In[1]:2:2")`, "__lv1_i := i;", "work(__lv1_i)", "func main__()", "main__()"} {
		if !strings.Contains(out, want) {
			t.Errorf("rewritten cell lacks %q:\n%s", want, out)
		}
	}
	src = "for k := range 3 {}\nfor range n {}\nfor _, v := range xs {}"
	items, _ = splitCell(src)
	out = rewrite(src, "In[2]", items, func(name string) bool { return name == "n" }, nil)
	for _, want := range []string{"for k, __rn", ":= (3)-(3), 3; k < __rn", "; k++ {}", "for __ri", ":= (n)-(n), n; __ri", "range xs"} {
		if !strings.Contains(out, want) {
			t.Errorf("rewritten cell lacks %q:\n%s", want, out)
		}
	}
	src = "a, _ := f()\nvar b, c = f()\nvar (\n\td, e = f()\n)\nif x, y := f(); y {\n}\nfor {\n\tbreak\n}"
	items, _ = splitCell(src)
	out = rewrite(src, "In[3]", items, nil, nil)
	if strings.Count(out, "\n") != strings.Count(src, "\n") {
		t.Errorf("lines changed:\n%s", out)
	}
	for _, want := range []string{"__kd1_a, _ := f(); a := __kd1_a\n", "var __kd2_b, __kd3_c = f(); var b, c = __kd2_b, __kd3_c\n",
		"\t__kd4_d, __kd5_e = f(); d, e = __kd4_d, __kd5_e\n", "func() { if x, y := f(); y {\n} }()\nfor {"} {
		if !strings.Contains(out, want) {
			t.Errorf("rewritten cell lacks %q:\n%s", want, out)
		}
	}
	src = "b := make([]byte, n)\nfunc g(k uint) []P { return make([]P, 0, k) }\nc := make(chan [2]int, 3)\nm := make(map[string]int, 10)\nz := make([]int, 0, 1<<30)"
	items, _ = splitCell(src)
	out = rewrite(src, "In[4]", items, nil, nil)
	if strings.Count(out, "\n") != strings.Count(src, "\n") {
		t.Errorf("lines changed:\n%s", out)
	}
	for _, want := range []string{`make([]byte, __kernel.AllocN(int(n), 1, "[]byte"))`, `make([]P, 0, __kernel.Alloc(([]P)(nil), k, "[]P"))`,
		`make(chan [2]int, __kernel.Alloc((chan [2]int)(nil), 3, "chan [2]int"))`, "make(map[string]int, 10)",
		`make([]int, 0, __kernel.AllocN(int(1<<30), 8, "[]int"))`} {
		if !strings.Contains(out, want) {
			t.Errorf("rewritten cell lacks %q:\n%s", want, out)
		}
	}
	if out := rewrite(src, "In[5]", items, nil, func(name string) bool { return name == "make" }); out != src {
		t.Errorf("a make of the cells' own was rewritten:\n%s", out)
	}
}

func TestCompleteUTF8(t *testing.T) {
	b := []byte("añ")
	if n := completeUTF8(b[:2]); n != 1 {
		t.Errorf("split ñ: %d, want 1", n)
	}
	if n := completeUTF8(b); n != 3 {
		t.Errorf("whole: %d, want 3", n)
	}
}
