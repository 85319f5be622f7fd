package harness

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// -update rewrites golden files. The flag is shared with any other test of
// this binary that defines it first.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata")
	}
}

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func argvInt(n int) *int           { return &n }
func argvFloat(f float64) *float64 { return &f }
func argvBool(b bool) *bool        { return &b }
func argvKVs(kvs ...string) (out KVs) {
	for i := 0; i+1 < len(kvs); i += 2 {
		out = append(out, KV{Key: kvs[i], Value: kvs[i+1]})
	}
	return out
}

// argvCases are the specs of the golden files, one section each.
var argvCases = []struct {
	name   string
	spec   RunSpec
	output string
}{
	{
		// The representative study baseline: a chat model, pinned revision,
		// 5-shot multi-turn chat, greedy with a longer generation budget.
		name: "full",
		spec: RunSpec{
			Model: "hf",
			ModelArgs: argvKVs(
				"pretrained", "meta-llama/Llama-3.2-1B-Instruct",
				"revision", "9213176726f574b556790deb65791e0c5aa438b6",
				"dtype", "bfloat16"),
			Tasks:              []string{"gsm8k", "mmlu"},
			NumFewshot:         argvInt(5),
			BatchSize:          "8",
			Limit:              argvFloat(100),
			GenKwargs:          argvKVs("max_gen_toks", "1024", "temperature", "0"),
			ApplyChatTemplate:  "true",
			FewshotAsMultiturn: argvBool(true),
			Seed:               []int{0, 1234, 1234, 1234},
			LogSamples:         true,
		},
		output: "runs/baseline/output",
	},
	{
		name:   "minimal",
		spec:   RunSpec{Tasks: []string{"gsm8k"}},
		output: "runs/minimal/output",
	},
	{
		// Chat template on, multi-turn explicitly off: expressible
		// everywhere a chat template is, by absence before v0.4.10 and by
		// "false" after.
		name: "chat-single-turn",
		spec: RunSpec{
			Model:              "vllm",
			ModelArgs:          argvKVs("pretrained", "Qwen/Qwen2.5-7B-Instruct", "tensor_parallel_size", "2"),
			Tasks:              []string{"gsm8k_cot_llama"},
			NumFewshot:         argvInt(8),
			BatchSize:          "auto",
			ApplyChatTemplate:  "true",
			FewshotAsMultiturn: argvBool(false),
			SystemInstruction:  "You are a careful math tutor. End with: The final answer is N.",
		},
		output: "runs/single-turn/output",
	},
	{
		// Chat template on, multi-turn unset: pinned to the release's
		// default from v0.4.10, a named template from v0.4.4.
		name: "chat-named-template-default-turns",
		spec: RunSpec{
			Model:             "hf",
			ModelArgs:         argvKVs("pretrained", "HuggingFaceH4/zephyr-7b-beta"),
			Tasks:             []string{"gsm8k"},
			ApplyChatTemplate: "chatml",
		},
		output: "runs/chatml/output",
	},
	{
		// Values with "," and "{" need the JSON form (v0.4.9+).
		name: "commas",
		spec: RunSpec{
			Model:     "hf",
			ModelArgs: argvKVs("pretrained", "EleutherAI/pythia-160m", "device_map", "auto"),
			Tasks:     []string{"gsm8k"},
			GenKwargs: argvKVs(
				"max_gen_toks", "512",
				"until", `["\n\n","Question:"]`,
				"do_sample", "false",
				"temperature", "0.0"),
		},
		output: "runs/commas/output",
	},
	{
		// What a study's YAML gives: the task's stop strings as a list, a
		// nested mapping and a null, next to text values that lm-eval
		// types itself. JSON from v0.4.9; refused before.
		name: "typed",
		spec: RunSpec{
			Model: "hf",
			ModelArgs: KVs{
				{Key: "pretrained", Value: "Qwen/Qwen3-0.6B"},
				{Key: "dtype", Value: "bfloat16"},
				{Key: "chat_template_args", Value: `{"enable_thinking":false}`, JSON: true},
				{Key: "peft", Value: "null", JSON: true},
			},
			Tasks: []string{"gsm8k"},
			GenKwargs: KVs{
				{Key: "until", Value: `["Question:","</s>","<|im_end|>"]`, JSON: true},
				{Key: "do_sample", Value: "false"},
				{Key: "temperature", Value: "0"},
				{Key: "max_gen_toks", Value: "1024"},
			},
		},
		output: "runs/typed/output",
	},
	{
		// Strings with commas, quotes, "=", braces and spaces, inside JSON
		// values and as text; numbers, booleans and nulls inside lists and
		// nested dicts.
		name: "typed-strings",
		spec: RunSpec{
			Model: "local-completions",
			ModelArgs: KVs{
				{Key: "model", Value: "my model (v2)"},
				{Key: "base_url", Value: "http://127.0.0.1:8000/v1/completions?a=b"},
				{Key: "headers", Value: `{"X-Note":"a, b = {c}","X-Quote":"say \"hi\", it's"}`, JSON: true},
			},
			Tasks: []string{"gsm8k"},
			GenKwargs: KVs{
				{Key: "until", Value: `["\n\nQ:","a, b","x=y","{","}","\"",", ","'"]`, JSON: true},
				{Key: "stop_sequences", Value: `[["a",1],[2.5,true,null],{"k":{"deep":[]}}]`, JSON: true},
				{Key: "logit_bias", Value: `{"50256":-100,"198":-1.5e-07}`, JSON: true},
				{Key: "seed", Value: "12345678901234567890123", JSON: true},
				{Key: "note", Value: `it's "quoted" {x}`},
			},
		},
		output: "runs/typed-strings/output",
	},
	{
		// Code execution, own seeds, the bootstrap count every command line
		// uses, a cache and a fractional limit.
		name: "unsafe-code",
		spec: RunSpec{
			Model:                "hf",
			ModelArgs:            argvKVs("pretrained", "bigcode/starcoder2-3b", "trust_remote_code", "true"),
			Tasks:                []string{"humaneval"},
			BatchSize:            "auto:4",
			Device:               "cuda:0",
			Limit:                argvFloat(0.25),
			Seed:                 []int{-1, 42, 42, 7},
			UseCache:             "cache/starcoder2",
			TrustRemoteCode:      true,
			ConfirmRunUnsafeCode: true,
			BootstrapIters:       argvInt(100000),
		},
		output: "runs/humaneval/output",
	},
}

