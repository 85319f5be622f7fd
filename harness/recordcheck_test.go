package harness

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// phi3Results is a real lm-eval 0.4.9.1 results file: Phi-3-mini, gsm8k
// 5-shot, limit 10, chat template on, model_args as a string, all four
// seeds and the model's resolved sha recorded.
const phi3Results = "phi3mini-gsm8k-thesis/gsm8k-phi-3-mini_2025-08-07T11-42-40.066002.json"

// phi3Record is the run.json of the run that wrote phi3Results: what
// capsule would have recorded for the command line its author ran.
const phi3Record = `{
  "schema": "evalcapsule.run/v1", "name": "phi3", "status": "done",
  "spec": {"model": "hf",
    "model_args": [{"key": "pretrained", "value": "microsoft/Phi-3-mini-4k-instruct"}, {"key": "dtype", "value": "float16"},
      {"key": "trust_remote_code", "value": "True"}],
    "tasks": ["gsm8k"], "num_fewshot": 5, "batch_size": "auto", "device": "cuda:0", "limit": 10,
    "apply_chat_template": "true", "seed": [0, 1234, 1234, 1234], "log_samples": true},
  "argv": ["lm_eval", "--model", "hf", "--model_args", "pretrained=microsoft/Phi-3-mini-4k-instruct,dtype=float16,trust_remote_code=True"],
  "harness": {"version": "0.4.9.1"},
  "model": {"id": "microsoft/Phi-3-mini-4k-instruct", "resolved_revision": "0a67737cc96d2554230f90338b163bc6380a2a85"},
  "runner": {"kind": "local"}
}`

func parseRecord(t *testing.T, s string) *RunRecord {
	t.Helper()
	var rec RunRecord
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		t.Fatal(err)
	}
	return &rec
}

func fields(ms []Mismatch) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name())
	}
	return out
}

