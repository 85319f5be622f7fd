package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/evalcapsule/evalcapsule/harness"
)

// Level says how far back a check recomputed a number.
type Level string

const (
	// LevelRescored: per-doc values recomputed from the raw responses through
	// the task's filters and metric, then aggregated.
	LevelRescored Level = "rescored"
	// LevelReaggregated: value and stderr recomputed from the logged per-doc
	// values (metrics whose per-doc function is not re-implemented).
	LevelReaggregated Level = "reaggregated"
	// LevelGroup: a group's value and stderr recomputed from its members'.
	LevelGroup Level = "group"
	// LevelNone: nothing could be recomputed; Reason says why.
	LevelNone Level = "none"
	// LevelRecord: a setting lm-eval recorded in its results file (seeds,
	// n-shot, model, model_args, lm-eval version, ...) compared with the
	// run's run.json (see harness.CheckRecord). Metric names the field,
	// Task the task it is of ("" for the run's settings), Reported is what
	// lm-eval wrote and Recomputed what run.json says, both as text. Only
	// a field that differs is a check: its status is differs.
	LevelRecord Level = "record"
	// LevelInput: a file of the output cannot be read as lm-eval wrote it
	// (a samples line split over several lines, a field missing, a results
	// file that does not parse). Task names the task of a samples file
	// ("" for a results file); Reason names the file, the line or field,
	// and the problem. Its status is error; the other files are checked.
	LevelInput Level = "input"
)

// Status is the outcome of a check.
type Status string

const (
	StatusExact           Status = "exact"
	StatusDiffers         Status = "differs"
	StatusNotRecomputable Status = "not-recomputable"
	// StatusError: the check of a file that cannot be read (LevelInput).
	StatusError Status = "error"
)

// Number is a reported or recomputed number: absent, lm-eval's "N/A", or a
// float64 compared bit for bit.
type Number struct {
	Set   bool   // false: absent (JSON null)
	NA    bool   // lm-eval's "N/A"
	Text  string // a non-numeric value lm-eval wrote, kept as text
	Value float64
}

// Num makes a Number.
func Num(f float64) Number { return Number{Set: true, Value: f} }

// NA is lm-eval's "N/A".
var NA = Number{Set: true, NA: true}

// numberOf converts a value read from a results file.
func numberOf(v harness.Value) Number {
	switch v.Kind {
	case harness.Null:
		return Number{}
	case harness.Number:
		return Num(v.Num)
	case harness.String:
		if v.Str == "N/A" {
			return NA
		}
		return Number{Set: true, Text: v.Str}
	}
	return Number{Set: true, Text: v.String()}
}

// Equal reports bit-for-bit equality (NaN equals NaN; "N/A" equals "N/A").
func (n Number) Equal(m Number) bool {
	if n.Set != m.Set || n.NA != m.NA || n.Text != m.Text {
		return false
	}
	if !n.Set || n.NA || n.Text != "" {
		return true
	}
	if math.IsNaN(n.Value) && math.IsNaN(m.Value) {
		return true
	}
	return math.Float64bits(n.Value) == math.Float64bits(m.Value)
}

// String renders the number with every digit that distinguishes it (Python's
// repr), "N/A", or "-" when absent.
func (n Number) String() string {
	switch {
	case !n.Set:
		return "-"
	case n.NA:
		return "N/A"
	case n.Text != "":
		return n.Text
	}
	return harness.FormatFloat(n.Value, false)
}

// MarshalJSON writes a JSON number that round-trips the float64, "N/A", or
// null. NaN and infinities, which JSON cannot hold, become the strings
// "NaN", "Infinity" and "-Infinity".
func (n Number) MarshalJSON() ([]byte, error) {
	switch {
	case !n.Set:
		return []byte("null"), nil
	case n.NA:
		return []byte(`"N/A"`), nil
	case n.Text != "":
		return json.Marshal(n.Text)
	case math.IsNaN(n.Value) || math.IsInf(n.Value, 0):
		return json.Marshal(harness.FormatFloat(n.Value, false))
	}
	return strconv.AppendFloat(nil, n.Value, 'g', -1, 64), nil
}