// TestArgvGolden writes the argv of each case for every release into
// testdata/argv/v<release>.txtar (one argument a line; "error: " lines
// where the release cannot take the spec) and checks each argv against the
// flag table.
func TestArgvGolden(t *testing.T) {
	for _, v := range Releases {
		t.Run(v.String(), func(t *testing.T) {
			var buf bytes.Buffer
			fmt.Fprintf(&buf, "lm-eval %s: Argv of the cases in argv_test.go, one argument a line.\n", v)
			fmt.Fprintf(&buf, "Regenerate with: go test ./harness -run TestArgvGolden -update\n")
			for _, c := range argvCases {
				fmt.Fprintf(&buf, "-- %s --\n", c.name)
				args, err := Argv(c.spec, v, c.output)
				if err != nil {
					if !errors.Is(err, ErrUnsupportedSetting) && !errors.Is(err, ErrInvalidSetting) {
						t.Errorf("%s: error matches no sentinel: %v", c.name, err)
					}
					for line := range strings.SplitSeq(err.Error(), "\n") {
						fmt.Fprintf(&buf, "error: %s\n", line)
					}
					continue
				}
				checkArgvShape(t, c.name, v, args)
				if diff, err := argvRoundTrip(v, c.spec, args); err != nil {
					t.Errorf("%s: the Go model of lm-eval %s cannot read the argv back: %v", c.name, v, err)
				} else if diff != "" {
					t.Errorf("%s: %s\nargv %q", c.name, diff, args)
				}
				again, _ := Argv(c.spec, v, c.output)
				if !slices.Equal(args, again) {
					t.Errorf("%s: two calls differ:\n%q\n%q", c.name, args, again)
				}
				for _, a := range args {
					fmt.Fprintln(&buf, goldenArg(a))
				}
			}
			path := filepath.Join("testdata", "argv", "v"+v.String()+".txtar")
			if updateGolden() {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("%s differs (run with -update if the change is intended):\n--- got\n%s--- want\n%s", path, got, want)
			}
		})
	}
}

