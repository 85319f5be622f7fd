package harness

import (
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	testfixtures "github.com/evalcapsule/evalcapsule/internal/fixtures"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// fixtures is the folder of real lm-eval outputs shared with the project.
// Tests skip when it is missing, unless CI (see package internal/fixtures).
func fixtures(t testing.TB) string {
	t.Helper()
	return testfixtures.Dir(t, "lm-eval")
}

func readAll(t *testing.T, f SampleFile) []*Sample {
	t.Helper()
	r, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []*Sample
	for {
		s, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s.Clone())
	}
}

func TestFindPairsByTimestamp(t *testing.T) {
	dir := fixtures(t)
	outs, err := Find(filepath.Join(dir, "phi3mini-gsm8k-thesis"))
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 5 {
		t.Fatalf("found %d runs, want the 5 results files", len(outs))
	}
	for _, o := range outs {
		if o.Results == nil || len(o.Samples) != 1 {
			t.Fatalf("%s: results %v, %d samples files", o.Path(), o.Results != nil, len(o.Samples))
		}
		// The results are named gsm8k-phi-3-mini_<ts>.json, the samples
		// samples_gsm8k_<ts>.jsonl: only the timestamp pairs them.
		if !strings.Contains(o.Samples[0].Path, o.Timestamp) {
			t.Errorf("%s paired with %s", o.Results.Path, o.Samples[0].Path)
		}
	}
}

func TestReadSamplesFixture(t *testing.T) {
	dir := fixtures(t)
	outs, err := Find(filepath.Join(dir, "phi3mini-gsm8k-thesis", "gsm8k-phi-3-mini_2025-08-07T11-42-40.066002.json"))
	if err != nil {
		t.Fatal(err)
	}
	samples := readAll(t, outs[0].Samples[0])
	if len(samples) != 20 {
		t.Fatalf("%d lines, want 20", len(samples))
	}
	// Filters outermost, docs innermost.
	for i, s := range samples {
		want := "strict-match"
		if i >= 10 {
			want = "flexible-extract"
		}
		if s.Filter != want || s.DocID != i%10 || s.Line != i+1 {
			t.Errorf("line %d: filter %q doc %d", s.Line, s.Filter, s.DocID)
		}
	}
	s := samples[0]
	if s.Resps.Kind != List || s.Resps.List[0].List[0].Kind != String || !strings.Contains(s.Resps.List[0].List[0].Str, "Janet") {
		t.Errorf("resps = %s", s.Resps)
	}
	if v, ok := s.Value("exact_match"); !ok || v.Num != 0 || v.IsInt {
		t.Errorf("exact_match = %v", v)
	}
	doc, err := s.DocValue()
	if err != nil || !doc.Has("question") {
		t.Errorf("doc: %v %v", doc, err)
	}
}

