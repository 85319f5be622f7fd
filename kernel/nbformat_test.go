package kernel

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// TestNotebookRoundTrip: a notebook Jupyter wrote is written back byte
// for byte, and the keys of one it did not write keep their order.
func TestNotebookRoundTrip(t *testing.T) {
	in, err := os.ReadFile("../notebooks/kernel-tour.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	v, err := decodeJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	if out := encodeNotebook(v); !bytes.Equal(out, in) {
		t.Errorf("kernel-tour.ipynb is not written back as it was:\n%s", out)
	}

	in = []byte(`{"z": 1.50, "a": [], "m": {"y": "x<y & \u2028 é \u001b\t", "b": {}}, "n": null, "t": [true, false]}`)
	v, err = decodeJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n \"z\": 1.50,\n \"a\": [],\n \"m\": {\n  \"y\": \"x<y & \u2028 é \\u001b\\t\",\n  \"b\": {}\n },\n \"n\": null,\n \"t\": [\n  true,\n  false\n ]\n}\n"
	if got := string(encodeNotebook(v)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	v, err = decodeJSON([]byte(`{"b": 1, "a": 2, "b": 3}`))
	if want := (jsonObject{{"b", json.Number("3")}, {"a", json.Number("2")}}); err != nil || !reflect.DeepEqual(v, want) {
		t.Errorf("repeated key: got %v, %v; want %v", v, err, want)
	}

	for _, bad := range []string{``, `{`, `{"a": 1} {}`, `[1,]`} {
		if _, err := decodeJSON([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestJSONObjectSet(t *testing.T) {
	o := jsonObject{{"b", 1}, {"d", 2}}
	o.set("c", 3)
	o.set("a", 0)
	o.set("e", 4)
	o.set("d", 5)
	want := jsonObject{{"a", 0}, {"b", 1}, {"c", 3}, {"d", 5}, {"e", 4}}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("sorted: got %v, want %v", o, want)
	}
	o = jsonObject{{"d", 1}, {"b", 2}}
	o.set("c", 3)
	o.set("b", 4)
	if want := (jsonObject{{"d", 1}, {"b", 4}, {"c", 3}}); !reflect.DeepEqual(o, want) {
		t.Errorf("unsorted: got %v, want %v", o, want)
	}
}

// TestSplitLines: lines as Python's str.splitlines(keepends=True) cuts
// them.
func TestSplitLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []any
	}{
		{"", []any{}},
		{"a", []any{"a"}},
		{"a\n", []any{"a\n"}},
		{"a\nb", []any{"a\n", "b"}},
		{"a\r\nb\rc\n\n", []any{"a\r\n", "b\r", "c\n", "\n"}},
		{"a\vb\fc\x1cd\u0085e\u2028f", []any{"a\v", "b\f", "c\x1c", "d\u0085", "e\u2028", "f"}},
		{"\xff\n", []any{"\xff\n"}},
	} {
		if got := splitLines(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitLines(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCarriageReturn: what a carriage return overwrites on its line is
// removed from streams, as nbconvert's coalesce_streams removes it.
func TestCarriageReturn(t *testing.T) {
	for in, want := range map[string]string{
		"10%\r50%\r100%\ndone\n": "100%\ndone\n",
		"a\r\nb\n":               "a\r\nb\n",
		"end\r":                  "end\r",
		"x\r\ry\nz":              "y\nz",
		"one\rtwo\nthree\rfour":  "two\nfour",
	} {
		out := (&cellOutput{kind: "stream", name: "stdout", text: in}).nbformat()
		text, _ := joinText(out[2].value)
		if text != want {
			t.Errorf("%q: got %q, want %q", in, text, want)
		}
	}
}