// goldenArg writes an argument on one line, quoted only where a plain line
// would be ambiguous.
func goldenArg(a string) string {
	if a == "" || strings.TrimSpace(a) != a || strings.HasPrefix(a, "-- ") || strings.HasPrefix(a, `"`) ||
		strings.HasPrefix(a, "error: ") || strings.ContainsFunc(a, func(r rune) bool { return !strconv.IsPrint(r) }) {
		return strconv.Quote(a)
	}
	return a
}

// checkArgvShape checks what argparse needs of an argv: every option is one
// the release defines, and no value could be taken for an option.
func checkArgvShape(t *testing.T, name string, v Version, args []string) {
	t.Helper()
	rest := args
	if v.AtLeast(sinceRunSubcommand) {
		if len(args) == 0 || args[0] != "run" {
			t.Errorf("%s: lm-eval %s argv does not start with run: %q", name, v, args)
			return
		}
		rest = args[1:]
	}
	for _, a := range rest {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		flagName, _, _ := strings.Cut(a, "=")
		if !strings.HasPrefix(flagName, "--") {
			t.Errorf("%s: argument %q would be read as an option", name, a)
			continue
		}
		if ok, _ := lmEvalFlagAt(v, flagName); !ok {
			t.Errorf("%s: lm-eval %s has no %s", name, v, flagName)
		}
	}
}

func TestArgvFlagTable(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range lmEvalFlags {
		if seen[f.name] {
			t.Errorf("%s listed twice", f.name)
		}
		seen[f.name] = true
		if f.since.Less(argvOldest) || (f.until != Version{} && !f.since.Less(f.until)) {
			t.Errorf("%s: bad range %s..%s", f.name, f.since, f.until)
		}
	}
	// Spot checks of the table against the tags it was read from.
	for _, c := range []struct {
		v    string
		flag string
		want bool
	}{
		{"0.4.0", "--decontamination_ngrams_path", true},
		{"0.4.2", "--decontamination_ngrams_path", false},
		{"0.4.1", "--seed", false},
		{"0.4.2", "--seed", true},
		{"0.4.2", "--apply_chat_template", false},
		{"0.4.3", "--apply_chat_template", true},
		{"0.4.7", "--confirm_run_unsafe_code", false},
		{"0.4.8", "--confirm_run_unsafe_code", true},
		{"0.4.9.2", "--config", false},
		{"0.4.10", "--config", true},
		{"0.4.11", "--trackio_args", false},
		{"0.4.13.dev0", "--trackio_args", true},
		{"0.4.13", "--bootstrap_iters", false},
	} {
		if got, _ := lmEvalFlagAt(MustVersion(c.v), c.flag); got != c.want {
			t.Errorf("lm-eval %s defines %s: got %v, want %v", c.v, c.flag, got, c.want)
		}
	}
}

