package kernel

import (
	"strings"
	"testing"
)

// TestHostileCells runs cells that ended the process: unbounded
// recursion, a make of 20 GB, a loop that fills memory bit by bit. Each
// fails with an error that names the limit, and the kernel's state lives
// on.
func TestHostileCells(t *testing.T) {
	te := newTestEngine(t)
	te.limits = newLimits(64<<20, 32<<20)
	check := func(src, wantName, wantValue string) {
		t.Helper()
		_, ename, evalue, _ := te.cell(src)
		if ename != wantName || !strings.Contains(evalue, wantValue) {
			t.Errorf("%q: %s: %s, want %s: …%s…", src, ename, evalue, wantName, wantValue)
		}
	}
	if _, ename, evalue, _ := te.cell("x := 41"); ename != "" {
		t.Fatalf("x := 41: %s: %s", ename, evalue)
	}
	check("func f(n int) int { return f(n+1) + 1 }\nf(0)", enameStack, "the cell used more than 32 MiB of stack")
	if evaluating(te.lastEval) {
		t.Error("the stopped evaluation still runs after its cell returned")
	}
	check("func g(n int) int {\n\tb := make([]byte, n)\n\treturn len(b)\n}\ng(20 << 30)", enameMemory,
		"make([]byte, 21474836480) refused: 20 GiB, over the kernel's memory limit of 64 MiB")
	check("big := make([]int64, 1<<60)", enameMemory, "refused: 8 EiB")
	check("m := make(map[int]string, 1<<40)", enameMemory, "refused: 24 TiB")
	check("type point struct{ x, y float64 }\nvar n uint64 = 1 << 32\nps := make([]point, 0, n)", enameMemory, "make([]point, 4294967296) refused: 64 GiB")
	check("var keep [][]byte\nfor {\n\tkeep = append(keep, make([]byte, 64<<10))\n}", enameMemory,
		"the cell used more than the kernel's memory limit of 64 MiB")
	check("keep = nil\nvar keep2 [][]byte\nfor {\n\tkeep2 = append(keep2, make([]byte, 4<<20))\n}", enameMemory, "memory limit of 64 MiB")
	check("keep2 = nil\nfunc h(n int) int { if n == 0 { return 0 }; return h(n-1) + 1 }\nh(10000) + x - 10000 + 1", "", "")
	if r, ename, evalue, _ := te.cell("x + 1"); r != "42" {
		t.Errorf("x + 1 after: %q %s %s", r, ename, evalue)
	}
	// Sizes of make that are not plain ints.
	if r, ename, evalue, _ := te.cell("var n8 uint8 = 3\nlen(make([]int, n8)) + cap(make([]int, 0, 1e3)) + cap(make(chan int, 'a'))"); r != "1100" {
		t.Errorf("make with other integer types: %q %s %s", r, ename, evalue)
	}
	if _, ename, evalue, _ := te.cell("n := -1\nmake([]int, n)"); ename != enamePanic || !strings.Contains(evalue, "negative len") {
		t.Errorf("make of a negative length: %s %s", ename, evalue)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1536: "1.5 KiB", 1<<20 - 1: "1 MiB", 256 << 20: "256 MiB", 20 << 30: "20 GiB", 1 << 40: "1 TiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestLimitOptions runs hostile cells in a kernel with Options' limits:
// the errors reach the client, and the kernel serves on.
func TestLimitOptions(t *testing.T) {
	tk := startKernel(t, Options{MemoryLimit: 64 << 20, StackLimit: 16 << 20})
	for code, want := range map[string]string{
		"x := 41": `"status":"ok"`,
		"func f(n int) int { return f(n+1) + 1 }\nf(0)": `"ename":"StackOverflow","evalue":"the cell used more than 16 MiB of stack`,
		"b := make([]byte, 1<<36)":                      `"ename":"MemoryError","evalue":"make([]byte, 68719476736) refused: 64 GiB, over the kernel's memory limit of 64 MiB`,
	} {
		if r := tk.execute(code); !strings.Contains(r, want) {
			t.Errorf("%q: %s, want %s", code, r, want)
		}
	}
	if r := tk.execute("x + 1"); !strings.Contains(r, `"status":"ok"`) {
		t.Errorf("x + 1: %s", r)
	}
}
