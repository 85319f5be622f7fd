package sandbox

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// benchProgram is a HumanEval-sized check: a function and its asserts.
const benchProgram = `def running_max(xs):
    out = []
    for x in xs:
        out.append(x if not out else max(out[-1], x))
    return out


def check(candidate):
    assert candidate([]) == []
    assert candidate([1, 3, 2, 5]) == [1, 3, 3, 5]
    assert candidate(list(range(1000)))[-1] == 999

check(running_max)
`

// BenchmarkPrograms runs the same passing program as one process per
// completion, GOMAXPROCS at a time: "sandbox" under bubblewrap as
// rescore --execute-code does, "plain" under python3 alone with the same
// driver (code_eval's execution, no sandbox). The ratio of their ns/op is
// the sandbox's overhead; 1e9/ns-per-op is completions per second.
// bench/code.sh prints both.
func BenchmarkPrograms(b *testing.B) {
	testenv.Command(b, "bwrap")
	py := testenv.Python(b)
	s, err := New(context.Background(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sandbox", func(b *testing.B) {
		var failed atomic.Int64
		b.SetParallelism(1)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r, err := s.Run(context.Background(), benchProgram)
				if err != nil || r.Outcome != Passed {
					failed.Add(1)
				}
			}
		})
		if failed.Load() > 0 {
			b.Fatalf("%d runs did not pass", failed.Load())
		}
	})
	b.Run("plain", func(b *testing.B) {
		work := b.TempDir()
		lim, _ := json.Marshal(map[string]any{"timeout": 3.0, "cpu": 5, "memory": 2 << 30, "procs": 4096, "file_size": 16 << 20, "workdir": work})
		var failed atomic.Int64
		b.SetParallelism(1)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				cmd := exec.Command(py, "-I", "-c", driver, string(lim))
				cmd.Stdin = strings.NewReader(benchProgram)
				out, err := cmd.Output()
				if err != nil || !strings.Contains(string(out), `"passed"`) {
					failed.Add(1)
				}
			}
		})
		if failed.Load() > 0 {
			b.Fatalf("%d runs did not pass", failed.Load())
		}
	})
}
