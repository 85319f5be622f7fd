package simulate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

//go:embed testdata/code_problems.jsonl
var codeProblemsJSONL []byte

// CodeProblem is a programming problem in HumanEval's format. The
// simulator's five are written for this project, not taken from HumanEval.
type CodeProblem struct {
	TaskID            string `json:"task_id"`
	Prompt            string `json:"prompt"`
	CanonicalSolution string `json:"canonical_solution"`
	Test              string `json:"test"`
	EntryPoint        string `json:"entry_point"`
}

// CodeProblems returns the simulator's problems.
func CodeProblems() []CodeProblem {
	var out []CodeProblem
	sc := bufio.NewScanner(bytes.NewReader(codeProblemsJSONL))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var p CodeProblem
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			panic(fmt.Sprintf("simulate: testdata/code_problems.jsonl: %v", err))
		}
		out = append(out, p)
	}
	return out
}

// CodeKind is what a simulated completion does when executed.
type CodeKind string

// The completions the simulator writes. Only Canonical passes.
const (
	Canonical    CodeKind = "canonical"     // the problem's canonical solution
	WrongAnswer  CodeKind = "wrong answer"  // runs, fails an assert
	SyntaxErr    CodeKind = "syntax error"  // does not compile
	Raises       CodeKind = "exception"     // raises before any assert
	InfiniteLoop CodeKind = "infinite loop" // never returns
	ForkBomb     CodeKind = "fork bomb"
	Socket       CodeKind = "socket"        // opens a connection out
	ReadHome     CodeKind = "read home"     // reads the reviewer's $HOME
	WriteOutside CodeKind = "write outside" // writes beyond its folder
	Allocate10GB CodeKind = "10 GB allocation"
)

// completion is the text a model would have generated after the prompt.
func (k CodeKind) completion(p CodeProblem) string {
	const body = "    "
	switch k {
	case Canonical:
		return p.CanonicalSolution
	case WrongAnswer:
		return body + "return None\n"
	case SyntaxErr:
		return body + "return (((\n"
	case Raises:
		return body + "raise ValueError('simulated')\n"
	case InfiniteLoop:
		return body + "while True:\n" + body + body + "pass\n"
	case ForkBomb:
		return body + "import posix\n" + body + "while True:\n" + body + body + "try:\n" + body + body + body + "posix.fork()\n" + body + body + "except OSError:\n" + body + body + body + "pass\n"
	case Socket:
		return body + "import socket\n" + body + "socket.create_connection(('192.0.2.1', 80), timeout=1)\n" + body + "return " + p.CanonicalSolution[strings.Index(p.CanonicalSolution, "return")+len("return"):]
	case ReadHome:
		return body + "import os\n" + body + "open(os.path.expanduser('~/.evalcapsule-planted')).read()\n" + p.CanonicalSolution
	case WriteOutside:
		return body + "open('/usr/evalcapsule-planted', 'w').write('x')\n" + p.CanonicalSolution
	case Allocate10GB:
		return body + "b = bytearray(10 * 1024 ** 3)\n" + p.CanonicalSolution
	}
	panic("simulate: unknown completion kind " + string(k))
}

// CodeDoc is one simulated document: its completions, and, when Lie is
// set, a logged pass@k that its execution does not give.
type CodeDoc struct {
	Completions []CodeKind
	Lie         bool
}

// CodeOptions configures WriteCode.
type CodeOptions struct {
	// Task is the task name; "" means "humaneval", or "humaneval_10" when
	// the documents have ten completions.
	Task string
	// Ks are the k of pass@k the task reports; nil means [1], and [1, 10]
	// with ten completions.
	Ks []int
	// Docs are the documents, one per problem in order, at most five.
	Docs []CodeDoc
	// Home, when set, is the folder a ReadHome completion reads; the
	// completion reads ~ inside the sandbox regardless.
	Home string
}

// CodeOutput is what WriteCode wrote and what the logged values are.
type CodeOutput struct {
	Dir, Task string
	Ks        []int
	// Passed are the planned passing completions per document.
	Passed []int
	// Reported are the aggregates written, by metric ("pass@1").
	Reported map[string]float64
}

