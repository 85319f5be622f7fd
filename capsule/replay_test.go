package capsule_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/internal/fixtures"
	"github.com/evalcapsule/evalcapsule/study"
	"github.com/klauspost/compress/zstd"
	"github.com/opencontainers/go-digest"
)

// Replay of a packed study re-derives every number identically, keeps
// what it unpacked in a new workdir, and refuses a workdir that holds
// something.
func TestReplay(t *testing.T) {
	ctx := context.Background()
	_, layout := packedLayout(t)
	c, err := capsule.Open(ctx, layout, capsule.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	work := filepath.Join(t.TempDir(), "new", "work")
	rep, err := capsule.Replay(ctx, c, capsule.ReplayOptions{Workdir: work})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Compared == 0 || len(rep.Diffs) != 0 || rep.Level != "rescore" || rep.Capsule != c.Descriptor.Digest.String() {
		t.Errorf("replay: ok %v, %d compared, %d diffs, level %s, capsule %s", rep.OK, rep.Compared, len(rep.Diffs), rep.Level, rep.Capsule)
	}
	if rep.Tables == nil || len(rep.Tables.Attribution.Claims) != len(c.Config.Attribution.Claims) {
		t.Errorf("replayed tables: %+v", rep.Tables)
	}
	if _, err := os.Stat(filepath.Join(work, "study", "study.yaml")); err != nil {
		t.Errorf("the unpacked study is not kept: %v", err)
	}
	if _, err := capsule.Replay(ctx, c, capsule.ReplayOptions{Workdir: work}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a workdir that holds something: %v", err)
	}
}

// A replay given no workdir works in a temporary directory ("capsule-replay-N")
// that it removes; one a killed replay left (no one holding it) goes at the
// next replay.
func TestReplayRemovesLeftovers(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	stale := filepath.Join(tmp, "capsule-replay-1414213562")
	if err := os.MkdirAll(filepath.Join(stale, "study", "runs"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, layout := packedLayout(t)
	c := mustOpen(t, layout, capsule.OpenOptions{})
	defer c.Close()
	if _, err := capsule.Replay(ctx, c, capsule.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in the temporary directory: %v", entries)
	}
}

// BenchmarkReplayHostile replays a capsule whose samples file holds one
// line of 96 MiB, past harness.MaxSampleLine (64 MiB), of text that
// compresses too little for the ratio cap to stop it: the line reaches the
// reader, which refuses it without holding it. peak-heap-MB is what the
// replay cost above the heap before it, to set against the line limit.
func BenchmarkReplayHostile(b *testing.B) {
	const lineBytes = 96 << 20
	line := make([]byte, 0, lineBytes+64)
	line = append(line, `{"doc_id": 0, "doc": {"question": "`...)
	rng := rand.New(rand.NewPCG(1, 2))
	const hexDigits = "0123456789abcdef"
	for len(line) < lineBytes {
		line = append(line, hexDigits[rng.IntN(16)])
	}
	line = append(line, "\"}}\n"...)
	var z bytes.Buffer
	enc, err := zstd.NewWriter(&z, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(capsule.MaxZstdWindow))
	if err != nil {
		b.Fatal(err)
	}
	enc.Write(line)
	enc.Close()
	_, layout := packedLayout(b)
	zstdLayer(b, layout, z.Bytes(), int64(len(line)), digest.FromBytes(line))
	line = nil
	ctx := context.Background()
	var peak uint64
	for b.Loop() {
		c, err := capsule.Open(ctx, layout, capsule.OpenOptions{})
		if err != nil {
			b.Fatal(err)
		}
		p := peakHeap(func() {
			_, err = capsule.Replay(ctx, c, capsule.ReplayOptions{})
		})
		c.Close()
		if !errors.Is(err, harness.ErrTooLarge) {
			b.Fatalf("replay of a 96 MiB line: %v", err)
		}
		peak = max(peak, p)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peak)/float64(harness.MaxSampleLine), "peak/line-limit")
}

// peakHeap runs fn and returns the largest growth of the live heap seen
// while it ran, sampled every millisecond.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: sample[0].Name}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// sweptCapsule runs a small study with the simulated runner and packs it:
// a capsule whose runs a simulated rerun writes again byte for byte.
func sweptCapsule(t *testing.T) *capsule.Capsule {
	t.Helper()
	dir := t.TempDir()
	const yaml = `study: rerun
model: {id: simulated/model-1b}
card:
  claims:
    - {task: gsm8k, metric: exact_match, filter: strict-match, value: 0.45}
harness: {version: 0.4.9.1}
runner: {kind: simulated}
baseline: {model: hf, tasks: [gsm8k], limit: 20, log_samples: true}
`
	if err := os.WriteFile(filepath.Join(dir, study.FileName), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := study.Sweep(context.Background(), s, study.SweepOptions{Runner: simulate.Runner{Effects: simulate.DefaultEffects()}, RunnerKind: "simulated", Simulated: true}); err != nil {
		t.Fatal(err)
	}
	layout := filepath.Join(t.TempDir(), "c")
	if _, err := capsule.Pack(context.Background(), s, layout, capsule.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	return mustOpen(t, layout, capsule.OpenOptions{})
}

// oneDocRunner runs the simulated backend, then changes the generated text
// of one document (in every samples file, under every filter): a rerun
// whose scores are the same and whose generations are not.
type oneDocRunner struct {
	simulate.Runner
	doc int
}

func (r oneDocRunner) Run(ctx context.Context, dir string, progress func(harness.Progress)) error {
	if err := r.Runner.Run(ctx, dir, progress); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dir, harness.OutputDir, "*", "samples_*.jsonl"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no samples in %s (%v)", dir, err)
	}
	prefix := fmt.Sprintf(`{"doc_id": %d,`, r.doc)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		lines := strings.Split(string(b), "\n")
		changed := 0
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				lines[i] = strings.Replace(l, `"resps": [["`, `"resps": [["Let me think again. `, 1)
				if lines[i] != l {
					changed++
				}
			}
		}
		if changed == 0 {
			return fmt.Errorf("%s: no line of doc %d to change", f, r.doc)
		}
		if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// A rerun that reproduces every score but changes one document's
// generation fails and names that document; with generations tolerated it
// passes and says that generations differed and were tolerated. A faithful
// rerun passes with no document named.
func TestReplayRerunNamesDifferingDocument(t *testing.T) {
	ctx := context.Background()
	c := sweptCapsule(t)
	sim := simulate.Runner{Effects: simulate.DefaultEffects()}

	rep, err := capsule.Replay(ctx, c, capsule.ReplayOptions{Runner: sim, RunnerKind: "simulated"})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || len(rep.Reruns) != 1 || len(rep.Reruns[0].Documents) != 1 || rep.Reruns[0].Documents[0].Differ != 0 {
		t.Fatalf("a faithful rerun: ok %v, %+v\n%s", rep.OK, rep.Reruns, rep)
	}
	if d := rep.Reruns[0].Documents[0]; d.Documents != 20 || d.Identical != 20 {
		t.Errorf("a faithful rerun compared %d documents, %d identical; want 20", d.Documents, d.Identical)
	}

	const doc = 7
	rep, err = capsule.Replay(ctx, c, capsule.ReplayOptions{Runner: oneDocRunner{sim, doc}, RunnerKind: "simulated"})
	if err != nil {
		t.Fatal(err)
	}
	rc := rep.Reruns[0]
	if rep.OK || rc.OK {
		t.Errorf("a rerun with one other generation is OK:\n%s", rep)
	}
	for _, task := range rc.Tasks {
		if !task.WithinCI || task.Delta != 0 || task.GenerationsDiffer != 1 {
			t.Errorf("%s %s,%s: within CI %v, Δ %v, %d documents differ; want the same score and 1", task.Task, task.Metric, task.Filter, task.WithinCI, task.Delta, task.GenerationsDiffer)
		}
	}
	d := rc.Documents[0]
	if d.Differ != 1 || d.Identical != 19 || len(d.Diffs) != 1 || d.Kinds[study.DiffResponse] != 1 {
		t.Fatalf("documents: %+v", d)
	}
	got := d.Diffs[0]
	if got.DocID != doc || got.Kind != study.DiffResponse || got.Field != "resps[0][0]" || got.Offset != 0 ||
		strings.HasPrefix(got.Packed, "Let me think again.") || !strings.HasPrefix(got.Rerun, "Let me think again. ") || got.Tolerated {
		t.Errorf("the difference: %+v", got)
	}
	text := rep.String()
	for _, want := range []string{
		"baseline: gsm8k: 1 of 20 documents DIFFER from the packed run (response 1)",
		fmt.Sprintf("doc %d resps[0][0] (response): packed ", doc),
		`rerun "Let me think again. `,
		"\nFAILED",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the replay does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\nOK") {
		t.Errorf("the replay says OK:\n%s", text)
	}

	rep, err = capsule.Replay(ctx, c, capsule.ReplayOptions{Runner: oneDocRunner{sim, doc}, RunnerKind: "simulated", TolerateGenerations: true})
	if err != nil {
		t.Fatal(err)
	}
	rc = rep.Reruns[0]
	if !rep.OK || !rc.OK || rc.Tolerated != 1 || !rep.TolerateGenerations || !rc.Documents[0].Diffs[0].Tolerated || rc.Documents[0].Diffs[0].DocID != doc {
		t.Errorf("tolerated: ok %v, %+v", rep.OK, rc)
	}
	text = rep.String()
	for _, want := range []string{
		"1 of 20 documents differ from the packed run: TOLERATED",
		fmt.Sprintf("doc %d resps[0][0] (response)", doc),
		"OK: the capsule's scores are reproduced; the generations of 1 document(s) DIFFER and were tolerated (--tolerate generations)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the tolerated replay does not say %q:\n%s", want, text)
		}
	}
}

