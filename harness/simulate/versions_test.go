package simulate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
)

func TestFormatFor(t *testing.T) {
	for _, v := range []string{"0.4.3", "v0.4.3", "0.4.6", "0.4.9.1", "0.4.9.2", "0.4.11"} {
		f, err := formatFor(v)
		if err != nil {
			t.Errorf("%s: %v", v, err)
			continue
		}
		if f.version.String() != strings.TrimPrefix(v, "v") {
			t.Errorf("%s: version %s", v, f.version)
		}
	}
	for v, want := range map[string]string{
		"0.4.2":       "before v0.4.3",
		"0.4.12":      "v0.4.12 rewrote",
		"0.4.13":      "after v0.4.11",
		"0.4.13.dev0": "not a release number",
		"0.4.9.1+x":   "not a release number",
		"0.5.0":       "after v0.4.11",
		"":            "not a release number",
	} {
		_, err := formatFor(v)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "0.4.3, 0.4.4") {
			t.Errorf("%q: %v, want an error saying %q and listing the simulated releases", v, err, want)
		}
	}
	if got := supportedVersions(); got[0] != "0.4.3" || !slices.Contains(got, DefaultLMEvalVersion) || got[len(got)-1] != "0.4.11" {
		t.Errorf("supportedVersions() = %v", got)
	}
}

// TestGenerate_VersionsPython checks every simulated release against
// CPython: json.dumps reproduces every byte, the hashes are lm-eval's, the
// sample fields and the results keys are those of the release, and Python's
// own arithmetic reproduces every task value and every group aggregate,
// pooled over leaves (v0.4.4+) or over direct members bottom-up (v0.4.3).
func TestGenerate_VersionsPython(t *testing.T) {
	py := pythonVersion(t)
	for _, v := range supportedVersions() {
		t.Run(v, func(t *testing.T) {
			opts := small()
			opts.LMEvalVersion = v
			opts.PythonVersion = py
			out := generate(t, opts)
			f, _ := formatFor(v)
			feat, _ := json.Marshal(map[string]any{
				"version":  v,
				"children": f.childrenGroups,
				"filter":   f.filterField,
				"int_ids":  f.intTokenIDs,
				"int_tgt":  f.intTarget,
				"lm_ver":   f.lmEvalVersion,
				"times":    f.perfTimes,
				"argsdict": f.modelArgsDict,
				"mmlu_ds":  f.mmluDataset,
				"gsm_ds":   f.gsm8kDataset,
				"desc_nl":  f.descriptionNewlines,
			})
			if got := runPython(t, pythonVersionCheck, feat, out.ResultsPath); got != "ok 58 291\n" {
				t.Fatalf("python check: %q", got)
			}
		})
	}
}

