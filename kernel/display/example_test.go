package display_test

import (
	"fmt"
	"maps"
	"slices"

	"github.com/evalcapsule/evalcapsule/kernel/display"
)

// table is a value that shows itself: HTML in a notebook, text elsewhere.
type table struct{ rows [][2]string }

func (t table) HTML() string {
	s := "<table>"
	for _, r := range t.rows {
		s += "<tr><td>" + r[0] + "</td><td>" + r[1] + "</td></tr>"
	}
	return s + "</table>"
}

func (t table) String() string {
	s := ""
	for _, r := range t.rows {
		s += r[0] + "\t" + r[1] + "\n"
	}
	return s
}

// Of finds every form a value offers; a cell whose last line is the value
// shows the same bundle.
func ExampleOf() {
	t := table{rows: [][2]string{{"gsm8k", "0.412"}, {"mmlu", "0.397"}}}
	data, _ := display.Of(t).MIMEBundle()
	fmt.Println(slices.Sorted(maps.Keys(data)))
	fmt.Print(data["text/plain"])
	// Output:
	// [text/html text/plain]
	// gsm8k	0.412
	// mmlu	0.397
}

// Outside a notebook, Show and a Handle's updates print the text form.
func ExampleHandle_Update() {
	h := display.New()
	for i := 1; i <= 3; i++ {
		h.Update(display.Markdown(fmt.Sprintf("step **%d** of 3", i)).With(display.Text(fmt.Sprintf("step %d of 3", i))))
	}
	display.Show(display.JSON(map[string]int{"done": 3}))
	// Output:
	// step 1 of 3
	// step 2 of 3
	// step 3 of 3
	// {
	//   "done": 3
	// }
}