// A results file and the run.json of the run that wrote it agree; each
// setting edited in the results file, one at a time, is named.
func TestCheckRecordPhi3(t *testing.T) {
	path := filepath.Join(fixtures(t), phi3Results)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := parseRecord(t, phi3Record)
	r, err := ParseResults(path, b)
	if err != nil {
		t.Fatal(err)
	}
	if ms := CheckRecord(r, rec); len(ms) != 0 {
		t.Fatalf("an honest run: %v", ms)
	}
	for _, e := range []struct{ old, new, field string }{
		{`"random_seed": 0,`, `"random_seed": 7,`, "random_seed"},
		{`"numpy_seed": 1234,`, `"numpy_seed": 42,`, "numpy_seed"},
		{`"torch_seed": 1234,`, `"torch_seed": 42,`, "torch_seed"},
		{`"fewshot_seed": 1234`, `"fewshot_seed": 4321`, "fewshot_seed"},
		{`"fewshot_seed": 1234`, `"fewshot_seed": null`, "fewshot_seed"},
		{"\"n-shot\": {\n    \"gsm8k\": 5", "\"n-shot\": {\n    \"gsm8k\": 8", "n-shot[gsm8k]"},
		{`"num_fewshot": 5,`, `"num_fewshot": 0,`, "num_fewshot[gsm8k]"},
		{`dtype=float16`, `dtype=bfloat16`, "model_args"},
		{`,trust_remote_code=True"`, `"`, "model_args"},
		{`"lm_eval_version": "0.4.9.1"`, `"lm_eval_version": "0.4.8"`, "lm_eval_version"},
		{`"model": "hf",`, `"model": "vllm",`, "model"},
		{`"model_source": "hf"`, `"model_source": "vllm"`, "model_source"},
		{`"model_name": "microsoft/Phi-3-mini-4k-instruct"`, `"model_name": "microsoft/Phi-3-medium-4k-instruct"`, "model_name"},
		{`"model_sha": "0a67737cc96d`, `"model_sha": "1a67737cc96d`, "model_sha"},
		{`"batch_size": "auto"`, `"batch_size": "auto:4"`, "batch_size"},
		{`"limit": 10.0`, `"limit": 100.0`, "limit"},
		{`"limit": 10.0`, `"limit": null`, "limit"},
		{`"gen_kwargs": null`, `"gen_kwargs": {"max_gen_toks": 1024}`, "gen_kwargs"},
		{`"fewshot_as_multiturn": false`, `"fewshot_as_multiturn": true`, "fewshot_as_multiturn"},
		{`"system_instruction": null`, `"system_instruction": "Be brief."`, "system_instruction"},
		{`"system_instruction_sha": null`, `"system_instruction_sha": "00"`, "system_instruction_sha"},
	} {
		if !strings.Contains(string(b), e.old) {
			t.Fatalf("%s has no %q", path, e.old)
		}
		edited, err := ParseResults(path, []byte(strings.Replace(string(b), e.old, e.new, 1)))
		if err != nil {
			t.Fatal(err)
		}
		ms := CheckRecord(edited, rec)
		if got := strings.Join(fields(ms), " "); got != e.field {
			t.Errorf("%s → %s: mismatches %q, want %s: %v", e.old, e.new, got, e.field, ms)
		}
	}

	// The same edits seen from the other side: run.json changed.
	for _, e := range []struct {
		edit  func(*RunRecord)
		field string
	}{
		{func(r *RunRecord) { r.Spec.Seed = []int{1, 2, 3, 4} }, "random_seed numpy_seed torch_seed fewshot_seed"},
		{func(r *RunRecord) { r.Spec.Seed = nil }, ""},
		{func(r *RunRecord) { n := 8; r.Spec.NumFewshot = &n }, "n-shot[gsm8k] num_fewshot[gsm8k]"},
		{func(r *RunRecord) { r.Spec.NumFewshot = nil }, ""},
		{func(r *RunRecord) { r.Spec.Model = "" }, ""},
		{func(r *RunRecord) { r.Spec.Tasks = []string{"gsm8k", "gsm8k_cot"} }, "tasks[gsm8k_cot]"},
		{func(r *RunRecord) { r.Spec.ModelArgs = r.Spec.ModelArgs[:2]; r.Spec.TrustRemoteCode = true }, ""},
		{func(r *RunRecord) { r.Spec.ModelArgs = r.Spec.ModelArgs.Set("dtype", "half") }, "model_args"},
		{func(r *RunRecord) { r.Spec.ModelArgs = r.Spec.ModelArgs.Set("trust_remote_code", "true") }, ""},
		{func(r *RunRecord) { r.Spec.ModelArgs = r.Spec.ModelArgs.Set("revision", "main") }, "model_args"},
		{func(r *RunRecord) { r.Harness.Version = "0.4.10" }, "lm_eval_version fewshot_as_multiturn"},
		{func(r *RunRecord) { r.Model.ResolvedRevision = "0a67737" }, ""},
		{func(r *RunRecord) { r.Spec.ApplyChatTemplate = "" }, "chat_template_sha"},
		{func(r *RunRecord) { r.Spec.SystemInstruction = "Be brief." }, "system_instruction system_instruction_sha"},
		{func(r *RunRecord) { r.Spec.BatchSize = "" }, "batch_size"},
		{func(r *RunRecord) { r.Spec.Device = "cuda:1" }, "device"},
	} {
		rec := parseRecord(t, phi3Record)
		e.edit(rec)
		if got := strings.Join(fields(CheckRecord(r, rec)), " "); got != e.field {
			t.Errorf("%+v: mismatches %q, want %q", rec.Spec, got, e.field)
		}
	}
}

// recordFor writes the run.json that agrees with what lm-eval recorded in
// a results file: the settings its author gave, read back.
func recordFor(r *Results) *RunRecord {
	rec := &RunRecord{Schema: RecordSchema, Name: "run", Status: StatusDone}
	sp := &rec.Spec
	sp.Model, _ = r.Model()
	sp.ModelArgs, _ = r.ModelArgKVs()
	for name := range r.Configs {
		sp.Tasks = append(sp.Tasks, name)
	}
	shots := map[int]bool{}
	for name := range r.Configs {
		if n, ok := r.NShot(name); ok {
			shots[n] = true
		}
	}
	if len(shots) == 1 {
		for n := range shots {
			sp.NumFewshot = &n
		}
	}
	if b, ok := r.BatchSize(); ok && b != "1" {
		sp.BatchSize = b
	}
	sp.Device, _ = r.Device()
	sp.Limit, _ = r.Limit()
	sp.GenKwargs, _ = r.GenKwargs()
	// An API model records no template even when one was applied.
	mt, _ := r.FewshotAsMultiturn()
	if sha, _ := r.ChatTemplateSHA(); sha != "" || mt {
		sp.ApplyChatTemplate = "true"
		sp.FewshotAsMultiturn = &mt
	}
	sp.SystemInstruction, _ = r.SystemInstruction()
	for i := range SeedNames {
		if v, ok := r.Seed(i); ok && v.Kind == Number {
			sp.Seed = append(sp.Seed, int(v.Num))
		}
	}
	if len(sp.Seed) != 4 {
		sp.Seed = nil
	}
	rec.Harness.Version, _ = r.LMEvalVersion()
	rec.Model.ResolvedRevision, _ = r.ModelSHA()
	return rec
}

