package harness

import (
	"strings"
	"testing"
)

func TestSecret(t *testing.T) {
	for _, c := range []struct {
		key, value string
		secret     bool
	}{
		{"pretrained", "meta-llama/Llama-3.2-1B-Instruct", false},
		{"dtype", "bfloat16", false},
		{"use_auth_token", "True", false},
		{"trust_remote_code", "true", false},
		{"token", "hf_" + strings.Repeat("a1B2", 9), true},
		{"use_auth_token", "hf_" + strings.Repeat("x", 34), true},
		{"revision", "hf_" + strings.Repeat("Z", 34), true}, // a token's shape under any key
		{"api_key", "my-key", true},
		{"openai_api_key", "sk-" + strings.Repeat("k", 40), true},
		{"tokenizer", "meta-llama/Llama-3.2-1B", false},
		{"add_bos_token", "True", false},
		{"hf_token", "abc", true},
		{"max_gen_toks", "1024", false},
		{"password", "none", false},
	} {
		_, got := Secret(c.key, c.value)
		if got != c.secret {
			t.Errorf("Secret(%q, %q) = %v, want %v", c.key, c.value, got, c.secret)
		}
	}
	spec := RunSpec{ModelArgs: KVs{{Key: "pretrained", Value: "m"}, {Key: "token", Value: "hf_" + strings.Repeat("q", 34)}}}
	if got := spec.Secrets(); len(got) != 1 || got[0] != "model_args.token: a Hugging Face token" || strings.Contains(got[0], "qqq") {
		t.Errorf("Secrets() = %q", got)
	}
	nested := RunSpec{ModelArgs: KVs{{Key: "peft", Value: `{"adapter": "org/a", "auth": {"api_key": "k-123"}}`, JSON: true}}}
	if got := nested.Secrets(); len(got) != 1 || !strings.Contains(got[0], "model_args.peft: a credential (by its name, api_key)") {
		t.Errorf("Secrets() of a nested value = %q", got)
	}
}
