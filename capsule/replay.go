package capsule

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/study"
)

// ReplaySchema names the replay report's format.
const ReplaySchema = "evalcapsule.replay/v1"

// ReplayReport is what a replay found: every number of the capsule's tables
// re-derived and compared, and, for a rerun, how the re-executed runs
// compare with the packed ones. It is packed as an artifact of its own whose
// subject is the capsule.
type ReplayReport struct {
	Schema string `json:"schema"`
	// Capsule is the capsule manifest's digest.
	Capsule  string `json:"capsule"`
	Study    string `json:"study"`
	Level    string `json:"level"` // "rescore" or "rerun"
	Replayer Packer `json:"replayer"`
	// Compared counts the numbers compared; Diffs lists those that differ.
	Compared int          `json:"compared"`
	Diffs    []ReplayDiff `json:"diffs"`
	// Reruns compares each re-executed run with the packed one (rerun).
	Reruns []study.RerunComparison `json:"reruns,omitempty"`
	// OK is true when nothing differs (and every rerun agrees).
	OK        bool `json:"ok"`
	Simulated bool `json:"simulated"`
}

// ReplayDiff is one number that a replay did not reproduce.
type ReplayDiff struct {
	// Where names the number: table, run or claim, step, task, metric.
	Where    string `json:"where"`
	Packed   string `json:"packed"`
	Replayed string `json:"replayed"`
}

// ReplayTables re-derives the tables of an unpacked study and compares them
// with the packed ones, number by number and bit for bit.
func ReplayTables(ctx context.Context, s *study.Study, packed *Config, opts analysis.AttributionOptions) (*ReplayReport, *study.Tables, error) {
	t, err := study.ComputeTables(ctx, s, opts)
	if err != nil {
		return nil, nil, err
	}
	rep := &ReplayReport{Schema: ReplaySchema, Study: s.Name, Level: "rescore", Simulated: packed.Simulated}
	if packed.Rescore == nil || packed.Attribution == nil {
		return nil, nil, fmt.Errorf("%w: the capsule holds no tables to replay against (packed without them)", ErrFormat)
	}
	n, diffs, err := compareJSON(packed.Rescore, t.Rescore, "rescore")
	if err != nil {
		return nil, nil, err
	}
	rep.Compared += n
	rep.Diffs = append(rep.Diffs, diffs...)
	n, diffs, err = compareJSON(packed.Attribution, t.Attribution, "attribution")
	if err != nil {
		return nil, nil, err
	}
	rep.Compared += n
	rep.Diffs = append(rep.Diffs, diffs...)
	rep.OK = len(rep.Diffs) == 0
	return rep, t, nil
}

// compareJSON compares two values through their JSON form: every number
// bit for bit, every string that is a status, level, name or version
// exactly; explanations (reasons, statements) are not compared, since they
// name paths that differ between machines.
func compareJSON(packed, replayed any, root string) (int, []ReplayDiff, error) {
	a, err := toGeneric(packed)
	if err != nil {
		return 0, nil, err
	}
	b, err := toGeneric(replayed)
	if err != nil {
		return 0, nil, err
	}
	c := &comparer{}
	c.walk(root, a, b)
	return c.n, c.diffs, nil
}

func toGeneric(v any) (any, error) {
	bs, err := analysis.MarshalJSON(v)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(strings.NewReader(string(bs)))
	d.UseNumber()
	var out any
	return out, d.Decode(&out)
}

type comparer struct {
	n     int
	diffs []ReplayDiff
}

// prose names the fields that explain rather than state a number.
var prose = map[string]bool{"reason": true, "statement": true, "path": true}

func (c *comparer) diff(where string, a, b any) {
	c.diffs = append(c.diffs, ReplayDiff{Where: where, Packed: show(a), Replayed: show(b)})
}

func show(v any) string {
	if v == nil {
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (c *comparer) walk(where string, a, b any) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			c.diff(where, a, b)
			return
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		var ks []string
		for k := range keys {
			if !prose[k] {
				ks = append(ks, k)
			}
		}
		sort.Strings(ks)
		for _, k := range ks {
			c.walk(where+"."+k, x[k], y[k])
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			c.diff(where+" (length)", len(x), lenOf(b))
			return
		}
		for i := range x {
			c.walk(where+"["+label(x[i], i)+"]", x[i], y[i])
		}
	case json.Number:
		c.n++
		y, ok := b.(json.Number)
		if !ok || !sameNumber(x, y) {
			c.diff(where, a, b)
		}
	default:
		if a != nil || b != nil {
			c.n++
		}
		if fmt.Sprint(a) != fmt.Sprint(b) {
			c.diff(where, a, b)
		}
	}
}

func lenOf(v any) int {
	if l, ok := v.([]any); ok {
		return len(l)
	}
	return -1
}

// sameNumber compares two JSON numbers as float64 bits (the JSON of a
// float64 round-trips it exactly).
func sameNumber(a, b json.Number) bool {
	x, err1 := strconv.ParseFloat(string(a), 64)
	y, err2 := strconv.ParseFloat(string(b), 64)
	if err1 != nil || err2 != nil {
		return a == b
	}
	return math.Float64bits(x) == math.Float64bits(y)
}

// label names an array element by what identifies it, so that a diff says
// "claims[gsm8k exact_match,strict-match].steps[chat template on].delta".
func label(v any, i int) string {
	m, ok := v.(map[string]any)
	if !ok {
		return strconv.Itoa(i)
	}
	str := func(k string) string {
		if s, ok := m[k].(string); ok {
			return s
		}
		return ""
	}
	switch {
	case str("task") != "" && str("metric") != "":
		return fmt.Sprintf("%s %s,%s", str("task"), str("metric"), str("filter"))
	case str("name") != "":
		return str("name")
	case str("change") != "":
		return str("change")
	case str("setting") != "":
		return str("setting")
	case str("path") != "":
		return str("path")
	}
	return strconv.Itoa(i)
}
