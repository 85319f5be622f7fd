package pyre_test

import (
	"fmt"

	"github.com/evalcapsule/evalcapsule/analysis/internal/pyre"
)

// lm-eval's gsm8k "flexible-extract" filter: re.findall with the pattern
// below, group_select -1 (the last match), the first non-empty group of
// that match, then str.strip().
func ExampleRegexp_FindAll() {
	re := pyre.MustCompile(`(-?[$0-9.,]{2,})|(-?[0-9]+)`)
	resp := "Janet sells 16 - 3 - 4 = 9 eggs a day.\nShe makes 9 * $2 = $18 every day.\n#### 18"
	matches := re.FindAll(resp)
	for _, m := range matches {
		fmt.Printf("%q\n", m)
	}
	answer := ""
	for _, g := range matches[len(matches)-1] {
		if g != "" {
			answer = pyre.Strip(g)
			break
		}
	}
	fmt.Printf("answer: %q\n", answer)
	// Output:
	// ["16" ""]
	// ["" "3"]
	// ["" "4"]
	// ["" "9"]
	// ["" "9"]
	// ["$2" ""]
	// ["$18" ""]
	// ["18" ""]
	// answer: "18"
}
