package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
)

// phi3Run is a real lm-eval 0.4.9.1 run (Phi-3-mini, gsm8k 5-shot, limit
// 10, chat template on, every seed recorded) and the run.json capsule would
// have written for the command line that made it.
const (
	phi3Dir     = "phi3mini-gsm8k-thesis"
	phi3TS      = "2025-08-07T11-42-40.066002"
	phi3Results = "gsm8k-phi-3-mini_" + phi3TS + ".json"
	phi3Samples = "samples_gsm8k_" + phi3TS + ".jsonl"
	phi3Record  = `{
  "schema": "evalcapsule.run/v1", "name": "phi3", "status": "done",
  "spec": {"model": "hf",
    "model_args": [{"key": "pretrained", "value": "microsoft/Phi-3-mini-4k-instruct"}, {"key": "dtype", "value": "float16"}],
    "trust_remote_code": true,
    "tasks": ["gsm8k"], "num_fewshot": 5, "batch_size": "auto", "device": "cuda:0", "limit": 10,
    "apply_chat_template": "true", "seed": [0, 1234, 1234, 1234], "log_samples": true},
  "argv": ["lm_eval", "--model", "hf", "--model_args", "pretrained=microsoft/Phi-3-mini-4k-instruct,dtype=float16", "--trust_remote_code"],
  "harness": {"version": "0.4.9.1"},
  "model": {"id": "microsoft/Phi-3-mini-4k-instruct", "resolved_revision": "0a67737cc96d2554230f90338b163bc6380a2a85"},
  "runner": {"kind": "local"}
}`
)

// phi3RunDir lays the fixture run out as capsule does (run.json beside
// output/<model>/), with edit applied to the results file's text.
func phi3RunDir(t *testing.T, edit func(string) string) string {
	t.Helper()
	src := filepath.Join(fixtures(t), phi3Dir)
	run := filepath.Join(t.TempDir(), "runs", "phi3")
	out := filepath.Join(run, harness.OutputDir, "microsoft__Phi-3-mini-4k-instruct")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{phi3Results, phi3Samples} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == phi3Results && edit != nil {
			b = []byte(edit(string(b)))
		}
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var rec harness.RunRecord
	if err := json.Unmarshal([]byte(phi3Record), &rec); err != nil {
		t.Fatal(err)
	}
	if err := harness.WriteRecord(run, &rec); err != nil {
		t.Fatal(err)
	}
	return run
}

func recordChecks(run *RunReport) []Check {
	var out []Check
	for _, c := range run.Checks {
		if c.Level == LevelRecord {
			out = append(out, c)
		}
	}
	return out
}

