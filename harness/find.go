package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Output is one lm-eval run found on disk: its results file (if any) and the
// samples files that belong to it.
type Output struct {
	// Results is nil when only samples were found (a run whose results file
	// was lost, or samples copied on their own).
	Results   *Results
	Dir       string // the directory holding the results file (or the samples)
	Timestamp string // the shared date_id, "" for v0.4.0-v0.4.2 layouts
	Samples   []SampleFile
}

// Path names the output for people: the results file, or the samples
// directory and timestamp.
func (o *Output) Path() string {
	if o.Results != nil {
		return o.Results.Path
	}
	if o.Timestamp != "" {
		return filepath.Join(o.Dir, "samples_*_"+o.Timestamp+".jsonl")
	}
	return o.Dir
}

// SampleFile is the samples of one task.
type SampleFile struct {
	Task string
	Path string // "" when the samples are embedded in the results file
	// Embedded holds the samples a results file carries under its own
	// top-level "samples" key (some scripts call lm-eval's evaluator and
	// dump its return value whole).
	Embedded []Value
}

// Open returns a reader over the samples.
func (f SampleFile) Open() (*SampleReader, error) {
	if f.Path != "" {
		return OpenSamples(f.Path)
	}
	var buf bytes.Buffer
	for _, v := range f.Embedded {
		appendJSON(&buf, v)
		buf.WriteByte('\n')
	}
	return newSampleReader("embedded samples of "+f.Task, &buf, nil), nil
}

// Samples returns the samples file of a task.
func (o *Output) SamplesOf(task string) (SampleFile, bool) {
	for _, s := range o.Samples {
		if s.Task == task {
			return s, true
		}
	}
	return SampleFile{}, false
}

var samplesNameRE = regexp.MustCompile(`^samples_(.+)_(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl?$`)

// Find locates lm-eval outputs under the given paths. A path may be a
// directory (searched recursively), a results file, or a samples file.
// Results and samples are paired by the timestamp in their names, not by
// their prefix (lm-eval names results files after the --output_path when it
// ends in .json). Results files of v0.4.0-v0.4.2 (results.json) are paired
// with the per-task JSON-array samples beside them.
func Find(paths ...string) ([]*Output, error) {
	var all []*Output
	for _, p := range paths {
		outs, err := findOne(p)
		if err != nil {
			return nil, err
		}
		all = append(all, outs...)
	}
	return all, nil
}

type candidate struct {
	path, dir, name, ts, task string
}

func findOne(root string) ([]*Output, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	var results, samples, others []candidate
	classify := func(path string) {
		dir, name := filepath.Split(path)
		dir = filepath.Clean(dir)
		if m := samplesNameRE.FindStringSubmatch(name); m != nil {
			samples = append(samples, candidate{path: path, dir: dir, name: name, ts: m[2], task: m[1]})
			return
		}
		c := candidate{path: path, dir: dir, name: name, ts: fileTimestamp(name)}
		if strings.HasSuffix(name, ".json") {
			results = append(results, c)
		} else if strings.HasSuffix(name, ".jsonl") {
			others = append(others, c)
		}
	}
	explicit := !st.IsDir()
	if explicit {
		classify(root)
		// A file given alone is paired with the files beside it: a samples
		// file with its results, a results file with its samples.
		given := filepath.Clean(root)
		dir := filepath.Dir(given)
		entries, _ := os.ReadDir(dir)
		isSamples := len(samples) == 1
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if !e.Type().IsRegular() || p == given {
				continue
			}
			if isSamples || samplesNameRE.MatchString(e.Name()) || strings.HasSuffix(e.Name(), ".jsonl") {
				classify(p)
			}
		}
		if isSamples {
			explicit = false
		}
	} else {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			// lm-eval users name directories after files ("p3.json/"): only
			// regular files are candidates.
			if d.Type().IsRegular() {
				classify(path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}

	var outs []*Output
	used := map[string]bool{}
	for _, c := range results {
		if !explicit && !looksLikeResults(c.path) {
			continue
		}
		r, err := ReadResults(c.path)
		if err != nil {
			if !explicit && errors.Is(err, ErrNotLMEval) {
				continue // some other JSON file in the tree
			}
			return nil, err
		}
		o := &Output{Results: r, Dir: c.dir, Timestamp: c.ts}
		if c.ts != "" {
			// Same directory first; then anywhere under the root.
			for _, pass := range []bool{true, false} {
				for _, s := range samples {
					if s.ts == c.ts && !used[s.path] && (s.dir == c.dir) == pass {
						if pass || !hasSamplesIn(o) {
							o.Samples = append(o.Samples, SampleFile{Task: s.task, Path: s.path})
							used[s.path] = true
						}
					}
				}
			}
		} else {
			pairLegacy(o, others, used)
		}
		if emb, ok := r.Doc.Get("samples"); ok && emb.Kind == Object {
			for i, task := range emb.Keys {
				if _, dup := o.SamplesOf(task); !dup && emb.Vals[i].Kind == List {
					o.Samples = append(o.Samples, SampleFile{Task: task, Embedded: emb.Vals[i].List})
				}
			}
		}
		sortSamples(o)
		outs = append(outs, o)
	}
	if explicit {
		// A results file given by name: its siblings' samples belong to
		// other runs.
		return outs, nil
	}
	// Samples that no results file claimed form outputs of their own.
	orphans := map[string]*Output{}
	var keys []string
	for _, s := range samples {
		if used[s.path] {
			continue
		}
		k := s.dir + "\x00" + s.ts
		o, ok := orphans[k]
		if !ok {
			o = &Output{Dir: s.dir, Timestamp: s.ts}
			orphans[k] = o
			keys = append(keys, k)
		}
		o.Samples = append(o.Samples, SampleFile{Task: s.task, Path: s.path})
	}
	sort.Strings(keys)
	for _, k := range keys {
		sortSamples(orphans[k])
		outs = append(outs, orphans[k])
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("%s: %w (expected a results JSON file or samples_<task>_<timestamp>.jsonl files)", root, ErrNoOutput)
	}
	sort.SliceStable(outs, func(i, j int) bool { return outs[i].Path() < outs[j].Path() })
	return outs, nil
}

func hasSamplesIn(o *Output) bool { return len(o.Samples) > 0 }

func sortSamples(o *Output) {
	sort.SliceStable(o.Samples, func(i, j int) bool { return o.Samples[i].Task < o.Samples[j].Task })
}

// pairLegacy finds the v0.4.0-v0.4.2 samples of a results.json: one JSON
// array per task, named "<model_args with / and = replaced by __>_<task>.jsonl",
// in the same directory. Task names contain underscores, so the longest task
// name that ends the file name wins.
func pairLegacy(o *Output, files []candidate, used map[string]bool) {
	tasks := o.Results.LeafTasks()
	for k := range o.Results.Configs {
		tasks = append(tasks, k)
	}
	sort.Slice(tasks, func(i, j int) bool { return len(tasks[i]) > len(tasks[j]) })
	for _, f := range files {
		if f.dir != o.Dir || used[f.path] {
			continue
		}
		stem := strings.TrimSuffix(f.name, ".jsonl")
		for _, t := range tasks {
			if strings.HasSuffix(stem, "_"+t) {
				if _, dup := o.SamplesOf(t); !dup {
					o.Samples = append(o.Samples, SampleFile{Task: t, Path: f.path})
					used[f.path] = true
				}
				break
			}
		}
	}
}

// looksLikeResults checks the start of a JSON file for lm-eval's first key,
// so that a search through a large tree does not parse every JSON file.
func looksLikeResults(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	return bytes.Contains(head[:n], []byte(`"results"`))
}
