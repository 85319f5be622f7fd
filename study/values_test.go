package study_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/study"
)

func valuesStudy(baseline string) string {
	return `study: values
model: {id: simulated/model-1b}
card:
  claims:
    - {task: gsm8k, metric: exact_match, filter: strict-match, value: 0.4}
harness: {version: 0.4.9.1}
runner: {kind: simulated}
baseline:
  tasks: [gsm8k]
` + baseline
}

// model_args and gen_kwargs values keep their YAML type: scalars stay text
// for lm-eval to type, lists and mappings and nulls become JSON values.
func TestValuesKeepTheirYAMLType(t *testing.T) {
	s, err := study.Parse("study.yaml", []byte(valuesStudy(`  model_args:
    dtype: bfloat16
    max_length: 4096
    peft: null
    revision: ~
    chat_template_args: {enable_thinking: false, "n": [1, 2.5, "3", null, yes, 1e3, -0, 2024-01-02]}
    note: "null"
  gen_kwargs:
    until: ["Question:", "</s>", "<|im_end|>"]
    do_sample: false
    temperature: 0
    sample: no
    greedy: Yes
    quoted_no: "no"
    quoted_five: "5"
    empty:
    stop: ["a, b", "x=y", "{", "say \"hi\"", " spaced ", "it's"]
    nested: {a: {b: [[]]}, "c d": {}}
`)))
	if err != nil {
		t.Fatal(err)
	}
	text := func(k, v string) harness.KV { return harness.KV{Key: k, Value: v} }
	typed := func(k, v string) harness.KV { return harness.KV{Key: k, Value: v, JSON: true} }
	wantMA := harness.KVs{
		text("dtype", "bfloat16"),
		text("max_length", "4096"),
		typed("peft", "null"),
		typed("revision", "null"),
		typed("chat_template_args", `{"enable_thinking":false,"n":[1,2.5,"3",null,true,1000.0,0,"2024-01-02"]}`),
		text("note", "null"),
	}
	wantGK := harness.KVs{
		typed("until", `["Question:","</s>","<|im_end|>"]`),
		text("do_sample", "false"),
		text("temperature", "0"),
		text("sample", "false"),
		text("greedy", "true"),
		text("quoted_no", "no"),
		text("quoted_five", "5"),
		typed("empty", "null"),
		typed("stop", `["a, b","x=y","{","say \"hi\""," spaced ","it's"]`),
		typed("nested", `{"a":{"b":[[]]},"c d":{}}`),
	}
	if !reflect.DeepEqual(s.Baseline.ModelArgs, wantMA) {
		t.Errorf("model_args\n got %+v\nwant %+v", s.Baseline.ModelArgs, wantMA)
	}
	if !reflect.DeepEqual(s.Baseline.GenKwargs, wantGK) {
		t.Errorf("gen_kwargs\n got %+v\nwant %+v", s.Baseline.GenKwargs, wantGK)
	}

	// The stop strings reach lm-eval as a list of strings, in JSON from
	// v0.4.9; before, no release can take them.
	spec := s.Baseline
	spec.ModelArgs = nil
	spec.GenKwargs = harness.KVs{wantGK[0], wantGK[1]}
	args, err := harness.Argv(spec, harness.MustVersion("0.4.9.1"), "")
	if err != nil || !strings.Contains(strings.Join(args, " "), `--gen_kwargs {"until":["Question:","</s>","<|im_end|>"],"do_sample":false}`) {
		t.Errorf("0.4.9.1: %q, %v", args, err)
	}
	args, err = harness.Argv(spec, harness.MustVersion("0.4.12"), "")
	if err != nil || !strings.Contains(strings.Join(args, " "), `--gen_kwargs {"until":["Question:","</s>","<|im_end|>"]} --gen_kwargs do_sample=false`) {
		t.Errorf("0.4.12: %q, %v", args, err)
	}
	var use *harness.UnsupportedSettingError
	if _, err = harness.Argv(spec, harness.MustVersion("0.4.8"), ""); !errors.As(err, &use) || use.Since != harness.MustVersion("0.4.9") {
		t.Errorf("0.4.8: %v", err)
	}
}

