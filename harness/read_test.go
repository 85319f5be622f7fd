package harness

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The files of a small run that every reader accepts: task "t", 2 docs.
const (
	testTS      = "2025-01-01T00-00-00.000000"
	testResults = `{"results": {"t": {"acc,none": 0.5, "acc_stderr,none": 0.5, "alias": "t"}}, "configs": {"t": {"output_type": "loglikelihood"}}, "n-samples": {"t": {"original": 2, "effective": 2}}}`
	testLine0   = `{"doc_id": 0, "doc": {}, "target": 0, "arguments": {}, "resps": [[["-1.0", "True"]]], "filtered_resps": [["-1.0", "True"]], "acc": 1}`
	testLine1   = `{"doc_id": 1, "doc": {}, "target": 0, "arguments": {}, "resps": [[["-1.0", "False"]]], "filtered_resps": [["-1.0", "False"]], "acc": 0}`
)

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// testRun writes the small run into dir and returns the results and
// samples paths.
func testRun(t *testing.T, dir string) (results, samples string) {
	results = write(t, filepath.Join(dir, "results_"+testTS+".json"), testResults)
	samples = write(t, filepath.Join(dir, "samples_t_"+testTS+".jsonl"), testLine0+"\n"+testLine1+"\n")
	return results, samples
}

// wantFileError fails unless err is a *FileError for path wrapping sentinel
// whose text holds every part.
func wantFileError(t *testing.T, err error, path string, sentinel error, parts ...string) *FileError {
	t.Helper()
	var fe *FileError
	if !errors.As(err, &fe) || fe.Path != path || !errors.Is(err, sentinel) {
		t.Fatalf("got %v, want a %v error naming %s", err, sentinel, path)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("got %q, want it to say %q", err, p)
		}
	}
	return fe
}

// TestReadNotLMEval: a file that is neither results nor samples is an
// ErrNoOutput, not a crash (Read indexed an empty list).
func TestReadNotLMEval(t *testing.T) {
	dir := t.TempDir()
	readme := write(t, filepath.Join(dir, "README.md"), "# notes\n")
	other := write(t, filepath.Join(dir, "notes.jsonl"), "{}\n")
	for _, p := range []string{readme, other} {
		_, err := Read(p)
		wantFileError(t, err, p, ErrNoOutput, "expected a results JSON file")
		_, err = Find(p)
		wantFileError(t, err, p, ErrNoOutput)
	}
	if _, err := Read(dir); !errors.Is(err, ErrNoOutput) {
		t.Fatalf("got %v", err)
	}
}

// TestMalformedResultsNamed: a file lm-eval's name for results that is not
// one is an error naming it, in a folder searched as well as given alone.
func TestMalformedResultsNamed(t *testing.T) {
	cases := []struct {
		name, content string
		sentinel      error
		says          string
	}{
		{"random", "\x8b\x1f\x00\x13garbage", ErrSyntax, "invalid"},
		{"null", "null", ErrNotLMEval, "top level is a null"},
		{"array", `[{"results": {}}]`, ErrNotLMEval, "top level is a list"},
		{"empty", "", ErrTruncated, "unexpected end"},
		{"nokeys", `{"results": {}}`, ErrNotLMEval, `"configs"`},
	}
	for _, c := range cases {
		for _, name := range []string{"results_" + testTS + ".json", "results.json", "gsm8k-run_" + testTS + ".json"} {
			dir := t.TempDir()
			p := write(t, filepath.Join(dir, "out", name), c.content)
			_, err := Find(dir)
			wantFileError(t, err, p, c.sentinel, c.says)
			_, err = Find(p)
			wantFileError(t, err, p, c.sentinel, c.says)
		}
	}
}

