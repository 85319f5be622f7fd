package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/evalcapsule/evalcapsule/harness"
)

// RescoreOptions configures Rescore. The zero value works.
type RescoreOptions struct {
	// Workers is how many samples files are read at once; 0 means GOMAXPROCS.
	Workers int
	// MaxDocDiffs is how many differing documents a check keeps; 0 means 5.
	MaxDocDiffs int
	// Progress, when set, is called after each samples file is read.
	Progress func(done, total int)
	// Code says whether the completions of code tasks are executed.
	Code CodeOptions
}

func (o RescoreOptions) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func (o RescoreOptions) maxDiffs() int {
	if o.MaxDocDiffs > 0 {
		return o.MaxDocDiffs
	}
	return 5
}

// Rescore recomputes every metric, stderr and group aggregate of each output
// from its samples and member values and compares them with what lm-eval
// reported. Samples files of all outputs are read in parallel. A file that
// cannot be read as lm-eval wrote it (a line split over several lines, a
// field missing, a results file that does not parse: the outputs'
// harness.Output.Errors too) is one check at LevelInput with status error,
// naming the file, line and problem; every other file is still checked.
// An error is returned only when the context ends; numbers that differ are
// reported in the checks.
func Rescore(ctx context.Context, outs []*harness.Output, opts RescoreOptions) (*RescoreReport, error) {
	states, err := readStates(ctx, outs, opts, true)
	if err != nil {
		return nil, err
	}
	rep := &RescoreReport{}
	for _, st := range states {
		rep.Runs = append(rep.Runs, st.report())
	}
	rep.Levels = CountLevels(rep.Runs)
	return rep, nil
}

// rescoreStates reads every samples file of the outputs, in parallel; the
// first file that cannot be read is the error.
func rescoreStates(ctx context.Context, outs []*harness.Output, opts RescoreOptions) ([]*runState, error) {
	return readStates(ctx, outs, opts, false)
}

// readStates reads every samples file of the outputs, in parallel. With
// keepGoing, a file that cannot be read is kept in its run's state as an
// input error rather than returned.
func readStates(ctx context.Context, outs []*harness.Output, opts RescoreOptions, keepGoing bool) ([]*runState, error) {
	type job struct {
		run  int
		file harness.SampleFile
	}
	var jobs []job
	states := make([]*runState, len(outs))
	var cr *codeRun
	if opts.Code.Execute {
		var err error
		if cr, err = newCodeRun(ctx, opts.Code); err != nil {
			return nil, err
		}
	}
	for i, o := range outs {
		states[i] = newRunState(o)
		states[i].code = cr
		if cr == nil {
			for _, f := range o.Samples {
				if states[i].codeTasks[f.Task] != nil {
					states[i].warns = append(states[i].warns, fmt.Sprintf("%s logs programs: its pass@k is re-aggregated from the logged values, not executed (--execute-code runs them in the sandbox)", f.Task))
				}
			}
		}
		for _, f := range o.Samples {
			jobs = append(jobs, job{i, f})
		}
	}
	// Largest files first keeps both cores busy to the end.
	results := make([]*taskAcc, len(jobs))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		fileErrs = make([]error, len(jobs))
		done     int
		next     = make(chan int)
	)
	for w := 0; w < opts.workers(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				if ctx.Err() != nil {
					continue
				}
				st := states[jobs[j].run]
				acc, err := st.readTask(jobs[j].file, opts.maxDiffs())
				mu.Lock()
				fileErrs[j] = err
				if err != nil && firstErr == nil {
					firstErr = err
				}
				results[j] = acc
				done++
				if opts.Progress != nil {
					opts.Progress(done, len(jobs))
				}
				mu.Unlock()
			}
		}()
	}
	for j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if firstErr != nil && !keepGoing {
		return nil, firstErr
	}
	for i, o := range outs {
		if len(o.Errors) == 0 {
			continue
		}
		if !keepGoing {
			return nil, o.Errors[0]
		}
		for _, err := range o.Errors {
			states[i].fileErrs = append(states[i].fileErrs, fileErr{err: err})
		}
	}
	for j, jb := range jobs {
		if fileErrs[j] != nil {
			st := states[jb.run]
			st.fileErrs = append(st.fileErrs, fileErr{task: jb.file.Task, err: fileErrs[j]})
			st.badTasks[jb.file.Task] = fileErrs[j]
			continue
		}
		states[jb.run].tasks[jb.file.Task] = results[j]
	}
	return states, nil
}

