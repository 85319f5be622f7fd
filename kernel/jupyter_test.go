package kernel_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// These tests drive the kernel through Debian's Jupyter: the conformance
// suite (python3-jupyter-kernel-test), jupyter_client, and nbconvert on
// every notebook under notebooks/. Without those packages they skip, naming
// the apt line (internal/testenv), and fail under CI, which installs them.

const debianPython = "/usr/bin/python3"

// jupyterEnv is a kernel built from this tree and installed into a
// temporary Jupyter data directory, shared by the tests of one run.
type jupyterEnv struct {
	bin  string   // the capsule binary
	env  []string // JUPYTER_PATH and friends, pointing into the temporary tree
	root string
}

var (
	envOnce sync.Once
	envVal  *jupyterEnv
	envErr  error
)

// TestMain removes the built kernel when the tests are done.
func TestMain(m *testing.M) {
	code := testenv.Main(m)
	if envVal != nil {
		os.RemoveAll(envVal.root)
	}
	os.Exit(code)
}

func requireJupyter(t *testing.T) *jupyterEnv {
	t.Helper()
	testenv.Python(t, "jupyter_client", "jupyter_kernel_test", "nbconvert", "nbclient", "ipykernel")
	testenv.Command(t, "jupyter")
	envOnce.Do(func() { envVal, envErr = buildEnv() })
	if envErr != nil {
		t.Fatal(envErr)
	}
	return envVal
}

// buildEnv builds capsule and installs two kernelspecs into a temporary
// prefix: evalcapsule-go (interrupt_mode message) and
// evalcapsule-go-signal.
func buildEnv() (*jupyterEnv, error) {
	root, err := os.MkdirTemp("", "kernel-jupyter-")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(root, "capsule")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/evalcapsule/evalcapsule/cmd/capsule").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %v\n%s", err, out)
	}
	prefix := filepath.Join(root, "prefix")
	for _, args := range [][]string{
		{"kernel", "install", "--prefix", prefix},
		{"kernel", "install", "--prefix", prefix, "--name", "evalcapsule-go-signal", "--interrupt-mode", "signal"},
	} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("capsule %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	env := append(os.Environ(),
		"JUPYTER_PATH="+filepath.Join(prefix, "share", "jupyter"),
		"JUPYTER_DATA_DIR="+filepath.Join(root, "data"),
		"JUPYTER_CONFIG_DIR="+filepath.Join(root, "config"),
		"JUPYTER_RUNTIME_DIR="+filepath.Join(root, "runtime"),
		"XDG_DATA_HOME="+filepath.Join(root, "xdg"), // the kernel's history file
		"IPYTHONDIR="+filepath.Join(root, "ipython"),
		"PYDEVD_DISABLE_FILE_VALIDATION=1",
		"PYTHONDONTWRITEBYTECODE=1", // no __pycache__ in testdata/
		"EVALCAPSULE_KERNEL_NAME=evalcapsule-go",
	)
	return &jupyterEnv{bin: bin, env: env, root: root}, nil
}

// python runs Debian's Python on args in testdata/, with a fresh history.
func (j *jupyterEnv) python(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(debianPython, args...)
	cmd.Dir = "testdata"
	cmd.Env = append(append([]string{}, j.env...), "XDG_DATA_HOME="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

var ranRE = regexp.MustCompile(`(?m)^Ran (\d+) tests? in`)

// checkUnittest fails unless a unittest run passed every test, skipping
// none.
func checkUnittest(t *testing.T, out string, err error, min int) {
	t.Helper()
	t.Log(out)
	if err != nil {
		t.Fatalf("unittest failed: %v", err)
	}
	m := ranRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatal("no unittest summary in the output")
	}
	var n int
	fmt.Sscan(m[1], &n)
	if n < min {
		t.Errorf("ran %d tests, want at least %d", n, min)
	}
	if strings.Contains(out, "skipped") {
		t.Error("a test was skipped: every test of the suite must be configured")
	}
	if !regexp.MustCompile(`(?m)^OK$`).MatchString(out) {
		t.Error("unittest did not report OK")
	}
}

// TestConformance runs Jupyter's kernel conformance suite, every test
// configured (testdata/conformance.py).
func TestConformance(t *testing.T) {
	j := requireJupyter(t)
	out, err := j.python(t, "-m", "unittest", "-v", "conformance")
	checkUnittest(t, out, err, 12)
}

// TestClient checks through jupyter_client what the suite does not:
// interrupts in both modes, restart, shutdown, stdin, history, display
// updates, forged and malformed messages, an oversized frame, hostile
// cells, redefinitions seen by earlier code, and the checks made as Go
// does (testdata/client_checks.py).
func TestClient(t *testing.T) {
	j := requireJupyter(t)
	out, err := j.python(t, "-m", "unittest", "-v", "client_checks")
	checkUnittest(t, out, err, 27)
}

// notebookWant is what a notebook's executed outputs must hold, beyond
// running without an error.
type notebookWant struct {
	png   bool     // an image/png output
	table bool     // a text/html output holding a <table>
	first string   // in the first output
	texts []string // each in some output
}

// notebookWants returns the expectations of the notebooks that have any.
// Without nvidia-smi the attribution notebook must say at once that it
// falls back to the simulated backend.
func notebookWants() map[string]notebookWant {
	attribution := notebookWant{png: true, table: true}
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		attribution.first = "SIMULATED: no GPU found"
	}
	return map[string]notebookWant{
		"quickstart.ipynb":  {png: true, table: true},
		"attribution.ipynb": attribution,
		"review.ipynb":      {texts: []string{"Verification: ok.", "all identical to the packed tables"}},
	}
}

