package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/evalcapsule/evalcapsule/harness"
)

// RescoreCoverage is how much of the numbers of a set of results files the
// re-scorer can recompute from the raw responses, found from the task
// configurations alone (no samples are read): each task/metric/filter entry
// of each results file is run through the re-scorer's own dispatch with a
// probe document.
type RescoreCoverage struct {
	// Entries are every task/metric/filter of every results file, in file
	// order.
	Entries []CoverageEntry `json:"entries"`
	// Files is how many results files were mapped.
	Files int `json:"files"`
	// Rescored counts the entries whose check would reach level rescored
	// with complete samples.
	Rescored     int `json:"rescored"`
	Reaggregated int `json:"reaggregated"` // how many entries would be reaggregated (recomputed from the logged per-doc values)
	None         int `json:"none"`         // how many entries nothing could be recomputed for
	Group        int `json:"group"`        // how many entries are a group's (recomputed from its members')
	// Share is Rescored over the non-group entries (0 when there are none).
	Share float64 `json:"share"`
}

// CoverageEntry is one task/metric/filter of one results file.
type CoverageEntry struct {
	Path   string `json:"path"`   // the results file's path
	Task   string `json:"task"`   // lm-eval's task or group name
	Metric string `json:"metric"` // lm-eval's metric name
	Filter string `json:"filter"` // lm-eval's filter name
	Level  Level  `json:"level"`  // the level its check would reach: rescored, reaggregated, group or none
	// Reason says, below rescored, what stops the re-scorer: the per-doc
	// function or the aggregation not re-implemented, no configuration.
	Reason string `json:"reason,omitempty"`
}

// CoverageOf maps the results files of the outputs. Outputs without a
// results file are skipped: without a configuration nothing is known.
func CoverageOf(outs []*harness.Output) *RescoreCoverage {
	cov := &RescoreCoverage{Entries: []CoverageEntry{}}
	for _, o := range outs {
		res := o.Results
		if res == nil {
			continue
		}
		cov.Files++
		hasFilter, legacy := peekSamples(o)
		rules := rulesFor(harness.DetectVersion(res, hasFilter, legacy))
		scorers := map[string]*taskScorer{}
		for _, t := range res.Tasks {
			if t.Placeholder && len(t.Metrics) == 0 {
				continue
			}
			for _, m := range t.Metrics {
				e := CoverageEntry{Path: o.Path(), Task: t.Name, Metric: m.Metric, Filter: m.Filter}
				if res.IsGroup(t.Name) {
					e.Level = LevelGroup
				} else {
					ts, ok := scorers[t.Name]
					if !ok {
						ts = newTaskScorer(t.Name, res.Configs[t.Name], rules)
						ts.sumRule = Naive
						scorers[t.Name] = ts
					}
					e.Level, e.Reason = ts.probe(m.Metric, m.Filter)
				}
				switch e.Level {
				case LevelRescored:
					cov.Rescored++
				case LevelReaggregated:
					cov.Reaggregated++
				case LevelGroup:
					cov.Group++
				default:
					cov.None++
				}
				cov.Entries = append(cov.Entries, e)
			}
		}
	}
	if n := cov.Rescored + cov.Reaggregated + cov.None; n > 0 {
		cov.Share = float64(cov.Rescored) / float64(n)
	}
	return cov
}