// runState is what is known about one output while its samples are read.
type runState struct {
	out     *harness.Output
	res     *harness.Results // nil without a results file
	version harness.VersionRange
	rules   versionRules
	python  string // "3.10.12", "" when unknown
	pyRules []Summation
	numpy   NumpyReduce
	// otherLibm: the run's platform (macOS) has a C library whose exp
	// and log this machine cannot call (see perDoc.libmTol).
	otherLibm bool
	scorers   map[string]*taskScorer
	tasks     map[string]*taskAcc
	warns     []string
	// fileErrs are the files of the output that cannot be read, in the
	// order found; badTasks the tasks whose samples file is one of them.
	fileErrs []fileErr
	badTasks map[string]error
	// rec is the run.json of the run the output belongs to, nil for a
	// bare lm-eval output.
	rec *harness.RunRecord
	// codeTasks are the tasks whose completions are programs; code runs
	// them, nil when they are not executed.
	codeTasks map[string]*codeTask
	code      *codeRun
}

func newRunState(o *harness.Output) *runState {
	st := &runState{out: o, res: o.Results, scorers: map[string]*taskScorer{}, tasks: map[string]*taskAcc{}, badTasks: map[string]error{}}
	hasFilter, legacy := peekSamples(o)
	if st.res != nil {
		st.version = harness.DetectVersion(st.res, hasFilter, legacy)
		if maj, min, text, ok := st.res.PythonVersion(); ok {
			st.python = text
			st.pyRules = []Summation{SummationFor(maj, min)}
		}
	} else {
		st.version = harness.VersionRange{Lo: harness.Releases[0], Hi: harness.Releases[len(harness.Releases)-1]}
		if hasFilter {
			st.version.Lo = harness.Version{0, 4, 7}
		}
	}
	if st.res != nil {
		if m := numpyVersionRE.FindStringSubmatch(st.res.String("pretty_env_info")); m != nil {
			maj, _ := strconv.Atoi(m[1])
			min, _ := strconv.Atoi(m[2])
			st.numpy = NumpyReduceFor(maj, min)
		}
		st.otherLibm = otherLibmRE.MatchString(st.res.String("pretty_env_info"))
	}
	if st.pyRules == nil {
		// Unknown Python: CPython before 3.12 summed naively, later
		// versions compensate; try both and say which matched.
		st.pyRules = []Summation{Naive, Neumaier}
	}
	st.rules = rulesFor(st.version)
	if rec, err := harness.RecordOf(o); err != nil {
		st.warns = append(st.warns, fmt.Sprintf("the run's record cannot be read, so lm-eval's record is not compared with it: %v", err))
	} else {
		st.rec = rec
	}
	for _, f := range o.Samples {
		var cfg harness.Value
		if st.res != nil {
			cfg = st.res.Configs[f.Task]
		}
		st.scorers[f.Task] = newTaskScorer(f.Task, cfg, st.rules)
		st.scorers[f.Task].sumRule = st.pyRules[0]
		if ct := detectCodeTask(f.Task, cfg, st.version); ct != nil {
			if st.codeTasks == nil {
				st.codeTasks = map[string]*codeTask{}
			}
			st.codeTasks[f.Task] = ct
		}
	}
	return st
}

// fileErr is a file of an output that cannot be read; task is the task of a
// samples file, "" for a results file.
type fileErr struct {
	task string
	err  error
}

// inputCheck is the check of a file that cannot be read.
func inputCheck(fe fileErr) Check {
	return Check{Task: fe.task, Level: LevelInput, Status: StatusError, Reason: inputReason(fe.err), Err: fe.err}
}

// inputReason says where a file error is as "file: line 7, column 2:
// problem", or as the error says it when it is not located in a file.
func inputReason(err error) string {
	var fe *harness.FileError
	if !errors.As(err, &fe) {
		return err.Error()
	}
	loc := fe.Path
	switch {
	case fe.Line > 0 && fe.Col > 0:
		loc += fmt.Sprintf(": line %d, column %d", fe.Line, fe.Col)
	case fe.Line > 0:
		loc += fmt.Sprintf(": line %d", fe.Line)
	}
	if fe.Field != "" {
		loc += ": " + fe.Field
	}
	return loc + ": " + fe.Err.Error()
}

// otherLibmRE recognises a run on macOS in pretty_env_info.
var otherLibmRE = regexp.MustCompile(`(?m)^OS: (macOS|Mac OSX?) `)

// libmNote ends the reason of a check that kept logged per-doc values
// within the rounding of exp/log; the text report shows such reasons even
// when the check is exact.
const libmNote = "those lines are aggregated as logged"