// WriteCode writes an lm-eval v0.4.9.1 output of a humaneval-style task
// (the create_test filter, code_eval's pass@k) into dir: a results file
// and a samples file whose per-doc values are what the planned
// completions give, except on documents marked Lie.
func WriteCode(dir string, opts CodeOptions) (*CodeOutput, error) {
	probs := CodeProblems()
	if len(opts.Docs) == 0 || len(opts.Docs) > len(probs) {
		return nil, fmt.Errorf("simulate: %d code documents; between 1 and %d", len(opts.Docs), len(probs))
	}
	n := len(opts.Docs[0].Completions)
	for i, d := range opts.Docs {
		if len(d.Completions) != n || n == 0 {
			return nil, fmt.Errorf("simulate: document %d has %d completions, document 0 %d: every document has the same number (lm-eval's repeats)", i, len(d.Completions), n)
		}
	}
	task, ks := opts.Task, opts.Ks
	if task == "" {
		task = "humaneval"
		if n == 10 {
			task = "humaneval_10"
		}
	}
	if ks == nil {
		ks = []int{1}
		if n >= 10 {
			ks = []int{1, 10}
		}
	}
	out := &CodeOutput{Dir: dir, Task: task, Ks: ks, Reported: map[string]float64{}}
	items := make(map[int][]float64)
	var lines bytes.Buffer
	for i, d := range opts.Docs {
		p := probs[i]
		c := 0
		var resps, filtered []string
		for _, k := range d.Completions {
			if k == Canonical {
				c++
			}
			r := k.completion(p)
			resps = append(resps, r)
			filtered = append(filtered, p.Prompt+r)
		}
		out.Passed = append(out.Passed, c)
		target := p.Test + "\ncheck(" + p.EntryPoint + ")"
		doc, _ := json.Marshal(p)
		prompt := p.Prompt
		line := []kv{
			{"doc_id", i}, {"doc", json.RawMessage(doc)}, {"target", target},
			{"arguments", map[string]any{"gen_args_0": map[string]any{"arg_0": prompt, "arg_1": map[string]any{
				"until": []string{"\nclass", "\ndef", "\n#", "\nif", "\nprint"}, "max_gen_toks": 1024, "do_sample": n > 1}}}},
			{"resps", [][]string{resps}}, {"filtered_resps", [][]string{filtered}}, {"filter", "create_test"},
		}
		var names []string
		for _, k := range ks {
			names = append(names, fmt.Sprintf("pass@%d", k))
		}
		line = append(line, kv{"metrics", names},
			kv{"doc_hash", sha(string(doc))}, kv{"prompt_hash", sha(prompt)}, kv{"target_hash", sha(target)})
		for j, k := range ks {
			cc := c
			if d.Lie {
				cc = min(c+1, n) // logged as if one more completion passed
				if cc == c {
					cc = c - 1
				}
			}
			v := passAtK(n, cc, k)
			items[j] = append(items[j], v)
			line = append(line, kv{names[j], pyFloat(v)})
		}
		b, err := marshalOrdered(line)
		if err != nil {
			return nil, err
		}
		lines.Write(b)
		lines.WriteByte('\n')
	}
	res := map[string]any{"alias": task}
	hib := map[string]bool{}
	for j, k := range ks {
		name := fmt.Sprintf("pass@%d", k)
		v := pynum.Mean(items[j], pynum.Numpy, pynum.Naive)
		res[name+",create_test"] = pyFloat(v)
		if len(items[j]) > 1 {
			res[name+"_stderr,create_test"] = pyFloat(pynum.MeanStderr(items[j], pynum.Numpy, pynum.Naive))
		} else {
			res[name+"_stderr,create_test"] = "N/A" // lm-eval's stderr of one item
		}
		out.Reported[name] = v
		hib[name] = true
	}
	kList := make([]any, len(ks))
	for i, k := range ks {
		kList[i] = k
	}
	date := "2026-01-15T10-00-00.000000"
	results := map[string]any{
		"results":        map[string]any{task: res},
		"group_subtasks": map[string]any{task: []string{}},
		"configs": map[string]any{task: map[string]any{
			"task": task, "dataset_path": "openai/openai_humaneval", "unsafe_code": true, "output_type": "generate_until",
			"test_split": "test", "doc_to_text": "{{prompt}}", "doc_to_target": "{{test}}\ncheck({{entry_point}})",
			"metric_list": []any{map[string]any{"metric": "<function pass_at_k at 0x7f3a2c1b9e40>", "aggregation": "mean", "higher_is_better": true, "k": kList}},
			"filter_list": []any{map[string]any{"name": "create_test", "filter": []any{map[string]any{"function": "custom", "filter_fn": "<function build_predictions at 0x7f3a2c1b9f80>"}}}},
			"repeats":     n, "num_fewshot": 0, "metadata": map[string]any{"version": pyFloat(1)},
		}},
		"versions":         map[string]any{task: pyFloat(1)},
		"n-shot":           map[string]any{task: 0},
		"higher_is_better": map[string]any{task: hib},
		"n-samples":        map[string]any{task: map[string]int{"original": len(opts.Docs), "effective": len(opts.Docs)}},
		"config":           map[string]any{"model": "hf", "model_args": "pretrained=simulated/code-model,simulated=True", "batch_size": 1, "bootstrap_iters": 100000, "random_seed": 0, "numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 1234},
		"git_hash":         "simulated",
		"date":             1768471200.0,
		"pretty_env_info":  "Python version: 3.11.7 (main) [GCC 13.2.0] (64-bit runtime)\nVersions of relevant libraries:\n[pip3] numpy==1.26.4",
		"lm_eval_version":  "0.4.9.1",
		"model_name":       "simulated/code-model",
	}
	rb, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(dir, "results_"+date+".json"), rb); err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(dir, samplesName(task, date)), lines.Bytes()); err != nil {
		return nil, err
	}
	return out, nil
}

// passAtK is code_eval's estimator, as lm-eval logs it per document.
func passAtK(n, c, k int) float64 {
	if n-c < k {
		return 1.0
	}
	prod := 1.0
	for i := n - c + 1; i <= n; i++ {
		prod *= 1.0 - float64(k)/float64(i)
	}
	return 1.0 - prod
}

// pyFloat is a float written as Python's json.dumps writes it (1.0, not 1).
type pyFloat float64

func (f pyFloat) MarshalJSON() ([]byte, error) { return pynum.AppendJSONFloat(nil, float64(f)), nil }

type kv struct {
	k string
	v any
}

// marshalOrdered writes an object with its keys in the order lm-eval logs
// them.
func marshalOrdered(fields []kv) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		k, _ := json.Marshal(f.k)
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteString(": ")
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
