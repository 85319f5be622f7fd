package harness

// RunSpec is every setting of one lm-eval run that a study pins. Settings
// left unset keep lm-eval's defaults (and the task's YAML).
type RunSpec struct {
	// Model is lm-eval's --model (hf, vllm, local-completions, ...).
	Model string `json:"model,omitempty"`
	// ModelArgs is --model_args, in order (pretrained is set from the
	// study's model id and revision).
	ModelArgs KVs `json:"model_args,omitempty"`
	// Tasks is --tasks.
	Tasks []string `json:"tasks,omitempty"`
	// NumFewshot is --num_fewshot; nil leaves each task's default.
	NumFewshot *int `json:"num_fewshot,omitempty"`
	// BatchSize is --batch_size: a number, "auto" or "auto:N".
	BatchSize string `json:"batch_size,omitempty"`
	// Device is --device.
	Device string `json:"device,omitempty"`
	// Limit is --limit: a count (≥ 1) or a fraction (< 1).
	Limit *float64 `json:"limit,omitempty"`
	// GenKwargs is --gen_kwargs, in order.
	GenKwargs KVs `json:"gen_kwargs,omitempty"`
	// ApplyChatTemplate is --apply_chat_template: "" (off), "true" (the
	// tokenizer's default template) or a template name.
	ApplyChatTemplate  string `json:"apply_chat_template,omitempty"`
	FewshotAsMultiturn *bool  `json:"fewshot_as_multiturn,omitempty"`
	SystemInstruction  string `json:"system_instruction,omitempty"`
	// Seed is --seed's four values: python random, numpy, torch, fewshot.
	Seed                 []int  `json:"seed,omitempty"`
	LogSamples           bool   `json:"log_samples,omitempty"`
	UseCache             string `json:"use_cache,omitempty"`
	TrustRemoteCode      bool   `json:"trust_remote_code,omitempty"`
	ConfirmRunUnsafeCode bool   `json:"confirm_run_unsafe_code,omitempty"`
	BootstrapIters       *int   `json:"bootstrap_iters,omitempty"`
}

// KV is one key and value of model_args or gen_kwargs; values keep the text
// they are given as.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// KVs are the keys and values of model_args or gen_kwargs, in order.
type KVs []KV

// Get returns a key's value.
func (kvs KVs) Get(key string) (string, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// Set returns a copy of kvs with key's value replaced, or with key appended
// when kvs has no such key; kvs itself is left as it is.
func (kvs KVs) Set(key, value string) KVs {
	for i, kv := range kvs {
		if kv.Key == key {
			out := append(KVs(nil), kvs...)
			out[i].Value = value
			return out
		}
	}
	return append(append(KVs(nil), kvs...), KV{key, value})
}