// TestResultsKeyLate: whether a JSON file is a results file is decided by
// parsing it, not by "results" within its first 4 KB.
func TestResultsKeyLate(t *testing.T) {
	late := `{"config": {"model": "hf", "model_args": "` + strings.Repeat("x", 8000) + `"}, ` + testResults[1:]
	for _, name := range []string{"results_" + testTS + ".json", "my-eval.json"} {
		dir := t.TempDir()
		p := write(t, filepath.Join(dir, name), late)
		outs, err := Find(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(outs) != 1 || outs[0].Results == nil || outs[0].Results.Path != p {
			t.Fatalf("%s: found %v", name, outs)
		}
	}
}

// TestOtherJSONInTree: JSON files that lm-eval does not name so and that are
// not results are passed over; one that mentions "results" but does not
// parse is taken for a damaged results file.
func TestOtherJSONInTree(t *testing.T) {
	dir := t.TempDir()
	testRun(t, filepath.Join(dir, "run"))
	write(t, filepath.Join(dir, "package.json"), `{"name": "x", "version": "1.0.0"}`)
	write(t, filepath.Join(dir, "blob.json"), "\x00\x01 not json")
	write(t, filepath.Join(dir, "other.json"), `{"results": [1, 2]}`)
	outs, err := Find(dir)
	if err != nil || len(outs) != 1 {
		t.Fatalf("got %v, %v", outs, err)
	}
	bad := write(t, filepath.Join(dir, "eval.json"), `{"results": {"t": {"acc,none": 0.5`)
	_, err = Find(dir)
	wantFileError(t, err, bad, ErrTruncated)
}

// TestResultsUnreadable: a results file that cannot be read is an error,
// not a file passed over.
func TestResultsUnreadable(t *testing.T) {
	dir := t.TempDir()
	results, _ := testRun(t, dir)
	// A link that loops cannot be read, even by root.
	loop := filepath.Join(dir, "results_2025-02-02T00-00-00.000000.json")
	if err := os.Symlink(filepath.Base(loop), loop); err != nil {
		t.Fatal(err)
	}
	_, err := Find(dir)
	wantFileError(t, err, loop, ErrOutsideRoot, "cannot be followed")
	os.Remove(loop)

	if os.Geteuid() == 0 {
		t.Log("running as root: file permissions do not stop reads, skipping that part")
		return
	}
	if err := os.Chmod(results, 0); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, results} {
		_, err := Find(p)
		if !errors.Is(err, os.ErrPermission) || !strings.Contains(err.Error(), results) {
			t.Fatalf("Find(%s): got %v, want a permission error naming %s", p, err, results)
		}
	}
	// A JSON file of another name cannot be told apart unread: an error too.
	os.Chmod(results, 0o644)
	other := write(t, filepath.Join(dir, "other.json"), "{}")
	os.Chmod(other, 0)
	if _, err := Find(dir); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("got %v", err)
	}
}

// TestSymlinkedSamples: links are followed while they stay inside the
// folder searched; a file reached twice is read once.
func TestSymlinkedSamples(t *testing.T) {
	root := t.TempDir()
	results, samples := testRun(t, filepath.Join(root, "store"))
	run := filepath.Join(root, "run")
	os.MkdirAll(run, 0o755)
	link := filepath.Join(run, filepath.Base(samples))
	if err := os.Symlink(filepath.Join("..", "store", filepath.Base(samples)), link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "store", filepath.Base(results)), filepath.Join(run, filepath.Base(results))); err != nil {
		t.Fatal(err)
	}
	outs, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || len(outs[0].Samples) != 1 {
		t.Fatalf("found %d outputs, want the one run once: %v", len(outs), outs)
	}
	if got := readAll(t, outs[0].Samples[0]); len(got) != 2 {
		t.Fatalf("%d samples", len(got))
	}

	// Links to files outside the folder searched: an error naming the link.
	root2 := t.TempDir()
	run2 := filepath.Join(root2, "run")
	os.MkdirAll(run2, 0o755)
	resLink := filepath.Join(run2, filepath.Base(results))
	os.Symlink(results, resLink)
	_, err = Find(run2)
	wantFileError(t, err, resLink, ErrOutsideRoot, "its target is "+results)
	if _, err = Read(run2); !errors.Is(err, ErrOutsideRoot) {
		t.Fatalf("Read: got %v", err)
	}
	// A link named on its own is the user's choice: it is read.
	outs, err = Find(resLink)
	if err != nil || len(outs) != 1 || outs[0].Results.Path != resLink {
		t.Fatalf("got %v, %v", outs, err)
	}
	// Its samples beside it, linked from outside: an error.
	samplesLink := filepath.Join(run2, filepath.Base(samples))
	os.Symlink(samples, samplesLink)
	_, err = Find(resLink)
	wantFileError(t, err, samplesLink, ErrOutsideRoot)

	// A folder linked from outside hides outputs: an error as well.
	root3 := t.TempDir()
	os.Symlink(filepath.Join(root, "store"), filepath.Join(root3, "runs"))
	_, err = Find(root3)
	wantFileError(t, err, filepath.Join(root3, "runs"), ErrOutsideRoot)
	// The folder given may itself be a link.
	outs, err = Find(filepath.Join(root3, "runs"))
	if err != nil || len(outs) != 1 || !strings.HasPrefix(outs[0].Results.Path, filepath.Join(root3, "runs")) {
		t.Fatalf("got %v, %v", outs, err)
	}
}