const pythonVersionCheck = `
import hashlib, json, math, os, sys

feat = json.load(sys.stdin)
results_path = sys.argv[1]
d = os.path.dirname(results_path)
date_id = os.path.basename(results_path)[len('results_'):-len('.json')]
raw = open(results_path, encoding='utf-8').read()
res = json.loads(raw)
assert json.dumps(res, indent=2, ensure_ascii=False) == raw, 'results bytes'
keys = ['results', 'groups', 'group_subtasks', 'configs', 'versions', 'n-shot',
    'higher_is_better', 'n-samples', 'config', 'git_hash', 'date', 'pretty_env_info',
    'transformers_version', 'lm_eval_version', 'upper_git_hash', 'tokenizer_pad_token',
    'tokenizer_eos_token', 'tokenizer_bos_token', 'eot_token_id', 'max_length', 'task_hashes',
    'model_source', 'model_name', 'model_name_sanitized', 'system_instruction',
    'system_instruction_sha', 'fewshot_as_multiturn', 'chat_template', 'chat_template_sha',
    'start_time', 'end_time', 'total_evaluation_time_seconds']
if not feat['lm_ver']:
    keys.remove('lm_eval_version')
if not feat['times']:
    keys.remove('start_time'); keys.remove('end_time')
assert list(res) == keys, list(res)
if feat['lm_ver']:
    assert res['lm_eval_version'] == feat['version']
assert type(res['tokenizer_pad_token'][1]) is (int if feat['int_ids'] else str)
assert type(res['config']['model_args']) is (dict if feat['argsdict'] else str)
assert res['fewshot_as_multiturn'] is (None if feat['argsdict'] else False)
assert res['configs']['gsm8k']['dataset_path'] == feat['gsm_ds']
assert res['configs']['mmlu_anatomy']['dataset_path'] == feat['mmlu_ds']

def sha(s):
    return hashlib.sha256(s.encode('utf-8')).hexdigest()

def numpy_sum(xs):
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
    filters = [f['name'] for f in cfg.get('filter_list', [])] or ['none']
    n_docs = res['n-samples'][task]['effective']
    for i, line in enumerate(open(path, encoding='utf-8')):
        lines += 1
        s = json.loads(line)
        assert json.dumps(s, ensure_ascii=False) + '\n' == line, 'line bytes'
        metric = 'exact_match' if cfg['output_type'] == 'generate_until' else 'acc'
        fields = ['doc_id', 'doc', 'target', 'arguments', 'resps', 'filtered_resps']
        if feat['filter']:
            fields += ['filter', 'metrics']
        assert list(s) == fields + ['doc_hash', 'prompt_hash', 'target_hash', metric], list(s)
        flt = s['filter'] if feat['filter'] else filters[i // n_docs]
        if feat['filter']:
            assert s['filter'] == filters[i // n_docs] and s['metrics'] == [metric]
        assert s['doc_hash'] == sha(json.dumps(s['doc'], indent=2, ensure_ascii=False))
        prompt = s['arguments']['gen_args_0']['arg_0']
        assert s['prompt_hash'] == sha(prompt)
        assert s['target_hash'] == sha(str(s['target']))
        hashes.append(s['doc_hash'] + s['prompt_hash'] + s['target_hash'])
        if metric == 'acc':
            assert s['target'] == (s['doc']['answer'] if feat['int_tgt'] else str(s['doc']['answer']))
            desc = cfg['description'][:-1] if feat['desc_nl'] == 1 else cfg['description']
            assert prompt.startswith(desc) and not prompt.startswith(desc + '\n'), repr(prompt[:120])
            lls = [float(x[0]) for x in s['filtered_resps']]
            assert s['acc'] == (1.0 if lls.index(max(lls)) == s['doc']['answer'] else 0.0)
        items.setdefault((metric, flt), []).append(s[metric])
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
assert res['task_hashes'] == task_hashes and list(res['task_hashes']) == list(res['n-samples'])

sub = res['group_subtasks']
def leaves(g):
    out = []
    for t in sub[g]:
        out += leaves(t) if sub.get(t) else [t]
    return out
def size(t):
    return sum(size(m) for m in sub[t]) if sub.get(t) else res['n-samples'][t]['effective']
def members(g):
    return sub[g] if feat['children'] else leaves(g)
done = {}
for g in reversed(list(sub)):  # bottom-up
    if not sub[g]:
        continue
    ms = members(g)
    vals = [res['results'][t]['acc,none'] for t in ms]
    ses = [res['results'][t]['acc_stderr,none'] for t in ms]
    sizes = [size(t) for t in ms]
    value = sum([m * n for m, n in zip(vals, sizes)]) / sum(sizes)
    var = sum([(n - 1) * se ** 2 * n for n, se in zip(sizes, ses)]) / (sum(sizes) - len(sizes))
    for where in ('results', 'groups'):
        assert res[where][g]['acc,none'] == value, (g, where)
        assert res[where][g]['acc_stderr,none'] == math.sqrt(var / sum(sizes)), (g, where)
    done[g] = True
assert len(done) == 5, done
print('ok', files, lines)
`

