package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Mismatch is one setting that lm-eval's own record of a run (its results
// file) gives otherwise than the run's run.json: a results file edited
// after the run, or a run that did not run what its record says.
type Mismatch struct {
	// Field names the setting as the results file does: "model",
	// "model_args", "lm_eval_version", "random_seed", "numpy_seed",
	// "torch_seed", "fewshot_seed", "n-shot", "num_fewshot", "tasks",
	// "batch_size", "limit", "gen_kwargs", "device", "bootstrap_iters",
	// "fewshot_as_multiturn", "chat_template_sha", "system_instruction",
	// "system_instruction_sha", "model_source", "model_name",
	// "model_revision", "model_sha".
	Field string `json:"field"`
	// Task is the task the field is of ("n-shot", "num_fewshot", "tasks"),
	// "" for the run's settings.
	Task string `json:"task"`
	// Recorded is what lm-eval would have written for the run's run.json
	// (the settings the study gave it, lm-eval's defaults filled in).
	Recorded string `json:"recorded"`
	// Results is what lm-eval wrote in its results file.
	Results string `json:"results"`
	// Detail says more where the two values alone do not: the keys of
	// model_args that differ, why a value is expected.
	Detail string `json:"detail,omitempty"`
}

// Name is the field with its task, as "n-shot[gsm8k]".
func (m Mismatch) Name() string {
	if m.Task == "" {
		return m.Field
	}
	return m.Field + "[" + m.Task + "]"
}

// String says the mismatch in one line.
func (m Mismatch) String() string {
	if m.Detail == "" {
		return fmt.Sprintf("lm-eval recorded %s = %s, run.json gives %s", m.Name(), m.Results, m.Recorded)
	}
	return fmt.Sprintf("lm-eval recorded %s = %s, expected %s: %s", m.Name(), m.Results, m.Recorded, m.Detail)
}

// CheckRecord compares what lm-eval recorded of a run in its results file
// with the run's record, setting by setting, each the way lm-eval records
// it (the release's defaults filled in; model_args in string or dict form,
// in any order, values compared as the Python values lm-eval makes of
// them). A field the file does not record (one its release does not
// write) is not compared: only values both sides hold can disagree.
//
// Compared, where recorded: the tasks (each of the spec's must be named in
// the results, as a task, group or tag); per task n-shot and
// configs[task].num_fewshot against --num_fewshot (a task whose YAML pins
// 0 keeps 0); the four seeds (lm-eval's defaults 0,1234,1234,1234 when the
// spec sets none); model and model_source against --model ("hf" by
// default); model_args (with the trust_remote_code=True lm-eval adds for
// --trust_remote_code); model_name as lm-eval derives it from model_args;
// model_revision against the revision model argument and model_sha against
// the resolved revision; lm_eval_version against the pinned harness
// version; batch_size (default 1), limit, device, bootstrap_iters
// (100000) and gen_kwargs; chat_template_sha, which must be null without
// --apply_chat_template; fewshot_as_multiturn (true with a chat template
// when asked, or by default from v0.4.10); system_instruction and its
// SHA-256.
//
// Not compared: git_hash (the commit of the directory lm-eval ran in, not
// necessarily lm-eval's), and the hashes of what the prompts were made of
// (task_hashes, a chat template's text and sha when one was applied),
// which run.json does not hold; PromptSetChanges compares those between
// two runs.
//
// An output the simulated backend wrote (config.model "simulated")
// records the simulated environment's fixed facts, not the run's model,
// batch size, limit or chat settings: of it the tasks and few-shot counts,
// which it takes from the settings, and the seeds, which it always writes
// as lm-eval's defaults, are compared.
func CheckRecord(r *Results, rec *RunRecord) []Mismatch {
	if r == nil || rec == nil {
		return nil
	}
	c := &recordChecker{r: r, rec: rec, sp: rec.Spec}
	c.version, c.versionOK = c.pinnedVersion()
	c.tasks()
	c.fewshot()
	c.seeds()
	if r.Simulated() {
		return c.out
	}
	c.model()
	c.harness()
	c.execution()
	c.chat()
	return c.out
}

type recordChecker struct {
	r         *Results
	rec       *RunRecord
	sp        RunSpec
	version   Version
	versionOK bool
	out       []Mismatch
}

