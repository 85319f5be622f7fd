package gate_test

import (
	"fmt"
	"strconv"

	"github.com/evalcapsule/evalcapsule/gate"
)

// side is one task of 200 documents, the first right ones right.
func side(name string, right int) *gate.Side {
	docs := map[string]float64{}
	for i := range 200 {
		docs[strconv.Itoa(i)] = 0
		if i < right {
			docs[strconv.Itoa(i)] = 1
		}
	}
	return &gate.Side{Name: name, Tasks: map[string]*gate.TaskValues{
		"gsm8k": {Metrics: map[string]map[string]float64{"exact_match,strict-match": docs}},
	}}
}

func ExampleEvaluate() {
	p, err := gate.ParsePolicy([]byte("test: no-significant-drop\nmargin: 2\n"))
	if err != nil {
		panic(err)
	}
	for _, right := range []int{104, 97, 88} { // the baseline has 100 of 200 right
		r, err := gate.Evaluate(side("release", 100), side("candidate", right), p)
		if err != nil {
			panic(err)
		}
		m := r.Metrics[0]
		fmt.Printf("%s: Δ %+.1f points, McNemar p %.2g: %s\n", r.Verdict, m.Delta, m.P, m.Reason)
	}
	// Output:
	// pass: Δ +2.0 points, McNemar p 0.13: no drop: the interval lies above 0
	// pass: Δ -1.5 points, McNemar p 0.25: no significant drop: the interval reaches 0
	// regression: Δ -6.0 points, McNemar p 0.00049: significant drop of 6.00 points, more than the margin of 2.00 points
}