// a100Runner runs the simulated backend and records, as the machine it ran
// on, the A100 of a real nvidia-smi -q -x capture.
type a100Runner struct {
	simulate.Runner
	smi []byte
}

func (r a100Runner) Run(ctx context.Context, dir string, progress func(harness.Progress)) error {
	if err := r.Runner.Run(ctx, dir, progress); err != nil {
		return err
	}
	rec, err := harness.ReadRecord(dir)
	if err != nil {
		return err
	}
	x, err := harness.ParseNvidiaSmiXML(r.smi)
	if err != nil {
		return err
	}
	rec.Env = &harness.Environment{NvidiaSmi: &x, GPUs: x.GPUs, DriverVersion: x.DriverVersion, CUDAVersion: x.CUDAVersion}
	return harness.WriteRecord(dir, rec)
}

// A rerun on a machine the packed run did not record names the GPU, driver
// and CUDA it ran with, the packed side unknown; the environment alone
// does not fail it.
func TestReplayRerunListsEnvironment(t *testing.T) {
	smi, err := os.ReadFile(filepath.Join(fixtures.Dir(t, "nvidia-smi"), "telegraf-a100-sxm4-v12.xml"))
	if err != nil {
		t.Fatal(err)
	}
	c := sweptCapsule(t)
	rep, err := capsule.Replay(context.Background(), c, capsule.ReplayOptions{Runner: a100Runner{simulate.Runner{Effects: simulate.DefaultEffects()}, smi}, RunnerKind: "simulated"})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Errorf("an environment difference alone fails the replay:\n%s", rep)
	}
	text := rep.String()
	for _, want := range []string{
		"gpu: packed unknown, rerun NVIDIA A100-SXM4-80GB ×1",
		"driver: packed unknown, rerun 535.54.03",
		"cuda: packed unknown, rerun 12.2",
		"reported, not a failure by itself",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the replay does not say %q:\n%s", want, text)
		}
	}
}
