package analysis

import (
	"context"
	"fmt"
	"math"

	"github.com/evalcapsule/evalcapsule/harness"
)

// DocRef identifies one samples line: the document and the hashes lm-eval
// logged for it.
type DocRef struct {
	// Task is set in a group's joined series: the member task the document
	// belongs to (doc_ids repeat across members).
	Task       string
	DocID      int
	DocHash    string
	PromptHash string
	Line       int
}

// Series is the per-document values of one task, metric and filter of a
// run, in the order lm-eval logged them.
type Series struct {
	Task, Metric, Filter string
	Docs                 []DocRef
	Values               []float64
	Kind                 PyKind
	// File is the samples file the values come from.
	File harness.SampleFile
}

// Mean returns the series' mean as lm-eval aggregates it (plain summation).
func (s *Series) Mean() float64 { return Mean(s.Values, s.Kind, Naive) }

// Binary reports whether every value is 0 or 1.
func (s *Series) Binary() bool {
	for _, v := range s.Values {
		if v != 0 && v != 1 {
			return false
		}
	}
	return true
}

// Scores is a run read for analysis: its re-scoring report and the
// per-document values of every task, metric and filter.
type Scores struct {
	Run    *harness.Run
	Report *RunReport
	Series []*Series
	// Reported is every numeric score of the run's results file as lm-eval
	// aggregated it, with its own stderr; nil without a results file. It is
	// all there is of a run whose samples were not logged (LoadReported).
	Reported []Reported
	// Trimmed names the series whose samples cover fewer documents than
	// lm-eval scored (n-samples): a samples file cut short, by hand or by
	// a crash. Their values, and everything computed from them, are over
	// the logged documents only.
	Trimmed []Trimmed
}

// Reported is one score as lm-eval wrote it in a results file.
type Reported struct {
	Task, Metric, Filter string
	Value                float64
	// Stderr is lm-eval's stderr, NaN where it wrote "N/A" or none.
	Stderr float64
	// N is the documents lm-eval scored (n-samples effective; for a group
	// the sum over its leaves), 0 when the file does not say.
	N int
}

// Trimmed is a series of a run whose samples log fewer documents than
// lm-eval scored.
type Trimmed struct {
	// Run is the run's results file (or output directory).
	Run          string `json:"run"`
	Task         string `json:"task"`      // the task whose samples are trimmed
	Filter       string `json:"filter"`    // the lm-eval filter of the trimmed series
	Logged       int    `json:"logged"`    // documents in the samples file
	Evaluated    int    `json:"evaluated"` // n-samples effective: documents lm-eval scored
	TaskOriginal int    `json:"original"`  // n-samples original: documents of the task
}

// String names the run, task and counts in one line.
func (t Trimmed) String() string {
	of := ""
	if t.TaskOriginal > t.Evaluated {
		of = fmt.Sprintf(" (of the task's %d)", t.TaskOriginal)
	}
	return fmt.Sprintf("%s: %s (%s): the samples log %d of the %d documents lm-eval scored%s; what is shown of it is over the %d logged",
		t.Run, t.Task, t.Filter, t.Logged, t.Evaluated, of, t.Logged)
}

// FindReported returns the results file's score of a task, metric and
// filter.
func (sc *Scores) FindReported(task, metric, filter string) (Reported, bool) {
	for _, r := range sc.Reported {
		if r.Task == task && r.Metric == metric && r.Filter == filter {
			return r, true
		}
	}
	return Reported{}, false
}

// ResultsOnly reports whether the run has no per-document scores: what is
// known of it is its results file.
func (sc *Scores) ResultsOnly() bool { return len(sc.Series) == 0 }

// Find returns the series of a task, metric and filter.
func (sc *Scores) Find(task, metric, filter string) (*Series, bool) {
	for _, s := range sc.Series {
		if s.Task == task && s.Metric == metric && s.Filter == filter {
			return s, true
		}
	}
	return nil, false
}

