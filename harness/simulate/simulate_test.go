package simulate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// small is a run small enough for unit tests that still has every kind of
// gsm8k response and every MMLU subject and group.
func small() Options {
	return Options{Seed: 7, GSM8KDocs: 60, MMLUDocsPerSubject: 3}
}

func generate(t *testing.T, opts Options) Output {
	t.Helper()
	out, err := Generate(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sampleLine is a samples line as the tests read it back.
type sampleLine struct {
	DocID     int             `json:"doc_id"`
	Doc       json.RawMessage `json:"doc"`
	Target    string          `json:"target"`
	Arguments map[string]struct {
		Arg0 string          `json:"arg_0"`
		Arg1 json.RawMessage `json:"arg_1"`
	} `json:"arguments"`
	Resps         json.RawMessage `json:"resps"`
	FilteredResps json.RawMessage `json:"filtered_resps"`
	Filter        string          `json:"filter"`
	Metrics       []string        `json:"metrics"`
	DocHash       string          `json:"doc_hash"`
	PromptHash    string          `json:"prompt_hash"`
	TargetHash    string          `json:"target_hash"`
	ExactMatch    *float64        `json:"exact_match"`
	Acc           *float64        `json:"acc"`
}

func readSamples(t *testing.T, path string) []sampleLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []sampleLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l sampleLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func readResults(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// objectKeys returns the keys of the JSON object at path (a list of keys
// from the top) in file order.
func objectKeys(t *testing.T, file string, path ...string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage = b
	for _, p := range path {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		raw = m[p]
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// --- an independent, regexp-free implementation of the gsm8k scoring ---

func isNumChar(c byte) bool  { return c >= '0' && c <= '9' || c == '.' || c == ',' }
func isFlexChar(c byte) bool { return isNumChar(c) || c == '$' }
func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func span(s string, i int, in func(byte) bool) int {
	n := 0
	for i+n < len(s) && in(s[i+n]) {
		n++
	}
	return n
}

// refStrict is the first match of `#### (\-?[0-9\.\,]+)`, group 1.
func refStrict(s string) string {
	for i := 0; i+5 <= len(s); i++ {
		if s[i:i+5] != "#### " {
			continue
		}
		j := i + 5
		if j < len(s) && s[j] == '-' {
			if n := span(s, j+1, isNumChar); n > 0 {
				return s[j : j+1+n]
			}
			continue
		}
		if n := span(s, j, isNumChar); n > 0 {
			return s[j : j+n]
		}
	}
	return "[invalid]"
}

// refFlexible is the last match of `(-?[$0-9.,]{2,})|(-?[0-9]+)`.
func refFlexible(s string) string {
	last, found := "", false
	for i := 0; i < len(s); {
		n := 0
		if s[i] == '-' {
			if k := span(s, i+1, isFlexChar); k >= 2 {
				n = 1 + k
			} else if k := span(s, i+1, isDigit); k >= 1 {
				n = 1 + k
			}
		} else if k := span(s, i, isFlexChar); k >= 2 {
			n = k
		} else if k := span(s, i, isDigit); k >= 1 {
			n = k
		}
		if n == 0 {
			i++
			continue
		}
		last, found = s[i:i+n], true
		i += n
	}
	if !found {
		return "[invalid]"
	}
	return last
}

// refNormalize applies gsm8k's regexes_to_ignore and lower-casing.
func refNormalize(s string) string {
	s = strings.ReplaceAll(s, ",", "")
	s = strings.ReplaceAll(s, "$", "")
	if i := strings.LastIndex(s, "#### "); i >= 0 {
		s = s[i+5:]
	}
	switch {
	case strings.HasSuffix(s, "."):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, ".\n"):
		s = s[:len(s)-2] + "\n"
	}
	return strings.ToLower(s)
}

// TestGenerate_ScoresRederived re-derives every logged filtered_resps,
// exact_match and acc, and every value of the results file, with the
// straightforward implementations above (Python ≤ 3.11: plain summation).
func TestGenerate_ScoresRederived(t *testing.T) {
	out := generate(t, small())
	res := readResults(t, out.ResultsPath)
	results := res["results"].(map[string]any)
	nsamples := res["n-samples"].(map[string]any)

	leafValue := map[string]float64{}
	leafStderr := map[string]float64{}
	kinds := map[string]int{}
	for _, p := range out.SamplesPaths {
		task := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "samples_"), "_"+out.DateID+".jsonl")
		lines := readSamples(t, p)
		perFilter := map[string][]float64{}
		var filters []string
		for _, l := range lines {
			if _, ok := perFilter[l.Filter]; !ok {
				filters = append(filters, l.Filter)
			}
			switch task {
			case "gsm8k":
				kinds["gsm8k"]++
				var resps [][]string
				var filtered []string
				if err := json.Unmarshal(l.Resps, &resps); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(l.FilteredResps, &filtered); err != nil {
					t.Fatal(err)
				}
				want := refFlexible(resps[0][0])
				if l.Filter == "strict-match" {
					want = refStrict(resps[0][0])
				}
				if len(filtered) != 1 || filtered[0] != want {
					t.Fatalf("doc %d %s: filtered_resps %q, want %q (response %q)", l.DocID, l.Filter, filtered, want, resps[0][0])
				}
				em := 0.0
				if refNormalize(want) == refNormalize(l.Target) {
					em = 1
				}
				if l.ExactMatch == nil || *l.ExactMatch != em {
					t.Fatalf("doc %d %s: exact_match %v, want %v", l.DocID, l.Filter, l.ExactMatch, em)
				}
				perFilter[l.Filter] = append(perFilter[l.Filter], em)
			default:
				kinds["mmlu"]++
				var filtered [][]string
				if err := json.Unmarshal(l.FilteredResps, &filtered); err != nil {
					t.Fatal(err)
				}
				var doc struct{ Answer int }
				if err := json.Unmarshal(l.Doc, &doc); err != nil {
					t.Fatal(err)
				}
				pred := -1
				var best float64
				for i, pair := range filtered {
					ll, err := strconv.ParseFloat(pair[0], 64)
					if err != nil || (pair[1] != "True" && pair[1] != "False") {
						t.Fatalf("bad loglikelihood pair %q", pair)
					}
					if pred < 0 || ll > best {
						pred, best = i, ll
					}
				}
				acc := 0.0
				if pred == doc.Answer {
					acc = 1
				}
				if l.Acc == nil || *l.Acc != acc || l.Target != strconv.Itoa(doc.Answer) {
					t.Fatalf("%s doc %d: acc %v target %q, want %v %d", task, l.DocID, l.Acc, l.Target, acc, doc.Answer)
				}
				perFilter["none"] = append(perFilter["none"], acc)
			}
		}
		metric := "acc"
		if task == "gsm8k" {
			metric = "exact_match"
			if !slices.Equal(filters, []string{"strict-match", "flexible-extract"}) {
				t.Fatalf("gsm8k filter blocks %v", filters)
			}
		}
		entry := results[task].(map[string]any)
		for f, xs := range perFilter {
			var sum float64
			for _, x := range xs {
				sum += x
			}
			mu := sum / float64(len(xs))
			var ss float64
			for _, x := range xs {
				d := x - mu
				ss += float64(d * d) // float64(): no fused multiply-add, as in CPython
			}
			se := math.Sqrt(ss/float64(len(xs)-1)) / math.Sqrt(float64(len(xs)))
			if got := entry[metric+","+f]; got != mu {
				t.Errorf("%s %s,%s = %v, recomputed %v", task, metric, f, got, mu)
			}
			if got := entry[metric+"_stderr,"+f]; got != se {
				t.Errorf("%s %s_stderr,%s = %v, recomputed %v", task, metric, f, got, se)
			}
			leafValue[task], leafStderr[task] = mu, se
			n := nsamples[task].(map[string]any)
			if n["original"] != float64(len(xs)) || n["effective"] != float64(len(xs)) {
				t.Errorf("%s n-samples %v, %d docs", task, n, len(xs))
			}
		}
	}
	if kinds["gsm8k"] != 2*60 || kinds["mmlu"] != 57*3 {
		t.Fatalf("lines per task kind: %v", kinds)
	}

	// Groups: size-weighted mean and pooled stderr over all leaves below.
	subtasks := res["group_subtasks"].(map[string]any)
	var leaves func(g string) []string
	leaves = func(g string) []string {
		var out []string
		for _, m := range subtasks[g].([]any) {
			name := m.(string)
			if sub, ok := subtasks[name]; ok && len(sub.([]any)) > 0 {
				out = append(out, leaves(name)...)
			} else {
				out = append(out, name)
			}
		}
		return out
	}
	for _, g := range []string{"mmlu", "mmlu_stem", "mmlu_other", "mmlu_social_sciences", "mmlu_humanities"} {
		var num, pooled float64
		total := 0
		ls := leaves(g)
		for _, l := range ls {
			n := float64(3)
			num += float64(leafValue[l] * n)
			pooled += float64(float64((n-1)*float64(leafStderr[l]*leafStderr[l])) * n)
			total += 3
		}
		value := num / float64(total)
		se := math.Sqrt(pooled / float64(total-len(ls)) / float64(total))
		for _, where := range []string{"results", "groups"} {
			entry := res[where].(map[string]any)[g].(map[string]any)
			if entry["acc,none"] != value || entry["acc_stderr,none"] != se {
				t.Errorf("%s[%s] = %v ± %v, recomputed %v ± %v", where, g, entry["acc,none"], entry["acc_stderr,none"], value, se)
			}
		}
		if g == "mmlu" && len(ls) != 57 {
			t.Errorf("mmlu has %d leaves", len(ls))
		}
	}

	// Output.Scores agree with the file.
	for _, s := range out.Scores {
		entry := results[s.Task].(map[string]any)
		if entry[s.Metric+","+s.Filter] != s.Value {
			t.Errorf("Score %+v disagrees with the results file", s)
		}
	}
}

// TestGenerate_Python checks the files against CPython: json.loads then
// json.dumps reproduces every byte, the hashes are what lm-eval computes,
// Python's re reproduces every filter and exact_match, and Python's own
// sum() reproduces every value, with the generator told the interpreter's
// version so that both use the same summation.
func TestGenerate_Python(t *testing.T) {
	opts := small()
	opts.PythonVersion = pythonVersion(t)
	out := generate(t, opts)
	got := runPython(t, pythonCheck, nil, out.ResultsPath)
	want := "ok 58 291\n" // files, lines
	if got != want {
		t.Fatalf("python check: %q, want %q", got, want)
	}
}

const pythonCheck = `
import glob, hashlib, json, math, os, re, sys

results_path = sys.argv[1]
d = os.path.dirname(results_path)
date_id = os.path.basename(results_path)[len('results_'):-len('.json')]
raw = open(results_path, encoding='utf-8').read()
res = json.loads(raw)
assert json.dumps(res, indent=2, ensure_ascii=False) == raw, 'results bytes'
assert list(res) == ['results', 'groups', 'group_subtasks', 'configs', 'versions', 'n-shot',
    'higher_is_better', 'n-samples', 'config', 'git_hash', 'date', 'pretty_env_info',
    'transformers_version', 'lm_eval_version', 'upper_git_hash', 'tokenizer_pad_token',
    'tokenizer_eos_token', 'tokenizer_bos_token', 'eot_token_id', 'max_length', 'task_hashes',
    'model_source', 'model_name', 'model_name_sanitized', 'system_instruction',
    'system_instruction_sha', 'fewshot_as_multiturn', 'chat_template', 'chat_template_sha',
    'start_time', 'end_time', 'total_evaluation_time_seconds'], list(res)
assert 'Python version: ' + sys.version.split()[0] + ' (main, ' in res['pretty_env_info']
assert res['total_evaluation_time_seconds'] == str(res['end_time'] - res['start_time'])

def sha(s):
    return hashlib.sha256(s.encode('utf-8')).hexdigest()

def numpy_sum(xs):  # numpy.float64 items: plain addition on every Python
    t = 0.0
    for x in xs:
        t = t + x
    return t

files = lines = 0
task_hashes = {}
for task, cfg in res['configs'].items():
    path = os.path.join(d, 'samples_%s_%s.jsonl' % (task, date_id))
    files += 1
    hashes, items = [], {}
    for line in open(path, encoding='utf-8'):
        lines += 1
        s = json.loads(line)
        assert json.dumps(s, ensure_ascii=False) + '\n' == line, 'line bytes'
        assert list(s) == ['doc_id', 'doc', 'target', 'arguments', 'resps', 'filtered_resps',
            'filter', 'metrics', 'doc_hash', 'prompt_hash', 'target_hash'] + s['metrics'], list(s)
        assert s['doc_hash'] == sha(json.dumps(s['doc'], indent=2, ensure_ascii=False))
        prompt = s['arguments']['gen_args_0']['arg_0']
        assert s['prompt_hash'] == sha(prompt)
        assert s['target_hash'] == sha(str(s['target']))
        hashes.append(s['doc_hash'] + s['prompt_hash'] + s['target_hash'])
        nshot = res['n-shot'][task]
        if cfg['output_type'] == 'generate_until':
            assert list(s['doc']) == ['question', 'answer']
            assert s['target'] == s['doc']['answer']
            assert prompt.endswith('Question: ' + s['doc']['question'] + '\nAnswer:')
            assert prompt.count('\nAnswer:') == nshot + 1
            assert s['arguments']['gen_args_0']['arg_1'] == cfg['generation_kwargs']
            (flt,) = [f for f in cfg['filter_list'] if f['name'] == s['filter']]
            rx = flt['filter'][0]
            resp = s['resps'][0][0]
            for stop in cfg['generation_kwargs']['until']:
                assert stop not in resp
            m = re.compile(rx['regex_pattern']).findall(resp)
            if m:
                m = m[rx.get('group_select', 0)]
                if isinstance(m, tuple):
                    m = [x for x in m if x]
                    m = m[0] if m else '[invalid]'
                m = m.strip()
            else:
                m = '[invalid]'
            assert s['filtered_resps'] == [m], (s['filtered_resps'], m)
            mc = cfg['metric_list'][0]
            p, g = m, s['target']
            for ig in mc['regexes_to_ignore']:
                p, g = re.sub(ig, '', p), re.sub(ig, '', g)
            assert s['exact_match'] == (1.0 if p.lower() == g.lower() else 0.0)
            items.setdefault(('exact_match', s['filter']), []).append(s['exact_match'])
        else:
            doc = s['doc']
            assert list(doc) == ['question', 'subject', 'choices', 'answer'] and doc['subject'] == cfg['dataset_name']
            assert s['target'] == str(doc['answer'])
            text = doc['question'].strip() + ''.join('\n%s. %s' % (l, c) for l, c in zip('ABCD', doc['choices'])) + '\nAnswer:'
            assert prompt.startswith(cfg['description']) and prompt.endswith(text)
            assert prompt.count('\nAnswer:') == nshot + 1
            for i, l in enumerate('ABCD'):
                assert s['arguments']['gen_args_%d' % i] == {'arg_0': prompt, 'arg_1': ' ' + l}
            assert s['resps'] == [[x] for x in s['filtered_resps']]
            lls = [float(x[0]) for x in s['filtered_resps']]
            assert all(repr(float(x[0])) == x[0] and x[1] in ('True', 'False') for x in s['filtered_resps'])
            pred = lls.index(max(lls))
            assert type(s['acc']) is float and s['acc'] == (1.0 if pred == doc['answer'] else 0.0)
            assert s['filter'] == 'none' and s['metrics'] == ['acc']
            items.setdefault(('acc', 'none'), []).append(s['acc'])
    task_hashes[task] = sha(''.join(hashes))
    entry = res['results'][task]
    for (metric, flt), xs in items.items():
        n = len(xs)
        total = numpy_sum(xs) if metric == 'exact_match' else sum(xs)
        mu = total / n
        dev = [(x - mu) ** 2 for x in xs]
        ss = numpy_sum(dev) if metric == 'exact_match' else sum(dev)
        se = math.sqrt(ss / (n - 1)) / math.sqrt(n) if n > 1 else 'N/A'
        assert entry['%s,%s' % (metric, flt)] == mu, (task, metric, flt)
        assert entry['%s_stderr,%s' % (metric, flt)] == se, (task, metric, flt)
        assert res['n-samples'][task] == {'original': n, 'effective': n}

assert res['task_hashes'] == task_hashes and list(res['task_hashes']) == list(res['n-samples'])

def leaves(g):
    out = []
    for t in res['group_subtasks'][g]:
        out += leaves(t) if res['group_subtasks'].get(t) else [t]
    return out

for g in res['groups']:
    ls = leaves(g)
    sizes = [res['n-samples'][t]['effective'] for t in ls]
    vals = [res['results'][t]['acc,none'] for t in ls]
    ses = [res['results'][t]['acc_stderr,none'] for t in ls]
    value = sum([m * n for m, n in zip(vals, sizes)]) / sum(sizes)
    var = sum([(n - 1) * se ** 2 * n for n, se in zip(sizes, ses)]) / (sum(sizes) - len(sizes))
    for where in ('results', 'groups'):
        assert res[where][g]['acc,none'] == value, (g, where)
        assert res[where][g]['acc_stderr,none'] == math.sqrt(var / sum(sizes)), (g, where)

print('ok', files, lines)
`

// TestGenerate_Layout checks file names, key order and the fixed parts of
// the results file against what lm-eval 0.4.9.1 writes.
func TestGenerate_Layout(t *testing.T) {
	dir := t.TempDir()
	out, err := Generate(dir, small())
	if err != nil {
		t.Fatal(err)
	}
	wantDate := time.Date(2025, 1, 1, 0, 0, 7, 0, time.UTC).Format("2006-01-02T15-04-05.000000")
	if out.DateID != wantDate || out.DateID != "2025-01-01T00-00-07.000000" {
		t.Errorf("date_id %q", out.DateID)
	}
	if want := filepath.Join(dir, "simulated__model-1b", "results_2025-01-01T00-00-07.000000.json"); out.ResultsPath != want {
		t.Errorf("results path %s, want %s", out.ResultsPath, want)
	}
	entries, err := os.ReadDir(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 59 || len(out.SamplesPaths) != 58 {
		t.Errorf("%d files, %d samples paths", len(entries), len(out.SamplesPaths))
	}
	if base := filepath.Base(out.SamplesPaths[0]); base != "samples_gsm8k_2025-01-01T00-00-07.000000.jsonl" {
		t.Errorf("first samples file %s", base)
	}
	if base := filepath.Base(out.SamplesPaths[1]); base != "samples_mmlu_abstract_algebra_2025-01-01T00-00-07.000000.jsonl" {
		t.Errorf("second samples file %s", base)
	}
	top, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(top) != 1 {
		t.Errorf("output dir holds %v, want only the model directory (no temporary leftovers)", top)
	}
	var size int64
	for _, e := range entries {
		info, _ := e.Info()
		size += info.Size()
	}
	if size != out.Bytes {
		t.Errorf("Bytes %d, files hold %d", out.Bytes, size)
	}
	raw, _ := os.ReadFile(out.ResultsPath)
	if raw[len(raw)-1] != '}' {
		t.Error("results file must end without a newline, as json.dumps output written as is")
	}

	results := objectKeys(t, out.ResultsPath, "results")
	wantResults := []string{"gsm8k", "mmlu", "mmlu_humanities"}
	for _, s := range subjects {
		if s.category == humanities {
			wantResults = append(wantResults, s.task())
		}
	}
	if !slices.Equal(results[:len(wantResults)], wantResults) || len(results) != 1+5+57 {
		t.Errorf("results keys %v", results)
	}
	if i := slices.Index(results, "mmlu_stem"); results[i+1] != "mmlu_abstract_algebra" || results[len(results)-1] != "mmlu_machine_learning" {
		t.Errorf("results keys %v", results)
	}
	if got := objectKeys(t, out.ResultsPath, "groups"); !slices.Equal(got, []string{"mmlu", "mmlu_humanities", "mmlu_other", "mmlu_social_sciences", "mmlu_stem"}) {
		t.Errorf("groups keys %v", got)
	}
	if got := objectKeys(t, out.ResultsPath, "group_subtasks"); !slices.Equal(got, []string{"gsm8k", "mmlu_humanities", "mmlu_social_sciences", "mmlu_other", "mmlu_stem", "mmlu"}) {
		t.Errorf("group_subtasks keys %v", got)
	}
	if got := objectKeys(t, out.ResultsPath, "results", "gsm8k"); !slices.Equal(got, []string{"alias",
		"exact_match,strict-match", "exact_match_stderr,strict-match", "exact_match,flexible-extract", "exact_match_stderr,flexible-extract"}) {
		t.Errorf("gsm8k entry keys %v", got)
	}
	if got := objectKeys(t, out.ResultsPath, "results", "mmlu"); !slices.Equal(got, []string{"acc,none", "acc_stderr,none", "alias"}) {
		t.Errorf("mmlu entry keys %v", got)
	}
	nsamples := objectKeys(t, out.ResultsPath, "n-samples")
	if nsamples[0] != "mmlu_abstract_algebra" || nsamples[len(nsamples)-1] != "gsm8k" || nsamples[19] != "mmlu_business_ethics" {
		t.Errorf("n-samples order %v", nsamples)
	}
	if got := objectKeys(t, out.ResultsPath, "configs", "mmlu_anatomy"); !slices.Equal(got, []string{"task", "task_alias", "tag", "dataset_path",
		"dataset_name", "test_split", "fewshot_split", "doc_to_text", "doc_to_target", "unsafe_code", "doc_to_choice", "description",
		"target_delimiter", "fewshot_delimiter", "fewshot_config", "num_fewshot", "metric_list", "output_type", "repeats",
		"should_decontaminate", "metadata"}) {
		t.Errorf("mmlu config keys %v", got)
	}
	if got := objectKeys(t, out.ResultsPath, "configs", "gsm8k"); !slices.Equal(got, []string{"task", "tag", "dataset_path", "dataset_name",
		"training_split", "test_split", "fewshot_split", "doc_to_text", "doc_to_target", "unsafe_code", "description", "target_delimiter",
		"fewshot_delimiter", "num_fewshot", "metric_list", "output_type", "generation_kwargs", "repeats", "filter_list",
		"should_decontaminate", "metadata"}) {
		t.Errorf("gsm8k config keys %v", got)
	}

	res := readResults(t, out.ResultsPath)
	aliases := res["results"].(map[string]any)
	for name, want := range map[string]string{"mmlu": "mmlu", "mmlu_stem": " - stem", "mmlu_social_sciences": " - social sciences",
		"mmlu_anatomy": "  - anatomy", "gsm8k": "gsm8k"} {
		if got := aliases[name].(map[string]any)["alias"]; got != want {
			t.Errorf("alias of %s = %q, want %q", name, got, want)
		}
	}
	cfg := res["config"].(map[string]any)
	if cfg["model"] != "simulated" || cfg["model_args"] != "pretrained=simulated/model-1b,simulated=True" {
		t.Errorf("config %v", cfg)
	}
	if res["model_name"] != "simulated/model-1b" || res["model_name_sanitized"] != "simulated__model-1b" || res["model_source"] != "simulated" ||
		res["lm_eval_version"] != "0.4.9.1" {
		t.Errorf("model fields %v %v %v %v", res["model_name"], res["model_name_sanitized"], res["model_source"], res["lm_eval_version"])
	}
	meta := res["configs"].(map[string]any)["mmlu_anatomy"].(map[string]any)
	if meta["metadata"].(map[string]any)["simulated"] != true || meta["dataset_path"] != "cais/mmlu" || meta["num_fewshot"] != 5.0 ||
		meta["description"] != "The following are multiple choice questions (with answers) about anatomy.\n\n" || meta["tag"] != "mmlu_stem_tasks" {
		t.Errorf("mmlu_anatomy config %v", meta)
	}
	versions := res["versions"].(map[string]any)
	if versions["mmlu"] != 2.0 || versions["gsm8k"] != 3.0 || versions["mmlu_anatomy"] != 1.0 {
		t.Errorf("versions %v", versions)
	}
	if !strings.Contains(string(raw), `"mmlu": 2,`) || !strings.Contains(string(raw), `"gsm8k": 3.0,`) {
		t.Error("group versions are ints and task versions floats in lm-eval's files")
	}
	if !strings.Contains(res["pretty_env_info"].(string), "\nPython version: 3.10.12 (main, ") {
		t.Error("pretty_env_info lacks the Python version line")
	}
}

func TestGenerate_Deterministic(t *testing.T) {
	opts := small()
	a, b := generate(t, opts), generate(t, opts)
	opts.Seed++
	opts.Date = time.Date(2025, 1, 1, 0, 0, 7, 0, time.UTC) // same file names as a
	c := generate(t, opts)
	if len(a.SamplesPaths) != len(b.SamplesPaths) {
		t.Fatal("different file sets")
	}
	differs := 0
	for i, p := range append([]string{a.ResultsPath}, a.SamplesPaths...) {
		q := b.ResultsPath
		r := c.ResultsPath
		if i > 0 {
			q, r = b.SamplesPaths[i-1], c.SamplesPaths[i-1]
		}
		x, _ := os.ReadFile(p)
		y, _ := os.ReadFile(q)
		z, _ := os.ReadFile(r)
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", filepath.Base(p))
		}
		if !bytes.Equal(x, z) {
			differs++
		}
	}
	if differs != 1+len(a.SamplesPaths) {
		t.Errorf("only %d of %d files change with the seed", differs, 1+len(a.SamplesPaths))
	}
}

func TestGenerate_RefusesExisting(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Tasks: []string{"gsm8k"}, GSM8KDocs: 5}
	first, err := Generate(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	snapshot := func() map[string]string {
		m := map[string]string{}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				m[p] = string(b)
			} else if err == nil {
				m[p] = "<dir>"
			}
			return nil
		})
		return m
	}
	before := snapshot()
	if _, err := Generate(dir, opts); !errors.Is(err, ErrExists) {
		t.Fatalf("second run into the same files: %v, want ErrExists", err)
	}
	if !reflect.DeepEqual(before, snapshot()) {
		t.Fatal("a refused run changed the output directory")
	}

	// A stray results file alone also blocks the run, and survives it.
	dir2 := t.TempDir()
	stray := filepath.Join(dir2, "simulated__model-1b", filepath.Base(first.ResultsPath))
	os.MkdirAll(filepath.Dir(stray), 0o755)
	os.WriteFile(stray, []byte("not ours"), 0o644)
	if _, err := Generate(dir2, opts); !errors.Is(err, ErrExists) {
		t.Fatalf("run over a stray results file: %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(stray); string(b) != "not ours" {
		t.Fatal("stray results file changed")
	}
	if entries, _ := os.ReadDir(filepath.Dir(stray)); len(entries) != 1 {
		t.Fatalf("refused run left files: %v", entries)
	}
	if entries, _ := os.ReadDir(dir2); len(entries) != 1 {
		t.Fatalf("refused run left temporary files: %v", entries)
	}

	// Another seed into an existing model directory places its files beside.
	opts.Seed = 1
	second, err := Generate(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(second.Dir); len(entries) != 4 {
		t.Fatalf("model dir holds %d files, want two runs of 2", len(entries))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

// TestPublish_RollsBack checks that a file already in place stops the move
// and that the files placed before it are taken back.
func TestPublish_RollsBack(t *testing.T) {
	tmp, dst := t.TempDir(), t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		os.WriteFile(filepath.Join(tmp, n), []byte(n), 0o644)
	}
	os.WriteFile(filepath.Join(dst, "c"), []byte("theirs"), 0o644)
	if err := publish(tmp, dst, []string{"a", "b", "c"}); !errors.Is(err, ErrExists) {
		t.Fatalf("publish: %v, want ErrExists", err)
	}
	entries, _ := os.ReadDir(dst)
	if len(entries) != 1 {
		t.Fatalf("dst holds %v after rollback", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "c")); string(b) != "theirs" {
		t.Fatal("existing file overwritten")
	}
}

func TestGenerate_Options(t *testing.T) {
	for _, opts := range []Options{
		{Tasks: []string{"hellaswag"}},
		{LMEvalVersion: "0.4.12"},
		{LMEvalVersion: "0.4.2"},
		{LMEvalVersion: "0.4.13.dev0"},
		{LMEvalVersion: "0.4.9.1-dirty"},
		{NumFewshot: 6},
		{Model: "a,b"},
		{Model: ".."},
		{PythonVersion: "three"},
		{GSM8KDocs: -1},
		{MMLUAccuracy: 1.5},
		{GSM8KAccuracy: math.NaN()},
	} {
		if _, err := Generate(t.TempDir(), opts); err == nil {
			t.Errorf("Generate(%+v) succeeded", opts)
		}
	}
}

// TestGenerate_ZeroShotSingleTask checks a zero-shot gsm8k-only run: plain
// prompts, no groups key (lm-eval omits it without groups), n-shot 0.
func TestGenerate_ZeroShotSingleTask(t *testing.T) {
	out := generate(t, Options{Tasks: []string{"gsm8k"}, GSM8KDocs: 4, NumFewshot: -1, GSM8KAccuracy: -1})
	for _, l := range readSamples(t, out.SamplesPaths[0]) {
		if !strings.HasPrefix(l.Arguments["gen_args_0"].Arg0, "Question: ") || strings.Count(l.Arguments["gen_args_0"].Arg0, "Question: ") != 1 {
			t.Errorf("zero-shot prompt %q", l.Arguments["gen_args_0"].Arg0)
		}
	}
	res := readResults(t, out.ResultsPath)
	if _, ok := res["groups"]; ok {
		t.Error("groups key without groups")
	}
	if res["n-shot"].(map[string]any)["gsm8k"] != 0.0 {
		t.Errorf("n-shot %v", res["n-shot"])
	}
	entry := res["results"].(map[string]any)["gsm8k"].(map[string]any)
	if entry["exact_match,flexible-extract"] != 0.0 {
		t.Errorf("accuracy 0 planted, got %v", entry)
	}
	out = generate(t, Options{Tasks: []string{"mmlu"}, MMLUDocsPerSubject: 1})
	res = readResults(t, out.ResultsPath)
	if got := res["results"].(map[string]any)["mmlu"].(map[string]any)["acc_stderr,none"]; got != "N/A" {
		t.Errorf("one doc per subject: group stderr %v, want N/A", got)
	}
	if got := res["results"].(map[string]any)["mmlu_anatomy"].(map[string]any)["acc_stderr,none"]; got != "N/A" {
		t.Errorf("one doc: stderr %v, want N/A", got)
	}
}

// TestGenerate_PlantedRates checks at full gsm8k size that the knobs move
// the scores where they say, and that both filters see every response kind.
func TestGenerate_PlantedRates(t *testing.T) {
	out := generate(t, Options{Tasks: []string{"gsm8k"}, GSM8KAccuracy: 0.8, GSM8KFormatMiss: 0.3, GSM8KTruncated: 0.1})
	var strict, flex float64
	for _, s := range out.Scores {
		switch s.Filter {
		case "strict-match":
			strict = s.Value
		case "flexible-extract":
			flex = s.Value
		}
	}
	// flexible ≈ 0.8 × 0.9, strict ≈ that × 0.7
	if math.Abs(flex-0.72) > 0.05 || math.Abs(strict-0.72*0.7) > 0.05 {
		t.Errorf("strict %v flexible %v", strict, flex)
	}
	var invalid, strictOnly, flexOnly int
	lines := readSamples(t, out.SamplesPaths[0])
	n := len(lines) / 2
	for i := 0; i < n; i++ {
		s, f := lines[i], lines[n+i]
		if string(s.FilteredResps) == `["[invalid]"]` {
			invalid++
		}
		if *s.ExactMatch == 1 && *f.ExactMatch == 0 {
			strictOnly++
		}
		if *s.ExactMatch == 0 && *f.ExactMatch == 1 {
			flexOnly++
		}
	}
	if invalid < n/5 || strictOnly == 0 || flexOnly < n/10 {
		t.Errorf("invalid %d, right only under strict %d, only under flexible %d of %d", invalid, strictOnly, flexOnly, n)
	}
}

// TestFilters_Python compares the filters and exact_match with Python's re
// on edge cases, including Python's "$" before a final newline.
func TestFilters_Python(t *testing.T) {
	cases := []string{
		"#### 18", " x\n#### 1,234\n\n", "#### 18.", "#### 18.\n", "#### -3", "#### -x 4", "####  5", "#### $5",
		"The answer is 5.", "The answer is 5.\n", "So $1,234.", "...", "$,", "-5", "-$5", "a-5b", "no numbers",
		"x 7\n\n", "3.\n", "1.2.3", "-", "--12", "12-", "#### 18.00", "#### 1\n#### 2", "5 and then 6", "é 4 ü",
	}
	refs := []string{"abc\n#### 18", "abc\n#### 1,234", "x\n#### 5", "#### 5.\n", "y #### 3 #### 7"}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	enc.Encode(map[string]any{"cases": cases, "refs": refs})
	out := runPython(t, `
import json, re, sys
data = json.load(sys.stdin)
def flt(pat, gs, s):
    m = re.compile(pat).findall(s)
    if not m: return '[invalid]'
    m = m[gs]
    if isinstance(m, tuple):
        m = [x for x in m if x]
        m = m[0] if m else '[invalid]'
    return m.strip()
def em(p, g):
    for ig in [",", "\\$", "(?s).*#### ", "\\.$"]:
        p, g = re.sub(ig, '', p), re.sub(ig, '', g)
    return 1.0 if p.lower() == g.lower() else 0.0
out = []
for s in data['cases']:
    out.append([flt(r"#### (\-?[0-9\.\,]+)", 0, s), flt(r"(-?[$0-9.,]{2,})|(-?[0-9]+)", -1, s)])
ems = [[em(p, g) for g in data['refs']] for p in data['cases']]
print(json.dumps({'filtered': out, 'em': ems}))
`, in.Bytes())
	var want struct {
		Filtered [][2]string
		EM       [][]float64
	}
	if err := json.Unmarshal([]byte(out), &want); err != nil {
		t.Fatal(err)
	}
	for i, s := range cases {
		got := [2]string{gsm8kFilters[0].apply(s), gsm8kFilters[1].apply(s)}
		if got != want.Filtered[i] {
			t.Errorf("filters(%q) = %q, Python %q", s, got, want.Filtered[i])
		}
		if ref := [2]string{refStrict(s), refFlexible(s)}; ref != want.Filtered[i] {
			t.Errorf("test reference filters(%q) = %q, Python %q", s, ref, want.Filtered[i])
		}
		for j, r := range refs {
			if got := exactMatch(s, r); got != want.EM[i][j] {
				t.Errorf("exact_match(%q, %q) = %v, Python %v", s, r, got, want.EM[i][j])
			}
			if got := refNormalize(s) == refNormalize(r); got != (want.EM[i][j] == 1) {
				t.Errorf("test reference exact_match(%q, %q) = %v, Python %v", s, r, got, want.EM[i][j])
			}
		}
	}
}
