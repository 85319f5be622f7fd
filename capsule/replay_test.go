package capsule_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
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