func TestArgvErrors(t *testing.T) {
	base := func(edit func(*RunSpec)) RunSpec {
		s := RunSpec{Model: "hf", ModelArgs: argvKVs("pretrained", "gpt2"), Tasks: []string{"gsm8k"}}
		if edit != nil {
			edit(&s)
		}
		return s
	}
	for _, c := range []struct {
		name    string
		version string
		spec    RunSpec
		output  string
		setting string // of the *UnsupportedSettingError; "" for an invalid setting
		since   string
		text    string // in the message
	}{
		{
			name: "chat template before it existed", version: "0.4.2",
			spec:    base(func(s *RunSpec) { s.ApplyChatTemplate = "true" }),
			setting: "apply_chat_template", since: "0.4.3",
		},
		{
			name: "template name on 0.4.3", version: "0.4.3",
			spec:    base(func(s *RunSpec) { s.ApplyChatTemplate = "chatml" }),
			setting: `apply_chat_template="chatml" (a template name)`, since: "0.4.4",
		},
		{
			name: "system instruction before it existed", version: "0.4.2",
			spec:    base(func(s *RunSpec) { s.SystemInstruction = "Be brief." }),
			setting: "system_instruction", since: "0.4.3",
		},
		{
			name: "multiturn without shots on 0.4.3", version: "0.4.3",
			spec: base(func(s *RunSpec) {
				s.ApplyChatTemplate = "true"
				s.FewshotAsMultiturn = argvBool(true)
			}),
			setting: "fewshot_as_multiturn without num_fewshot > 0", since: "0.4.4",
		},
		{
			name: "multiturn without chat template", version: "0.4.10",
			spec: base(func(s *RunSpec) { s.FewshotAsMultiturn = argvBool(true) }),
			text: "fewshot_as_multiturn: true needs apply_chat_template",
		},
		{
			name: "confirm_run_unsafe_code before it existed", version: "0.4.7",
			spec:    base(func(s *RunSpec) { s.ConfirmRunUnsafeCode = true }),
			setting: "confirm_run_unsafe_code", since: "0.4.8",
		},
		{
			name: "trust_remote_code before it existed", version: "0.4.1",
			spec:    base(func(s *RunSpec) { s.TrustRemoteCode = true }),
			setting: "trust_remote_code", since: "0.4.2",
		},
		{
			name: "gen_kwargs on 0.4.2", version: "0.4.2",
			spec:    base(func(s *RunSpec) { s.GenKwargs = argvKVs("max_gen_toks", "512") }),
			setting: "gen_kwargs", since: "0.4.3", text: "type=dict",
		},
		{
			name: "own seeds before --seed", version: "0.4.1",
			spec:    base(func(s *RunSpec) { s.Seed = []int{1, 2, 3, 1234} }),
			setting: "seed=1,2,3,1234", since: "0.4.2",
		},
		{
			name: "own few-shot seed before 0.4.3", version: "0.4.0",
			spec:    base(func(s *RunSpec) { s.Seed = []int{1, 2, 3, 4} }),
			setting: "seed=1,2,3,4", since: "0.4.3",
		},
		{
			name: "few-shot seed on 0.4.2", version: "0.4.2",
			spec:    base(func(s *RunSpec) { s.Seed = []int{0, 1234, 1234, 99} }),
			setting: "seed=0,1234,1234,99 (few-shot seed 99)", since: "0.4.3",
		},
		{
			name: "bootstrap_iters", version: "0.4.12",
			spec:    base(func(s *RunSpec) { s.BootstrapIters = argvInt(1000) }),
			setting: "bootstrap_iters=1000", since: "", text: "no release supports it",
		},
		{
			name: "comma in a value before JSON", version: "0.4.8",
			spec:    base(func(s *RunSpec) { s.ModelArgs = argvKVs("pretrained", "gpt2", "peft", "a,b") }),
			setting: `model_args["peft"] (a value containing ",")`, since: "0.4.9",
		},
		{
			name: "= in a value before 0.4.8", version: "0.4.7",
			spec:    base(func(s *RunSpec) { s.ModelArgs = argvKVs("pretrained", "gpt2", "peft", "x=y") }),
			setting: `model_args["peft"] (a value containing "=")`, since: "0.4.8",
		},
		{
			name: "JSON model_args with trust_remote_code on 0.4.9", version: "0.4.9",
			spec: base(func(s *RunSpec) {
				s.ModelArgs = argvKVs("pretrained", "gpt2", "peft", "a,b")
				s.TrustRemoteCode = true
			}),
			setting: "trust_remote_code with model_args in JSON form", since: "0.4.9.1",
		},
		{
			name: "literal Argv cannot read", version: "0.4.10",
			spec: base(func(s *RunSpec) { s.GenKwargs = argvKVs("until", `('a','b')`) }),
			text: `gen_kwargs["until"]: lm-eval 0.4.10 can take this value only in JSON form`,
		},
		{
			name: "infinity in JSON form", version: "0.4.9.1",
			spec: base(func(s *RunSpec) { s.GenKwargs = argvKVs("until", "a,b", "top_k", "inf") }),
			text: `gen_kwargs["top_k"]`,
		},
		{
			name: "a list before JSON", version: "0.4.8",
			spec: base(func(s *RunSpec) {
				s.GenKwargs = KVs{{Key: "until", Value: `["Question:","</s>"]`, JSON: true}}
			}),
			setting: `gen_kwargs["until"] (a list)`, since: "0.4.9", text: "only as key=value text",
		},
		{
			name: "None before JSON", version: "0.4.0",
			spec:    base(func(s *RunSpec) { s.ModelArgs = s.ModelArgs.SetJSON("peft", "null") }),
			setting: `model_args["peft"] (None)`, since: "0.4.9",
		},
		{
			name: "JSON gen_kwargs on 0.4.2", version: "0.4.2",
			spec: base(func(s *RunSpec) {
				s.GenKwargs = KVs{{Key: "max_gen_toks", Value: "5"}, {Key: "until", Value: `["Q:"]`, JSON: true}}
			}),
			setting: "gen_kwargs", since: "0.4.9", text: "type=dict",
		},
		{
			name: "a JSON value in model_args with trust_remote_code on 0.4.9", version: "0.4.9",
			spec: base(func(s *RunSpec) {
				s.ModelArgs = s.ModelArgs.SetJSON("chat_template_args", `{"enable_thinking":false}`)
				s.TrustRemoteCode = true
			}),
			setting: "trust_remote_code with model_args in JSON form", since: "0.4.9.1",
		},
		{
			name: "not JSON", version: "0.4.10",
			spec: base(func(s *RunSpec) { s.GenKwargs = KVs{{Key: "until", Value: `["a",`, JSON: true}} }),
			text: `gen_kwargs["until"]: "[\"a\"," is not a JSON value Argv can pass on`,
		},
		{
			name: "JSON key given twice", version: "0.4.9.1",
			spec: base(func(s *RunSpec) { s.GenKwargs = KVs{{Key: "logit_bias", Value: `{"1":1,"1":2}`, JSON: true}} }),
			text: `key "1" given twice`,
		},
		{
			name: "JSON float beyond float64", version: "0.4.12",
			spec: base(func(s *RunSpec) { s.GenKwargs = KVs{{Key: "temperature", Value: `1e400`, JSON: true}} }),
			text: "beyond a float's range",
		},
		{
			name: "text Argv cannot type beside a JSON value on 0.4.9.x", version: "0.4.9.2",
			spec: base(func(s *RunSpec) {
				s.GenKwargs = KVs{{Key: "until", Value: `["Q:"]`, JSON: true}, {Key: "top_k", Value: "inf"}}
			}),
			text: `gen_kwargs["top_k"]: lm-eval 0.4.9.2 can take this value only in JSON form`,
		},
		{name: "no tasks", version: "0.4.9", spec: RunSpec{Model: "hf"}, text: "tasks: at least one task"},
		{name: "comma in task", version: "0.4.9", spec: base(func(s *RunSpec) { s.Tasks = []string{"a,b"} }), text: "contains a comma"},
		{name: "duplicate key", version: "0.4.9", spec: base(func(s *RunSpec) { s.ModelArgs = argvKVs("a", "1", "a", "2") }), text: "given twice"},
		{name: "= in key", version: "0.4.9", spec: base(func(s *RunSpec) { s.ModelArgs = argvKVs("a=b", "1") }), text: "a key cannot contain"},
		{name: "whitespace", version: "0.4.9", spec: base(func(s *RunSpec) { s.GenKwargs = argvKVs("until", " x") }), text: "surrounding whitespace"},
		{name: "NUL", version: "0.4.9", spec: base(func(s *RunSpec) { s.SystemInstruction = "a\x00b" }), text: "NUL"},
		{name: "log_samples without output", version: "0.4.9", spec: base(func(s *RunSpec) { s.LogSamples = true }), text: "needs an output path"},
		{name: "batch size", version: "0.4.9", spec: base(func(s *RunSpec) { s.BatchSize = "auto:0" }), text: "batch_size"},
		{name: "negative shots", version: "0.4.9", spec: base(func(s *RunSpec) { s.NumFewshot = argvInt(-1) }), text: "num_fewshot"},
		{name: "zero limit", version: "0.4.9", spec: base(func(s *RunSpec) { s.Limit = argvFloat(0) }), text: "limit"},
		{name: "fractional count", version: "0.4.9", spec: base(func(s *RunSpec) { s.Limit = argvFloat(1.5) }), text: "whole count"},
		{name: "three seeds", version: "0.4.9", spec: base(func(s *RunSpec) { s.Seed = []int{1, 2, 3} }), text: "want 4 values"},
		{name: "negative numpy seed", version: "0.4.9", spec: base(func(s *RunSpec) { s.Seed = []int{0, -1, 0, 0} }), text: "numpy seed"},
		{name: "too old", version: "0.3.0", spec: base(nil), text: "not 0.3.0"},
		{name: "too new", version: "0.5.0", spec: base(nil), text: "not 0.5.0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := MustVersion(c.version)
			args, err := Argv(c.spec, v, c.output)
			if err == nil {
				t.Fatalf("no error; argv %q", args)
			}
			if args != nil {
				t.Errorf("argv %q returned with the error", args)
			}
			if c.text != "" && !strings.Contains(err.Error(), c.text) {
				t.Errorf("error %q does not contain %q", err, c.text)
			}
			if c.setting == "" {
				if !errors.Is(err, ErrInvalidSetting) || errors.Is(err, ErrUnsupportedSetting) {
					t.Errorf("want only ErrInvalidSetting, got %v", err)
				}
				return
			}
			var use *UnsupportedSettingError
			if !errors.As(err, &use) || !errors.Is(err, ErrUnsupportedSetting) {
				t.Fatalf("want *UnsupportedSettingError, got %T %v", err, err)
			}
			var since Version
			if c.since != "" {
				since = MustVersion(c.since)
			}
			if use.Setting != c.setting || use.Version != v || use.Since != since {
				t.Errorf("got {%q %s %s}, want {%q %s %s}", use.Setting, use.Version, use.Since, c.setting, v, since)
			}
			if !strings.HasPrefix(err.Error(), c.setting+": not supported by lm-eval "+c.version) {
				t.Errorf("message %q does not start with the setting and version", err)
			}
		})
	}
}