// ulp is the distance from |x| to the next float away from zero.
func ulp(x float64) float64 {
	x = math.Abs(x)
	return math.Nextafter(x, math.Inf(1)) - x
}

// numpyVersionRE finds numpy's version in pretty_env_info's pip list.
var numpyVersionRE = regexp.MustCompile(`numpy==(\d+)\.(\d+)`)

// peekSamples reads the first line of the first samples file: whether lines
// carry "filter", and whether the file is the old JSON-array format.
func peekSamples(o *harness.Output) (hasFilter, legacy bool) {
	for _, f := range o.Samples {
		r, err := f.Open()
		if err != nil {
			continue
		}
		s, err := r.Next()
		legacy = r.IsArray()
		r.Close()
		if err == nil {
			return s.Filter != "", legacy
		}
	}
	return false, false
}

// taskAcc accumulates one task's samples.
type taskAcc struct {
	task    string
	path    string
	file    harness.SampleFile
	lines   int
	filters []*filterAcc // in file order
	byName  map[string]*filterAcc
}

type filterAcc struct {
	name      string
	lines     int
	docs      []DocRef    // one per line, in file order
	docIDs    map[int]int // doc_id → first line
	dupDoc    string
	metrics   []*metricAcc
	byName    map[string]*metricAcc
	checked   int // lines whose filtered_resps were re-derived
	fdiffs    int
	fdiffList []DocDiff
	errs      int
	firstErr  string
	note      string // how the lines were re-scored, when it needs saying
	executed  int    // programs run for the lines
}

type metricAcc struct {
	name        string
	logged      []float64
	loggedPairs [][]float64
	loggedKind  PyKind
	nonNumeric  string
	recomputed  []float64
	recPairs    [][]float64
	loggedLists [][]float64 // per-doc lists (IFEval's inst_level_*)
	listLine    string      // the first line logging a list, for the reason
	recLists    [][]float64
	recKind     PyKind
	recCount    int
	// loggedTexts, recTexts: the (reference, prediction) items of the
	// sacrebleu metrics (bleu, chrf, ter).
	loggedTexts [][]string
	recTexts    [][]string
	// libm counts the values within one ulp of the logged one on a run
	// whose C library differs (perDoc.libmTol); libmFirst is the first.
	libm        int
	libmFirst   DocDiff
	unsupported string
	notRecomp   int // lines whose per-doc value was not recomputed
	diffs       int
	diffList    []DocDiff
}

func (f *filterAcc) metric(name string) *metricAcc {
	if m, ok := f.byName[name]; ok {
		return m
	}
	m := &metricAcc{name: name, loggedKind: PyInt}
	f.byName[name] = m
	f.metrics = append(f.metrics, m)
	return m
}

func (t *taskAcc) filter(name string) *filterAcc {
	if f, ok := t.byName[name]; ok {
		return f
	}
	f := &filterAcc{name: name, docIDs: map[int]int{}, byName: map[string]*metricAcc{}}
	t.byName[name] = f
	t.filters = append(t.filters, f)
	return f
}