// TestGenerate_VersionLayout checks, per release, the file names and the
// version-specific keys and fields the re-scorer and readers go by.
func TestGenerate_VersionLayout(t *testing.T) {
	for _, v := range supportedVersions() {
		t.Run(v, func(t *testing.T) {
			ver := harness.MustVersion(v)
			opts := small()
			opts.LMEvalVersion = v
			out := generate(t, opts)
			if out.LMEvalVersion != v || filepath.Base(out.ResultsPath) != "results_"+out.DateID+".json" {
				t.Errorf("output %s for %s", out.ResultsPath, out.LMEvalVersion)
			}
			for _, p := range out.SamplesPaths {
				if !strings.HasSuffix(p, "_"+out.DateID+".jsonl") || !strings.HasPrefix(filepath.Base(p), "samples_") {
					t.Errorf("samples file %s", p)
				}
			}
			res := readResults(t, out.ResultsPath)
			v043 := ver == harness.Version{0, 4, 3}

			// Results keys: the mmlu tree before gsm8k in v0.4.3, after it
			// from v0.4.4.
			keys := objectKeys(t, out.ResultsPath, "results")
			if first := keys[0]; (first == "mmlu") != v043 {
				t.Errorf("results start with %s", first)
			}
			gsm := objectKeys(t, out.ResultsPath, "results", "gsm8k")
			if (gsm[0] == "alias") == v043 || (gsm[len(gsm)-1] == "alias") != v043 {
				t.Errorf("gsm8k entry keys %v", gsm)
			}
			stem := objectKeys(t, out.ResultsPath, "results", "mmlu_stem")
			if (stem[0] == "alias") != v043 {
				t.Errorf("mmlu_stem entry keys %v", stem)
			}
			subtasks := res["group_subtasks"].(map[string]any)
			wantMMLU := []any{"mmlu_stem", "mmlu_other", "mmlu_social_sciences", "mmlu_humanities"}
			if v043 {
				slices.Reverse(wantMMLU)
			}
			if got := subtasks["mmlu"].([]any); !slices.Equal(got, wantMMLU) {
				t.Errorf("group_subtasks[mmlu] = %v", got)
			}
			if first := subtasks["mmlu_stem"].([]any)[0]; (first == "mmlu_machine_learning") != v043 {
				t.Errorf("group_subtasks[mmlu_stem] starts with %v", first)
			}
			versions := res["versions"].(map[string]any)
			nshot := res["n-shot"].(map[string]any)
			if _, ok := versions["mmlu"]; ok == v043 {
				t.Errorf("versions[mmlu] %v", versions["mmlu"])
			}
			if n, ok := nshot["mmlu_stem"]; ok != v043 || (v043 && (n != 5.0 || nshot["mmlu"] != 0.0)) {
				t.Errorf("n-shot of groups: %v %v", nshot["mmlu"], nshot["mmlu_stem"])
			}
			if want := map[bool]float64{true: 0, false: 1}[v043]; versions["mmlu_anatomy"] != want {
				t.Errorf("versions[mmlu_anatomy] = %v", versions["mmlu_anatomy"])
			}
			if alias := res["results"].(map[string]any)["mmlu_social_sciences"].(map[string]any)["alias"]; (alias == " - social_sciences") != v043 {
				t.Errorf("alias %q", alias)
			}

			// Configs.
			cfgs := res["configs"].(map[string]any)
			gcfg, mcfg := cfgs["gsm8k"].(map[string]any), cfgs["mmlu_anatomy"].(map[string]any)
			has := func(m map[string]any, k string) bool { _, ok := m[k]; return ok }
			if has(gcfg, "group") != v043 || has(gcfg, "tag") == v043 || has(mcfg, "group_alias") != v043 {
				t.Errorf("group/tag keys: gsm8k %v, mmlu_anatomy %v", objectKeys(t, out.ResultsPath, "configs", "gsm8k"), objectKeys(t, out.ResultsPath, "configs", "mmlu_anatomy"))
			}
			if has(gcfg, "unsafe_code") != ver.AtLeast(harness.Version{0, 4, 8}) {
				t.Errorf("unsafe_code in %s", v)
			}
			if has(mcfg, "dataset_kwargs") != ver.Less(harness.Version{0, 4, 9, 1}) {
				t.Errorf("dataset_kwargs in %s", v)
			}
			if _, ok := mcfg["metadata"].(map[string]any)["pretrained"]; ok != ver.AtLeast(harness.Version{0, 4, 9}) {
				t.Errorf("model_args in metadata: %v", mcfg["metadata"])
			}
			fc := mcfg["fewshot_config"].(map[string]any)
			if has(fc, "split") != ver.AtLeast(harness.Version{0, 4, 10}) || has(gcfg, "fewshot_config") != ver.AtLeast(harness.Version{0, 4, 10}) {
				t.Errorf("fewshot_config %v", fc)
			}

			// Samples fields.
			for _, p := range out.SamplesPaths[:2] { // gsm8k, mmlu_abstract_algebra
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				line, _, _ := strings.Cut(string(b), "\n")
				var s map[string]any
				if err := json.Unmarshal([]byte(line), &s); err != nil {
					t.Fatal(err)
				}
				if has(s, "filter") != ver.AtLeast(harness.Version{0, 4, 7}) || has(s, "metrics") != has(s, "filter") {
					t.Errorf("%s: filter/metrics in %s", v, filepath.Base(p))
				}
				if strings.Contains(p, "mmlu") {
					if _, isStr := s["target"].(string); isStr == v043 {
						t.Errorf("%s: mmlu target %#v", v, s["target"])
					}
				}
			}
		})
	}
}

// TestGenerate_JSONOutputPath checks v0.4.9's rule for an --output_path
// ending in ".json", and that earlier releases took it as a directory name.
func TestGenerate_JSONOutputPath(t *testing.T) {
	for _, c := range []struct {
		version string
		dirs    []string // where the files land, below the temporary dir
		results string
	}{
		{"0.4.8", []string{"run.json", "simulated__model-1b"}, "results_%s.json"},
		{"0.4.9", nil, "run_%s.json"},
		{"0.4.11", nil, "run_%s.json"},
	} {
		dir := t.TempDir()
		out, err := Generate(filepath.Join(dir, "run.json"), Options{Tasks: []string{"gsm8k"}, GSM8KDocs: 3, LMEvalVersion: c.version})
		if err != nil {
			t.Fatal(err)
		}
		wantDir := filepath.Join(append([]string{dir}, c.dirs...)...)
		if out.Dir != wantDir || out.ResultsPath != filepath.Join(wantDir, fmt.Sprintf(c.results, out.DateID)) ||
			filepath.Dir(out.SamplesPaths[0]) != wantDir {
			t.Errorf("%s: dir %s, results %s, samples %s", c.version, out.Dir, out.ResultsPath, out.SamplesPaths[0])
		}
		entries, _ := os.ReadDir(out.Dir)
		if len(entries) != 2 {
			t.Errorf("%s: %s holds %v (temporary files left?)", c.version, out.Dir, entries)
		}
	}
}
