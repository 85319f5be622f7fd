package simulate_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

// Write a humaneval-style run: two problems, ten completions each, of
// which the planned ones pass; pass@1 and pass@10 are what lm-eval
// would report for them.
func ExampleWriteCode() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	c, w := simulate.Canonical, simulate.WrongAnswer
	out, err := simulate.WriteCode(filepath.Join(dir, "run"), simulate.CodeOptions{Docs: []simulate.CodeDoc{
		{Completions: []simulate.CodeKind{c, c, c, w, w, w, w, w, w, w}},
		{Completions: []simulate.CodeKind{w, w, w, w, w, w, w, w, w, simulate.SyntaxErr}},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	run, _ := harness.Read(out.Dir)
	fmt.Println(out.Task, out.Passed, len(run.Output.Samples))
	fmt.Printf("pass@1 %.4f, pass@10 %.4f\n", out.Reported["pass@1"], out.Reported["pass@10"])
	// Output:
	// humaneval_10 [3 0] 1
	// pass@1 0.1500, pass@10 0.5000
}