// The acceptance criterion of lm-eval's own record: a real run laid out
// with the run.json that matches it re-scores clean; each setting edited
// in its results file (seeds, few-shot count, model_args, lm-eval version,
// model) makes one record check that differs, naming the field, with what
// lm-eval wrote as reported and what run.json says as recomputed. Without
// a run.json the same edit says nothing new.
func TestRescoreRecord(t *testing.T) {
	rep := rescorePaths(t, phi3RunDir(t, nil))
	if exact, differs, nr := rep.Counts(); exact != 2 || differs != 0 || nr != 0 {
		t.Fatalf("honest run: %d exact, %d differ, %d not recomputable: %+v", exact, differs, nr, rep.Runs[0].Checks)
	}
	for _, e := range []struct {
		old, new, task, field, reported, recomputed string
	}{
		{`"random_seed": 0,`, `"random_seed": 7,`, "", "random_seed", "7", "0"},
		{`"numpy_seed": 1234,`, `"numpy_seed": 42,`, "", "numpy_seed", "42", "1234"},
		{`"torch_seed": 1234,`, `"torch_seed": 42,`, "", "torch_seed", "42", "1234"},
		{`"fewshot_seed": 1234`, `"fewshot_seed": 4321`, "", "fewshot_seed", "4321", "1234"},
		{"\"n-shot\": {\n    \"gsm8k\": 5", "\"n-shot\": {\n    \"gsm8k\": 8", "gsm8k", "n-shot", "8", "5"},
		{`"num_fewshot": 5,`, `"num_fewshot": 8,`, "gsm8k", "num_fewshot", "8", "5"},
		{`dtype=float16`, `dtype=bfloat16`, "", "model_args",
			"pretrained=microsoft/Phi-3-mini-4k-instruct,dtype=bfloat16,trust_remote_code=True",
			"pretrained=microsoft/Phi-3-mini-4k-instruct,dtype=float16,trust_remote_code=True"},
		{`"lm_eval_version": "0.4.9.1"`, `"lm_eval_version": "0.4.8"`, "", "lm_eval_version", "0.4.8", "0.4.9.1"},
		{`"model": "hf",`, `"model": "vllm",`, "", "model", "vllm", "hf"},
	} {
		edit := func(s string) string {
			if !strings.Contains(s, e.old) {
				t.Fatalf("the results have no %q", e.old)
			}
			return strings.Replace(s, e.old, e.new, 1)
		}
		rep := rescorePaths(t, phi3RunDir(t, edit))
		if exact, differs, _ := rep.Counts(); exact != 2 || differs != 1 {
			t.Errorf("%s: %d exact, %d differ, want the 2 scores exact and 1 record check", e.field, exact, differs)
		}
		rc := recordChecks(rep.Runs[0])
		if len(rc) != 1 {
			t.Fatalf("%s: record checks %+v", e.field, rc)
		}
		c := rc[0]
		if c.Task != e.task || c.Metric != e.field || c.Filter != "" || c.Status != StatusDiffers ||
			c.Reported.String() != e.reported || c.Recomputed.String() != e.recomputed || !strings.Contains(c.Reason, e.field) {
			t.Errorf("%s: %+v", e.field, c)
		}
		// The JSON of DESIGN.md section 4: level "record", the values as text.
		b, err := MarshalJSON(rep)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"level":"record","status":"differs"`) || !strings.Contains(string(b), `"reported":"`+strings.ReplaceAll(e.reported, `"`, `\"`)+`"`) {
			t.Errorf("%s: JSON %s", e.field, b)
		}
		var back RescoreReport
		if err := back.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
		if got := recordChecks(back.Runs[0]); len(got) != 1 || !got[0].Reported.Equal(c.Reported) || !got[0].Recomputed.Equal(c.Recomputed) || got[0].Level != LevelRecord {
			t.Errorf("%s: read back %+v", e.field, got)
		}
		var text strings.Builder
		rep.WriteText(&text, TextOptions{})
		if !strings.Contains(text.String(), "record "+recordName(c)+" (differs): lm-eval recorded "+recordName(c)+" = "+e.reported) {
			t.Errorf("%s: text\n%s", e.field, text.String())
		}

		// A bare lm-eval folder holding the same edit: nothing to compare.
		run := phi3RunDir(t, edit)
		if err := os.Remove(filepath.Join(run, harness.RecordFile)); err != nil {
			t.Fatal(err)
		}
		if exact, differs, nr := rescorePaths(t, run).Counts(); exact != 2 || differs != 0 || nr != 0 {
			t.Errorf("%s without run.json: %d exact, %d differ, %d not recomputable", e.field, exact, differs, nr)
		}
	}
}

// A run.json that cannot be read is said, not taken for agreement.
func TestRescoreRecordUnreadable(t *testing.T) {
	run := phi3RunDir(t, nil)
	if err := os.WriteFile(filepath.Join(run, harness.RecordFile), []byte(`{"schema": "nope"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := rescorePaths(t, run)
	if w := rep.Runs[0].Warnings; len(w) != 1 || !strings.Contains(w[0], "record cannot be read") {
		t.Errorf("warnings %q", w)
	}
}

// Two runs of the same documents whose prompts differ (Phi-3 with its chat
// template, gpt2 without) say "prompt set changed": the task's hash and the
// chat template's sha, in JSON and in the text; a run against itself says
// nothing.
func TestComparePromptSets(t *testing.T) {
	load := func(ts string) *Scores {
		run, err := harness.Read(filepath.Join(fixtures(t), phi3Dir, "gsm8k-phi-3-mini_"+ts+".json"))
		if err != nil {
			t.Fatal(err)
		}
		sc, err := Load(t.Context(), run, RescoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	phi, gpt2 := load("2025-08-11T20-51-25.059120"), load("2025-08-11T10-35-08.100989")
	opts := CompareOptions{Resamples: 100, Seed: 1}
	same, err := Compare(phi, phi, opts)
	if err != nil {
		t.Fatal(err)
	}
	if same.PromptSets == nil || len(same.PromptSets) != 0 || strings.Contains(same.String(), "prompt set changed") {
		t.Errorf("a run against itself: %+v", same.PromptSets)
	}
	cs, err := Compare(phi, gpt2, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.PromptSetChange{
		{Field: "task_hashes", Task: "gsm8k", A: "dba74f8003cdee477dc78a7e3147a5c2a101a5b0e183713670e4ef3927321f04", B: "a53e34e3e6d5c65d08bc610c3f627ee8cc25a88dcc9ace2c4d34e25a677f516b"},
		{Field: "chat_template_sha", A: "dcaee66df77bfbb789ec541fe713218da30225a526f1db97138fc39ee6dc56aa"},
	}
	if len(cs.PromptSets) != 2 || cs.PromptSets[0] != want[0] || cs.PromptSets[1] != want[1] {
		t.Fatalf("prompt sets %+v", cs.PromptSets)
	}
	b, err := MarshalJSON(cs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"prompt_set_changed":[{"field":"task_hashes","task":"gsm8k","a":"dba74f8003cd`) ||
		!strings.Contains(string(b), `{"field":"chat_template_sha","task":"","a":"dcaee66df77b`) {
		t.Errorf("JSON %s", b)
	}
	if s := cs.String(); !strings.Contains(s, "\nprompt set changed: gsm8k task_hashes dba74f8003cd → a53e34e3e6d5; chat_template_sha dcaee66df77b → -\n") {
		t.Errorf("text:\n%s", s)
	}
	if h := cs.HTML(); !strings.Contains(h, "<p>prompt set changed: gsm8k task_hashes") {
		t.Errorf("HTML:\n%s", h)
	}
}
