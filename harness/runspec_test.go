package harness

import (
	"encoding/json"
	"testing"
)

func TestKVs(t *testing.T) {
	kvs := make(KVs, 1, 4)
	kvs[0] = KV{"dtype", "bfloat16"}
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
}