// withTimeout fails the test instead of hanging when f blocks.
func withTimeout(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s blocked", what)
		return nil
	}
}

// TestNonRegularRefused: a FIFO blocks a reader forever and /dev/zero never
// ends: both are refused, by name, before any read.
func TestNonRegularRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "results_"+testTS+".json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	err := withTimeout(t, "Find(fifo)", func() error { _, err := Find(fifo); return err })
	wantFileError(t, err, fifo, ErrNotRegular, "a FIFO")
	err = withTimeout(t, "Read(fifo)", func() error { _, err := Read(fifo); return err })
	wantFileError(t, err, fifo, ErrNotRegular)
	err = withTimeout(t, "ReadResults(fifo)", func() error { _, err := ReadResults(fifo); return err })
	wantFileError(t, err, fifo, ErrNotRegular)
	err = withTimeout(t, "OpenSamples(fifo)", func() error { _, err := OpenSamples(fifo); return err })
	wantFileError(t, err, fifo, ErrNotRegular)
	// In a folder, a FIFO with an lm-eval file's name is refused too.
	err = withTimeout(t, "Find(dir)", func() error { _, err := Find(dir); return err })
	wantFileError(t, err, fifo, ErrNotRegular)
	os.Remove(fifo)

	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	zero := filepath.Join(dir, "results_"+testTS+".json")
	os.Symlink("/dev/zero", zero)
	err = withTimeout(t, "Find(/dev/zero link)", func() error { _, err := Find(zero); return err })
	wantFileError(t, err, zero, ErrNotRegular, "a character device")
	err = withTimeout(t, "Find(dir)", func() error { _, err := Find(dir); return err })
	wantFileError(t, err, zero, ErrOutsideRoot)
	err = withTimeout(t, "Find(/dev/zero)", func() error { _, err := Find("/dev/zero"); return err })
	wantFileError(t, err, "/dev/zero", ErrNotRegular)
}

// TestResultsSizeLimit: a results file over MaxResultsSize is an error
// naming it, found without reading it whole.
func TestResultsSizeLimit(t *testing.T) {
	defer func(old int64) { MaxResultsSize = old }(MaxResultsSize)
	dir := t.TempDir()
	results, _ := testRun(t, dir)
	MaxResultsSize = int64(len(testResults))
	if _, err := Find(dir); err != nil {
		t.Fatalf("a file of exactly the limit: %v", err)
	}
	MaxResultsSize = int64(len(testResults)) - 1
	_, err := Find(dir)
	wantFileError(t, err, results, ErrTooLarge, "harness.MaxResultsSize")
	// Another name, too large to be results: passed over.
	os.Remove(results)
	write(t, filepath.Join(dir, "big.json"), testResults)
	outs, err := Find(dir)
	if err != nil || len(outs) != 1 || outs[0].Results != nil {
		t.Fatalf("got %v, %v", outs, err)
	}
}