// A study whose values are all text writes the spec it always did.
func TestTextValuesEncodeAsBefore(t *testing.T) {
	s, err := study.Parse("study.yaml", []byte(valuesStudy(`  model_args: {dtype: bfloat16, trust_remote_code: true}
  gen_kwargs: {max_gen_toks: 1024, temperature: 0.0}
`)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s.Baseline)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model_args":[{"key":"dtype","value":"bfloat16"},{"key":"trust_remote_code","value":"true"}],"tasks":["gsm8k"],` +
		`"gen_kwargs":[{"key":"max_gen_toks","value":"1024"},{"key":"temperature","value":"0.0"}]}`
	if string(b) != want {
		t.Errorf("encoded as\n%s\nwant\n%s", b, want)
	}
}

func TestValueErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"  gen_kwargs: {until: [.inf]}", `:10: baseline.gen_kwargs.until[0]: .inf has no JSON form`},
		{"  gen_kwargs: {until: [.nan]}", `.nan has no JSON form`},
		{"  gen_kwargs: {until: [0x1F]}", `write the integer 0x1F in decimal`},
		{"  gen_kwargs: {until: [017]}", `write the integer 017 in decimal`},
		{"  gen_kwargs: {logit_bias: {1: -100}}", `baseline.gen_kwargs.logit_bias: a key of a nested mapping must be a string`},
		{"  gen_kwargs: {a: {b: 1, b: 2}}", `baseline.gen_kwargs.a.b: key "b" given twice`},
		{"  gen_kwargs: {a: &x [1], b: *x}", `baseline.gen_kwargs.b: aliases are not supported`},
		{"  gen_kwargs: {a: [&x 1, *x]}", `baseline.gen_kwargs.a[1]: aliases are not supported`},
		{"  gen_kwargs: {a: {<<: {b: 1}}}", `merge keys (<<) are not supported`},
		{"  gen_kwargs: {a: [!!binary aGk=]}", `the YAML tag !!binary is not supported`},
		{"  model_args: {hub: {token: hf_" + strings.Repeat("q", 34) + "}}", `baseline.model_args.hub: this is a Hugging Face token`},
		{"  model_args: {headers: [{api_key: abc}]}", `this is a credential (by its name, api_key)`},
		{"  model_args: {token: [a]}", `this is a credential (by its name, token)`},
		{"  model_args: {hub: {token: [a]}}", `this is a credential (by its name, token)`},
	} {
		_, err := study.Parse("study.yaml", []byte(valuesStudy(c.yaml+"\n")))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant …%s…", c.yaml, err, c.want)
		}
	}
	// A credential's name with a null or a boolean is a setting, not a secret.
	for _, ok := range []string{"  model_args: {token: null}", "  model_args: {hub: {use_auth_token: true}}"} {
		if _, err := study.Parse("study.yaml", []byte(valuesStudy(ok+"\n"))); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// A step or variant replaces a value of either kind, and a variant's name
// shows a mapping value.
func TestValuesInStepsAndVariants(t *testing.T) {
	s, err := study.Parse("study.yaml", []byte(valuesStudy(`  gen_kwargs: {until: ["Q:"], max_gen_toks: 256}
steps:
  - {name: text stop, set: {gen_kwargs: {until: "Q:"}}}
variants:
  - {gen_kwargs: {until: null}}
  - {model_args: {chat_template_args: {enable_thinking: true}}}
`)))
	if err != nil {
		t.Fatal(err)
	}
	plan := s.Plan()
	if got := plan[1].Spec.GenKwargs; !reflect.DeepEqual(got, harness.KVs{{Key: "until", Value: "Q:"}, {Key: "max_gen_toks", Value: "256"}}) {
		t.Errorf("step: %+v", got)
	}
	if got := plan[2].Spec.GenKwargs[0]; got != (harness.KV{Key: "until", Value: "null", JSON: true}) {
		t.Errorf("variant: %+v", got)
	}
	if got := s.Variants[1].Name; got != "model_args.chat_template_args={enable_thinking:true}" {
		t.Errorf("variant name %q", got)
	}
}
