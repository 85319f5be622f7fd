package harness

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Results is one results JSON file as lm-eval wrote it, any version from
// v0.4.0 on. Doc keeps the whole file; the other fields are the parts the
// re-scorer needs, validated.
type Results struct {
	Path      string
	Timestamp string // the date_id in the file name ("2025-08-07T11-42-40.066002"), "" if none
	Doc       Value  // the whole file, key order kept

	Tasks    []TaskResult // the entries of "results", in file order
	Groups   []string     // the names under "groups" (groups that aggregate)
	Subtasks []Subtasks   // "group_subtasks", in file order
	// SubtasksDerived is set when the file has no "group_subtasks" (v0.4.0
	// and v0.4.1) and Subtasks was rebuilt from the indentation lm-eval puts
	// in each entry's alias (" - stem", "  - abstract_algebra").
	SubtasksDerived bool
	Configs         map[string]Value
	NSamples        map[string]NSamples
}

// TaskResult is one entry of "results": a task or a group.
type TaskResult struct {
	Name  string
	Alias string
	// Placeholder is set for the {" ": " "} entry lm-eval v0.4.4+ writes for a
	// group that has no aggregate_metric_list.
	Placeholder bool
	Metrics     []MetricResult
}

// MetricResult is one "<metric>,<filter>" value with its stderr.
type MetricResult struct {
	Metric string
	Filter string
	Value  Value // a Number normally; whatever lm-eval wrote otherwise
	// Stderr is the "<metric>_stderr,<filter>" value: a Number, the String
	// "N/A", or Null when the key is absent (v0.4.0 with bootstrap_iters 0).
	Stderr Value
}

// Key returns "metric,filter", the key lm-eval uses.
func (m MetricResult) Key() string { return m.Metric + "," + m.Filter }

// Subtasks is one entry of "group_subtasks".
type Subtasks struct {
	Group   string
	Members []string
}

// NSamples is one entry of "n-samples".
type NSamples struct {
	Original  int
	Effective int
}

var timestampRE = regexp.MustCompile(`(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl?$`)

// fileTimestamp returns the date_id at the end of an lm-eval file name.
func fileTimestamp(name string) string {
	m := timestampRE.FindStringSubmatch(name)
	if m == nil {
		return ""
	}
	return m[1]
}

// ReadResults reads and validates a results JSON file. It must be a
// regular file (symbolic links followed) of at most MaxResultsSize bytes.
func ReadResults(path string) (*Results, error) {
	b, err := readResultsFile(path)
	if err != nil {
		return nil, err
	}
	return ParseResults(path, b)
}

// ParseResults reads and validates a results file's bytes; path names it
// in errors. The bytes must be UTF-8, as lm-eval writes them.
func ParseResults(path string, b []byte) (*Results, error) {
	if off := invalidUTF8(b); off >= 0 {
		line, col := position(b, off)
		return nil, &FileError{Path: path, Line: line, Col: col, Err: utf8Error(b, off, int64(off))}
	}
	p := newParser(b)
	doc, err := p.document()
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			return nil, se.fileError(path, len(b), func(off int) (int, int) { return position(b, off) })
		}
		return nil, &FileError{Path: path, Err: err}
	}
	r := &Results{Path: path, Timestamp: fileTimestamp(path), Doc: doc}
	if err := r.validate(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Results) fieldErr(field, format string, args ...any) error {
	return &FileError{Path: r.Path, Field: field, Err: fmt.Errorf(format, args...)}
}