// executedOutput is one output of a notebook nbconvert executed.
type executedOutput struct {
	OutputType string                     `json:"output_type"`
	Ename      string                     `json:"ename"`
	Evalue     string                     `json:"evalue"`
	Text       json.RawMessage            `json:"text"`
	Data       map[string]json.RawMessage `json:"data"`
}

// outputText is a notebook string field: a string or a list of lines.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var lines []string
	json.Unmarshal(raw, &lines)
	return strings.Join(lines, "")
}

// all is the output's text in every form it has.
func (o executedOutput) all() string {
	parts := []string{o.Ename, o.Evalue, outputText(o.Text)}
	for _, v := range o.Data {
		parts = append(parts, outputText(v))
	}
	return strings.Join(parts, "\n")
}

// checkOutputs fails unless outs, a notebook's outputs in order, hold what
// want asks for.
func checkOutputs(t *testing.T, outs []executedOutput, want notebookWant) {
	t.Helper()
	png, table := false, false
	for _, o := range outs {
		_, hasPNG := o.Data["image/png"]
		png = png || hasPNG
		table = table || strings.Contains(outputText(o.Data["text/html"]), "<table")
	}
	if want.png && !png {
		t.Error("no image/png output")
	}
	if want.table && !table {
		t.Error("no text/html output with a <table>")
	}
	if want.first != "" && (len(outs) == 0 || !strings.Contains(outs[0].all(), want.first)) {
		first := "none"
		if len(outs) > 0 {
			first = outs[0].all()
		}
		t.Errorf("the first output does not say %q: %s", want.first, first)
	}
	for _, text := range want.texts {
		found := false
		for _, o := range outs {
			found = found || strings.Contains(o.all(), text)
		}
		if !found {
			t.Errorf("no output says %q", text)
		}
	}
}

// TestNotebooks executes every notebook under notebooks/ with nbconvert;
// any cell that fails fails the test, and so does a notebook whose outputs
// miss what notebookWants expects. The notebooks run in the modes a reader
// gets by default: CAPSULE_DEMO_STUDY and CAPSULE_REF are cleared, while
// EVALCAPSULE_REGISTRY, when CI sets it, sends the review notebook through
// that registry.
func TestNotebooks(t *testing.T) {
	j := requireJupyter(t)
	notebooks, _ := filepath.Glob("../notebooks/*.ipynb")
	if len(notebooks) == 0 {
		t.Fatal("no notebooks under ../notebooks")
	}
	wants := notebookWants()
	for _, nb := range notebooks {
		t.Run(filepath.Base(nb), func(t *testing.T) {
			outDir := t.TempDir()
			cmd := exec.Command("/usr/bin/jupyter", "nbconvert", "--to", "notebook", "--execute",
				"--ExecutePreprocessor.kernel_name=evalcapsule-go", "--ExecutePreprocessor.timeout=600",
				"--output-dir", outDir, nb)
			cmd.Env = append(append([]string{}, j.env...), "XDG_DATA_HOME="+t.TempDir(), "CAPSULE_DEMO_STUDY=", "CAPSULE_REF=")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("nbconvert --execute %s: %v\n%s", nb, err, out)
			}
			b, err := os.ReadFile(filepath.Join(outDir, filepath.Base(nb)))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Cells []struct {
					CellType string           `json:"cell_type"`
					Outputs  []executedOutput `json:"outputs"`
				} `json:"cells"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			var outs []executedOutput
			for i, c := range doc.Cells {
				for _, o := range c.Outputs {
					if o.OutputType == "error" {
						t.Errorf("cell %d: %s: %s", i, o.Ename, o.Evalue)
					}
				}
				outs = append(outs, c.Outputs...)
			}
			checkOutputs(t, outs, wants[filepath.Base(nb)])
		})
	}
}