// readTask streams one samples file through the task's scorer.
func (st *runState) readTask(file harness.SampleFile, maxDiffs int) (*taskAcc, error) {
	ts := st.scorers[file.Task]
	acc := &taskAcc{task: file.Task, path: file.Path, file: file, byName: map[string]*filterAcc{}}
	if acc.path == "" {
		acc.path = st.out.Path() + " (embedded samples)"
	}
	// Lines without "filter" (before v0.4.7) belong to the k-th filter of
	// filter_list by block position; the block size is n-samples' effective
	// count, or the line count divided by the number of filters.
	blockSize := 0
	inferFilters := false
	filterKnown := true  // lines name their filter (v0.4.7+), or the task has one
	configKnown := false // the results hold the task's config (and so its filters)
	var dupErr error     // the first doc_id logged twice under one filter
	ct := st.codeTasks[file.Task]
	var outcomes map[int]*lineOutcomes
	if ct != nil && st.code != nil {
		var err error
		if outcomes, err = st.code.execute(file, ct); err != nil {
			return nil, err
		}
	}
	r, err := file.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for {
		s, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if acc.lines == 0 && s.Filter == "" {
			inferFilters = true
			blockSize = st.blockSize(file, ts)
			// Lines that do not name their filter are assigned one by
			// their block, known from the task's config; without one the
			// blocks of several filters may all be taken for "none".
			if st.res != nil {
				_, configKnown = st.res.Configs[file.Task]
			}
			filterKnown = configKnown && len(ts.filterOrder) == 1
		}
		filter := s.Filter
		if inferFilters {
			filter = "none"
			if len(ts.filterOrder) > 0 && blockSize > 0 {
				k := acc.lines / blockSize
				if k >= len(ts.filterOrder) {
					return nil, &harness.FileError{Path: acc.path, Line: s.Line, Err: fmt.Errorf("more lines than %d docs × %d filters (%s): the samples do not match the results", blockSize, len(ts.filterOrder), strings.Join(ts.filterOrder, ", "))}
				}
				filter = ts.filterOrder[k]
			}
		}
		acc.lines++
		fa := acc.filter(filter)
		fa.lines++
		fa.docs = append(fa.docs, DocRef{DocID: s.DocID, DocHash: s.DocHash, PromptHash: s.PromptHash, Line: s.Line})
		if first, dup := fa.docIDs[s.DocID]; dup && dupErr == nil {
			// lm-eval logs each document once per filter.
			dupErr = &harness.FileError{Path: acc.path, Line: s.Line, Err: fmt.Errorf("%w: doc_id %d under filter %q is logged on lines %d and %d; lm-eval writes each document once per filter", harness.ErrNotLMEval, s.DocID, filter, first, s.Line)}
			if filterKnown {
				return nil, dupErr
			}
		}
		if first, dup := fa.docIDs[s.DocID]; dup && fa.dupDoc == "" {
			fa.dupDoc = fmt.Sprintf("doc_id %d appears on lines %d and %d", s.DocID, first, s.Line)
		} else if !dup {
			fa.docIDs[s.DocID] = s.Line
		}
		names := st.metricNames(s, ts, filter)
		for _, n := range names {
			m := fa.metric(n)
			v, _ := s.Value(n)
			switch {
			case v.Kind == harness.Number:
				m.logged = append(m.logged, v.Num)
				if !v.IsInt {
					m.loggedKind = PyFloat
				}
			case v.Kind == harness.Bool:
				m.logged = append(m.logged, boolFloat(v.Bool))
			case v.Kind == harness.List && len(v.List) == 2 && isNum(v.List[0]) && isNum(v.List[1]):
				m.loggedPairs = append(m.loggedPairs, []float64{v.List[0].Num, v.List[1].Num})
			case v.Kind == harness.List && len(v.List) == 2 && v.List[0].Kind == harness.String && v.List[1].Kind == harness.String:
				m.loggedTexts = append(m.loggedTexts, []string{v.List[0].Str, v.List[1].Str})
			case v.Kind == harness.List && numberList(v) != nil:
				m.loggedLists = append(m.loggedLists, numberList(v))
				m.logged = append(m.logged, math.NaN()) // keep one value per line
				if m.listLine == "" {
					m.listLine = fmt.Sprintf("line %d: %s", s.Line, truncate(v.String(), 80))
				}
			default:
				if m.nonNumeric == "" {
					m.nonNumeric = fmt.Sprintf("line %d: %s", s.Line, truncate(v.String(), 80))
				}
				m.logged = append(m.logged, math.NaN()) // keep one value per line
			}
		}
		var lr lineResult
		if ct != nil {
			var lo *lineOutcomes
			if outcomes != nil {
				lo = outcomes[s.Line]
				if lo == nil {
					lo = &lineOutcomes{buildErr: "the line was not read before execution"}
				}
				fa.executed += len(lo.results)
				fa.note = st.code.summary(fa.executed)
			}
			lr = ct.rescoreLine(s, names, lo)
		} else {
			lr = ts.rescoreLine(s, filter, names)
		}
		if lr.err != "" {
			fa.errs++
			if fa.firstErr == "" {
				fa.firstErr = fmt.Sprintf("line %d (doc_id %d): %s", s.Line, s.DocID, lr.err)
			}
			for _, n := range names {
				fa.metric(n).unsupported = "re-scoring failed: " + fa.firstErr
			}
			continue
		}
		if lr.filteredOK {
			fa.checked++
			if lr.filteredDiff != "" {
				fa.fdiffs++
				if len(fa.fdiffList) < maxDiffs {
					fa.fdiffList = append(fa.fdiffList, DocDiff{DocID: s.DocID, Line: s.Line, Field: "filtered_resps", Recomputed: lr.filteredDiff})
				}
			}
		}
		for _, n := range names {
			m := fa.metric(n)
			pd, ok := findPerDoc(lr.values, n)
			if !ok {
				m.notRecomp++
				if m.unsupported == "" {
					m.unsupported = lr.unsupported
					if m.unsupported == "" {
						m.unsupported = fmt.Sprintf("per-doc metric %q is not re-implemented", n)
					}
				}
				continue
			}
			m.recCount++
			m.recKind = pd.kind
			logged, _ := s.Value(n)
			var same bool
			var rec string
			if pd.texts != nil {
				m.recTexts = append(m.recTexts, pd.texts)
				same = logged.Kind == harness.List && len(logged.List) == 2 && logged.List[0].Kind == harness.String && logged.List[1].Kind == harness.String &&
					logged.List[0].Str == pd.texts[0] && logged.List[1].Str == pd.texts[1]
				rec = fmt.Sprintf("[%q, %q]", pd.texts[0], pd.texts[1])
			} else if pd.list != nil {
				m.recLists = append(m.recLists, pd.list)
				l := numberList(logged)
				same = l != nil && len(l) == len(pd.list)
				for i := 0; same && i < len(l); i++ {
					same = l[i] == pd.list[i]
				}
				rec = fmt.Sprint(pd.list)
			} else if pd.pair != nil {
				m.recPairs = append(m.recPairs, pd.pair)
				same = logged.Kind == harness.List && len(logged.List) == 2 && isNum(logged.List[0]) && isNum(logged.List[1]) &&
					logged.List[0].Num == pd.pair[0] && logged.List[1].Num == pd.pair[1]
				rec = fmt.Sprintf("[%g, %g]", pd.pair[0], pd.pair[1])
			} else {
				m.recomputed = append(m.recomputed, pd.value)
				lf, ok := logged.Float()
				same = ok && logged.Kind != harness.String && math.Float64bits(lf) == math.Float64bits(pd.value)
				rec = harness.FormatFloat(pd.value, pd.kind == PyInt)
				if !same && ok && pd.libmTol > 0 && (st.otherLibm || pd.anyPlatform) && logged.Kind == harness.Number && math.Abs(lf-pd.value) <= pd.libmTol {
					// Kept as logged, and counted in the reason.
					same = true
					m.recomputed[len(m.recomputed)-1] = lf
					if m.libm == 0 {
						m.libmFirst = DocDiff{DocID: s.DocID, Line: s.Line, Field: n, Logged: logged.String(), Recomputed: rec}
					}
					m.libm++
				}
			}
			if !same {
				m.diffs++
				if len(m.diffList) < maxDiffs {
					m.diffList = append(m.diffList, DocDiff{DocID: s.DocID, Line: s.Line, Field: n, Logged: logged.String(), Recomputed: rec})
				}
			}
		}
	}
	// Filters assigned by block: a doc_id twice in a block is an error
	// when the blocks are sure, those of the config's filters each holding
	// the n-samples count. Otherwise (no config, trimmed samples) the
	// check says so and goes no further.
	if dupErr != nil && configKnown && acc.lines == blockSize*len(ts.filterOrder) {
		return nil, dupErr
	}
	return acc, nil
}

