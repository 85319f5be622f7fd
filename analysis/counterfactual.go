package analysis

import (
	"fmt"
	"io"

	"github.com/evalcapsule/evalcapsule/analysis/internal/pyre"
	"github.com/evalcapsule/evalcapsule/harness"
)

// Counterfactual re-scores a generative task's logged responses under a
// regex filter of one's own (then take_first, as lm-eval's filters end) and
// the task's metric: the score the run would have had with that extraction,
// without running anything. The series is named filter "regex:<pattern>".
func Counterfactual(sc *Scores, task, metric, pattern string, groupSelect int) (*Series, error) {
	var base *Series
	for _, s := range sc.Series {
		if s.Task == task && s.Metric == metric {
			base = s
			break
		}
	}
	if base == nil {
		return nil, fmt.Errorf("%w: %s has no %s for task %q", ErrNoSeries, sc.Run.Output.Path(), metric, task)
	}
	re, err := pyre.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("counterfactual regex: %w", err)
	}
	var cfg harness.Value
	if r := sc.Run.Output.Results; r != nil {
		cfg = r.Configs[task]
	}
	ts := newTaskScorer(task, cfg, versionRules{emptyTupleFallback: true})
	p := &pipeline{name: "regex:" + pattern, steps: []filterStep{
		regexFilter{re: re, groupSelect: groupSelect, fallback: "[invalid]", rules: versionRules{emptyTupleFallback: true}},
		takeFirst{},
	}}
	ts.pipelines = map[string]*pipeline{p.name: p}
	ts.pipelineErr = nil
	out := &Series{Task: task, Metric: metric, Filter: p.name, File: base.File, Kind: NumpyFloat}
	r, err := base.File.Open()
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
		// The responses are the same under every filter: read one block
		// (the first, in files that do not log the filter).
		if s.Filter != "" && s.Filter != base.Filter {
			continue
		}
		if s.Filter == "" && len(out.Docs) == len(base.Docs) {
			break
		}
		lr := ts.rescoreLine(s, p.name, []string{metric})
		if lr.err != "" {
			return nil, fmt.Errorf("%w: %s line %d: %s", ErrNotRecomputable, base.File.Path, s.Line, lr.err)
		}
		pd, ok := findPerDoc(lr.values, metric)
		if !ok {
			return nil, fmt.Errorf("%w: %s: %s cannot be re-scored: %s", ErrNotRecomputable, task, metric, lr.unsupported)
		}
		out.Docs = append(out.Docs, DocRef{DocID: s.DocID, DocHash: s.DocHash, PromptHash: s.PromptHash, Line: s.Line})
		out.Values = append(out.Values, pd.value)
		out.Kind = pd.kind
	}
	if len(out.Docs) != len(base.Docs) {
		return nil, fmt.Errorf("%w: %s: read %d documents for the counterfactual, expected %d (samples without a filter field: one block per filter)", ErrNotRecomputable, task, len(out.Docs), len(base.Docs))
	}
	return out, nil
}
