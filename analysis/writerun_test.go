package analysis_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeRun writes a constructed lm-eval output into dir: its results file
// and the samples file of task, both with the timestamp ts, as lm-eval
// names them.
func writeRun(t *testing.T, dir, ts, task, results, samples string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "results_"+ts+".json"), []byte(results), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "samples_"+task+"_"+ts+".jsonl"), []byte(samples), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pyMeanStderr is what lm-eval reports for a list of per-document values
// (metrics.py's mean and mean_stderr), computed by Debian's Python py:
// both as Python's repr.
func pyMeanStderr(t *testing.T, py string, values any) (string, string) {
	t.Helper()
	arg, _ := json.Marshal(values)
	out, err := exec.Command(py, "-c", `import json, math, sys
a = json.loads(sys.argv[1])
mu = sum(a) / len(a)
sd = math.sqrt(sum([(x - mu) ** 2 for x in a]) / (len(a) - 1))
print(repr(mu), repr(sd / math.sqrt(len(a))))`, string(arg)).Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		t.Fatalf("%s printed %q, want a mean and a stderr", py, out)
	}
	return f[0], f[1]
}
