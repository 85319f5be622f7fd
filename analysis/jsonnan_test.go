package analysis_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
)

// TestTablesRoundTrip fills every member the JSON carries of the tables a
// capsule stores (RescoreReport, Attribution and what they hold), writes
// them with MarshalJSON and reads them back: a member MarshalJSON drops or
// UnmarshalJSON does not restore fails it. Members tagged `json:"-"` are
// not written and stay zero. Floats come back bit for bit, NaN (written as
// null) as NaN; the first fill has no NaN float (encoding/json writes it),
// the second some (MarshalJSON's own walk writes it).
func TestTablesRoundTrip(t *testing.T) {
	for _, nans := range []bool{false, true} {
		for _, v := range []any{&analysis.RescoreReport{}, &analysis.Attribution{}} {
			name := fmt.Sprintf("%T nan=%v", v, nans)
			f := &filler{nans: nans}
			f.fill(t, reflect.ValueOf(v).Elem(), reflect.TypeOf(v).Elem().Name())
			if _, ok := v.(*analysis.Attribution); ok && nans && f.nanFloats == 0 {
				t.Errorf("%s: no float member holds NaN", name)
			}
			b, err := analysis.MarshalJSON(v)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := reflect.New(reflect.TypeOf(v).Elem())
			if err := json.Unmarshal(b, got.Interface()); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, b)
			}
			if path, ok := sameValue(reflect.ValueOf(v).Elem(), got.Elem(), reflect.TypeOf(v).Elem().Name()); !ok {
				t.Errorf("%s: %s differs after the round trip\n%s", name, path, b)
			}
			b2, err := analysis.MarshalJSON(got.Interface())
			if err != nil || !bytes.Equal(b, b2) {
				t.Errorf("%s: written again differs (%v)\n%s\n%s", name, err, b, b2)
			}
		}
	}
}

// filler sets every exported member that JSON carries to a value other
// than its zero, differing from member to member.
type filler struct {
	n         int
	nans      bool // some floats NaN
	nanFloats int
}

var numberType = reflect.TypeFor[analysis.Number]()

