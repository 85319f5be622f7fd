package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFixture copies files of a fixture folder into a temporary folder.
func copyFixture(t *testing.T, folder string, names ...string) string {
	t.Helper()
	dst := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(fixtures(t), folder, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

const (
	phiTS      = "2025-08-07T11-42-40.066002"
	phiResults = "gsm8k-phi-3-mini_" + phiTS + ".json"
	phiSamples = "samples_gsm8k_" + phiTS + ".jsonl"
	phiOther   = "gsm8k-phi-3-mini_2025-08-11T10-06-10.578233.json"
	phiOtherS  = "samples_gsm8k_2025-08-11T10-06-10.578233.jsonl"
)

// TestSamplesPathSelectsItsRun: a samples file named on its own is read
// with the results file of its timestamp, not with every run of its folder.
func TestSamplesPathSelectsItsRun(t *testing.T) {
	dir := copyFixture(t, "phi3mini-gsm8k-thesis", phiResults, phiSamples, phiOther, phiOtherS)
	outs, err := Find(filepath.Join(dir, phiOtherS))
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Results == nil || filepath.Base(outs[0].Results.Path) != phiOther ||
		len(outs[0].Samples) != 1 || filepath.Base(outs[0].Samples[0].Path) != phiOtherS {
		for _, o := range outs {
			t.Logf("found %s with %d samples files", o.Path(), len(o.Samples))
		}
		t.Fatalf("got %d outputs, want the run of %s alone", len(outs), phiOtherS)
	}
}

// TestDamagedResultsInFolder: a results file that does not parse, found in
// a folder, is an error of its own output (naming file and position) and
// the folder's other runs are still found; named on its own, it is refused
// with the same error.
func TestDamagedResultsInFolder(t *testing.T) {
	dir := copyFixture(t, "phi3mini-gsm8k-thesis", phiResults, phiSamples, phiOther, phiOtherS)
	bad := filepath.Join(dir, phiResults)
	b, _ := os.ReadFile(bad)
	os.WriteFile(bad, b[:len(b)/2], 0o644) // cut off mid-file, as a copy interrupted
	outs, err := FindAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	var damaged, good *Output
	for _, o := range outs {
		if len(o.Errors) > 0 {
			damaged = o
		} else if o.Results != nil {
			good = o
		}
	}
	if damaged == nil || good == nil || len(outs) != 2 {
		t.Fatalf("got %d outputs: damaged %v, good %v", len(outs), damaged, good)
	}
	var fe *FileError
	if !errors.As(damaged.Errors[0], &fe) || fe.Path != bad || fe.Line == 0 || !errors.Is(fe, ErrTruncated) {
		t.Errorf("damaged results: %v", damaged.Errors[0])
	}
	if damaged.Path() != bad || len(damaged.Samples) != 1 || filepath.Base(damaged.Samples[0].Path) != phiSamples {
		t.Errorf("the damaged run is %s with %d samples files, want %s with its own samples", damaged.Path(), len(damaged.Samples), bad)
	}
	if _, err := Find(dir); !errors.As(err, &fe) || fe.Path != bad {
		t.Errorf("Find: got %v, want the damaged file's error", err)
	}
	if _, err := FindAll(bad); !errors.As(err, &fe) || fe.Path != bad || !strings.Contains(err.Error(), "file is truncated") {
		t.Errorf("named on its own: got %v", err)
	}
}

// TestResultsWithNaN: Python's json.dumps writes NaN and Infinity, which a
// real results file holds when a metric is undefined: it is a results file.
func TestResultsWithNaN(t *testing.T) {
	dir := copyFixture(t, "phi3mini-gsm8k-thesis", phiResults)
	p := filepath.Join(dir, phiResults)
	b, _ := os.ReadFile(p)
	s := strings.Replace(string(b), `"exact_match,strict-match": 0.1`, `"exact_match,strict-match": NaN`, 1)
	s = strings.Replace(s, `"exact_match_stderr,strict-match": 0.09999999999999999`, `"exact_match_stderr,strict-match": Infinity`, 1)
	if s == string(b) {
		t.Fatal("the fixture no longer holds the values replaced")
	}
	renamed := filepath.Join(dir, "my-eval.json") // recognised by content, not by name
	os.WriteFile(renamed, []byte(s), 0o644)
	os.Remove(p)
	outs, err := Find(dir)
	if err != nil || len(outs) != 1 || outs[0].Results == nil {
		t.Fatalf("got %v, %v", outs, err)
	}
	tr, _ := outs[0].Results.Task("gsm8k")
	for _, m := range tr.Metrics {
		if m.Filter == "strict-match" && (m.Value.Num == m.Value.Num || m.Stderr.Num != m.Stderr.Num+1) {
			t.Errorf("strict-match read as %v ± %v, want NaN ± +Inf", m.Value, m.Stderr)
		}
	}
}

// TestDamagedSamplesMessages: a samples line that is not one JSON object
// per line, or lacks a field, is named precisely.
func TestDamagedSamplesMessages(t *testing.T) {
	lines := func(t *testing.T) []string {
		b, err := os.ReadFile(filepath.Join(fixtures(t), "phi3mini-gsm8k-thesis", phiSamples))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	cases := []struct {
		name string
		edit func([]string) []string
		line int
		is   error
		says string
	}{
		{"split", func(l []string) []string {
			// Line 7 pretty-printed over 3 lines: the object broken after
			// its first and second members.
			i := strings.Index(l[6], `, "doc": `)
			j := strings.Index(l[6], `, "target": `)
			parts := []string{l[6][:i+1], l[6][i+2 : j+1], l[6][j+2:]}
			return append(append(append([]string{}, l[:6]...), parts...), l[7:]...)
		}, 7, ErrNotLMEval, "a JSON object continues over 3 lines, to line 9 (lm-eval writes one per line)"},
		{"stripped", func(l []string) []string {
			i := strings.Index(l[11], `"filtered_resps": `)
			j := strings.Index(l[11], `, "filter": `)
			l[11] = l[11][:i] + l[11][j+2:]
			return l
		}, 12, ErrNotLMEval, `field "filtered_resps" is missing`},
		{"metric", func(l []string) []string {
			i := strings.LastIndex(l[2], `, "exact_match": `)
			l[2] = l[2][:i] + "}"
			return l
		}, 3, ErrNotLMEval, `field "exact_match" is missing (the line's "metrics" names it)`},
		{"cut", func(l []string) []string {
			l[len(l)-1] = l[len(l)-1][:100]
			return l
		}, 20, ErrTruncated, "the file ends in the middle of the JSON object of its last line"},
		{"cut-mid", func(l []string) []string {
			l[4] = l[4][:100]
			return l
		}, 5, ErrSyntax, "the line ends in the middle of a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := lines(t)
			orig := strings.Join(l, "\n")
			edited := strings.Join(c.edit(l), "\n") + "\n"
			if edited == orig+"\n" {
				t.Fatal("the edit changed nothing: the fixture changed")
			}
			p := filepath.Join(t.TempDir(), phiSamples)
			os.WriteFile(p, []byte(edited), 0o644)
			r, err := OpenSamples(p)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for err == nil {
				_, err = r.Next()
			}
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != p || fe.Line != c.line || !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("got %v, want line %d: %s", err, c.line, c.says)
			}
			if c.is != ErrTruncated && strings.Contains(err.Error(), "truncated") {
				t.Errorf("%v: the file does not end there; it is not truncated", err)
			}
		})
	}
}
