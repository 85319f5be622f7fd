package harness

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// Secrets must never reach run.json, and so every capsule packed from it:
// model access tokens go by environment (HF_TOKEN reaches every runner).

// secretValues match the shapes of well-known credentials.
var secretValues = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`^hf_[A-Za-z0-9]{30,}$`), "a Hugging Face token"},
	{regexp.MustCompile(`^sk-[A-Za-z0-9_-]{20,}$`), "an API key"},
	{regexp.MustCompile(`^(ghp|gho|ghs|ghu)_[A-Za-z0-9]{30,}$|^github_pat_[A-Za-z0-9_]{20,}$`), "a GitHub token"},
	{regexp.MustCompile(`^xox[abps]-[A-Za-z0-9-]{10,}$`), "a Slack token"},
	{regexp.MustCompile(`^AKIA[0-9A-Z]{16}$`), "an AWS access key"},
}

// secretKeys are the names under which credentials are passed.
var secretKeys = regexp.MustCompile(`(?i)^(.*_)?(token|secret|password|passwd|api_?key|credentials?)$`)

// Secret reports whether a setting holds a credential, and what it looks
// like: a value of a credential's shape under any key, or any value other
// than a boolean under a key that names one (use_auth_token=True is a
// flag, use_auth_token=hf_… is a token).
func Secret(key, value string) (what string, ok bool) {
	v := strings.TrimSpace(value)
	for _, s := range secretValues {
		if s.re.MatchString(v) {
			return s.what, true
		}
	}
	if secretKeys.MatchString(key) {
		switch strings.ToLower(v) {
		case "", "true", "false", "none", "null", "0", "1":
			return "", false
		}
		return "a credential (by its name, " + key + ")", true
	}
	return "", false
}

// Secrets lists the settings of spec that hold credentials, as
// "model_args.token: a Hugging Face token", never with the value.
func (spec RunSpec) Secrets() []string {
	var out []string
	for _, set := range []struct {
		field string
		list  KVs
	}{{"model_args", spec.ModelArgs}, {"gen_kwargs", spec.GenKwargs}} {
		for _, kv := range set.list {
			if what, ok := kv.Secret(); ok {
				out = append(out, set.field+"."+kv.Key+": "+what)
			}
		}
	}
	if what, ok := Secret("system_instruction", spec.SystemInstruction); ok && !strings.HasPrefix(what, "a credential (by its name") {
		out = append(out, "system_instruction: "+what)
	}
	return out
}

// Secret reports whether a setting holds a credential: as Secret judges
// the key and the value's text, and, inside a typed (JSON) list or
// mapping, each string under the nearest key; a list or mapping under a
// credential's name is one.
func (kv KV) Secret() (string, bool) {
	if what, ok := Secret(kv.Key, kv.Value); ok || !kv.JSON {
		return what, ok
	}
	dec := json.NewDecoder(strings.NewReader(kv.Value))
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	var walk func(key string, v any) (string, bool)
	walk = func(key string, v any) (string, bool) {
		switch v := v.(type) {
		case string:
			return Secret(key, v)
		case []any:
			for _, x := range v {
				if what, ok := walk(key, x); ok {
					return what, ok
				}
			}
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if _, isStr := v[k].(string); !isStr {
					// A list or mapping under a credential's name is one.
					text, _ := json.Marshal(v[k])
					if what, ok := Secret(k, string(text)); ok {
						return what, ok
					}
				}
				if what, ok := walk(k, v[k]); ok {
					return what, ok
				}
			}
		}
		return "", false
	}
	return walk(kv.Key, v)
}
