package harness

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestKVs(t *testing.T) {
	kvs := make(KVs, 1, 4)
	kvs[0] = KV{Key: "dtype", Value: "bfloat16"}
	added := kvs.Set("revision", "main")
	replaced := added.Set("dtype", "float16")
	if v, ok := replaced.Get("dtype"); !ok || v != "float16" {
		t.Errorf("replaced dtype: %q %v", v, ok)
	}
	if v, ok := added.Get("dtype"); !ok || v != "bfloat16" {
		t.Errorf("Set changed the slice it was given: %q", v)
	}
	if _, ok := kvs.Get("revision"); ok || len(kvs[:2][1].Key) != 0 {
		t.Error("Set wrote into the spare capacity of the slice it was given")
	}
	if _, ok := replaced.Get("seed"); ok {
		t.Error("found a key never set")
	}
	// They encode as the plain list of key and value objects they were.
	b, _ := json.Marshal(RunSpec{ModelArgs: replaced})
	if string(b) != `{"model_args":[{"key":"dtype","value":"float16"},{"key":"revision","value":"main"}]}` {
		t.Errorf("encoded as %s", b)
	}

	// A JSON value says so; Set and SetJSON replace either kind.
	typed := replaced.SetJSON("dtype", "null").SetJSON("stop", `["a","b"]`)
	if typed[0] != (KV{Key: "dtype", Value: "null", JSON: true}) || typed[2] != (KV{Key: "stop", Value: `["a","b"]`, JSON: true}) {
		t.Errorf("SetJSON: %+v", typed)
	}
	if back := typed.Set("dtype", "float16"); back[0] != (KV{Key: "dtype", Value: "float16"}) {
		t.Errorf("Set after SetJSON: %+v", back[0])
	}
	b, _ = json.Marshal(RunSpec{GenKwargs: typed})
	want := `{"gen_kwargs":[{"key":"dtype","value":"null","json":true},{"key":"revision","value":"main"},{"key":"stop","value":"[\"a\",\"b\"]","json":true}]}`
	if string(b) != want {
		t.Errorf("encoded as %s\nwant %s", b, want)
	}
	var spec RunSpec
	if err := json.Unmarshal(b, &spec); err != nil || !reflect.DeepEqual(spec.GenKwargs, typed) {
		t.Errorf("decoded as %+v, %v", spec.GenKwargs, err)
	}
	// A record written before JSON values existed decodes to text values.
	old := `{"model_args":[{"key":"pretrained","value":"gpt2"},{"key":"until","value":"[Question:,Answer:]"}]}`
	spec = RunSpec{}
	if err := json.Unmarshal([]byte(old), &spec); err != nil ||
		!reflect.DeepEqual(spec.ModelArgs, KVs{{Key: "pretrained", Value: "gpt2"}, {Key: "until", Value: "[Question:,Answer:]"}}) {
		t.Errorf("old record decoded as %+v, %v", spec.ModelArgs, err)
	}
	if b, _ := json.Marshal(spec); string(b) != old {
		t.Errorf("old record re-encoded as %s", b)
	}
}