// TestSamplesTaskNotInResults: samples of a task the results have no entry
// for do not belong to them: an error naming the task and the file.
func TestSamplesTaskNotInResults(t *testing.T) {
	dir := t.TempDir()
	results, _ := testRun(t, dir)
	stray := write(t, filepath.Join(dir, "samples_u_"+testTS+".jsonl"), testLine0+"\n")
	for _, p := range []string{dir, results, stray} {
		_, err := Find(p)
		wantFileError(t, err, stray, ErrStraySamples, `task "u"`, results)
	}
}

// TestInvalidUTF8: lm-eval writes UTF-8; a byte that is not is an error
// naming the file, the line and the byte offset.
func TestInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	bad := strings.Replace(testLine1, `"doc": {}`, `"doc": {"q": "caf`+"\xe9"+`"}`, 1)
	p := write(t, filepath.Join(dir, "samples_t_"+testTS+".jsonl"), testLine0+"\n"+bad+"\n")
	off := len(testLine0) + 1 + strings.Index(bad, "\xe9")
	r, err := OpenSamples(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	fe := wantFileError(t, err, p, ErrSyntax, "invalid UTF-8", "byte 0xe9", "byte offset "+strconv.Itoa(off))
	if fe.Line != 2 || fe.Col != strings.Index(bad, "\xe9")+1 {
		t.Fatalf("line %d col %d", fe.Line, fe.Col)
	}
	// In a string the skipping parser does not look into, as in one it
	// decodes.
	bad = strings.Replace(testLine1, `"target": 0`, `"target": "`+"\xff\xfe"+`"`, 1)
	write(t, p, bad+"\n")
	r2, _ := OpenSamples(p)
	defer r2.Close()
	_, err = r2.Next()
	wantFileError(t, err, p, ErrSyntax, "invalid UTF-8", "byte 0xff")
	// The JSON-array samples of v0.4.0-v0.4.2.
	arr := write(t, filepath.Join(dir, "legacy_t.jsonl"), "[\n"+testLine0+",\n"+strings.Replace(testLine1, `"doc": {}`, `"doc": {"q": "`+"\xc3"+`"}`, 1)+"\n]\n")
	r3, _ := OpenSamples(arr)
	defer r3.Close()
	r3.Next()
	_, err = r3.Next()
	wantFileError(t, err, arr, ErrSyntax, "invalid UTF-8", "byte 0xc3")

	// Results.
	res := write(t, filepath.Join(dir, "results_"+testTS+".json"), strings.Replace(testResults, `"alias": "t"`, "\"alias\": \"t\xa0\"", 1))
	_, err = ReadResults(res)
	fe = wantFileError(t, err, res, ErrSyntax, "invalid UTF-8", "byte 0xa0", "byte offset "+strconv.Itoa(strings.Index(testResults, `"alias": "t"`)+11))
	if fe.Line != 1 {
		t.Fatalf("line %d", fe.Line)
	}
	// Valid UTF-8 beyond ASCII is of course read.
	write(t, res, strings.Replace(testResults, `"alias": "t"`, `"alias": "tâche ✓"`, 1))
	if _, err := ReadResults(res); err != nil {
		t.Fatal(err)
	}
}

// readErr reads every sample of path and returns the first error.
func readErr(path string) (int, error) {
	r, err := OpenSamples(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// TestPartialOutputSkipped: a job's output.partial (lm-eval still running,
// or stopped) is not a finished output and is not searched, unless named.
func TestPartialOutputSkipped(t *testing.T) {
	runs := t.TempDir()
	testRun(t, filepath.Join(runs, "a", OutputDir))
	partial := filepath.Join(runs, "a", Partial)
	write(t, filepath.Join(partial, "results.json"), "{}")
	outs, err := Find(runs)
	if err != nil || len(outs) != 1 {
		t.Fatalf("got %v, %v", outs, err)
	}
	_, err = Find(partial)
	wantFileError(t, err, filepath.Join(partial, "results.json"), ErrNotLMEval)
}