func (f *filler) fill(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	f.n++
	if v.Type() == numberType {
		// Every kind of Number: finite (negative zero, subnormal, the
		// largest), non-finite, "N/A" and text.
		kinds := []analysis.Number{
			analysis.Num(0.1 + float64(f.n)/3), analysis.Num(math.Copysign(0, -1)), analysis.Num(5e-324),
			analysis.Num(-math.MaxFloat64), analysis.Num(math.NaN()), analysis.Num(math.Inf(1)),
			analysis.Num(math.Inf(-1)), analysis.NA, {Set: true, Text: fmt.Sprintf("text %d", f.n)},
		}
		v.Set(reflect.ValueOf(kinds[f.n%len(kinds)]))
		return
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		x := 0.1 + float64(f.n)/7
		if f.n%2 == 0 {
			x = -x * 1e-300
		}
		if f.nans && f.n%3 == 0 {
			x = math.NaN()
			f.nanFloats++
		}
		v.SetFloat(x)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString(fmt.Sprintf("%s %d", path, f.n))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(t, v.Elem(), path)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			f.fill(t, v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Array:
		for i := range v.Len() {
			f.fill(t, v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			t.Fatalf("%s: cannot fill a map keyed by %s", path, v.Type().Key())
		}
		v.Set(reflect.MakeMap(v.Type()))
		for i := range 2 {
			k := reflect.New(v.Type().Key()).Elem()
			k.SetString(fmt.Sprintf("key %d", i))
			e := reflect.New(v.Type().Elem()).Elem()
			f.fill(t, e, fmt.Sprintf("%s[%q]", path, k))
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if sf.IsExported() && jsonName(sf) != "-" {
				f.fill(t, v.Field(i), path+"."+sf.Name)
			}
		}
	default:
		t.Fatalf("%s: cannot fill a %s", path, v.Type())
	}
}

func jsonName(sf reflect.StructField) string {
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	return name
}

// sameValue compares a and b as reflect.DeepEqual does, except that floats
// are equal when their bits are or both are NaN; it returns the path of the
// first difference.
func sameValue(a, b reflect.Value, path string) (string, bool) {
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return path, math.IsNaN(x) && math.IsNaN(y) || math.Float64bits(x) == math.Float64bits(y)
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return path, a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return path, false
		}
		fallthrough
	case reflect.Array:
		if a.Len() != b.Len() {
			return path, false
		}
		for i := range a.Len() {
			if p, ok := sameValue(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return path, true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return path, false
		}
		it := a.MapRange()
		for it.Next() {
			e := b.MapIndex(it.Key())
			if !e.IsValid() {
				return fmt.Sprintf("%s[%v]", path, it.Key()), false
			}
			if p, ok := sameValue(it.Value(), e, fmt.Sprintf("%s[%v]", path, it.Key())); !ok {
				return p, false
			}
		}
		return path, true
	case reflect.Struct:
		for i := range a.NumField() {
			if p, ok := sameValue(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); !ok {
				return p, false
			}
		}
		return path, true
	}
	return path, a.Equal(b)
}

// TestNumberUnmarshalJSON reads back each spelling Number.MarshalJSON
// writes, and refuses what it never writes.
func TestNumberUnmarshalJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		want analysis.Number
		out  string // written again; "" is in
	}{
		{`null`, analysis.Number{}, ""},
		{`"N/A"`, analysis.NA, ""},
		{`"NaN"`, analysis.Num(math.NaN()), ""},
		{`"Infinity"`, analysis.Num(math.Inf(1)), ""},
		{`"-Infinity"`, analysis.Num(math.Inf(-1)), ""},
		{`"inf"`, analysis.Number{Set: true, Text: "inf"}, ""},
		{`"0.5"`, analysis.Number{Set: true, Text: "0.5"}, ""},
		{`""`, analysis.Num(0), "0"}, // text "" is no text
		{`0.1`, analysis.Num(0.1), ""},
		{`-0`, analysis.Num(math.Copysign(0, -1)), ""},
		{`1e-320`, analysis.Num(1e-320), ""},
		{`17`, analysis.Num(17), ""},
	} {
		n := analysis.Num(3) // a decoded value replaces what was there
		if err := json.Unmarshal([]byte(c.in), &n); err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if !n.Equal(c.want) || math.Signbit(n.Value) != math.Signbit(c.want.Value) {
			t.Errorf("%s: %#v, want %#v", c.in, n, c.want)
		}
		out := c.out
		if out == "" {
			out = c.in
		}
		if b, _ := json.Marshal(n); string(b) != out {
			t.Errorf("%s written again as %s", c.in, b)
		}
	}
	for _, in := range []string{`true`, `{}`, `[1]`, `1e400`} {
		var n analysis.Number
		err := json.Unmarshal([]byte(in), &n)
		if err == nil || !strings.Contains(err.Error(), "analysis.Number") {
			t.Errorf("%s: %v", in, err)
		}
	}
	// Within a check, the error names the member.
	var rep analysis.RescoreReport
	err := json.Unmarshal([]byte(`{"runs":[{"checks":[{"reported":true}]}]}`), &rep)
	if err == nil || !strings.Contains(err.Error(), "reported") {
		t.Errorf("a bool reported: %v", err)
	}
}

// TestTablesUnmarshalShape: what the written JSON leaves implicit reads
// back as before: a null python_version is "", a run's checks are never
// nil, an omitted interaction is nil and a null one NaN, an omitted
// Shapley nil; Study and Simulated, not written, are kept.
func TestTablesUnmarshalShape(t *testing.T) {
	var rep analysis.RescoreReport
	if err := json.Unmarshal([]byte(`{"runs":[{"path":"p","lm_eval_version":"0.4.9","python_version":null,"checks":[]},{"path":"q"},null]}`), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 3 || rep.Runs[0].PythonVersion != "" || rep.Runs[0].Path != "p" {
		t.Fatalf("%+v", rep.Runs)
	}
	for i, r := range rep.Runs {
		if r == nil || r.Checks == nil {
			t.Errorf("run %d: %+v", i, r)
		}
	}
	att := analysis.Attribution{Study: "s", Simulated: true}
	in := `{"claims":[{"task":"a","card":null,"steps":[{"p":null,"value":0.25}],"sensitivity":null,"interaction":null},{"task":"b"}]}`
	if err := json.Unmarshal([]byte(in), &att); err != nil {
		t.Fatal(err)
	}
	if att.Study != "s" || !att.Simulated || len(att.Claims) != 2 {
		t.Fatalf("%+v", att)
	}
	a, b := att.Claims[0], att.Claims[1]
	if !math.IsNaN(a.Card) || a.Baseline != 0 || !math.IsNaN(a.Steps[0].P) || a.Steps[0].Value != 0.25 || a.Steps[0].CILow != 0 ||
		a.Sensitivity != nil || a.Interaction == nil || !math.IsNaN(*a.Interaction) || a.Shapley != nil {
		t.Errorf("claim a: %+v", a)
	}
	if b.Interaction != nil || math.IsNaN(b.Card) || b.Steps != nil {
		t.Errorf("claim b: %+v", b)
	}
}