// probe runs one metric of the task through rescoreLine and the
// aggregation with a probe document: an empty doc, one empty response per
// request (generate_until) or two choices (multiple_choice), target 0. A
// per-doc value, or an error raised inside a re-implemented function (the
// probe doc lacks the task's fields), means the metric is re-implemented;
// "unsupported" means it is not.
func (ts *taskScorer) probe(metric, filter string) (Level, string) {
	if !ts.hasConfig {
		return LevelNone, "no task configuration"
	}
	if filter == "" {
		filter = "none"
	}
	s := &harness.Sample{DocID: 0, Filter: filter, Doc: []byte("{}"), Target: harness.Value{Kind: harness.Number, Num: 0, IsInt: true}}
	var resps, filtered string
	switch ts.outputType {
	case "generate_until":
		resps, filtered = `[[""]]`, `[""]`
	case "multiple_choice":
		resps, filtered = `[[[-1.0, false]], [[-2.0, false]]]`, `[[-1.0, false], [-2.0, false]]`
	case "loglikelihood":
		resps, filtered = `[[[-1.0, true]]]`, `[[-1.0, true]]`
	default:
		return LevelReaggregated, fmt.Sprintf("output type %q is not re-scored per document", ts.outputType)
	}
	s.Resps, _ = harness.ParseJSON([]byte(resps))
	s.Filtered, _ = harness.ParseJSON([]byte(filtered))
	if ts.outputType == "multiple_choice" {
		// Where the choices are a doc field, the probe doc has none and
		// the requests' continuations stand in, as in lm-eval's samples.
		s.Arguments = []byte(`{"gen_args_0": {"arg_0": "", "arg_1": " a"}, "gen_args_1": {"arg_0": "", "arg_1": " b"}}`)
	}
	lr := ts.rescoreLine(s, filter, []string{metric})
	level := LevelReaggregated
	why := lr.unsupported
	if _, ok := findPerDoc(lr.values, metric); ok || lr.err != "" && lr.unsupported == "" {
		level, why = LevelRescored, ""
	}
	if why == "" && level == LevelReaggregated {
		why = fmt.Sprintf("per-doc metric %q is not re-implemented", metric)
	}
	agg, custom := ts.aggregation(metric)
	// The task-specific aggregations taskCheck maps onto its own.
	if avg, ok := sklearnF1Average(agg); custom && ok {
		agg, custom = "f1_"+avg, false
	}
	if custom && isInstLevelAgg(agg) {
		agg, custom = "agg_inst_level_acc", false
	}
	if custom {
		return LevelNone, fmt.Sprintf("configs[%q] aggregates %s with a task-specific function", ts.task, metric)
	}
	items := []float64{0, 1}
	var pairs [][]float64
	switch agg {
	case "f1", "matthews_corrcoef", "weighted_perplexity", "bits_per_byte":
		items, pairs = nil, [][]float64{{0, 1}, {1, 1}}
	}
	if strings.HasPrefix(agg, "f1_") {
		items, pairs = nil, [][]float64{{0, 1}, {1, 1}}
	}
	if agg == "bleu" || agg == "chrf" || agg == "ter" {
		return level, why // corpusCheck, on (reference, prediction) items
	}
	if _, _, _, _, err := aggregateWith(agg, items, pairs, PyFloat, aggContext{iters: 0, rule: Naive, metric: metric}); err != nil && strings.Contains(err.Error(), "re-implemented") {
		return LevelNone, err.Error()
	}
	return level, why
}

// CoverageRow is the coverage of one task/metric over the files.
type CoverageRow struct {
	Task, Metric string
	Rescored     int
	Total        int
	Reason       string // the most common reason below rescored
}

// Rows groups the non-group entries by task and metric, the least covered
// first, then by name.
func (c *RescoreCoverage) Rows() []CoverageRow {
	idx := map[string]int{}
	var rows []CoverageRow
	reasons := map[string]map[string]int{}
	for _, e := range c.Entries {
		if e.Level == LevelGroup {
			continue
		}
		k := e.Task + "\x00" + e.Metric
		i, ok := idx[k]
		if !ok {
			i = len(rows)
			idx[k] = i
			rows = append(rows, CoverageRow{Task: e.Task, Metric: e.Metric})
			reasons[k] = map[string]int{}
		}
		rows[i].Total++
		if e.Level == LevelRescored {
			rows[i].Rescored++
		} else {
			reasons[k][e.Reason]++
		}
	}
	for k, i := range idx {
		best, n := "", 0
		for r, c := range reasons[k] {
			if c > n || c == n && r < best {
				best, n = r, c
			}
		}
		rows[i].Reason = best
	}
	sort.Slice(rows, func(a, b int) bool {
		fa := float64(rows[a].Rescored) / float64(rows[a].Total)
		fb := float64(rows[b].Rescored) / float64(rows[b].Total)
		if fa != fb {
			return fa < fb
		}
		if rows[a].Task != rows[b].Task {
			return rows[a].Task < rows[b].Task
		}
		return rows[a].Metric < rows[b].Metric
	})
	return rows
}
