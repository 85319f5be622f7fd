package history_test

import (
	"fmt"

	"github.com/evalcapsule/evalcapsule/history"
)

// ParseStep finds the training step a tag, folder or model name carries,
// which orders a line's checkpoints.
func ExampleParseStep() {
	fmt.Println(history.ParseStep("step-12000"))
	fmt.Println(history.ParseStep("release", "team/llama-ckpt_500"))
	fmt.Println(history.ParseStep("global_step1000"))
	fmt.Println(history.ParseStep("release-v2"))
	// Output:
	// 12000
	// 500
	// 1000
	// -1
}