func sortedKeys(m map[string]*taskAcc) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func findPerDoc(vs []perDoc, name string) (perDoc, bool) {
	for _, v := range vs {
		if v.name == name {
			return v, true
		}
	}
	return perDoc{}, false
}

func isNum(v harness.Value) bool { return v.Kind == harness.Number }

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// blockSize is the number of lines per filter in a file without "filter".
func (st *runState) blockSize(file harness.SampleFile, ts *taskScorer) int {
	if st.res != nil {
		if ns, ok := st.res.NSamples[file.Task]; ok {
			return ns.Effective
		}
	}
	if len(ts.filterOrder) <= 1 {
		return 0
	}
	// Count the lines first: the old files are small.
	r, err := file.Open()
	if err != nil {
		return 0
	}
	defer r.Close()
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			break
		}
		n++
	}
	return n / len(ts.filterOrder)
}

// metricNames returns the metrics a line holds: its "metrics" list (v0.4.7+),
// else those of its fields the task config or the results name as metrics.
func (st *runState) metricNames(s *harness.Sample, ts *taskScorer, filter string) []string {
	if s.Metrics != nil {
		return s.Metrics
	}
	var out []string
	var reported map[string]bool
	if st.res != nil {
		if t, ok := st.res.Task(ts.task); ok {
			reported = map[string]bool{}
			for _, m := range t.Metrics {
				reported[m.Metric] = true
			}
		}
	}
	for _, f := range s.Values {
		_, inConfig := ts.spec(f.Name)
		switch {
		case inConfig, reported[f.Name]:
			out = append(out, f.Name)
		case reported == nil && len(ts.metrics) == 0 && (f.Value.Kind == harness.Number || f.Value.Kind == harness.Bool):
			out = append(out, f.Name)
		}
	}
	return out
}

