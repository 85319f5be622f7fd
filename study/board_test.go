package study_test

import (
	"errors"
	"fmt"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/study"
)

// A board keeps each run's latest state in the order the runs first
// reported; a status change without progress keeps the last progress.
func ExampleRunBoard() {
	var b study.RunBoard
	base := study.PlannedRun{Name: "baseline"}
	step := study.PlannedRun{Name: "step-1-8-shot"}
	fmt.Println(b.Record(study.RunEvent{Run: step, Status: "planned"}))
	b.Record(study.RunEvent{Run: base, Status: "running", Progress: harness.Progress{Phase: "generate_until", Done: 330, Total: 1319}})
	fmt.Println(b.Record(study.RunEvent{Run: base, Status: "running", Progress: harness.Progress{Phase: "generate_until", Done: 660, Total: 1319}}))
	fmt.Println(b.Record(study.RunEvent{Run: base, Status: "interrupted", Err: errors.New("signal: interrupt")}))
	for _, ev := range b.Runs() {
		fmt.Printf("%s %.0f%% %s\n", ev.Run.Name, 100*ev.Fraction(), ev.Detail())
	}
	fmt.Println(b.Finished())
	b.Record(study.RunEvent{Run: step, Status: "skipped"})
	fmt.Println(b.Finished(), b.Runs()[0].Fraction())
	// The runner's last poll of progress.json, after the run ended, does not
	// make it run again.
	fmt.Println(b.Record(study.RunEvent{Run: base, Status: "running", Progress: harness.Progress{Phase: "generate_until", Done: 700, Total: 1319}}), b.Runs()[1].Detail())
	// Output:
	// true
	// false
	// true
	// step-1-8-shot 0% planned
	// baseline 50% interrupted: signal: interrupt
	// false
	// true 1
	// false interrupted: signal: interrupt
}