// Load reads a run's samples once: it re-scores them (the report says
// whether the logged values can be trusted) and keeps the per-document
// values for comparisons, failure reading and attribution.
func Load(ctx context.Context, run *harness.Run, opts RescoreOptions) (*Scores, error) {
	sc, err := load(ctx, run, opts)
	if err != nil {
		return nil, err
	}
	if len(sc.Series) == 0 {
		return nil, fmt.Errorf("%s: %w: no per-document scores in its samples", run.Output.Path(), harness.ErrNoOutput)
	}
	return sc, nil
}

// LoadReported is Load for showing a run: a run without per-document
// scores (a results file whose samples were not logged) is read from its
// results file alone, with Reported and no Series. It fails only when the
// run has neither.
func LoadReported(ctx context.Context, run *harness.Run, opts RescoreOptions) (*Scores, error) {
	sc, err := load(ctx, run, opts)
	if err != nil {
		return nil, err
	}
	if len(sc.Series) == 0 && len(sc.Reported) == 0 {
		return nil, fmt.Errorf("%s: %w: neither per-document scores in samples nor numeric scores in a results file", run.Output.Path(), harness.ErrNoOutput)
	}
	return sc, nil
}

func load(ctx context.Context, run *harness.Run, opts RescoreOptions) (*Scores, error) {
	states, err := rescoreStates(ctx, []*harness.Output{run.Output}, opts)
	if err != nil {
		return nil, err
	}
	st := states[0]
	sc := &Scores{Run: run, Report: st.report(), Reported: reported(st.res)}
	for _, name := range sortedKeys(st.tasks) {
		acc := st.tasks[name]
		for _, f := range acc.filters {
			for _, m := range f.metrics {
				if len(m.logged) != f.lines || m.nonNumeric != "" {
					continue // pairs (f1, mcc) and text values are not series
				}
				if ts := st.scorers[name]; ts != nil {
					// A perplexity's per-doc values are log-likelihoods:
					// only a mean of per-doc values is the metric's score.
					if agg, _ := ts.aggregation(m.name); agg != "mean" {
						continue
					}
				}
				kind := m.loggedKind
				if m.recCount == f.lines {
					kind = m.recKind
				}
				sc.Series = append(sc.Series, &Series{
					Task: name, Metric: m.name, Filter: f.name,
					Docs: f.docs, Values: m.logged, Kind: kind, File: acc.file,
				})
			}
		}
	}
	sc.Trimmed = trimmedSeries(run.Output.Path(), st.res, sc.Series)
	return sc, nil
}

// reported is every numeric score of a results file.
func reported(r *harness.Results) []Reported {
	if r == nil {
		return nil
	}
	var out []Reported
	for _, t := range r.Tasks {
		n := documents(r, t.Name)
		for _, m := range t.Metrics {
			if m.Value.Kind != harness.Number {
				continue
			}
			se := math.NaN()
			if m.Stderr.Kind == harness.Number {
				se = m.Stderr.Num
			}
			out = append(out, Reported{Task: t.Name, Metric: m.Metric, Filter: m.Filter, Value: m.Value.Num, Stderr: se, N: n})
		}
	}
	return out
}

// documents is how many documents lm-eval scored for a task (n-samples
// effective) or a group (the sum over its leaves); 0 when not recorded.
func documents(r *harness.Results, task string) int {
	if ns, ok := r.NSamples[task]; ok {
		return ns.Effective
	}
	leaves := r.Leaves(task)
	n := 0
	for _, l := range leaves {
		ns, ok := r.NSamples[l]
		if !ok {
			return 0
		}
		n += ns.Effective
	}
	return n
}

// trimmedSeries lists the series that log fewer documents than n-samples says
// lm-eval scored.
func trimmedSeries(run string, r *harness.Results, series []*Series) []Trimmed {
	if r == nil {
		return nil
	}
	var out []Trimmed
	seen := map[[2]string]bool{}
	for _, s := range series {
		ns, ok := r.NSamples[s.Task]
		k := [2]string{s.Task, s.Filter}
		if !ok || seen[k] {
			continue
		}
		seen[k] = true
		ids := map[int]bool{}
		for _, d := range s.Docs {
			ids[d.DocID] = true
		}
		if len(ids) < ns.Effective {
			out = append(out, Trimmed{Run: run, Task: s.Task, Filter: s.Filter, Logged: len(ids), Evaluated: ns.Effective, TaskOriginal: ns.Original})
		}
	}
	return out
}
