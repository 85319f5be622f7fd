package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
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
	// Errors are the files of this output that FindAll could not take as
	// lm-eval wrote them: a results file that does not parse or is not
	// one (Results is then nil, and Path names that file), or samples of a
	// task the results have no entry for (left out of Samples). Each is a
	// *FileError. Find returns the first instead of the output.
	Errors []error
	// bad is the path of a results file that could not be read.
	bad string
}

// Path names the output for people: the results file, or the samples
// directory and timestamp.
func (o *Output) Path() string {
	if o.Results != nil {
		return o.Results.Path
	}
	if o.bad != "" {
		return o.bad
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
// directory (searched recursively, except the output.partial directories
// of jobs not finished), a results file, or a samples file.
// Results and samples are paired by the timestamp in their names, not by
// their prefix (lm-eval names results files after the --output_path when it
// ends in .json). Results files of v0.4.0-v0.4.2 (results.json) are paired
// with the per-task JSON-array samples beside them.
func Find(paths ...string) ([]*Output, error) {
	outs, err := FindAll(paths...)
	if err != nil {
		return nil, err
	}
	for _, o := range outs {
		if len(o.Errors) > 0 {
			return nil, o.Errors[0]
		}
	}
	return outs, nil
}

// FindAll is Find for callers that check every file they can: a file found
// in a folder that cannot be read as lm-eval wrote it (a results file that
// does not parse, samples the results do not account for) is named in the
// Errors of its output instead of ending the search, so that the other
// files of the folder are still read. A results file named on its own is
// still an error, as are paths that cannot be searched (links leading out
// of the folder, FIFOs, devices).
//
// A samples file named on its own selects its run: the results file of the
// same timestamp beside it and that run's other samples files, not the
// other runs of its folder.
func FindAll(paths ...string) ([]*Output, error) {
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
	// real is the file's path with every symbolic link resolved: a file
	// reached through several links is read once.
	real string
}

// finder collects the candidate files of one path given to Find.
type finder struct {
	results, samples, others []candidate
}

func (f *finder) classify(path, real string) {
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	if m := samplesNameRE.FindStringSubmatch(name); m != nil {
		f.samples = append(f.samples, candidate{path: path, real: real, dir: dir, name: name, ts: m[2], task: m[1]})
		return
	}
	c := candidate{path: path, real: real, dir: dir, name: name, ts: fileTimestamp(name)}
	if strings.HasSuffix(name, ".json") {
		f.results = append(f.results, c)
	} else if strings.HasSuffix(name, ".jsonl") {
		f.others = append(f.others, c)
	}
}

// candidateName reports whether a file of this name may be lm-eval output,
// which Find reads or refuses but never skips.
func candidateName(name string) bool {
	return strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".jsonl")
}

// resultsName reports whether lm-eval names results files so: results.json
// (v0.4.0-v0.4.2), results_<timestamp>.json, or <prefix>_<timestamp>.json
// for an --output_path ending in .json. Such a file is an error unless it
// is a results file; other JSON files met in a folder are read to decide.
func resultsName(name string) bool {
	if !strings.HasSuffix(name, ".json") {
		return false
	}
	return name == "results.json" || strings.HasPrefix(name, "results_") || fileTimestamp(name) != ""
}

// entry takes one directory entry under root (a real path, without
// symbolic links): path names it for people, real is where it lies. A
// symbolic link is followed when its target stays inside root; one that
// leads out is an error, as is a FIFO, device or socket with an lm-eval
// file's name. walk is set when folders are searched (a link to a folder
// outside root then hides outputs, and is an error too).
func (f *finder) entry(root, path, real string, typ fs.FileMode, walk bool) error {
	name := filepath.Base(path)
	switch {
	case typ.IsDir():
		return nil
	case typ.IsRegular():
		f.classify(path, real)
		return nil
	case typ&fs.ModeSymlink == 0:
		if candidateName(name) {
			return notRegular(path, typ)
		}
		return nil
	}
	target, err := filepath.EvalSymlinks(real)
	if err == nil {
		target, err = filepath.Abs(target)
	}
	if err != nil {
		if candidateName(name) {
			return &FileError{Path: path, Err: fmt.Errorf("%w: it cannot be followed: %v", ErrOutsideRoot, err)}
		}
		return nil
	}
	st, err := os.Stat(target)
	if err != nil {
		if candidateName(name) {
			return err
		}
		return nil
	}
	if !within(root, target) {
		if candidateName(name) || (walk && st.IsDir()) {
			return &FileError{Path: path, Err: fmt.Errorf("%w (%s): its target is %s; give that path itself to read it", ErrOutsideRoot, root, target)}
		}
		return nil
	}
	switch {
	case st.IsDir():
		// Inside root: searched under its own name.
	case st.Mode().IsRegular():
		f.classify(path, target)
	case candidateName(name):
		return notRegular(path, st.Mode())
	}
	return nil
}

// within reports whether path (absolute, without links) is root or lies
// under it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPath resolves every symbolic link of path and makes it absolute.
func realPath(path string) (string, error) {
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

func findOne(root string) ([]*Output, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() && !st.Mode().IsRegular() {
		return nil, notRegular(root, st.Mode())
	}
	var f finder
	explicit := !st.IsDir()
	if explicit {
		given := filepath.Clean(root)
		real, err := realPath(given)
		if err != nil {
			return nil, err
		}
		f.classify(given, real)
		if len(f.results) == 0 && len(f.samples) == 0 {
			return nil, &FileError{Path: root, Err: fmt.Errorf("%w: expected a results JSON file (results_<timestamp>.json) or a samples file (samples_<task>_<timestamp>.jsonl), or a folder holding them", ErrNoOutput)}
		}
		// A file given alone is paired with the files beside it: a samples
		// file with its results, a results file with its samples.
		dir := filepath.Dir(given)
		realDir, err := realPath(dir)
		if err != nil {
			return nil, err
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		isSamples := len(f.samples) == 1
		ownTS := ""
		if isSamples {
			ownTS = f.samples[0].ts
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if p == given {
				continue
			}
			if isSamples {
				// Its own run only: files of the same timestamp.
				if m := samplesNameRE.FindStringSubmatch(e.Name()); m != nil {
					if m[2] != ownTS {
						continue
					}
				} else if !strings.HasSuffix(e.Name(), ".json") || fileTimestamp(e.Name()) != ownTS {
					continue
				}
			}
			if isSamples || samplesNameRE.MatchString(e.Name()) || strings.HasSuffix(e.Name(), ".jsonl") {
				if err := f.entry(realDir, p, filepath.Join(realDir, e.Name()), e.Type(), false); err != nil {
					return nil, err
				}
			}
		}
		if isSamples {
			explicit = false
		}
	} else {
		realRoot, err := realPath(root)
		if err != nil {
			return nil, err
		}
		err = filepath.WalkDir(realRoot, func(real string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == Partial && real != realRoot {
				// A job's output while lm-eval runs (or after it failed):
				// not a finished output. Named itself, it is read.
				return fs.SkipDir
			}
			// Files are named under root as given, though found under its
			// real path. lm-eval users name directories after files
			// ("p3.json/"): only files are candidates.
			rel, err := filepath.Rel(realRoot, real)
			if err != nil {
				return err
			}
			return f.entry(realRoot, filepath.Join(root, rel), real, d.Type(), true)
		})
		if err != nil {
			return nil, err
		}
	}

	var outs []*Output
	used := map[string]bool{} // real paths of samples files taken
	seen := map[string]bool{} // real paths of results files read
	for _, c := range f.results {
		if seen[c.real] {
			continue
		}
		seen[c.real] = true
		var r *Results
		if explicit || resultsName(c.name) {
			r, err = ReadResults(c.path)
		} else {
			r, err = sniffResults(c.path)
		}
		if err != nil && (explicit || !isFileError(err)) {
			return nil, err
		}
		if err != nil {
			// A damaged results file found in a folder: an output of its
			// own, with the samples of its timestamp, so that its runs'
			// samples are not taken for another run's.
			o := &Output{Dir: c.dir, Timestamp: c.ts, bad: c.path, Errors: []error{err}}
			if c.ts != "" {
				for _, s := range f.samples {
					if s.ts == c.ts && s.dir == c.dir && !used[s.real] {
						o.Samples = append(o.Samples, SampleFile{Task: s.task, Path: s.path})
						used[s.real] = true
					}
				}
			}
			sortSamples(o)
			outs = append(outs, o)
			continue
		}
		if r == nil {
			continue // some other JSON file in the tree
		}
		o := &Output{Results: r, Dir: c.dir, Timestamp: c.ts}
		if c.ts != "" {
			// Same directory first; then anywhere under the root.
			for _, pass := range []bool{true, false} {
				for _, s := range f.samples {
					if s.ts == c.ts && !used[s.real] && (s.dir == c.dir) == pass {
						if pass || !hasSamplesIn(o) {
							o.Samples = append(o.Samples, SampleFile{Task: s.task, Path: s.path})
							used[s.real] = true
						}
					}
				}
			}
		} else {
			pairLegacy(o, f.others, used)
		}
		if emb, ok := r.Doc.Get("samples"); ok && emb.Kind == Object {
			for i, task := range emb.Keys {
				if _, dup := o.SamplesOf(task); !dup && emb.Vals[i].Kind == List {
					o.Samples = append(o.Samples, SampleFile{Task: task, Embedded: emb.Vals[i].List})
				}
			}
		}
		checkTasks(o)
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
	for _, s := range f.samples {
		if used[s.real] {
			continue
		}
		used[s.real] = true
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

// sniffResults reads a JSON file whose name lm-eval does not give results
// files and returns it as results if it is one, nil if it is some other
// JSON file. A file that holds the key "results" but is not valid JSON is
// taken for a damaged results file, and is an error; so is one that cannot
// be read. A file over MaxResultsSize cannot be a results file, and is
// passed over unread.
func sniffResults(path string) (*Results, error) {
	b, err := readResultsFile(path)
	if errors.Is(err, ErrTooLarge) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(b, []byte(`"results"`)) {
		return nil, nil
	}
	r, err := ParseResults(path, b)
	if errors.Is(err, ErrNotLMEval) {
		return nil, nil
	}
	return r, err
}

// checkTasks refuses samples of a task the results have no entry for:
// lm-eval reports every task it logs samples of, so such samples come from
// another run. They are left out of the output and named in its Errors.
func checkTasks(o *Output) {
	kept := o.Samples[:0]
	for _, s := range o.Samples {
		if _, ok := o.Results.Task(s.Task); ok {
			kept = append(kept, s)
			continue
		}
		where := s.Path
		if where == "" {
			where = o.Results.Path
		}
		o.Errors = append(o.Errors, &FileError{Path: where, Err: fmt.Errorf("%w: samples of task %q, which %s has no entry for in \"results\" (it has %s)", ErrStraySamples, s.Task, o.Results.Path, taskList(o.Results))})
	}
	o.Samples = kept
}

func isFileError(err error) bool {
	var fe *FileError
	return errors.As(err, &fe)
}

func taskList(r *Results) string {
	names := make([]string, 0, len(r.Tasks))
	for _, t := range r.Tasks {
		names = append(names, strconv.Quote(t.Name))
	}
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 5 {
		names = append(names[:5], fmt.Sprintf("and %d more", len(names)-5))
	}
	return strings.Join(names, ", ")
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
		if f.dir != o.Dir || used[f.real] {
			continue
		}
		stem := strings.TrimSuffix(f.name, ".jsonl")
		for _, t := range tasks {
			if strings.HasSuffix(stem, "_"+t) {
				if _, dup := o.SamplesOf(t); !dup {
					o.Samples = append(o.Samples, SampleFile{Task: t, Path: f.path})
					used[f.real] = true
				}
				break
			}
		}
	}
}
