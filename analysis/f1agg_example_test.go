package analysis_test

import (
	"fmt"

	"github.com/evalcapsule/evalcapsule/analysis"
)

// F1Average is scikit-learn's f1_score with average= macro, micro or
// weighted; legacy selects the formula of scikit-learn before 1.4.
func ExampleF1Average() {
	golds := []int{0, 0, 1, 1, 2, 2}
	preds := []int{0, 1, 1, 1, 2, 0}
	for _, avg := range []string{"macro", "micro", "weighted"} {
		fmt.Printf("%s %.4f\n", avg, analysis.F1Average(golds, preds, avg, false))
	}
	// Output:
	// macro 0.6556
	// micro 0.6667
	// weighted 0.6556
}
