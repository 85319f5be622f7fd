package harness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sampleLine returns a samples line of exactly n bytes (n ≥ 160) whose bulk
// is one response string, which the reader decodes (and so copies) rather
// than skips: the costliest kind of long line.
func sampleLine(id, n int) string {
	const tmpl = `{"doc_id": %d, "doc": {}, "target": 0, "arguments": {}, "resps": [["%s"]], "filtered_resps": [["-1.0", "True"]], "acc": 1}`
	pad := n - len(fmt.Sprintf(tmpl, id, ""))
	if pad < 0 {
		panic("line too short")
	}
	return fmt.Sprintf(tmpl, id, strings.Repeat("x", pad))
}

// writeLines writes a samples file of lines of the given lengths.
func writeLines(t testing.TB, lengths ...int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "samples_t_"+testTS+".jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i, n := range lengths {
		w.WriteString(sampleLine(i, n))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func setMaxSampleLine(t testing.TB, n int) {
	old := MaxSampleLine
	MaxSampleLine = n
	t.Cleanup(func() { MaxSampleLine = old })
}

// TestSampleLineLimit: a line of MaxSampleLine bytes is read, one byte more
// is an error naming the file and the line, and reading stops there. Both
// a limit below the reader's 1 MiB buffer and one above it.
func TestSampleLineLimit(t *testing.T) {
	for _, limit := range []int{100 << 10, 3 << 20} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			setMaxSampleLine(t, limit)
			p := writeLines(t, 200, limit, limit+1, 200)
			n, err := readErr(p)
			fe := wantFileError(t, err, p, ErrTooLarge, fmt.Sprintf("the line is %d bytes, over the %d-byte limit", limit+1, limit), "harness.MaxSampleLine")
			if fe.Line != 3 || n != 2 {
				t.Fatalf("error on line %d after %d samples, want line 3 after 2", fe.Line, n)
			}
			// As the last line, without a newline.
			p2 := writeLines(t, 200, limit+5)
			b, _ := os.ReadFile(p2)
			os.WriteFile(p2, b[:len(b)-1], 0o644)
			_, err = readErr(p2)
			wantFileError(t, err, p2, ErrTooLarge, fmt.Sprintf("the line is %d bytes", limit+5))
		})
	}
	// The JSON-array samples of v0.4.0-v0.4.2: an element over the limit.
	setMaxSampleLine(t, 1000)
	p := filepath.Join(t.TempDir(), "pretrained__x_t.jsonl")
	os.WriteFile(p, []byte("[\n"+sampleLine(0, 900)+",\n"+sampleLine(1, 1001)+"\n]\n"), 0o644)
	n, err := readErr(p)
	fe := wantFileError(t, err, p, ErrTooLarge, "element 2 of the samples array")
	if fe.Line != 2 || n != 1 {
		t.Fatalf("error on element %d after %d samples", fe.Line, n)
	}
}

// memUse reads one sample (or error) of r and returns the bytes allocated
// meanwhile and the largest heap in use above base seen while it ran.
func memUse(r *SampleReader) (alloc, peak uint64, err error) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var max atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > before.HeapInuse && m.HeapInuse-before.HeapInuse > max.Load() {
				max.Store(m.HeapInuse - before.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	_, err = r.Next()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	close(stop)
	wg.Wait()
	if after.HeapInuse > before.HeapInuse && after.HeapInuse-before.HeapInuse > max.Load() {
		max.Store(after.HeapInuse - before.HeapInuse)
	}
	return after.TotalAlloc - before.TotalAlloc, max.Load(), err
}

// TestSampleLineMemory bounds what reading costs: a line just under the
// limit allocates a small multiple of its length, and a line four times
// the limit costs no more than the limit's worth, as it is read through,
// not kept.
func TestSampleLineMemory(t *testing.T) {
	const limit = 16 << 20
	setMaxSampleLine(t, limit)
	under, over := limit-1024, 4*limit
	p := writeLines(t, under, over)
	r, err := OpenSamples(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	alloc, peak, err := memUse(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("line of %d bytes: %.1f MiB allocated (%.2f× the line), peak heap %.1f MiB", under, mib(alloc), float64(alloc)/float64(under), mib(peak))
	if alloc > 4*uint64(under) {
		t.Errorf("reading a %d-byte line allocated %d bytes, more than 4× the line", under, alloc)
	}
	alloc, peak, err = memUse(r)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
	t.Logf("line of %d bytes (over the limit): %.1f MiB allocated, peak heap %.1f MiB", over, mib(alloc), mib(peak))
	if alloc > 2*limit {
		t.Errorf("refusing a %d-byte line allocated %d bytes: it was kept", over, alloc)
	}
	// Read alone, the over-long line costs at most the buffer that reaches
	// the limit.
	p = writeLines(t, over)
	r2, _ := OpenSamples(p)
	defer r2.Close()
	alloc, peak, err = memUse(r2)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
	t.Logf("line of %d bytes alone: %.1f MiB allocated, peak heap %.1f MiB", over, mib(alloc), mib(peak))
	if alloc > 3*limit {
		t.Errorf("refusing a %d-byte line allocated %d bytes: it was kept", over, alloc)
	}
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// BenchmarkSampleLineLimit reads, at the default MaxSampleLine, a samples
// file of one line 1 KB under the limit and one 1 MiB over it, and reports
// what each costs: bytes allocated and peak heap, also as multiples of the
// line.
//
//	go test -run '^$' -bench SampleLineLimit -benchtime 3x ./harness
func BenchmarkSampleLineLimit(b *testing.B) {
	under, over := MaxSampleLine-1024, MaxSampleLine+1<<20
	p := writeLines(b, under, over)
	var allocU, peakU, allocO, peakO uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := OpenSamples(p)
		if err != nil {
			b.Fatal(err)
		}
		a, pk, err := memUse(r)
		if err != nil {
			b.Fatal(err)
		}
		allocU, peakU = max(allocU, a), max(peakU, pk)
		a, pk, err = memUse(r)
		if !errors.Is(err, ErrTooLarge) {
			b.Fatal(err)
		}
		allocO, peakO = max(allocO, a), max(peakO, pk)
		if _, err := r.Next(); err != io.EOF {
			b.Fatalf("read on after the error: %v", err)
		}
		r.Close()
	}
	b.ReportMetric(mib(allocU), "MiB-alloc-under")
	b.ReportMetric(mib(peakU), "MiB-peak-under")
	b.ReportMetric(float64(peakU)/float64(under), "peak/line-under")
	b.ReportMetric(mib(allocO), "MiB-alloc-over")
	b.ReportMetric(mib(peakO), "MiB-peak-over")
}
