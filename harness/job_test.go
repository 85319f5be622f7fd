package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type fakeExecutor struct {
	err   error
	block bool
}

func (f fakeExecutor) Execute(ctx context.Context, rec *RunRecord, out string, progress func(Progress)) error {
	progress(Progress{Phase: "generate_until", Done: 1, Total: 2})
	if f.block {
		<-ctx.Done()
		return ctx.Err()
	}
	if f.err != nil {
		os.WriteFile(filepath.Join(out, "half"), []byte("x"), 0o644)
		return f.err
	}
	return os.WriteFile(filepath.Join(out, "results.json"), []byte("{}"), 0o644)
}

func plannedRun(t *testing.T) string {
	dir := t.TempDir()
	if err := WriteRecord(dir, &RunRecord{Name: "r", Status: StatusPlanned, Argv: []string{"lm_eval", "--tasks", "gsm8k"}, Harness: HarnessInfo{Version: "0.4.9.1"}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunJobStatuses(t *testing.T) {
	dir := plannedRun(t)
	if err := RunJob(context.Background(), dir, fakeExecutor{}, JobOptions{}); err != nil {
		t.Fatal(err)
	}
	rec, _ := ReadRecord(dir)
	if rec.Status != StatusDone || rec.Start == nil || rec.End == nil || *rec.ExitCode != 0 {
		t.Errorf("done run: %+v", rec)
	}
	if _, err := os.Stat(filepath.Join(dir, OutputDir, "results.json")); err != nil {
		t.Error("output not moved into place")
	}
	// A failed run keeps no output that looks complete.
	dir = plannedRun(t)
	if err := RunJob(context.Background(), dir, fakeExecutor{err: errors.New("CUDA out of memory")}, JobOptions{}); err == nil {
		t.Fatal("no error")
	}
	rec, _ = ReadRecord(dir)
	if rec.Status != StatusFailed || !strings.Contains(rec.Error, "CUDA out of memory") {
		t.Errorf("failed run: %+v", rec)
	}
	if _, err := os.Stat(filepath.Join(dir, OutputDir)); !os.IsNotExist(err) {
		t.Error("a failed run has an output directory")
	}
	// Cancelled half-way: interrupted, never done.
	dir = plannedRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- RunJob(ctx, dir, fakeExecutor{block: true}, JobOptions{}) }()
	for {
		if rec, err := ReadRecord(dir); err == nil && rec.Status == StatusRunning {
			break
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, ErrInterrupted) {
		t.Fatalf("got %v", err)
	}
	rec, _ = ReadRecord(dir)
	if rec.Status != StatusInterrupted {
		t.Errorf("cancelled run: %s", rec.Status)
	}
	if p, ok := ReadProgress(dir); !ok || p.Phase != StatusInterrupted {
		t.Errorf("progress %+v", p)
	}
}

func TestSettle(t *testing.T) {
	dir := plannedRun(t)
	rec, _ := ReadRecord(dir)
	rec.Status = StatusRunning
	WriteRecord(dir, rec)
	// A job killed without a word is not left running.
	if err := settle(dir, true, "killed"); err != nil {
		t.Fatal(err)
	}
	rec, _ = ReadRecord(dir)
	if rec.Status != StatusInterrupted || rec.Error != "killed" {
		t.Errorf("%+v", rec)
	}
	// A finished run is never changed.
	rec.Status = StatusDone
	WriteRecord(dir, rec)
	settle(dir, false, "x")
	if rec, _ := ReadRecord(dir); rec.Status != StatusDone {
		t.Error("settle changed a done run")
	}
}

func TestReadRecordErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, RecordFile), []byte(`{"schema": "evalcapsule.run/v1", "status": "finished"}`), 0o644)
	if _, err := ReadRecord(dir); !errors.Is(err, ErrRecord) || !strings.Contains(err.Error(), "unknown status") {
		t.Errorf("got %v", err)
	}
	os.WriteFile(filepath.Join(dir, RecordFile), []byte(`{"schema": "other/v9"}`), 0o644)
	if _, err := ReadRecord(dir); !errors.Is(err, ErrRecord) {
		t.Errorf("got %v", err)
	}
}

func TestProgressLines(t *testing.T) {
	for _, c := range []struct {
		line  string
		phase string
		done  int
		total int
	}{
		{"Running generate_until requests:  45%|████▌     | 594/1319 [00:10<00:12, 58.2it/s]", "generate_until", 594, 1319},
		{"Running loglikelihood requests: 100%|██████████| 56168/56168 [03:01<00:00, 309.52it/s]", "loglikelihood", 56168, 56168},
		{"Requesting API: 12%|█▏        | 12/100 [00:03<00:22,  3.9it/s]", "requests", 12, 100},
	} {
		p, ok := ParseProgressLine(c.line)
		if !ok || p.Phase != c.phase || p.Done != c.done || p.Total != c.total {
			t.Errorf("%q: %+v %v", c.line, p, ok)
		}
	}
	if _, ok := ParseProgressLine("2025-01-01 INFO Building contexts for gsm8k on rank 0..."); ok {
		t.Error("a log line read as progress")
	}
	var got []Progress
	var log strings.Builder
	err := ScanProgress(strings.NewReader("info\rRunning generate_until requests:   0%|          | 0/4 [00:00<?, ?it/s]\rRunning generate_until requests:  50%|█████     | 2/4 [00:01<00:01]\n"), &log, func(p Progress) { got = append(got, p) })
	if err != nil || len(got) != 2 || got[1].Done != 2 || !strings.HasPrefix(log.String(), "info\r") {
		t.Errorf("scan: %v %+v %q", err, got, log.String())
	}
}

// Cancelling the local runner sends its job SIGINT and records the run
// interrupted.
func TestLocalRunnerInterrupt(t *testing.T) {
	dir := plannedRun(t)
	job := []string{"sh", "-c", `trap 'echo INT > "$0/signal"; exit 0' INT; trap 'echo TERM > "$0/signal"; exit 0' TERM; while :; do sleep 0.05; done`}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if err := (LocalRunner{Job: job}).Run(ctx, dir, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "signal")); string(b) != "INT\n" {
		t.Errorf("the job got %q", b)
	}
	if rec, _ := ReadRecord(dir); rec.Status != StatusInterrupted || rec.Error != "interrupted by the driver" {
		t.Errorf("%+v", rec)
	}
}

// Cancelling lm-eval sends it SIGTERM.
func TestLMEvalInterrupt(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, Partial)
	os.Mkdir(out, 0o755)
	// argv gets --output_path out: $0 and $1 of the script.
	rec := &RunRecord{Argv: []string{"sh", "-c", `trap 'echo INT > "$1/signal"; exit 0' INT; trap 'echo TERM > "$1/signal"; exit 0' TERM; while :; do sleep 0.05; done`}}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if err := (LMEval{}).Execute(ctx, rec, out, func(Progress) {}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "signal")); string(b) != "TERM\n" {
		t.Errorf("lm-eval got %q", b)
	}
}
