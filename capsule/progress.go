package capsule

import (
	"fmt"
	"sync"
)

// Progress is how far a Pack, Pull, Push, Unpack or Verify is.
type Progress struct {
	// Op names the operation: "pack", "pull", "push", "unpack", "verify".
	Op string
	// Path is the file being packed or written (its title).
	Path string
	// Done and Size are the bytes of Path read so far and its size.
	Done, Size int64
	// Files of TotalFiles are finished; Bytes of TotalBytes are read.
	Files, TotalFiles int
	Bytes, TotalBytes int64
}

// Fraction is the share of the bytes done, 0 before anything is known.
func (p Progress) Fraction() float64 {
	if p.TotalBytes <= 0 {
		return 0
	}
	return float64(p.Bytes) / float64(p.TotalBytes)
}

// String is the progress in a few words: "12/30 files  1.2 MiB/4.0 GiB".
func (p Progress) String() string {
	return fmt.Sprintf("%d/%d files  %s/%s", p.Files, p.TotalFiles, FormatBytes(p.Bytes), FormatBytes(p.TotalBytes))
}

// withOp names the operation in every Progress that fn receives.
func withOp(fn func(Progress), op string) func(Progress) {
	if fn == nil {
		return nil
	}
	return func(p Progress) {
		p.Op = op
		fn(p)
	}
}

// FormatBytes writes n bytes in the largest binary unit that keeps it ≥ 1:
// "512 B", "1.5 KiB", "4.0 GiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// progressEvery is how often a large file reports progress.
const progressEvery = 8 << 20

// progressTracker serialises progress calls from the goroutines that pack,
// unpack or verify files, and reports every few MiB of a large file.
type progressTracker struct {
	fn    func(Progress)
	mu    sync.Mutex
	p     Progress
	since map[string]int64
}

// newProgressTracker reports to fn (nil: nowhere) the progress over files
// files of bytes bytes in all.
func newProgressTracker(fn func(Progress), files int, bytes int64) *progressTracker {
	pt := &progressTracker{fn: fn, since: map[string]int64{}}
	pt.p.TotalFiles, pt.p.TotalBytes = files, bytes
	return pt
}

func (pt *progressTracker) start(path string, size int64) {
	if pt.fn == nil {
		return
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	pt.p.Path, pt.p.Done, pt.p.Size = path, 0, size
	pt.fn(pt.p)
}

func (pt *progressTracker) add(path string, done, size, k int64) {
	if pt.fn == nil {
		return
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	pt.p.Bytes += k
	pt.since[path] += k
	if pt.since[path] >= progressEvery {
		pt.since[path] = 0
		pt.p.Path, pt.p.Done, pt.p.Size = path, done, size
		pt.fn(pt.p)
	}
}

func (pt *progressTracker) end(path string, size int64) {
	if pt.fn == nil {
		return
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	delete(pt.since, path)
	pt.p.Files++
	pt.p.Path, pt.p.Done, pt.p.Size = path, size, size
	pt.fn(pt.p)
}