func (r *Results) validate() error {
	d := r.Doc
	if d.Kind != Object {
		return &FileError{Path: r.Path, Err: fmt.Errorf("%w: top level is a %s, expected an object with \"results\"", ErrNotLMEval, d.Kind)}
	}
	res, ok := d.Get("results")
	if !ok || res.Kind != Object || !(d.Has("configs") || d.Has("versions") || d.Has("config")) {
		return &FileError{Path: r.Path, Err: fmt.Errorf("%w: expected top-level keys \"results\" (an object) and \"configs\", \"versions\" or \"config\"", ErrNotLMEval)}
	}
	for i, name := range res.Keys {
		t, err := r.taskResult(name, res.Vals[i])
		if err != nil {
			return err
		}
		r.Tasks = append(r.Tasks, t)
	}
	if g, ok := d.Get("groups"); ok && g.Kind == Object {
		r.Groups = append(r.Groups, g.Keys...)
	}
	if gs, ok := d.Get("group_subtasks"); ok {
		if gs.Kind != Object {
			return r.fieldErr("group_subtasks", "expected an object of lists, found a %s", gs.Kind)
		}
		for i, g := range gs.Keys {
			l := gs.Vals[i]
			if l.Kind != List {
				return r.fieldErr(fmt.Sprintf("group_subtasks[%q]", g), "expected a list of task names, found a %s", l.Kind)
			}
			st := Subtasks{Group: g, Members: []string{}}
			for j, m := range l.List {
				if m.Kind != String {
					return r.fieldErr(fmt.Sprintf("group_subtasks[%q][%d]", g, j), "expected a task name, found %s", m)
				}
				st.Members = append(st.Members, m.Str)
			}
			r.Subtasks = append(r.Subtasks, st)
		}
	}
	if !d.Has("group_subtasks") {
		r.Subtasks = subtasksFromAliases(r.Tasks)
		r.SubtasksDerived = true
	}
	r.Configs = map[string]Value{}
	if c, ok := d.Get("configs"); ok {
		if c.Kind != Object {
			return r.fieldErr("configs", "expected an object, found a %s", c.Kind)
		}
		for i, k := range c.Keys {
			if c.Vals[i].Kind != Object {
				return r.fieldErr(fmt.Sprintf("configs[%q]", k), "expected an object, found a %s", c.Vals[i].Kind)
			}
			r.Configs[k] = c.Vals[i]
		}
	}
	r.NSamples = map[string]NSamples{}
	if ns, ok := d.Get("n-samples"); ok && ns.Kind == Object {
		for i, k := range ns.Keys {
			e := ns.Vals[i]
			field := fmt.Sprintf("n-samples[%q]", k)
			o, ok1 := e.Get("original")
			f, ok2 := e.Get("effective")
			if e.Kind != Object || !ok1 || !ok2 || !isCount(o) || !isCount(f) {
				return r.fieldErr(field, "expected {\"original\": int, \"effective\": int}, found %s", e)
			}
			r.NSamples[k] = NSamples{Original: int(o.Num), Effective: int(f.Num)}
		}
	}
	return nil
}

func isCount(v Value) bool { return v.Kind == Number && v.IsInt && v.Num >= 0 }

func (r *Results) taskResult(name string, v Value) (TaskResult, error) {
	t := TaskResult{Name: name}
	field := fmt.Sprintf("results[%q]", name)
	if v.Kind != Object {
		return t, r.fieldErr(field, "expected an object of metrics, found a %s", v.Kind)
	}
	stderrs := map[string]Value{}
	for i, k := range v.Keys {
		if m, f, ok := strings.Cut(k, ","); ok && strings.HasSuffix(m, "_stderr") {
			stderrs[strings.TrimSuffix(m, "_stderr")+","+f] = v.Vals[i]
		}
	}
	for i, k := range v.Keys {
		val := v.Vals[i]
		switch k {
		case "alias":
			if val.Kind == String {
				t.Alias = val.Str
			}
			continue
		case " ":
			t.Placeholder = true
			continue
		case "name", "sample_len", "samples", "sample_count", "task", "tab":
			continue
		}
		m, f, ok := strings.Cut(k, ",")
		if !ok || strings.HasSuffix(m, "_stderr") {
			continue
		}
		t.Metrics = append(t.Metrics, MetricResult{Metric: m, Filter: f, Value: val, Stderr: stderrs[k]})
	}
	return t, nil
}

// Task returns the "results" entry of a task or group.
func (r *Results) Task(name string) (*TaskResult, bool) {
	for i := range r.Tasks {
		if r.Tasks[i].Name == name {
			return &r.Tasks[i], true
		}
	}
	return nil, false
}

// Members returns the direct members of a group (nil for a task), from
// "group_subtasks" when the file has it.
func (r *Results) Members(group string) []string {
	for _, s := range r.Subtasks {
		if s.Group == group {
			return s.Members
		}
	}
	return nil
}

// IsGroup reports whether name is a group with members.
func (r *Results) IsGroup(name string) bool { return len(r.Members(name)) > 0 }

// Leaves returns the leaf tasks under a group, depth first, in member order.
func (r *Results) Leaves(group string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(string)
	walk = func(g string) {
		for _, m := range r.Members(g) {
			if seen[m] {
				continue
			}
			seen[m] = true
			if r.IsGroup(m) {
				walk(m)
			} else {
				out = append(out, m)
			}
		}
	}
	walk(group)
	return out
}