// report turns everything read into checks, in the order of the results
// file, followed by what only the samples hold.
func (st *runState) report() *RunReport {
	rr := &RunReport{Path: st.out.Path(), PythonVersion: st.python}
	for _, fe := range st.fileErrs {
		rr.Checks = append(rr.Checks, inputCheck(fe))
	}
	seen := map[string]bool{}
	key := func(t, m, f string) string { return t + "\x00" + m + "\x00" + f }
	var groupChecks []int
	if st.res != nil {
		for _, t := range st.res.Tasks {
			if t.Placeholder && len(t.Metrics) == 0 {
				continue
			}
			isGroup := st.res.IsGroup(t.Name)
			for _, m := range t.Metrics {
				seen[key(t.Name, m.Metric, m.Filter)] = true
				if isGroup {
					groupChecks = append(groupChecks, len(rr.Checks))
					rr.Checks = append(rr.Checks, Check{Task: t.Name, Metric: m.Metric, Filter: m.Filter})
					continue
				}
				rr.Checks = append(rr.Checks, st.taskCheck(t.Name, m))
			}
		}
	}
	for _, name := range sortedKeys(st.tasks) {
		acc := st.tasks[name]
		for _, f := range acc.filters {
			for _, m := range f.metrics {
				if seen[key(name, m.name, f.name)] {
					continue
				}
				seen[key(name, m.name, f.name)] = true
				rr.Checks = append(rr.Checks, st.taskCheck(name, harness.MetricResult{Metric: m.name, Filter: f.name}))
			}
		}
	}
	st.groupChecks(rr, groupChecks)
	rr.Checks = append(rr.Checks, st.recordChecks()...)
	rr.LMEvalVersion = st.version.String()
	if st.res == nil {
		rr.LMEvalVersion = "unknown (no results file)"
		if len(st.out.Errors) > 0 {
			rr.LMEvalVersion = "unknown (the results file cannot be read)"
		}
		if st.version.Lo != harness.Releases[0] {
			rr.LMEvalVersion = "≥" + st.version.Lo.String() + " (no results file)"
		}
	}
	rr.Warnings = st.warns
	rr.CodeExecution = st.codeExecution()
	return rr
}

// reasonNoSamples is the reason of a task check without samples.
const reasonNoSamples = "no samples logged for this task"

