package analysis

import (
	"context"
	"fmt"

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
}

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
	states, err := rescoreStates(ctx, []*harness.Output{run.Output}, opts)
	if err != nil {
		return nil, err
	}
	st := states[0]
	sc := &Scores{Run: run, Report: st.report()}
	for _, name := range sortedKeys(st.tasks) {
		acc := st.tasks[name]
		for _, f := range acc.filters {
			for _, m := range f.metrics {
				if len(m.logged) != f.lines || m.nonNumeric != "" {
					continue // pairs (f1, mcc) and text values are not series
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
	if len(sc.Series) == 0 {
		return nil, fmt.Errorf("%s: %w: no per-document scores in its samples", run.Output.Path(), harness.ErrNoOutput)
	}
	return sc, nil
}
