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
	// IncludePath is --include_path: a folder of custom task YAMLs, inside
	// the study directory and relative to it. A sweep freezes its files
	// into each run's directory (runs/<name>/include), hashes them into the
	// run's identity, and points lm-eval there.
	IncludePath string `json:"include_path,omitempty"`
	// The settings below are passed through as they are and recorded.
	// MaxBatchSize is --max_batch_size (with batch_size auto).
	MaxBatchSize *int `json:"max_batch_size,omitempty"`
	// Metadata is --metadata: a JSON object the tasks receive (v0.4.9+).
	Metadata string `json:"metadata,omitempty"`
	// Samples is --samples: a JSON object of task → doc ids (v0.4.9+).
	Samples string `json:"samples,omitempty"`
	// PredictOnly is --predict_only: generations logged, not scored.
	PredictOnly bool `json:"predict_only,omitempty"`
	// CacheRequests is --cache_requests: true, refresh or delete.
	CacheRequests string `json:"cache_requests,omitempty"`
	// HFHubLogArgs and WandbArgs are --hf_hub_log_args and --wandb_args,
	// lm-eval's own key=value strings.
	HFHubLogArgs string `json:"hf_hub_log_args,omitempty"`
	WandbArgs    string `json:"wandb_args,omitempty"`
}

// KV is one key and value of model_args or gen_kwargs.
//
// A value is either text or JSON. Text (JSON false) is what lm-eval's
// key=value form takes, and lm-eval types it as the release does: "true" and
// "false" in any case become bools, digits an int, what float() reads a
// float, anything else a str (from v0.4.10 also whatever ast.literal_eval
// reads, such as None or a list). With JSON set, Value is a JSON document
// that stands for the Python value json.loads makes of it (a list, a dict,
// None, a bool, a number or a str), whatever the release: Argv passes it in a
// form that release reads back as that same value, or refuses it.
//
// Text values encode as {"key":…,"value":…}, as they always have; JSON
// values add "json":true, so run.json records of either kind decode to the
// spec that wrote them.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	JSON  bool   `json:"json,omitempty"`
}

// KVs are the keys and values of model_args or gen_kwargs, in order.
type KVs []KV

// Get returns a key's value: the text, or the JSON document of a JSON value.
func (kvs KVs) Get(key string) (string, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// Set returns a copy of kvs with key's value replaced by the text value, or
// with key appended when kvs has no such key; kvs itself is left as it is.
func (kvs KVs) Set(key, value string) KVs { return kvs.With(KV{Key: key, Value: value}) }

// SetJSON is Set for a JSON value: doc is the JSON document of the Python
// value (`["Question:","</s>"]`, `null`, `{"enable_thinking":false}`).
func (kvs KVs) SetJSON(key, doc string) KVs { return kvs.With(KV{Key: key, Value: doc, JSON: true}) }

// With returns a copy of kvs with kv in place of the value of kv.Key, or
// with kv appended when kvs has no such key; kvs itself is left as it is.
func (kvs KVs) With(kv KV) KVs {
	for i, old := range kvs {
		if old.Key == kv.Key {
			out := append(KVs(nil), kvs...)
			out[i] = kv
			return out
		}
	}
	return append(append(KVs(nil), kvs...), kv)
}