// LeafTasks returns the names of all entries of "results" that are not
// groups, in file order.
func (r *Results) LeafTasks() []string {
	var out []string
	for _, t := range r.Tasks {
		if !r.IsGroup(t.Name) && !t.Placeholder {
			out = append(out, t.Name)
		}
	}
	return out
}

// String returns a top-level string field, "" when absent or not a string.
func (r *Results) String(key string) string {
	if v, ok := r.Doc.Get(key); ok && v.Kind == String {
		return v.Str
	}
	return ""
}

var pythonVersionRE = regexp.MustCompile(`Python version: (\d+)\.(\d+)(\.\d+)?`)

// PythonVersion returns the Python version lm-eval ran under, from
// pretty_env_info ("Python version: 3.10.12 (main, ...)"), as major and
// minor; ok is false when the file does not say.
func (r *Results) PythonVersion() (major, minor int, text string, ok bool) {
	m := pythonVersionRE.FindStringSubmatch(r.String("pretty_env_info"))
	if m == nil {
		return 0, 0, "", false
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	return major, minor, m[1] + "." + m[2] + m[3], true
}

// RunConfig returns the "config" object (model, model_args, seeds, ...).
func (r *Results) RunConfig() Value {
	v, _ := r.Doc.Get("config")
	return v
}

// Simulated reports whether the simulated backend wrote the file: its
// config names the model "simulated", as no lm-eval model is called.
func (r *Results) Simulated() bool {
	v, _ := r.RunConfig().Get("model")
	return v.Kind == String && v.Str == "simulated"
}

// ModelArgs returns config.model_args as lm-eval's string form
// ("pretrained=...,dtype=..."), whether the file stored a string or, as
// newer versions do, a dict.
func (r *Results) ModelArgs() string {
	v, ok := r.RunConfig().Get("model_args")
	if !ok {
		return ""
	}
	switch v.Kind {
	case String:
		return v.Str
	case Object:
		parts := make([]string, len(v.Keys))
		for i, k := range v.Keys {
			t, ok := v.Vals[i].Text()
			if !ok {
				t = v.Vals[i].String()
			}
			parts[i] = k + "=" + t
		}
		return strings.Join(parts, ",")
	}
	return v.String()
}

// BootstrapIters returns config.bootstrap_iters (lm-eval's default 100000
// when absent).
func (r *Results) BootstrapIters() int {
	if v, ok := r.RunConfig().Get("bootstrap_iters"); ok && v.Kind == Number {
		return int(v.Num)
	}
	return 100000
}

// What lm-eval records of how it ran. Each accessor's ok is false when the
// file does not record the field at all: releases add keys over time
// (seeds in config from v0.4.3, task_hashes, chat_template_sha and
// system_instruction_sha from v0.4.3, lm_eval_version after v0.4.8), so an
// absent key says nothing about the run. A key written as null is
// recorded: the run had no value there (no chat template, no seed set).

// top returns a top-level key's value.
func (r *Results) top(key string) (Value, bool) { return r.Doc.Get(key) }

// configKey returns a key of the "config" object.
func (r *Results) configKey(key string) (Value, bool) { return r.RunConfig().Get(key) }

// recordedText returns a value as text: a string as it is, a number or
// bool as lm-eval would print it, null as "" (recorded, no value).
func recordedText(v Value, ok bool) (string, bool) {
	if !ok {
		return "", false
	}
	if v.Kind == Null {
		return "", true
	}
	if t, ok := v.Text(); ok {
		return t, true
	}
	return v.String(), true
}

// Model returns config.model: lm-eval's --model ("hf", "vllm", ...), or
// "simulated" for the simulated backend.
func (r *Results) Model() (string, bool) { return recordedText(r.configKey("model")) }

// ModelSource returns the top-level model_source (v0.4.3+), the --model
// again as the evaluation tracker logs it.
func (r *Results) ModelSource() (string, bool) { return recordedText(r.top("model_source")) }

// ModelName returns the top-level model_name (v0.4.3+): the value of the
// first of model_args' peft, delta, pretrained, model, path and engine.
func (r *Results) ModelName() (string, bool) { return recordedText(r.top("model_name")) }

// ModelRevision returns config.model_revision, which lm-eval's Hugging Face
// models (hf and its subclasses) record: the revision model argument,
// "main" by default.
func (r *Results) ModelRevision() (string, bool) { return recordedText(r.configKey("model_revision")) }

// ModelSHA returns config.model_sha, which lm-eval's Hugging Face models
// record: the commit the Hub resolved the model's revision to, "" when it
// could not ask (a local path, no network). No release writes a
// "model_name_sha".
func (r *Results) ModelSHA() (string, bool) { return recordedText(r.configKey("model_sha")) }

// ModelArgsDict reports whether config.model_args is a dict (v0.4.9+ when
// given as JSON, v0.4.10+ always) rather than lm-eval's string form.
func (r *Results) ModelArgsDict() bool {
	v, _ := r.configKey("model_args")
	return v.Kind == Object
}

// ModelArgKVs returns config.model_args as keys and values, comparable with
// a RunSpec's ModelArgs: the string form ("pretrained=x,dtype=float16") is
// split as lm-eval splits it (at commas, each item at its first "=", empty
// items dropped, a repeated key keeping its place and taking the last
// value); a dict's values are written as Python prints them (True, 16,
// 0.5, None; lists and dicts as JSON). Null or "" is no arguments.
func (r *Results) ModelArgKVs() (KVs, bool) { return recordedKVs(r.configKey("model_args")) }

// GenKwargs returns config.gen_kwargs, the --gen_kwargs lm-eval was given
// (parsed into a dict by every release; null or {} when none), as ModelArgKVs
// does. The generation settings in effect per task are in configs[task].
func (r *Results) GenKwargs() (KVs, bool) { return recordedKVs(r.configKey("gen_kwargs")) }

func recordedKVs(v Value, ok bool) (KVs, bool) {
	if !ok {
		return nil, false
	}
	switch v.Kind {
	case Null:
		return KVs{}, true
	case String:
		return splitArgString(v.Str), true
	case Object:
		out := make(KVs, len(v.Keys))
		for i, k := range v.Keys {
			out[i] = KV{Key: k, Value: pythonText(v.Vals[i])}
		}
		return out, true
	}
	return KVs{{Key: "", Value: v.String()}}, true
}

// splitArgString splits lm-eval's key=value,key=value text as
// simple_parse_args_string does.
func splitArgString(s string) KVs {
	out := KVs{}
	for _, item := range strings.Split(strings.TrimSpace(s), ",") {
		if item == "" {
			continue
		}
		k, v, _ := strings.Cut(item, "=")
		if _, dup := out.Get(k); dup {
			out = out.Set(k, v)
			continue
		}
		out = append(out, KV{Key: k, Value: v})
	}
	return out
}

// pythonText writes a JSON value as Python's str() of what json.loads
// makes of it, for scalars: True/False, None, ints, float reprs, strings as
// they are; lists and objects as JSON.
func pythonText(v Value) string {
	switch v.Kind {
	case Null:
		return "None"
	case String:
		return v.Str
	case List, Object:
		return v.String()
	}
	t, _ := v.Text()
	return t
}

// LMEvalVersion returns the top-level lm_eval_version (written after
// v0.4.8; a build from a commit reports the release it follows).
func (r *Results) LMEvalVersion() (string, bool) { return recordedText(r.top("lm_eval_version")) }

// GitHash returns the top-level git_hash: `git describe --always` of the
// directory lm-eval ran in, which is lm-eval's own commit only when it ran
// from a checkout ("" when it was not a git repository).
func (r *Results) GitHash() (string, bool) { return recordedText(r.top("git_hash")) }

// SeedNames are the config keys of lm-eval's four seeds, in --seed's order:
// Python's random, numpy, torch, few-shot sampling.
var SeedNames = [4]string{"random_seed", "numpy_seed", "torch_seed", "fewshot_seed"}

// Seed returns config's seed i (an index into SeedNames): an integer
// Number, or Null when --seed said None (not seeded). Releases before
// v0.4.3 do not record seeds.
func (r *Results) Seed(i int) (Value, bool) {
	if i < 0 || i >= len(SeedNames) {
		return Value{}, false
	}
	return r.configKey(SeedNames[i])
}

// NShot returns the few-shot count lm-eval used for a task, from "n-shot"
// (every release; it also lists groups in some).
func (r *Results) NShot(task string) (int, bool) {
	ns, _ := r.top("n-shot")
	return countOf(ns.Get(task))
}

// NumFewshot returns configs[task].num_fewshot: the task's YAML default or
// the --num_fewshot that replaced it (lm-eval keeps a YAML's 0 against
// --num_fewshot).
func (r *Results) NumFewshot(task string) (int, bool) {
	return countOf(r.Configs[task].Get("num_fewshot"))
}

func countOf(v Value, ok bool) (int, bool) {
	if !ok || v.Kind != Number || v.Num != float64(int(v.Num)) {
		return 0, false
	}
	return int(v.Num), true
}

// BatchSize returns config.batch_size as given on the command line ("8",
// "auto", "auto:4"; lm-eval's default is the integer 1, returned as "1").
func (r *Results) BatchSize() (string, bool) { return recordedText(r.configKey("batch_size")) }

// Limit returns config.limit (--limit as a float; nil when not given).
func (r *Results) Limit() (*float64, bool) {
	v, ok := r.configKey("limit")
	if !ok {
		return nil, false
	}
	f, isNum := v.Float()
	if v.Kind == Null || !isNum {
		return nil, true
	}
	return &f, true
}

// Device returns config.device ("" when null).
func (r *Results) Device() (string, bool) { return recordedText(r.configKey("device")) }

// ChatTemplate returns the top-level chat_template (v0.4.3+): the template
// the prompts were rendered with, "" (null) when none was applied.
func (r *Results) ChatTemplate() (string, bool) { return recordedText(r.top("chat_template")) }

// ChatTemplateSHA returns the top-level chat_template_sha (v0.4.3+): the
// SHA-256 of the template, "" (null) when none was applied.
func (r *Results) ChatTemplateSHA() (string, bool) { return recordedText(r.top("chat_template_sha")) }

// SystemInstruction returns the top-level system_instruction (v0.4.3+), ""
// (null) when none was given.
func (r *Results) SystemInstruction() (string, bool) {
	return recordedText(r.top("system_instruction"))
}

// SystemInstructionSHA returns the top-level system_instruction_sha
// (v0.4.3+): the SHA-256 of the system instruction, "" (null) when none.
func (r *Results) SystemInstructionSHA() (string, bool) {
	return recordedText(r.top("system_instruction_sha"))
}

// FewshotAsMultiturn returns the top-level fewshot_as_multiturn (v0.4.3+;
// null, read as false, where v0.4.10+ ran without a chat template).
func (r *Results) FewshotAsMultiturn() (bool, bool) {
	v, ok := r.top("fewshot_as_multiturn")
	if !ok {
		return false, false
	}
	b, _ := v.Truth()
	return b && v.Kind != Null, true
}

// TaskHashes returns the top-level task_hashes (v0.4.3+, when samples were
// logged): per task, the SHA-256 over its samples' doc, prompt and target
// hashes, which changes with any prompt. Nil when not recorded.
func (r *Results) TaskHashes() map[string]string {
	v, ok := r.top("task_hashes")
	if !ok || v.Kind != Object {
		return nil
	}
	out := make(map[string]string, len(v.Keys))
	for i, k := range v.Keys {
		if v.Vals[i].Kind == String {
			out[k] = v.Vals[i].Str
		}
	}
	return out
}

// TaskNames returns every task or group the file names anywhere, sorted.
func (r *Results) TaskNames() []string {
	set := map[string]bool{}
	for _, t := range r.Tasks {
		set[t.Name] = true
	}
	for k := range r.Configs {
		set[k] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// subtasksFromAliases rebuilds the group hierarchy from the order of the
// "results" entries and the depth lm-eval encodes in their aliases: an entry
// at depth d+1 belongs to the closest entry above it at depth d.
func subtasksFromAliases(tasks []TaskResult) []Subtasks {
	var out []Subtasks
	index := map[string]int{}
	type frame struct {
		name  string
		depth int
	}
	var stack []frame
	for _, t := range tasks {
		d := aliasDepth(t.Alias)
		for len(stack) > 0 && stack[len(stack)-1].depth >= d {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].depth == d-1 {
			parent := stack[len(stack)-1].name
			i, ok := index[parent]
			if !ok {
				i = len(out)
				index[parent] = i
				out = append(out, Subtasks{Group: parent})
			}
			out[i].Members = append(out[i].Members, t.Name)
		}
		stack = append(stack, frame{t.Name, d})
	}
	return out
}

// aliasDepth reads the tab lm-eval prefixes to aliases: " " * tab + "- ".
func aliasDepth(alias string) int {
	trimmed := strings.TrimLeft(alias, " ")
	if !strings.HasPrefix(trimmed, "- ") {
		return 0
	}
	return len(alias) - len(trimmed)
}
