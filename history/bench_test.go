package history_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/evalcapsule/evalcapsule/gate"
	"github.com/evalcapsule/evalcapsule/history"
)

// benchSuite is a release suite at its real test sizes: what a team
// evaluates every checkpoint on.
var benchSuite = []struct {
	task, metric, filter string
	docs                 int
	members              int  // a group's member tasks (doc keys "member/id")
	continuous           bool // values in [0, 1], not 0/1
}{
	{"gsm8k", "exact_match", "strict-match", 1319, 0, false},
	{"mmlu", "acc", "none", 14042, 57, false},
	{"hellaswag", "acc_norm", "none", 10042, 0, false},
	{"truthfulqa_mc2", "acc", "none", 817, 0, true},
	{"humaneval", "pass@1", "create_test", 164, 0, false},
	{"bbh", "exact_match", "get-answer", 6511, 27, false},
}

// benchIndex writes an index of n simulated checkpoints of the suite
// (each a little better than the last, with per-document churn) and
// returns it with the checkpoints' refs, baseline first.
func benchIndex(b *testing.B, n int) (*history.Index, []string) {
	b.Helper()
	ctx := context.Background()
	x, err := history.OpenIndex(ctx, filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { x.Close() })
	r := rand.New(rand.NewPCG(1, 2))
	var refs []string
	for i := range n {
		c := &history.Checkpoint{
			Digest: fmt.Sprintf("sha256:%064x", i), Ref: fmt.Sprintf("registry.example/team/llama:step-%d", i*500),
			Repo: "registry.example/team/llama", Name: fmt.Sprintf("step-%d", i*500), Step: int64(i * 500),
			Model: "team/llama", Identity: gate.Identity{HarnessVersion: "0.4.9.1", TaskHashes: map[string]string{}},
		}
		for _, s := range benchSuite {
			sc := &history.Score{Task: s.task, Metric: s.metric, Filter: s.filter, Higher: true}
			p := 0.4 + 0.002*float64(i)
			for d := range s.docs {
				key := fmt.Sprint(d)
				if s.members > 0 {
					key = fmt.Sprintf("%s_subject%02d/%d", s.task, d%s.members, d/s.members)
				}
				v := 0.0
				if s.continuous {
					v = min(1, max(0, p+0.2*r.NormFloat64()))
				} else if r.Float64() < p {
					v = 1
				}
				sc.Docs, sc.Values = append(sc.Docs, key), append(sc.Values, v)
			}
			c.Scores = append(c.Scores, sc)
			c.Identity.TaskHashes[s.task] = "hash-" + s.task
		}
		if err := x.Put(ctx, c); err != nil {
			b.Fatal(err)
		}
		refs = append(refs, c.Ref)
	}
	return x, refs
}

// BenchmarkGateFromIndex gates 50 checkpoints of a 6-task suite against
// the baseline from the index: reading every checkpoint's per-document
// values (GSM8K 1,319, MMLU 14,042, HellaSwag 10,042, TruthfulQA 817,
// HumanEval 164, BBH 6,511 documents) and gate.Evaluate under the default
// policy (paired bootstrap of 10,000 resamples, Holm), per iteration.
func BenchmarkGateFromIndex(b *testing.B) {
	x, refs := benchIndex(b, 51)
	ctx := context.Background()
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		cps, err := x.Load(ctx, refs)
		if err != nil {
			b.Fatal(err)
		}
		h, err := history.Build(cps, history.Options{Gate: history.GateWith(nil, nil)})
		if err != nil {
			b.Fatal(err)
		}
		for i, v := range h.Verdicts[1:] {
			if v.Verdict != gate.Pass && v.Verdict != gate.Regression {
				b.Fatalf("%s: %s %v", h.Checkpoints[i+1].Name, v.Verdict, v.Reasons)
			}
		}
	}
	// On a shared machine the wall clock counts other programs' time too;
	// the CPU seconds this process spent per gating of the line do not.
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is the CPU time (user + system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