// Every real results file, of every release and key set, agrees with the
// record of its own settings: no field is taken for a mismatch because a
// release writes it its own way (model_args as a dict with typed values,
// batch_size as an int or a string, limit as a float, fields absent).
func TestCheckRecordFixtures(t *testing.T) {
	n := 0
	err := filepath.WalkDir(fixtures(t), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		r, err := ReadResults(p)
		if err != nil {
			return nil // not a results file
		}
		n++
		rec := recordFor(r)
		if ms := CheckRecord(r, rec); len(ms) != 0 {
			t.Errorf("%s: %v", p, ms)
		}
		// A file without any of these keys cannot disagree about them.
		if _, ok := r.Seed(3); ok {
			rec.Spec.Seed = []int{0, 1234, 1234, 99}
			if got := fields(CheckRecord(r, rec)); len(got) != 1 || got[0] != "fewshot_seed" {
				t.Errorf("%s: another few-shot seed: %v", p, got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("read %d results files", n)
	}
}

// results builds a results file from its config and top-level keys.
func results(t *testing.T, config string, top ...string) *Results {
	t.Helper()
	doc := `{"results": {"gsm8k": {"alias": "gsm8k"}}, "configs": {"gsm8k": {"task": "gsm8k", "num_fewshot": 5}}, "n-shot": {"gsm8k": 5}, "config": ` + config
	for _, kv := range top {
		doc += ", " + kv
	}
	r, err := ParseResults("results.json", []byte(doc+"}"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func spec(s string) RunSpec {
	var sp RunSpec
	if err := json.Unmarshal([]byte(s), &sp); err != nil {
		panic(err)
	}
	return sp
}

// Each release's way of recording a setting is read as that setting.
func TestCheckRecordReleases(t *testing.T) {
	for _, c := range []struct {
		name    string
		config  string
		top     []string
		spec    string
		version string
		want    string
	}{
		{"v0.4.2: no seeds, no version", `{"model": "hf", "model_args": "pretrained=gpt2", "batch_size": 1, "limit": null, "bootstrap_iters": 100000, "gen_kwargs": {}}`,
			nil, `{"model": "hf", "model_args": [{"key": "pretrained", "value": "gpt2"}], "seed": [1, 2, 3, 1234]}`, "0.4.2", ""},
		{"dict model_args, typed, another order", `{"model": "vllm", "model_args": {"tensor_parallel_size": 8, "pretrained": "Qwen/Qwen3-8B", "trust_remote_code": true, "gpu_memory_utilization": 0.9}}`,
			[]string{`"model_name": "Qwen/Qwen3-8B"`},
			`{"model": "vllm", "model_args": [{"key": "pretrained", "value": "Qwen/Qwen3-8B"}, {"key": "tensor_parallel_size", "value": "8"}, {"key": "gpu_memory_utilization", "value": ".90"}], "trust_remote_code": true}`, "0.4.10", ""},
		{"dict model_args, a value changed", `{"model": "vllm", "model_args": {"pretrained": "Qwen/Qwen3-8B", "tensor_parallel_size": 4}}`,
			nil, `{"model": "vllm", "model_args": [{"key": "pretrained", "value": "Qwen/Qwen3-8B"}, {"key": "tensor_parallel_size", "value": "8"}]}`, "0.4.10", "model_args"},
		{"string model_args, a key added", `{"model": "hf", "model_args": "pretrained=gpt2,parallelize=True"}`,
			nil, `{"model_args": [{"key": "pretrained", "value": "gpt2"}]}`, "0.4.8", "model_args"},
		{"model_name after peft", `{"model": "hf", "model_args": "pretrained=base,peft=adapter"}`, []string{`"model_name": "adapter"`},
			`{"model_args": [{"key": "pretrained", "value": "base"}, {"key": "peft", "value": "adapter"}]}`, "0.4.8", ""},
		{"batch_size auto:4", `{"batch_size": "auto:4"}`, nil, `{"batch_size": "auto:4"}`, "0.4.9.1", ""},
		{"batch_size auto:4 against auto", `{"batch_size": "auto:4"}`, nil, `{"batch_size": "auto"}`, "0.4.9.1", "batch_size"},
		{"batch_size 8 as an int", `{"batch_size": 8}`, nil, `{"batch_size": "8"}`, "0.4.9.1", ""},
		{"limit as a float", `{"limit": 10.0}`, nil, `{"limit": 10}`, "0.4.9.1", ""},
		{"limit given, none recorded", `{"limit": null}`, nil, `{"limit": 10}`, "0.4.9.1", "limit"},
		{"gen_kwargs typed", `{"gen_kwargs": {"until": ".", "max_gen_toks": 10, "do_sample": false}}`, nil,
			`{"gen_kwargs": [{"key": "until", "value": "."}, {"key": "max_gen_toks", "value": "10"}, {"key": "do_sample", "value": "false"}]}`, "0.4.3", ""},
		{"gen_kwargs null", `{"gen_kwargs": null}`, nil, `{}`, "0.4.9.1", ""},
		{"gen_kwargs added", `{"gen_kwargs": {"temperature": 0.7}}`, nil, `{}`, "0.4.9.1", "gen_kwargs"},
		{"bootstrap_iters", `{"bootstrap_iters": 1000}`, nil, `{}`, "0.4.9.1", "bootstrap_iters"},
		{"0-shot", `{}`, nil, `{"num_fewshot": 0}`, "0.4.9.1", "n-shot[gsm8k] num_fewshot[gsm8k]"},
		{"v0.4.10 multi-turn by default", `{}`, []string{`"fewshot_as_multiturn": true`, `"chat_template_sha": "ab"`}, `{"apply_chat_template": "true"}`, "0.4.10", ""},
		{"v0.4.10 multi-turn off", `{}`, []string{`"fewshot_as_multiturn": true`, `"chat_template_sha": "ab"`}, `{"apply_chat_template": "true", "fewshot_as_multiturn": false}`, "0.4.10", "fewshot_as_multiturn"},
		{"v0.4.9.1 single-turn by default", `{}`, []string{`"fewshot_as_multiturn": true`, `"chat_template_sha": "ab"`}, `{"apply_chat_template": "true"}`, "0.4.9.1", "fewshot_as_multiturn"},
		{"v0.4.10 no chat template: null", `{}`, []string{`"fewshot_as_multiturn": null`, `"chat_template_sha": null`}, `{}`, "0.4.10", ""},
		{"a chat template nobody asked for", `{}`, []string{`"chat_template": "{{x}}"`, `"chat_template_sha": "ab"`}, `{}`, "0.4.9.1", "chat_template_sha"},
		{"API model with a chat template records none", `{}`, []string{`"chat_template": null`, `"chat_template_sha": null`}, `{"apply_chat_template": "true"}`, "0.4.9.1", ""},
		{"system instruction", `{}`, []string{`"system_instruction": "Be brief."`, `"system_instruction_sha": "` + sha256Hex("Be brief.") + `"`}, `{"system_instruction": "Be brief."}`, "0.4.9.1", ""},
		{"system instruction's sha", `{}`, []string{`"system_instruction": "Be brief."`, `"system_instruction_sha": "` + sha256Hex("Be short.") + `"`}, `{"system_instruction": "Be brief."}`, "0.4.9.1", "system_instruction_sha"},
		{"a group", `{}`, []string{`"group_subtasks": {"mmlu": ["gsm8k"]}`}, `{"tasks": ["mmlu"]}`, "0.4.9.1", ""},
		{"a tag", `{}`, nil, `{"tasks": ["gsm8k*"]}`, "0.4.9.1", ""},
		{"another task", `{}`, nil, `{"tasks": ["gsm8k_cot"]}`, "0.4.9.1", "tasks[gsm8k_cot]"},
		{"a dev build reports its release", `{}`, []string{`"lm_eval_version": "0.4.8"`}, `{}`, "0.4.8", ""},
		{"another release", `{}`, []string{`"lm_eval_version": "0.4.8"`}, `{}`, "0.4.9.1", "lm_eval_version"},
		{"seeds not set: null", `{"random_seed": null, "numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 1234}`, nil, `{}`, "0.4.9.1", "random_seed"},
		{"simulated: its own fixed facts", `{"model": "simulated", "model_args": "pretrained=simulated/model-1b,simulated=True", "batch_size": "1", "limit": null, "random_seed": 0, "numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 1234}`,
			[]string{`"model_source": "simulated"`, `"lm_eval_version": "0.4.9.1"`, `"chat_template_sha": null`},
			`{"model": "hf", "model_args": [{"key": "pretrained", "value": "org/model"}], "batch_size": "8", "limit": 40, "seed": [1, 2, 3, 4], "apply_chat_template": "true", "fewshot_as_multiturn": true}`, "0.4.8", ""},
		{"simulated: a seed edited", `{"model": "simulated", "random_seed": 0, "numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 99}`,
			nil, `{"seed": [0, 1234, 1234, 99]}`, "0.4.9.1", "fewshot_seed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := results(t, c.config, c.top...)
			sp := spec(c.spec)
			if sp.Tasks == nil {
				sp.Tasks = []string{"gsm8k"}
			}
			if sp.NumFewshot == nil && !strings.Contains(c.spec, "num_fewshot") {
				n := 5
				sp.NumFewshot = &n
			}
			rec := &RunRecord{Spec: sp, Harness: HarnessInfo{Version: c.version}}
			ms := CheckRecord(r, rec)
			if got := strings.Join(fields(ms), " "); got != c.want {
				t.Errorf("mismatches %q, want %q: %v", got, c.want, ms)
			}
			for _, m := range ms {
				if m.Recorded == "" || m.Results == "" || !strings.HasPrefix(m.String(), "lm-eval recorded "+m.Name()+" = ") {
					t.Errorf("%#v: %s", m, m)
				}
			}
		})
	}
}

// A results file's run.json is found beside the output directory lm-eval
// wrote into, one or two levels up; a bare output has none.
func TestRecordOf(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "runs", "baseline")
	out := filepath.Join(run, OutputDir, "org__model")
	write(t, filepath.Join(out, "results_"+testTS+".json"), testResults)
	write(t, filepath.Join(out, "samples_t_"+testTS+".jsonl"), testLine0+"\n"+testLine1+"\n")
	find := func() *Output {
		outs, err := Find(run)
		if err != nil || len(outs) != 1 {
			t.Fatalf("Find: %v, %d outputs", err, len(outs))
		}
		return outs[0]
	}
	if rec, err := RecordOf(find()); rec != nil || err != nil {
		t.Fatalf("no run.json: %v, %v", rec, err)
	}
	if err := WriteRecord(run, &RunRecord{Name: "baseline", Status: StatusDone, Spec: RunSpec{Model: "hf"}}); err != nil {
		t.Fatal(err)
	}
	rec, err := RecordOf(find())
	if err != nil || rec == nil || rec.Name != "baseline" {
		t.Fatalf("RecordOf: %v, %v", rec, err)
	}
	r, err := Read(run)
	if err != nil || r.Record == nil || r.Record.Spec.Model != "hf" {
		t.Fatalf("Read: %v, %+v", err, r)
	}
	write(t, filepath.Join(run, RecordFile), `{"schema": "other"}`)
	if _, err := RecordOf(find()); err == nil {
		t.Fatal("an invalid run.json read")
	}
	// A bare lm-eval output elsewhere, in a folder named output.
	bare := filepath.Join(dir, "bare", OutputDir)
	write(t, filepath.Join(bare, "results_"+testTS+".json"), testResults)
	outs, err := Find(bare)
	if err != nil || len(outs) != 1 {
		t.Fatal(err)
	}
	if rec, err := RecordOf(outs[0]); rec != nil || err != nil {
		t.Fatalf("bare output: %v, %v", rec, err)
	}
}

// Two runs whose prompts differ say so by their task hashes and the sha of
// their chat templates; hashes a file does not record are not compared.
func TestPromptSetChanges(t *testing.T) {
	dir := filepath.Join(fixtures(t), "phi3mini-gsm8k-thesis")
	read := func(ts string) *Results {
		r, err := ReadResults(filepath.Join(dir, "gsm8k-phi-3-mini_"+ts+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	phi10, phi1, gpt2 := read("2025-08-07T11-42-40.066002"), read("2025-08-11T20-51-25.059120"), read("2025-08-11T10-35-08.100989")
	if ch := PromptSetChanges(phi1, read("2025-08-11T10-06-10.578233")); len(ch) != 0 {
		t.Errorf("the same prompts: %v", ch)
	}
	ch := PromptSetChanges(phi10, phi1)
	if len(ch) != 1 || ch[0] != (PromptSetChange{Field: "task_hashes", Task: "gsm8k",
		A: "2e39da7528f22303607295bceec5eb86d93c3e2adeb77aeff0ceadafb477050b", B: "dba74f8003cdee477dc78a7e3147a5c2a101a5b0e183713670e4ef3927321f04"}) {
		t.Errorf("10 documents against 1: %+v", ch)
	}
	ch = PromptSetChanges(phi1, gpt2)
	if len(ch) != 2 || ch[0].Field != "task_hashes" || ch[1] != (PromptSetChange{Field: "chat_template_sha", A: "dcaee66df77bfbb789ec541fe713218da30225a526f1db97138fc39ee6dc56aa", B: ""}) {
		t.Errorf("chat template against none: %+v", ch)
	}
	old := results(t, `{}`)
	if ch := PromptSetChanges(old, gpt2); len(ch) != 0 {
		t.Errorf("a file without hashes: %+v", ch)
	}
}
