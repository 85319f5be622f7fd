package analysis

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// pyExtractCodeBlocks is mbpp utils.extract_code_blocks as lm-eval v0.4.9+ has it,
// run by Debian's python3 on each input.
const pyExtractCodeBlocks = `
import json, re, sys
def extract(text):
    pattern = r"` + "```" + `(?:\w+)?\n?(.*?)\n?` + "```" + `"
    m = re.findall(pattern, r"` + "```" + `" + text, re.DOTALL)
    if not m:
        m = re.findall(pattern, re.sub(r"` + "```" + `python", "` + "```" + `", text), re.DOTALL)
    return m[0] if m else ""
print(json.dumps([extract(t) for t in json.load(sys.stdin)]))
`

func TestExtractCodeBlockAgainstPython(t *testing.T) {
	py := testenv.Python(t)
	in := []string{
		"def f():\n    return 1\n```\nmore",
		"python\ndef f():\n    return 1\n```",
		"no fence at all",
		"text ```python\ndef g(): pass\n``` after",
		"```\n```",
		"a\n```python\nx = 1\n```\n```python\ny = 2\n```",
		"\n```python\nimport os\n```",
		"unterminated ```python\nx",
	}
	b, _ := json.Marshal(in)
	cmd := exec.Command(py, "-c", pyExtractCodeBlocks)
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, s := range in {
		if got := extractCodeBlock(s); got != want[i] {
			t.Errorf("extractCodeBlock(%q) = %q, Python %q", s, got, want[i])
		}
	}
}

// build_predictions_instruct cut at the last ``` until v0.4.9 and at the
// first from v0.4.9.1 (lm_eval/tasks/humaneval/utils.py).
func TestHumanevalInstructFence(t *testing.T) {
	sample := func() *harness.Sample {
		return &harness.Sample{
			Doc:    []byte(`{"prompt": "def f():\n"}`),
			Target: harness.Value{Kind: harness.String, Str: "assert f() == 1"},
			Resps: harness.Value{Kind: harness.List, List: []harness.Value{{Kind: harness.List, List: []harness.Value{
				{Kind: harness.String, Str: "    return 1\n```\nexplanation ```x```"}}}}},
		}
	}
	for _, c := range []struct {
		v    harness.Version
		want string
	}{
		{harness.Version{0, 4, 9}, "def f():\n    return 1\n```\nexplanation ```x"},
		{harness.Version{0, 4, 9, 1}, "def f():\n    return 1\n"},
	} {
		ct := detectCodeTask("humaneval_instruct", harness.Value{}, harness.VersionRange{Lo: c.v, Hi: c.v})
		if ct == nil || ct.style != humanevalInstruct {
			t.Fatalf("humaneval_instruct not recognised: %+v", ct)
		}
		preds, test, err := ct.predictions(sample())
		if err != nil {
			t.Fatal(err)
		}
		if len(preds) != 1 || preds[0] != c.want || test != "assert f() == 1" {
			t.Errorf("%v: %q, %q; want %q", c.v, preds, test, c.want)
		}
	}
}