// UnmarshalJSON inverts MarshalJSON: null is absent, "N/A" lm-eval's "N/A",
// "NaN", "Infinity" and "-Infinity" the non-finite floats, any other string
// text, and a JSON number the float64 it spells.
func (n *Number) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*n = Number{}
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "N/A":
			*n = NA
		case "NaN":
			*n = Num(math.NaN())
		case "Infinity":
			*n = Num(math.Inf(1))
		case "-Infinity":
			*n = Num(math.Inf(-1))
		default:
			*n = Number{Set: true, Text: s}
		}
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return &json.UnmarshalTypeError{Value: ute.Value, Type: reflect.TypeFor[Number](), Offset: ute.Offset}
		}
		return err
	}
	*n = Num(f)
	return nil
}

// Check is one recomputed number: a task's or group's metric under a filter.
type Check struct {
	Task             string `json:"task"`              // lm-eval's task or group name; "" for a results file's input error or the run's settings
	Metric           string `json:"metric"`            // lm-eval's metric name, or the setting's field at level record
	Filter           string `json:"filter"`            // lm-eval's filter name; "" at levels record and input
	N                int    `json:"n"`                 // documents the number is over: the samples lines, else lm-eval's n-samples, a group's members' sum; 0 when unknown
	Reported         Number `json:"reported"`          // lm-eval's value as in the results file (a fraction for a [0, 1] metric); text at level record
	Recomputed       Number `json:"recomputed"`        // the value recomputed, in lm-eval's unit; null when not recomputed; run.json's text at level record
	ReportedStderr   Number `json:"reported_stderr"`   // lm-eval's stderr as in the results file; null when it has none
	RecomputedStderr Number `json:"recomputed_stderr"` // the stderr recomputed; null when not recomputed
	Level            Level  `json:"level"`             // how far back it was recomputed: rescored, reaggregated, group, none, record or input
	Status           Status `json:"status"`            // exact, differs, not-recomputable or error
	Reason           string `json:"reason"`            // why it differs or was not recomputed, and notes, in words; "" when there is nothing to say

	// DocDiffs lists the first documents whose recomputed per-doc value or
	// filtered response differs from the logged one.
	DocDiffs []DocDiff `json:"-"`
	// Err is the error of a check at LevelInput (a *harness.FileError).
	Err error `json:"-"`
}

// DocDiff is one document whose recomputation differs from the log.
type DocDiff struct {
	DocID      int
	Line       int
	Field      string // "filtered_resps" or a metric name
	Logged     string
	Recomputed string
}

// RunReport is the re-scoring of one lm-eval output.
type RunReport struct {
	Path          string  `json:"path"`            // the output's results file, or its samples folder and timestamp
	LMEvalVersion string  `json:"lm_eval_version"` // the lm-eval version (or range of versions) detected as the output's writer; "unknown (...)" or "≥X (...)" without a readable results file
	PythonVersion string  `json:"python_version"`  // the Python version in the results file; null when it does not record one
	Checks        []Check `json:"checks"`          // input errors, then the results file's numbers in its order, then what only the samples hold, then differing settings
	// CodeExecution says where the completions of code tasks ran; nil
	// when none were executed.
	CodeExecution *CodeExecution `json:"code_execution,omitempty"`

	// Warnings are problems with the files that did not stop the checks.
	Warnings []string `json:"-"`
}

// MarshalJSON writes the run as docs/cli.md specifies; an unknown
// Python version is null.
func (r *RunReport) MarshalJSON() ([]byte, error) {
	type plain struct {
		Path          string         `json:"path"`
		LMEvalVersion string         `json:"lm_eval_version"`
		PythonVersion *string        `json:"python_version"`
		Checks        []Check        `json:"checks"`
		CodeExecution *CodeExecution `json:"code_execution,omitempty"`
	}
	p := plain{Path: r.Path, LMEvalVersion: r.LMEvalVersion, Checks: r.Checks, CodeExecution: r.CodeExecution}
	if p.Checks == nil {
		p.Checks = []Check{}
	}
	if r.PythonVersion != "" {
		p.PythonVersion = &r.PythonVersion
	}
	return json.Marshal(p)
}

