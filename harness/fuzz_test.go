package harness

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedFiles adds the real fixture files (and prefixes of them) to a corpus.
func seedFiles(f *testing.F, match func(name string) bool, limit int) {
	dir := fixtures(f)
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !match(d.Name()) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) > limit {
			return nil
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
		return nil
	})
}

func FuzzResults(f *testing.F) {
	seedFiles(f, func(n string) bool { return strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, "samples_") }, 1<<20)
	f.Add([]byte(`{"results": {"g": {" ": " ", "alias": "g"}}, "group_subtasks": {"g": []}, "configs": {}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseResults("fuzz.json", b)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error without file context: %v", err)
			}
			return
		}
		for _, task := range r.Tasks {
			for _, m := range task.Metrics {
				if strings.HasSuffix(m.Metric, "_stderr") {
					t.Fatalf("stderr key taken as a metric: %s", m.Key())
				}
			}
		}
		_ = DetectVersion(r, false, false)
		for _, s := range r.Subtasks {
			_ = r.Leaves(s.Group)
		}
	})
}

func FuzzSamples(f *testing.F) {
	seedFiles(f, func(n string) bool { return strings.HasPrefix(n, "samples_") }, 64<<10)
	f.Add([]byte("[{\"doc_id\": 0, \"resps\": [[[-1.0, false]]], \"filtered_resps\": [[-1.0, false]], \"acc\": 1}]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := newSampleReader("fuzz.jsonl", bytes.NewReader(b), nil)
		for i := 0; i < 1000; i++ {
			s, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var fe *FileError
				if !errors.As(err, &fe) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("error without file context: %v", err)
				}
				if _, again := r.Next(); again != io.EOF {
					t.Fatalf("reader continued after an error: %v", again)
				}
				return
			}
			if s.DocID < 0 {
				t.Fatalf("negative doc_id accepted")
			}
			// Raw fields must be valid JSON on their own.
			if s.Doc != nil {
				if _, err := s.DocValue(); err != nil {
					t.Fatalf("doc kept as %q does not parse: %v", s.Doc, err)
				}
			}
		}
	})
}