// taskCheck recomputes one task metric.
func (st *runState) taskCheck(task string, rm harness.MetricResult) Check {
	c := Check{Task: task, Metric: rm.Metric, Filter: rm.Filter, Reported: numberOf(rm.Value), ReportedStderr: numberOf(rm.Stderr)}
	if st.res == nil {
		c.Reported, c.ReportedStderr = Number{}, Number{}
	}
	none := func(reason string) Check {
		c.Level, c.Status, c.Reason = LevelNone, StatusNotRecomputable, reason
		return c
	}
	expected := -1
	if st.res != nil {
		if ns, ok := st.res.NSamples[task]; ok {
			expected = ns.Effective
			c.N = expected
		}
	}
	acc, ok := st.tasks[task]
	if err, bad := st.badTasks[task]; bad && !ok {
		var fe *harness.FileError
		path := "its samples file"
		if errors.As(err, &fe) {
			path = fe.Path
		}
		return none(fmt.Sprintf("%s cannot be read (the input error of this run says why)", path))
	}
	if !ok {
		return none(reasonNoSamples)
	}
	fa, ok := acc.byName[rm.Filter]
	if !ok {
		return none(fmt.Sprintf("%s has no lines for filter %q", acc.path, rm.Filter))
	}
	c.N = fa.lines
	m, ok := fa.byName[rm.Metric]
	if !ok {
		return none(fmt.Sprintf("%s logs no per-doc %q under filter %q", acc.path, rm.Metric, rm.Filter))
	}
	ts := st.scorers[task]

	// Per-doc level: every line re-scored from its responses?
	rescored := m.recCount == fa.lines && m.recCount > 0 && fa.errs == 0
	var notes []string
	perDocDiffers := false
	if fa.errs > 0 {
		notes = append(notes, fmt.Sprintf("%d lines could not be re-scored (first: %s)", fa.errs, fa.firstErr))
		perDocDiffers = true
	}
	if fa.fdiffs > 0 {
		perDocDiffers = true
		d := fa.fdiffList[0]
		notes = append(notes, fmt.Sprintf("filtered_resps differ on %d of %d lines (first: %s line %d doc_id %d: %s)", fa.fdiffs, fa.checked, acc.path, d.Line, d.DocID, d.Recomputed))
		c.DocDiffs = append(c.DocDiffs, fa.fdiffList...)
	}
	if m.diffs > 0 {
		perDocDiffers = true
		d := m.diffList[0]
		notes = append(notes, fmt.Sprintf("per-doc %s differs on %d of %d lines (first: %s line %d doc_id %d: logged %s, recomputed %s)", m.name, m.diffs, m.recCount, acc.path, d.Line, d.DocID, d.Logged, d.Recomputed))
		c.DocDiffs = append(c.DocDiffs, m.diffList...)
	}
	if m.libm > 0 {
		d := m.libmFirst
		notes = append(notes, fmt.Sprintf("per-doc %s is within the rounding of exp/log (an ulp of each operand) but not identical on %d of %d lines (first: line %d doc_id %d: logged %s, recomputed %s): the run's exp/log (a macOS C library, or numpy's own SIMD exp) round otherwise than this machine's C library; %s", m.name, m.libm, m.recCount, d.Line, d.DocID, d.Logged, d.Recomputed, libmNote))
	}
	if fa.note != "" {
		notes = append(notes, fa.note)
	}
	var items []float64
	var pairs [][]float64
	var texts [][]string
	var kind PyKind
	if rescored {
		c.Level = LevelRescored
		items, pairs, kind, texts = m.recomputed, m.recPairs, m.recKind, m.recTexts
	} else {
		c.Level = LevelReaggregated
		items, pairs, kind, texts = m.logged, m.loggedPairs, m.loggedKind, m.loggedTexts
		if agg, _ := ts.aggregation(rm.Metric); m.listLine != "" && m.nonNumeric == "" && !isInstLevelAgg(agg) {
			return none(fmt.Sprintf("per-doc %s is a list (%s), which only agg_inst_level_acc aggregates here", m.name, m.listLine))
		}
		if m.nonNumeric != "" && texts == nil {
			if agg, _ := ts.aggregation(rm.Metric); agg == "brier_score" {
				return none(reasonBrier + fmt.Sprintf(" (%s)", m.nonNumeric))
			}
			return none(fmt.Sprintf("per-doc %s is not numeric (%s)", m.name, m.nonNumeric))
		}
		if m.unsupported != "" {
			what := m.unsupported
			if fa.checked == fa.lines && fa.fdiffs == 0 && fa.lines > 0 {
				what += "; filtered_resps re-derived and identical on all lines"
			}
			if m.recCount > 0 {
				// Some lines were recomputed (and compared): say how many were not.
				what = fmt.Sprintf("%d of %d lines not recomputed (first: %s)", m.notRecomp, fa.lines, what)
			}
			notes = append(notes, "aggregated from the logged per-doc values: "+what)
		}
	}
	// Completeness: the samples must be the documents the results counted.
	if fa.dupDoc != "" {
		return st.incomplete(c, notes, perDocDiffers, fmt.Sprintf("%s: %s under filter %q: not a samples file lm-eval wrote", acc.path, fa.dupDoc, rm.Filter))
	}
	if expected >= 0 && fa.lines != expected {
		return st.incomplete(c, notes, perDocDiffers, fmt.Sprintf("%s has %d lines for filter %q but n-samples says %d documents were scored: the samples are incomplete or not from this run", acc.path, fa.lines, rm.Filter, expected))
	}
	if st.res != nil {
		if ns, ok := st.res.NSamples[task]; ok {
			for id := range fa.docIDs {
				if id >= ns.Original {
					return st.incomplete(c, notes, perDocDiffers, fmt.Sprintf("%s: doc_id %d is beyond the task's %d documents", acc.path, id, ns.Original))
				}
			}
		}
	}
	agg, custom := ts.aggregation(rm.Metric)
	if avg, ok := sklearnF1Average(agg); custom && ok {
		agg, custom = "f1_"+avg, false
	}
	if custom && isInstLevelAgg(agg) {
		lists := m.loggedLists
		if rescored {
			lists = m.recLists
		}
		if len(lists) != fa.lines {
			return st.incomplete(c, notes, perDocDiffers, fmt.Sprintf("per-doc %s is not a list of bools on every line", m.name))
		}
		agg, custom, items, pairs, kind = "agg_inst_level_acc", false, flatten(lists), nil, PyInt
	}
	if custom {
		return st.incomplete(c, notes, perDocDiffers, fmt.Sprintf("configs[%q] aggregates %s with a task-specific function", task, rm.Metric))
	}
	ac := aggContext{iters: 100000, numpy: st.numpy, patch: st.version.Hi[2], metric: rm.Metric}
	if st.res != nil {
		ac.iters = st.res.BootstrapIters()
	}
	if texts != nil && (agg == "bleu" || agg == "chrf" || agg == "ter") {
		return st.corpusCheck(c, notes, perDocDiffers, rescored, agg, texts, ac)
	}
	var tried []string
	var firstVal, firstErr Number
	// Each aggregation lm-eval's dependencies may have computed (two
	// scikit-learn formulas for the averaged f1s), under each sum rule.
	type attempt struct {
		agg  string
		rule Summation
	}
	var attempts []attempt
	for _, a := range aggCandidates(agg) {
		for _, r := range st.pyRules {
			attempts = append(attempts, attempt{a, r})
		}
	}
	settled := map[string]bool{}
	for i, at := range attempts {
		if settled[at.agg] {
			continue
		}
		rule := at.rule
		ac.rule = rule
		val, se, why, ruleMatters, err := aggregateWith(at.agg, items, pairs, kind, ac)
		if err != nil {
			return st.incomplete(c, notes, perDocDiffers, err.Error())
		}
		if i == 0 {
			firstVal, firstErr = val, se
		}
		ruleNote := why
		switch {
		case !ruleMatters:
		case len(st.pyRules) > 1:
			ruleNote += fmt.Sprintf("; %s is CPython's sum() of floats on a Python version not known", rule)
		default:
			ruleNote += fmt.Sprintf("; %s is CPython %s's sum() of floats", rule, st.python)
		}
		tried = append(tried, ruleNote)
		if st.res == nil || (val.Equal(c.Reported) && se.Equal(c.ReportedStderr)) {
			c.Recomputed, c.RecomputedStderr = val, se
			notes = append([]string{ruleNote}, notes...)
			if st.res == nil {
				notes = append(notes, "no results file: nothing reported to compare the aggregate with")
			}
			c.Reason = strings.Join(notes, "; ")
			c.Status = StatusExact
			if perDocDiffers {
				c.Status = StatusDiffers
			} else if st.res == nil && !rescored {
				c.Status = StatusNotRecomputable
			}
			return c
		}
		if !ruleMatters {
			settled[at.agg] = true // no sum follows the rule: another gives the same bits
		}
	}
	c.Recomputed, c.RecomputedStderr = firstVal, firstErr
	c.Status = StatusDiffers
	c.Reason = strings.Join(append([]string{"differs under " + strings.Join(tried, " and under ")}, notes...), "; ")
	return c
}