func (c *recordChecker) add(field, task, recorded, results, detail string) {
	c.out = append(c.out, Mismatch{Field: field, Task: task, Recorded: recorded, Results: results, Detail: detail})
}

// pinnedVersion is the release the run pinned, or else the one the file
// says it is.
func (c *recordChecker) pinnedVersion() (Version, bool) {
	if v, err := ParseVersion(c.rec.Harness.Version); err == nil {
		return v, true
	}
	if s, ok := c.r.LMEvalVersion(); ok {
		if v, err := ParseVersion(s); err == nil {
			return v, true
		}
	}
	return Version{}, false
}

// show writes a value for a Mismatch: never empty, so that an empty string
// reads as one.
func show(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// showValue writes a value of the results file for a Mismatch.
func showValue(v Value) string {
	switch v.Kind {
	case Null:
		return "null"
	case String:
		return show(v.Str)
	}
	return v.String()
}

// tasks checks that every task the spec asked for is in the results.
func (c *recordChecker) tasks() {
	names := c.r.recordedNames()
	for _, t := range c.sp.Tasks {
		if strings.ContainsAny(t, `/\`) || strings.HasSuffix(t, ".yaml") || strings.HasSuffix(t, ".yml") {
			continue // a task file: the results name the task inside it
		}
		found := names[t]
		if !found && strings.ContainsAny(t, "*?[") {
			for n := range names {
				if ok, _ := path.Match(t, n); ok {
					found = true
					break
				}
			}
		}
		if !found {
			c.add("tasks", t, t, "absent", "run.json asks for it; the results name no task, group or tag so")
		}
	}
}

// recordedNames is every task, group and tag a results file names.
func (r *Results) recordedNames() map[string]bool {
	names := map[string]bool{}
	for _, n := range r.TaskNames() {
		names[n] = true
	}
	for _, st := range r.Subtasks {
		names[st.Group] = true
		for _, m := range st.Members {
			names[m] = true
		}
	}
	for _, key := range []string{"n-shot", "versions", "task_hashes", "n-samples", "higher_is_better"} {
		if v, ok := r.top(key); ok {
			for _, k := range v.Keys {
				names[k] = true
			}
		}
	}
	for _, cfg := range r.Configs {
		// A tag (v0.4.4+ "tag", before that "group" in a task's YAML)
		// selects its tasks without an entry of its own.
		for _, key := range []string{"tag", "group"} {
			v, _ := cfg.Get(key)
			switch v.Kind {
			case String:
				names[v.Str] = true
			case List:
				for _, e := range v.List {
					if e.Kind == String {
						names[e.Str] = true
					}
				}
			}
		}
	}
	return names
}

// fewshot checks n-shot and configs[task].num_fewshot of every task
// against --num_fewshot.
func (c *recordChecker) fewshot() {
	if c.sp.NumFewshot == nil {
		return // each task's YAML default: nothing in run.json to compare
	}
	want := *c.sp.NumFewshot
	tasks := make([]string, 0, len(c.r.Configs))
	for t := range c.r.Configs {
		tasks = append(tasks, t)
	}
	sort.Strings(tasks)
	for _, t := range tasks {
		cfg, cfgOK := c.r.NumFewshot(t)
		n, nOK := c.r.NShot(t)
		// lm-eval never overrides a YAML's num_fewshot: 0.
		if cfgOK && cfg == 0 && (!nOK || n == 0) {
			continue
		}
		if nOK && n != want {
			c.add("n-shot", t, strconv.Itoa(want), strconv.Itoa(n), "")
		}
		if cfgOK && cfg != want {
			c.add("num_fewshot", t, strconv.Itoa(want), strconv.Itoa(cfg), "run.json's num_fewshot, which lm-eval writes into configs[task]")
		}
	}
}

// seeds checks the four seeds.
func (c *recordChecker) seeds() {
	want := cliSeeds
	detail := "lm-eval's default: run.json sets no seeds"
	switch {
	case c.r.Simulated():
		detail = "the simulated backend always writes lm-eval's default seeds"
	case len(c.sp.Seed) == 4:
		want, detail = [4]int(c.sp.Seed), ""
	case len(c.rec.Seeds) == 4:
		want, detail = [4]int(c.rec.Seeds), ""
	}
	for i, name := range SeedNames {
		v, ok := c.r.Seed(i)
		if !ok || v.Kind == Number && v.IsInt && v.Num == float64(want[i]) {
			continue
		}
		c.add(name, "", strconv.Itoa(want[i]), showValue(v), detail)
	}
}

// model checks the model and its arguments.
func (c *recordChecker) model() {
	wantModel := c.sp.Model
	if wantModel == "" {
		wantModel = "hf" // --model's default in every release
	}
	if c.rec.Simulated {
		wantModel = "simulated"
	}
	for _, f := range []struct {
		field string
		get   func() (string, bool)
	}{{"model", c.r.Model}, {"model_source", c.r.ModelSource}} {
		if got, ok := f.get(); ok && got != wantModel {
			c.add(f.field, "", wantModel, show(got), "")
		}
	}

	want := c.sp.ModelArgs
	if c.sp.TrustRemoteCode {
		// --trust_remote_code appends trust_remote_code=True (v0.4.2+).
		want = want.Set("trust_remote_code", "True")
	}
	raw, _ := c.r.configKey("model_args")
	if got, ok := c.r.ModelArgKVs(); ok {
		if d := kvsDiffer(want, got); d != "" {
			c.add("model_args", "", show(joinKVs(want)), showValue(raw), d)
		}
	}
	if got, ok := c.r.ModelName(); ok {
		if name, ok := lmEvalModelName(want, c.r.ModelArgsDict(), c.version, c.versionOK); ok && got != name {
			c.add("model_name", "", name, show(got), "the name lm-eval gives the model of run.json's model_args")
		}
	}
	if rev, ok := c.sp.ModelArgs.Get("revision"); ok {
		if got, ok := c.r.ModelRevision(); ok && got != "" && got != rev {
			c.add("model_revision", "", rev, got, "")
		}
	}
	if res := c.rec.Model.ResolvedRevision; res != "" {
		if got, ok := c.r.ModelSHA(); ok && got != "" && !sameCommit(got, res) {
			c.add("model_sha", "", res, got, "the commit run.json resolved the model's revision to")
		}
	}
}

// harness checks the lm-eval release.
func (c *recordChecker) harness() {
	pinned := c.rec.Harness.Version
	got, ok := c.r.LMEvalVersion()
	if !ok || got == "" || pinned == "" {
		return
	}
	a, errA := ParseVersion(pinned)
	b, errB := ParseVersion(got)
	if errA == nil && errB == nil && a == b || errA != nil && strings.TrimPrefix(pinned, "v") == got {
		return
	}
	c.add("lm_eval_version", "", pinned, got, "")
}

// execution checks batch size, limit, device, bootstrap iterations and
// generation arguments.
func (c *recordChecker) execution() {
	wantBatch := c.sp.BatchSize
	if wantBatch == "" {
		wantBatch = "1"
	}
	if v, ok := c.r.configKey("batch_size"); ok && v.Kind != Null {
		if got, _ := recordedText(v, true); got != wantBatch {
			c.add("batch_size", "", wantBatch, showValue(v), "")
		}
	}
	if got, ok := c.r.Limit(); ok {
		switch want := c.sp.Limit; {
		case want == nil && got != nil:
			c.add("limit", "", "null", FormatFloat(*got, false), "")
		case want != nil && (got == nil || *got != *want):
			v, _ := c.r.configKey("limit")
			c.add("limit", "", FormatFloat(*want, false), showValue(v), "")
		}
	}
	if c.sp.Device != "" {
		if v, ok := c.r.configKey("device"); ok {
			if got, _ := recordedText(v, true); got != c.sp.Device {
				c.add("device", "", c.sp.Device, showValue(v), "")
			}
		}
	}
	wantIters := cliBootstrapIters
	if c.sp.BootstrapIters != nil {
		wantIters = *c.sp.BootstrapIters
	}
	if v, ok := c.r.configKey("bootstrap_iters"); ok && v.Kind == Number && v.Num != float64(wantIters) {
		c.add("bootstrap_iters", "", strconv.Itoa(wantIters), v.String(), "")
	}
	if got, ok := c.r.GenKwargs(); ok {
		if d := kvsDiffer(c.sp.GenKwargs, got); d != "" {
			raw, _ := c.r.configKey("gen_kwargs")
			want := "null"
			if len(c.sp.GenKwargs) > 0 {
				want = joinKVs(c.sp.GenKwargs)
			}
			c.add("gen_kwargs", "", want, showValue(raw), d)
		}
	}
}

// chat checks the chat template, multi-turn few-shot and the system
// instruction.
func (c *recordChecker) chat() {
	template := c.sp.ApplyChatTemplate
	if strings.EqualFold(template, "false") {
		template = ""
	}
	if template == "" {
		// Without --apply_chat_template lm-eval records no template. With
		// one, an API model may record none either: not compared.
		if got, ok := c.r.ChatTemplateSHA(); ok && got != "" {
			c.add("chat_template_sha", "", "null", got, "run.json applies no chat template")
		} else if got, ok := c.r.ChatTemplate(); ok && got != "" {
			c.add("chat_template", "", "null", "a template", "run.json applies no chat template")
		}
	}
	if got, ok := c.r.FewshotAsMultiturn(); ok {
		want := false
		if template != "" {
			mt := c.sp.FewshotAsMultiturn
			want = mt != nil && *mt || mt == nil && c.versionOK && c.version.AtLeast(sinceRunSubcommand)
		}
		if got != want {
			raw, _ := c.r.top("fewshot_as_multiturn")
			detail := ""
			if template != "" && c.sp.FewshotAsMultiturn == nil {
				detail = fmt.Sprintf("lm-eval %s's default with a chat template", c.version)
			}
			c.add("fewshot_as_multiturn", "", strconv.FormatBool(want), showValue(raw), detail)
		}
	}
	si := c.sp.SystemInstruction
	if got, ok := c.r.SystemInstruction(); ok && got != si {
		want := "null"
		if si != "" {
			want = si
		}
		raw, _ := c.r.top("system_instruction")
		c.add("system_instruction", "", want, showValue(raw), "")
	}
	if got, ok := c.r.SystemInstructionSHA(); ok {
		want := ""
		if si != "" {
			want = sha256Hex(si)
		}
		if got != want {
			c.add("system_instruction_sha", "", cmpOr(want, "null"), cmpOr(got, "null"), "the SHA-256 of run.json's system_instruction")
		}
	}
}

func cmpOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// sameCommit compares two commit ids, either of which may be abbreviated
// (at least 7 hex digits).
func sameCommit(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 7 && strings.HasPrefix(b, a)
}

// joinKVs writes keys and values in lm-eval's string form.
func joinKVs(kvs KVs) string {
	items := make([]string, len(kvs))
	for i, kv := range kvs {
		items[i] = kv.Key + "=" + kv.Value
	}
	return strings.Join(items, ",")
}

// kvsDiffer compares the arguments a spec gives with those lm-eval
// recorded, as sets of keys whose values are the same Python values, and
// says how they differ ("" when they do not). A key given twice counts
// with its last value, as in the dict lm-eval makes.
func kvsDiffer(want, got KVs) string {
	w, wKeys := lastValues(want)
	g, gKeys := lastValues(got)
	var diffs []string
	for _, k := range wKeys {
		gv, ok := g[k]
		switch {
		case !ok:
			diffs = append(diffs, k+" missing")
		case !samePyValue(w[k], gv):
			diffs = append(diffs, fmt.Sprintf("%s: %s ≠ %s", k, show(w[k]), show(gv)))
		}
	}
	for _, k := range gKeys {
		if _, ok := w[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s=%s not in run.json", k, g[k]))
		}
	}
	return strings.Join(diffs, "; ")
}

// lastValues maps each key to its last value, and lists the keys in the
// order they first appear.
func lastValues(kvs KVs) (map[string]string, []string) {
	m := make(map[string]string, len(kvs))
	var keys []string
	for _, kv := range kvs {
		if _, seen := m[kv.Key]; !seen {
			keys = append(keys, kv.Key)
		}
		m[kv.Key] = kv.Value
	}
	return m, keys
}

// samePyValue reports whether two argument texts are the same Python value
// once lm-eval has read them: "true" and True, "16" and 16, "1e-5" and
// 1e-05, a JSON list however it is spaced; or the same text.
func samePyValue(a, b string) bool {
	return a == b || pyCanon(a) == pyCanon(b)
}

// pyCanon is the Python value handle_arg_string (and, for JSON text,
// json.loads or ast.literal_eval) makes of an argument, written back as
// text.
func pyCanon(s string) string {
	switch strings.ToLower(s) {
	case "true":
		return "True"
	case "false":
		return "False"
	}
	if s != "" && strings.Trim(s, "0123456789") == "" {
		if n := strings.TrimLeft(s, "0"); n != "" {
			return n
		}
		return "0"
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !strings.ContainsAny(s, "xXpP") {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return strings.ToLower(FormatFloat(f, false))
		}
		return FormatFloat(f, false)
	}
	if t := strings.TrimSpace(s); t != "" && (t[0] == '[' || t[0] == '{') {
		p := newParser([]byte(t))
		if v, err := p.document(); err == nil {
			return v.String()
		}
	}
	return s
}

// lmEvalModelName is the model_name lm-eval's evaluation tracker derives
// from model_args (GeneralConfigTracker._get_model_name): the value of the
// first of peft, delta, pretrained, model, path and engine, in the string
// form the text after the first "<key>=" anywhere, up to the next comma.
// Before v0.4.10 a dict (or a string naming none of them) gives ""; from
// v0.4.10 a dict is looked up by key, and none of them gives a random
// name: ok is false then, and when the release is not known.
func lmEvalModelName(args KVs, dict bool, v Version, known bool) (string, bool) {
	prefixes := []string{"peft", "delta", "pretrained", "model", "path", "engine"}
	since := known && v.AtLeast(sinceRunSubcommand)
	switch {
	case dict && since:
		m, _ := lastValues(args)
		for _, p := range prefixes {
			if v, ok := m[p]; ok {
				return pyCanon(v), true // str() of the value
			}
		}
		return "", false
	case dict:
		return "", known
	}
	s := joinKVs(args)
	for _, p := range prefixes {
		if _, after, ok := strings.Cut(s, p+"="); ok {
			name, _, _ := strings.Cut(after, ",")
			return name, true
		}
	}
	return "", known && !since
}

// RecordOf returns the run.json of the run an lm-eval output belongs to:
// capsule runs lm-eval with --output_path <run>/output, so the output lies
// in that directory or one below it (lm-eval's <model> directory), and
// <run>/run.json is the record. It returns nil and no error for a bare
// lm-eval output, and the error of reading a run.json that is there but is
// not a valid record.
func RecordOf(o *Output) (*RunRecord, error) {
	if o == nil || o.Dir == "" {
		return nil, nil
	}
	d := filepath.Clean(o.Dir)
	for range 3 {
		if filepath.Base(d) == OutputDir {
			run := filepath.Dir(d)
			if _, err := os.Stat(filepath.Join(run, RecordFile)); err == nil {
				return ReadRecord(run)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			return nil, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return nil, nil
}

// PromptSetChange is one hash of what a run's prompts were made from that
// differs between two results files: a task's entry in task_hashes (over
// its samples' doc, prompt and target hashes), chat_template_sha or
// system_instruction_sha. A different hash means the two runs did not ask
// the model the same questions in the same words.
type PromptSetChange struct {
	// Field is "task_hashes", "chat_template_sha" or "system_instruction_sha".
	Field string `json:"field"`
	// Task is the task of a task_hashes entry, "" otherwise.
	Task string `json:"task"`
	// A and B are the two hashes; "" is null (no chat template, no system
	// instruction).
	A string `json:"a"`
	B string `json:"b"` // the second run's hash, as A is the first's
}

// PromptSetChanges compares the prompt hashes lm-eval recorded for two
// runs: task_hashes task by task (tasks both runs hashed), then
// chat_template_sha and system_instruction_sha. Hashes a file does not
// record (its release writes none, or it logged no samples) are not
// compared.
func PromptSetChanges(a, b *Results) []PromptSetChange {
	out := []PromptSetChange{}
	if a == nil || b == nil {
		return out
	}
	ha, hb := a.TaskHashes(), b.TaskHashes()
	tasks := make([]string, 0, len(ha))
	for t := range ha {
		tasks = append(tasks, t)
	}
	sort.Strings(tasks)
	for _, t := range tasks {
		x, y := ha[t], hb[t]
		if x != "" && y != "" && x != y {
			out = append(out, PromptSetChange{Field: "task_hashes", Task: t, A: x, B: y})
		}
	}
	for _, f := range []struct {
		field string
		get   func(*Results) (string, bool)
	}{{"chat_template_sha", (*Results).ChatTemplateSHA}, {"system_instruction_sha", (*Results).SystemInstructionSHA}} {
		x, okA := f.get(a)
		y, okB := f.get(b)
		if okA && okB && x != y {
			out = append(out, PromptSetChange{Field: f.field, A: x, B: y})
		}
	}
	return out
}