func TestResultsFixture(t *testing.T) {
	dir := fixtures(t)
	r, err := ReadResults(filepath.Join(dir, "harness-pr2809-mmlu-groups/results/meta-llama__Llama-3.2-1B/results_2025-03-03T00-05-19.750676.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(r.Leaves("mmlu")); got != 57 {
		t.Errorf("mmlu has %d leaves, want 57", got)
	}
	if got := r.Members("mmlu"); len(got) != 4 {
		t.Errorf("mmlu members %v", got)
	}
	mmlu, _ := r.Task("mmlu")
	if m := mmlu.Metrics[0]; m.Metric != "acc" || m.Filter != "none" || m.Value.Num != 0.3673978065802592 || m.Stderr.Num != 0.004005861705365989 {
		t.Errorf("mmlu metric %+v", m)
	}
	if ns := r.NSamples["mmlu_abstract_algebra"]; ns.Effective != 100 {
		t.Errorf("n-samples %+v", ns)
	}
	if got := r.ModelArgs(); got != "pretrained=meta-llama/Llama-3.2-1B,trust_remote_code=True" {
		t.Errorf("model_args %q", got)
	}
}

func TestResultsNA(t *testing.T) {
	dir := fixtures(t)
	r, err := ReadResults(filepath.Join(dir, "phi3mini-gsm8k-thesis/gsm8k-phi-3-mini_2025-08-11T10-06-10.578233.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := r.Task("gsm8k")
	for _, m := range g.Metrics {
		if m.Stderr.Kind != String || m.Stderr.Str != "N/A" {
			t.Errorf("%s stderr = %s, want \"N/A\"", m.Key(), m.Stderr)
		}
	}
	maj, min, text, ok := r.PythonVersion()
	if !ok || maj != 3 || min != 10 || text != "3.10.12" {
		t.Errorf("python %d.%d %q %v", maj, min, text, ok)
	}
}

func TestModelArgsDict(t *testing.T) {
	r, err := ParseResults("x.json", []byte(`{"results": {}, "configs": {}, "config": {"model_args": {"pretrained": "m", "dtype": "bfloat16", "trust_remote_code": true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.ModelArgs(); got != "pretrained=m,dtype=bfloat16,trust_remote_code=True" {
		t.Errorf("got %q", got)
	}
}

func TestPlaceholderGroup(t *testing.T) {
	r, err := ParseResults("x.json", []byte(`{"results": {"g": {"alias": "g", " ": " "}, "t": {"alias": " - t", "acc,none": 0.5, "acc_stderr,none": "N/A"}},
		"group_subtasks": {"g": ["t"], "t": []}, "configs": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := r.Task("g")
	if !g.Placeholder || len(g.Metrics) != 0 {
		t.Errorf("g = %+v", g)
	}
	vr := DetectVersion(r, false, false)
	if !vr.Lo.AtLeast(Version{0, 4, 4}) {
		t.Errorf("version %s, want >= 0.4.4 from the placeholder", vr)
	}
}

func TestDerivedSubtasks(t *testing.T) {
	// v0.4.0/v0.4.1 files have no group_subtasks: the aliases carry depth.
	r, err := ParseResults("results.json", []byte(`{"results": {
		"mmlu": {"acc,none": 0.5, "alias": "mmlu"},
		"mmlu_stem": {"acc,none": 0.5, "alias": " - stem"},
		"mmlu_a": {"acc,none": 0.5, "alias": "  - a"},
		"mmlu_b": {"acc,none": 0.5, "alias": "  - b"},
		"mmlu_other": {"acc,none": 0.5, "alias": " - other"},
		"mmlu_c": {"acc,none": 0.5, "alias": "  - c"},
		"arc": {"acc,none": 0.5, "alias": "arc"}}, "configs": {}, "versions": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !r.SubtasksDerived {
		t.Fatal("not derived")
	}
	if got := strings.Join(r.Leaves("mmlu"), ","); got != "mmlu_a,mmlu_b,mmlu_c" {
		t.Errorf("leaves %s", got)
	}
	if r.IsGroup("arc") {
		t.Error("arc is a task")
	}
	if vr := DetectVersion(r, false, true); vr.Hi != (Version{0, 4, 1}) {
		t.Errorf("version %s", vr)
	}
}

func TestLegacyArraySamples(t *testing.T) {
	dir := t.TempDir()
	// v0.4.0-v0.4.2: results.json and one JSON array per task, named after
	// the model_args.
	os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"results": {"arc_easy": {"acc,none": 0.5, "acc_stderr,none": 0.5, "alias": "arc_easy"}},
		"configs": {"arc_easy": {"task": "arc_easy", "output_type": "multiple_choice"}}, "versions": {"arc_easy": 1.0},
		"config": {"model": "hf", "model_args": "pretrained=EleutherAI/pythia-70m"}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "pretrained__EleutherAI__pythia-70m_arc_easy.jsonl"), []byte(`[
  {
    "doc_id": 0,
    "doc": {"q": "a \"quoted\" ] brace }"},
    "target": 1,
    "arguments": [["ctx", " A"], ["ctx", " B"]],
    "resps": [[[-1.5, false]], [[-0.5, true]]],
    "filtered_resps": [[-1.5, false], [-0.5, true]],
    "acc": 1.0
  },
  {
    "doc_id": 1,
    "doc": {"q": "x"},
    "target": 0,
    "arguments": [["ctx", " A"], ["ctx", " B"]],
    "resps": [[[-1.5, false]], [[-0.5, true]]],
    "filtered_resps": [[-1.5, false], [-0.5, true]],
    "acc": 0.0
  }
]`), 0o644)
	outs, err := Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || len(outs[0].Samples) != 1 || outs[0].Samples[0].Task != "arc_easy" {
		t.Fatalf("outs %+v", outs)
	}
	ss := readAll(t, outs[0].Samples[0])
	if len(ss) != 2 || ss[1].DocID != 1 || string(ss[0].Doc) != `{"q": "a \"quoted\" ] brace }"}` {
		t.Fatalf("samples %+v", ss)
	}
	ll, _ := ss[0].Filtered.List[1].List[0].Float()
	if ll != -0.5 {
		t.Errorf("ll %v", ll)
	}
}

func TestTruncatedLine(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(fixtures(t), "phi3mini-gsm8k-thesis/samples_gsm8k_2025-08-07T11-42-40.066002.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	cut := strings.Join(lines[:3], "") + lines[3][:len(lines[3])/2]
	path := filepath.Join(dir, "samples_gsm8k_2025-08-07T11-42-40.066002.jsonl")
	os.WriteFile(path, []byte(cut), 0o644)
	r, _ := OpenSamples(path)
	defer r.Close()
	var last error
	for i := 0; i < 10; i++ {
		if _, last = r.Next(); last != nil {
			break
		}
	}
	var fe *FileError
	if !errors.As(last, &fe) || fe.Line != 4 || !errors.Is(last, ErrTruncated) || !strings.Contains(last.Error(), path+":4") {
		t.Fatalf("got %v, want a truncation error at %s line 4", last, path)
	}
}

func TestNotLMEval(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "package.json")
	os.WriteFile(p, []byte(`{"name": "x", "version": "1.0.0"}`), 0o644)
	_, err := Find(p)
	if !errors.Is(err, ErrNotLMEval) || !strings.Contains(err.Error(), p) {
		t.Fatalf("got %v", err)
	}
	// In a directory, other JSON files are ignored; with nothing else the
	// error says so.
	if _, err := Find(dir); !errors.Is(err, ErrNoOutput) {
		t.Fatalf("got %v", err)
	}
	bad := filepath.Join(dir, "results_2025-01-01T00-00-00.000000.json")
	os.WriteFile(bad, []byte(`{"results": {"t": {"acc,none": 0.5}}, "configs": {"t": 3}}`), 0o644)
	_, err = Find(bad)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Field != `configs["t"]` {
		t.Fatalf("got %v, want an error naming configs[\"t\"]", err)
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	_, err := ParseResults("r.json", []byte("{\"results\": {\n  \"t\": {\"acc,none\": 0.5,}\n}}"))
	var fe *FileError
	if !errors.As(err, &fe) || fe.Line != 2 || !errors.Is(err, ErrSyntax) {
		t.Fatalf("got %v", err)
	}
}

// TestFormatFloatMatchesPython compares the float repr with Debian's Python.
func TestFormatFloatMatchesPython(t *testing.T) {
	vals := []float64{0, 1, -1, 0.1, 0.09999999999999999, 1e-05, 0.0001, 123456789012345678, 1e16, 9999999999999998, 1.5e300, 5e-324, math.MaxFloat64, 0.3673978065802592, -9.536740890325746e-07, 100, 2.5}
	var in []string
	for _, v := range vals {
		in = append(in, strconvHex(v))
	}
	out := python(t, `import sys
for line in sys.stdin.read().split():
    print(repr(float.fromhex(line)))`, strings.Join(in, "\n"))
	want := strings.Fields(out)
	for i, v := range vals {
		if got := FormatFloat(v, false); got != want[i] {
			t.Errorf("FormatFloat(%v) = %s, Python repr %s", v, got, want[i])
		}
	}
}

func strconvHex(f float64) string { return strings.Replace(formatHex(f), "p", "p", 1) }

func formatHex(f float64) string {
	return strconvFormatFloat(f, 'x')
}

// python runs Debian's Python (not whatever python3 is on PATH).
func python(t testing.TB, script, stdin string) string {
	t.Helper()
	py := testenv.Python(t)
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	return string(out)
}

// TestMain lists the parts outside Go that tests skipped for.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
