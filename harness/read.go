package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Run is one lm-eval run: its output files and, for runs made by capsule,
// the directory holding run.json beside output/.
type Run struct {
	// Dir is the run directory (runs/<name>) or, for a bare lm-eval output,
	// the directory that was read.
	Dir string
	// Name is the run's name: the run directory's base name.
	Name   string
	Output *Output
	// Record is the run's run.json (see RecordOf) when the output lies in
	// a run directory capsule made; nil for a bare lm-eval output, and for
	// a run.json that cannot be read (RecordOf returns why).
	Record *RunRecord
}

// Read opens the run at path: a run directory (run.json and output/), an
// lm-eval output directory, a results file or a samples file. It is an
// error when path holds no lm-eval output or more than one run.
func Read(path string) (*Run, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	search := path
	dir := path
	if !st.IsDir() {
		dir = filepath.Dir(path)
	} else if o := filepath.Join(path, "output"); isDir(o) {
		search = o
	}
	outs, err := Find(search)
	if err != nil {
		return nil, err
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("%s: %w (expected a results JSON file or samples_<task>_<timestamp>.jsonl files)", path, ErrNoOutput)
	}
	if len(outs) > 1 {
		var names []string
		for _, o := range outs {
			names = append(names, o.Path())
		}
		return nil, fmt.Errorf("%s: %w (%d): %s; name one of them", path, ErrAmbiguous, len(outs), strings.Join(names, ", "))
	}
	rec, _ := RecordOf(outs[0])
	return &Run{Dir: dir, Name: filepath.Base(filepath.Clean(dir)), Output: outs[0], Record: rec}, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