// incomplete ends a check whose aggregate cannot be recomputed, keeping the
// per-doc findings.
func (st *runState) incomplete(c Check, notes []string, perDocDiffers bool, why string) Check {
	c.Recomputed, c.RecomputedStderr = Number{}, Number{}
	c.Reason = strings.Join(append([]string{why}, notes...), "; ")
	if perDocDiffers {
		c.Status = StatusDiffers
		return c
	}
	if c.Level == LevelRescored {
		// The per-doc values were all checked; only the aggregate is out of
		// reach.
		c.Status = StatusNotRecomputable
		c.Reason += "; every logged line re-scores to its logged value and filtered_resps"
		return c
	}
	c.Level, c.Status = LevelNone, StatusNotRecomputable
	return c
}

// recordChecks compares what lm-eval recorded of the run with its
// run.json: one check, at level record, per field that differs.
func (st *runState) recordChecks() []Check {
	if st.res == nil || st.rec == nil {
		return nil
	}
	var out []Check
	for _, m := range harness.CheckRecord(st.res, st.rec) {
		out = append(out, RecordCheck(m))
	}
	return out
}

// RecordCheck is the check of one field lm-eval recorded otherwise than
// run.json: metric the field, reported what lm-eval wrote, recomputed what
// run.json says.
func RecordCheck(m harness.Mismatch) Check {
	return Check{Task: m.Task, Metric: m.Field, Reported: recordText(m.Results), Recomputed: recordText(m.Recorded),
		Level: LevelRecord, Status: StatusDiffers, Reason: m.String()}
}

// recordText holds a recorded value as text (never empty, so that it
// does not read as a number).
func recordText(s string) Number {
	if s == "" {
		s = `""`
	}
	return Number{Set: true, Text: s}
}