// TestArgvAllErrorsAtOnce: a study learns every change it needs from one
// call.
func TestArgvAllErrorsAtOnce(t *testing.T) {
	spec := argvCases[0].spec
	spec.ConfirmRunUnsafeCode = true
	_, err := Argv(spec, MustVersion("0.4.0"), "out")
	for _, want := range []string{"apply_chat_template", "fewshot_as_multiturn", "confirm_run_unsafe_code"} {
		if !strings.Contains(err.Error(), want+": not supported by lm-eval 0.4.0") {
			t.Errorf("error does not name %s:\n%v", want, err)
		}
	}
}

func TestArgvAccepted(t *testing.T) {
	spec := func(edit func(*RunSpec)) RunSpec {
		s := RunSpec{Tasks: []string{"gsm8k"}}
		edit(&s)
		return s
	}
	for _, c := range []struct {
		name    string
		version string
		spec    RunSpec
		want    []string
	}{
		{
			// The only expressible choice against the v0.4.10 default.
			name: "multiturn false with chat template", version: "0.4.10",
			spec: spec(func(s *RunSpec) {
				s.ApplyChatTemplate = "true"
				s.FewshotAsMultiturn = argvBool(false)
			}),
			want: []string{"run", "--tasks", "gsm8k", "--apply_chat_template", "--fewshot_as_multiturn", "false"},
		},
		{
			name: "multiturn false without chat template is the only behaviour", version: "0.4.1",
			spec: spec(func(s *RunSpec) { s.FewshotAsMultiturn = argvBool(false) }),
			want: []string{"--tasks", "gsm8k"},
		},
		{
			name: "apply_chat_template false is off", version: "0.4.12",
			spec: spec(func(s *RunSpec) { s.ApplyChatTemplate = "false" }),
			want: []string{"run", "--tasks", "gsm8k"},
		},
		{
			name: "hard-coded seeds on 0.4.0", version: "0.4.0",
			spec: spec(func(s *RunSpec) { s.Seed = []int{0, 1234, 1234, 1234} }),
			want: []string{"--tasks", "gsm8k"},
		},
		{
			name: "three seeds on 0.4.2", version: "0.4.2",
			spec: spec(func(s *RunSpec) { s.Seed = []int{7, 8, 9, 1234} }),
			want: []string{"--tasks", "gsm8k", "--seed", "7,8,9"},
		},
		{
			name: "value starting with a dash", version: "0.4.9.2",
			spec: spec(func(s *RunSpec) { s.SystemInstruction = "-be brief" }),
			want: []string{"--tasks", "gsm8k", "--system_instruction=-be brief"},
		},
		{
			name: "= in a value from 0.4.8", version: "0.4.8",
			spec: spec(func(s *RunSpec) { s.ModelArgs = argvKVs("pretrained", "gpt2", "peft", "x=y") }),
			want: []string{"--model_args", "pretrained=gpt2,peft=x=y", "--tasks", "gsm8k"},
		},
		{
			name: "brace forces JSON on 0.4.9.x, typed as key=value would be", version: "0.4.9.2",
			spec: spec(func(s *RunSpec) {
				s.ModelArgs = argvKVs("pretrained", "gpt2", "max_length", "007", "x", "{y}", "load_in_8bit", "True", "scale", "1_0.5")
			}),
			want: []string{"--model_args", `{"pretrained":"gpt2","max_length":7,"x":"{y}","load_in_8bit":true,"scale":10.5}`, "--tasks", "gsm8k"},
		},
		{
			name: "JSON values on 0.4.10 follow ast.literal_eval", version: "0.4.10",
			spec: spec(func(s *RunSpec) {
				s.GenKwargs = argvKVs("a", "1", "b", `{"k": [1, 2.5]}`, "c", "[true, 1]", "d", "x,y", "e", "/p/a,b", "f", "None,", "g", "2")
			}),
			want: nil, // f cannot be read: error
		},
		{
			name: "JSON values on 0.4.10 follow ast.literal_eval", version: "0.4.10",
			spec: spec(func(s *RunSpec) {
				s.GenKwargs = argvKVs("a", "1", "b", `{"k": [1, 2.5]}`, "c", "[true, 1]", "d", "x,y", "e", "/p/a,b", "g", "2")
			}),
			want: []string{"run", "--tasks", "gsm8k",
				"--gen_kwargs", "a=1",
				"--gen_kwargs", `{"b":{"k": [1, 2.5]}}`,
				"--gen_kwargs", `{"c":"[true, 1]"}`,
				"--gen_kwargs", `{"d":"x,y"}`,
				"--gen_kwargs", `{"e":"/p/a,b"}`,
				"--gen_kwargs", "g=2"},
		},
		{
			name: "JSON values on 0.4.9.x join the text values in one object", version: "0.4.9.1",
			spec: spec(func(s *RunSpec) {
				s.GenKwargs = KVs{
					{Key: "until", Value: `["Question:", "</s>"]`, JSON: true},
					{Key: "do_sample", Value: "false"},
					{Key: "stop", Value: "null", JSON: true},
				}
			}),
			want: []string{"--tasks", "gsm8k", "--gen_kwargs", `{"until":["Question:","</s>"],"do_sample":false,"stop":null}`},
		},
		{
			name: "JSON values on 0.4.10 go one to an occurrence", version: "0.4.10",
			spec: spec(func(s *RunSpec) {
				s.ModelArgs = KVs{
					{Key: "pretrained", Value: "gpt2"},
					{Key: "chat_template_args", Value: `{"enable_thinking": false}`, JSON: true},
				}
				s.GenKwargs = KVs{{Key: "until", Value: `["Question:","</s>"]`, JSON: true}}
			}),
			want: []string{"run", "--model_args", "pretrained=gpt2", "--model_args", `{"chat_template_args":{"enable_thinking":false}}`,
				"--tasks", "gsm8k", "--gen_kwargs", `{"until":["Question:","</s>"]}`},
		},
		{
			name: "bootstrap_iters at the command line's value", version: "0.4.9.1",
			spec: spec(func(s *RunSpec) { s.BootstrapIters = argvInt(100000) }),
			want: []string{"--tasks", "gsm8k"},
		},
		{
			name: "dev build behaves like the release it follows", version: "0.4.13.dev0",
			spec: spec(func(s *RunSpec) { s.ApplyChatTemplate = "chatml" }),
			want: []string{"run", "--tasks", "gsm8k", "--apply_chat_template", "chatml", "--fewshot_as_multiturn", "true"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Argv(c.spec, MustVersion(c.version), "")
			if c.want == nil {
				if !errors.Is(err, ErrInvalidSetting) {
					t.Fatalf("want ErrInvalidSetting, got %q, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestArgvPyValue(t *testing.T) {
	for _, c := range []struct {
		in        string
		want      string // "" when refused
		wantPlain string // for !literal, when it differs
	}{
		{in: "TRUE", want: "true"},
		{in: "False", want: "false"},
		{in: "0", want: "0"},
		{in: "0012", want: "12"},
		{in: "-1", want: "-1.0"}, // not isnumeric: float
		{in: "1e3", want: "1000.0"},
		{in: ".5", want: "0.5"},
		{in: "1.", want: "1.0"},
		{in: "1e-7", want: "1e-07"},
		{in: "1e999", want: ""},
		{in: "nan", want: ""},
		{in: "-Infinity", want: ""},
		{in: "١٢", want: ""},
		{in: "", want: `""`},
		{in: "bfloat16", want: `"bfloat16"`},
		{in: "a,b", want: `"a,b"`},
		{in: "None", want: "null", wantPlain: `"None"`},
		{in: "None,1", want: "", wantPlain: `"None,1"`},
		{in: "True,1", want: "", wantPlain: `"True,1"`},
		{in: "set()", want: "", wantPlain: `"set()"`},
		{in: `b"x"`, want: "", wantPlain: `"b\"x\""`},
		{in: `["a","b"]`, want: `["a","b"]`, wantPlain: `"[\"a\",\"b\"]"`},
		{in: `{"a":null}`, want: `"{\"a\":null}"`},
		{in: `["a\/b"]`, want: "", wantPlain: `"[\"a\\/b\"]"`},
		{in: `['a']`, want: "", wantPlain: `"['a']"`},
		{in: "1,2", want: "", wantPlain: `"1,2"`},
		{in: "<s>&</s>", want: "", wantPlain: `"<s>&</s>"`},
	} {
		plain := c.want
		if c.wantPlain != "" {
			plain = c.wantPlain
		}
		for _, literal := range []bool{true, false} {
			want := c.want
			if !literal {
				want = plain
			}
			got, ok := argvPyValue(c.in, literal)
			if !ok {
				got = ""
			}
			if got != want {
				t.Errorf("argvPyValue(%q, literal=%v) = %q, want %q", c.in, literal, got, want)
			}
		}
	}
}

// Argv pins what a release would otherwise decide by its own default: from
// v0.4.10 a chat template means multi-turn few-shot unless told otherwise.
func ExampleArgv() {
	spec := RunSpec{
		Model:             "hf",
		ModelArgs:         KVs{{Key: "pretrained", Value: "meta-llama/Llama-3.2-1B-Instruct"}, {Key: "dtype", Value: "bfloat16"}},
		Tasks:             []string{"gsm8k_cot_llama"},
		NumFewshot:        argvInt(8),
		ApplyChatTemplate: "true",
	}
	for _, v := range []string{"0.4.9.1", "0.4.10"} {
		args, err := Argv(spec, MustVersion(v), "runs/chat/output")
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(v+":", strings.Join(args, " "))
	}
	_, err := Argv(spec, MustVersion("0.4.2"), "runs/chat/output")
	fmt.Println(err)
	// Output:
	// 0.4.9.1: --model hf --model_args pretrained=meta-llama/Llama-3.2-1B-Instruct,dtype=bfloat16 --tasks gsm8k_cot_llama --num_fewshot 8 --apply_chat_template --output_path runs/chat/output
	// 0.4.10: run --model hf --model_args pretrained=meta-llama/Llama-3.2-1B-Instruct,dtype=bfloat16 --tasks gsm8k_cot_llama --num_fewshot 8 --apply_chat_template --fewshot_as_multiturn true --output_path runs/chat/output
	// apply_chat_template: not supported by lm-eval 0.4.2; supported from 0.4.3 on
}