// RescoreReport is the re-scoring of several outputs.
type RescoreReport struct {
	Runs []*RunReport `json:"runs"` // one per lm-eval output, in the order given
	// Levels counts the checks of all runs by level: how many numbers
	// were recomputed from the raw responses (rescored), from the logged
	// per-doc values (reaggregated), and so on.
	Levels LevelCounts `json:"levels"`
}

// LevelCounts counts checks by Level.
type LevelCounts struct {
	Rescored     int `json:"rescored"`     // per-doc values recomputed from the raw responses
	Reaggregated int `json:"reaggregated"` // aggregated from the logged per-doc values
	Group        int `json:"group"`        // group aggregates from the members' values
	Record       int `json:"record"`       // settings recorded otherwise than run.json
	None         int `json:"none"`         // nothing recomputed; the reason says why
	Input        int `json:"input"`        // files that cannot be read
}

// CountLevels counts the checks of the runs by level.
func CountLevels(runs []*RunReport) LevelCounts {
	var c LevelCounts
	for _, run := range runs {
		for _, ch := range run.Checks {
			switch ch.Level {
			case LevelRescored:
				c.Rescored++
			case LevelReaggregated:
				c.Reaggregated++
			case LevelGroup:
				c.Group++
			case LevelRecord:
				c.Record++
			case LevelInput:
				c.Input++
			default:
				c.None++
			}
		}
	}
	return c
}

// String is the summary line's part on levels.
func (c LevelCounts) String() string {
	s := fmt.Sprintf("by level: %d rescored (from the raw responses), %d reaggregated (from the logged per-doc values), %d group, %d none", c.Rescored, c.Reaggregated, c.Group, c.None)
	if c.Record > 0 {
		s += fmt.Sprintf(", %d record", c.Record)
	}
	if c.Input > 0 {
		s += fmt.Sprintf(", %d input", c.Input)
	}
	return s
}

// UnmarshalJSON reads what MarshalJSON (the package function) writes,
// `capsule rescore --json`: a null python_version is an unknown one, a
// run's checks are never nil, and a null run reads as an empty one.
func (r *RescoreReport) UnmarshalJSON(b []byte) error {
	type rescoreReport RescoreReport
	if err := unmarshalNaN(b, (*rescoreReport)(r)); err != nil {
		return err
	}
	for i, run := range r.Runs {
		if run == nil {
			run = &RunReport{}
			r.Runs[i] = run
		}
		if run.Checks == nil {
			run.Checks = []Check{}
		}
	}
	// A document written before the counts existed (a capsule's packed
	// tables) reads with the counts of its checks, so that a replay
	// compares like with like; a document that has them keeps them (a
	// replay recomputes them and names any difference).
	var has struct {
		Levels *json.RawMessage `json:"levels"`
	}
	if err := unmarshalNaN(b, &has); err == nil && has.Levels == nil {
		r.Levels = CountLevels(r.Runs)
	}
	return nil
}

// Counts returns how many checks ended in each status; the input errors
// (status error) are counted by Errors.
func (r *RescoreReport) Counts() (exact, differs, notRecomputable int) {
	for _, run := range r.Runs {
		for _, c := range run.Checks {
			switch c.Status {
			case StatusExact:
				exact++
			case StatusDiffers:
				differs++
			case StatusError:
			default:
				notRecomputable++
			}
		}
	}
	return
}

// Errors returns the checks of files that could not be read (status
// error), in report order.
func (r *RescoreReport) Errors() []Check {
	var out []Check
	for _, run := range r.Runs {
		for _, c := range run.Checks {
			if c.Status == StatusError {
				out = append(out, c)
			}
		}
	}
	return out
}
