package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/quote"
)

type showOptions struct {
	json bool
	task string
	doc  int
}

func newShowCmd(io streams) *cobra.Command {
	var opts showOptions
	cmd := &cobra.Command{
		Use:   "show RUN_A [RUN_B] --task TASK --doc N",
		Short: "Show one document of a task in one or two runs, side by side",
		Long: `Show one document of a task as the samples log it, in one run or in two runs
one under the other: the target, the prompt (each request's arguments), the
response, and for each filter its extraction and every metric's value. A
field that is the same in both runs says so.

Every string is shown as the samples hold it, with line breaks, control
characters and escapes written as Go escapes (\n, \x1b), so that a model's
output cannot act on the terminal.

` + exitCodes(codeUsage),
		Example: `  capsule show runs/baseline --task gsm8k --doc 17
  capsule show runs/step-1 runs/step-2 --task gsm8k --doc 17
  capsule show runs/baseline runs/final --task mmlu_llama_anatomy --doc 3 --json`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.task == "" {
				return &usageError{errors.New("--task is required")}
			}
			if !cmd.Flags().Changed("doc") || opts.doc < 0 {
				return &usageError{errors.New("--doc is required: the doc_id to show, 0 or more")}
			}
			return runShow(cmd.Context(), opts, args, io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the document's fields as JSON")
	f.StringVar(&opts.task, "task", "", "the task whose document to show (required)")
	f.IntVar(&opts.doc, "doc", 0, "the doc_id to show (required)")
	return cmd
}

// shownDoc is one run's logged fields of the document.
type shownDoc struct {
	Run       string          `json:"run"`       // the run's name: its folder's base name
	Path      string          `json:"path"`      // the samples file read
	Target    json.RawMessage `json:"target"`    // the logged target, as the samples hold it
	Arguments json.RawMessage `json:"arguments"` // the logged arguments of each request (the prompt), as the samples hold them; null when not logged
	Response  json.RawMessage `json:"response"`  // the logged resps, as the samples hold them
	Filters   []shownFilter   `json:"filters"`   // one per filter the document is logged under, in the file's order
}

// shownFilter is one filter's line of the document.
type shownFilter struct {
	Filter    string          `json:"filter"`    // the filter's name (from the config's filter_list for samples that do not log it)
	Line      int             `json:"line"`      // the line of the samples file (its element in a JSON array file), from 1
	Extracted json.RawMessage `json:"extracted"` // the logged filtered_resps, as the samples hold them
	Metrics   []shownMetric   `json:"metrics"`   // the line's metric values, in the file's order; empty, never null
}

type shownMetric struct {
	Metric string          `json:"metric"` // the metric's name
	Value  json.RawMessage `json:"value"`  // its logged value, as the samples hold it
}

type showReport struct {
	Task  string     `json:"task"`   // the task shown (--task)
	DocID int        `json:"doc_id"` // the doc_id shown (--doc)
	Runs  []shownDoc `json:"runs"`   // the document in each run given, in the order given
}

func runShow(ctx context.Context, opts showOptions, paths []string, io streams) error {
	rep := showReport{Task: opts.task, DocID: opts.doc}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := readShownDoc(p, opts.task, opts.doc)
		if err != nil {
			return err
		}
		rep.Runs = append(rep.Runs, d)
	}
	if opts.json {
		return writeJSON(io.out, rep)
	}
	writeShow(io.out, rep)
	return nil
}

// readShownDoc reads the lines of doc in task's samples of the run at path.
func readShownDoc(path, task string, doc int) (shownDoc, error) {
	run, err := harness.Read(path)
	if err != nil {
		return shownDoc{}, err
	}
	var file *harness.SampleFile
	var tasks []string
	for i, sf := range run.Output.Samples {
		tasks = append(tasks, sf.Task)
		if sf.Task == task {
			file = &run.Output.Samples[i]
		}
	}
	if file == nil {
		sort.Strings(tasks)
		if len(tasks) == 0 {
			return shownDoc{}, &usageError{fmt.Errorf("%s: no samples logged (run lm-eval with --log_samples): no document of %s to show", quote.Text(path), quote.Text(task))}
		}
		for i, t := range tasks {
			tasks[i] = quote.Text(t)
		}
		return shownDoc{}, &usageError{fmt.Errorf("%s: no samples of task %s; tasks with samples: %s", quote.Text(path), strconv.Quote(task), strings.Join(tasks, ", "))}
	}
	names := filterNames(run.Output.Results, task)
	r, err := file.Open()
	if err != nil {
		return shownDoc{}, err
	}
	defer r.Close()
	d := shownDoc{Run: run.Name, Path: r.Path()}
	lines, minID, maxID := 0, -1, -1
	for {
		s, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return shownDoc{}, err
		}
		lines++
		if minID < 0 || s.DocID < minID {
			minID = s.DocID
		}
		maxID = max(maxID, s.DocID)
		if s.DocID != doc {
			continue
		}
		name := s.Filter
		if name == "" { // before v0.4.7: one line per filter, in filter_list order
			if k := len(d.Filters); k < len(names) {
				name = names[k]
			} else {
				name = "filter " + strconv.Itoa(k+1)
			}
		}
		if d.Filters == nil {
			d.Target = raw(s.Target)
			d.Response = raw(s.Resps)
			d.Arguments = append(json.RawMessage(nil), s.Arguments...)
			if len(d.Arguments) == 0 {
				d.Arguments = json.RawMessage("null")
			}
		}
		f := shownFilter{Filter: name, Line: s.Line, Extracted: raw(s.Filtered), Metrics: []shownMetric{}}
		for _, v := range s.Values {
			if s.Metrics != nil && !contains(s.Metrics, v.Name) {
				continue
			}
			if v.Value.Kind != harness.Number && v.Value.Kind != harness.Bool && s.Metrics == nil {
				continue
			}
			f.Metrics = append(f.Metrics, shownMetric{v.Name, raw(v.Value)})
		}
		d.Filters = append(d.Filters, f)
	}
	if d.Filters == nil {
		where := "the samples are empty"
		if lines > 0 {
			where = fmt.Sprintf("%d lines, doc_ids %d to %d", lines, minID, maxID)
		}
		return shownDoc{}, &usageError{fmt.Errorf("%s: task %s: doc %d is not in the samples (%s)", quote.Text(d.Path), quote.Text(task), doc, where)}
	}
	return d, nil
}

// filterNames are the filter_list names the results' config gives task, or
// ["none"] when it has no filter_list; nil without a config.
func filterNames(res *harness.Results, task string) []string {
	if res == nil {
		return nil
	}
	cfgs, ok := res.Doc.Get("configs")
	if !ok {
		return nil
	}
	cfg, ok := cfgs.Get(task)
	if !ok {
		return nil
	}
	fl, ok := cfg.Get("filter_list")
	if !ok {
		return []string{"none"}
	}
	var names []string
	for _, f := range fl.List {
		n, _ := f.Get("name")
		names = append(names, n.Str)
	}
	return names
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func raw(v harness.Value) json.RawMessage { return json.RawMessage(v.String()) }

// writeShow prints the report: each field with one line per run, labelled
// A and B.
func writeShow(w io.Writer, rep showReport) {
	label := func(i int) string { return string(rune('A' + i)) }
	fmt.Fprintf(w, "task %s, doc %d\n", quote.Text(rep.Task), rep.DocID)
	for i, d := range rep.Runs {
		fmt.Fprintf(w, "  %s  %s\n", label(i), quote.Text(d.Path))
	}
	field := func(name string, get func(d shownDoc) string) {
		fmt.Fprintf(w, "\n%s\n", name)
		for i, d := range rep.Runs {
			v := get(d)
			if i > 0 && v == get(rep.Runs[0]) {
				v = "(same as A)"
			}
			fmt.Fprintf(w, "  %s  %s\n", label(i), v)
		}
	}
	field("target", func(d shownDoc) string { return shownValue(d.Target) })
	field("prompt (arguments)", func(d shownDoc) string { return shownValue(d.Arguments) })
	field("response", func(d shownDoc) string { return shownValue(d.Response) })
	// Filters in the order of the first run, then any only the second has.
	var order []string
	seen := map[string]bool{}
	for _, d := range rep.Runs {
		for _, f := range d.Filters {
			if !seen[f.Filter] {
				seen[f.Filter] = true
				order = append(order, f.Filter)
			}
		}
	}
	for _, name := range order {
		fmt.Fprintf(w, "\nfilter %s\n", quote.Text(name))
		for i, d := range rep.Runs {
			var f *shownFilter
			for j := range d.Filters {
				if d.Filters[j].Filter == name {
					f = &d.Filters[j]
				}
			}
			if f == nil {
				fmt.Fprintf(w, "  %s  n/a: no line of this filter\n", label(i))
				continue
			}
			var ms []string
			for _, m := range f.Metrics {
				ms = append(ms, quote.Text(m.Metric)+" "+shownValue(m.Value))
			}
			metrics := "no metric logged"
			if len(ms) > 0 {
				metrics = strings.Join(ms, ", ")
			}
			fmt.Fprintf(w, "  %s  extracted %s  %s  (line %d)\n", label(i), shownValue(f.Extracted), metrics, f.Line)
		}
	}
}

// shownValue is a logged value for the terminal: a string Go-quoted, a
// list of one string that string, anything else its JSON, each with
// control characters escaped.
func shownValue(m json.RawMessage) string {
	var v any
	if err := json.Unmarshal(m, &v); err != nil {
		return quote.Text(string(m))
	}
	for {
		l, ok := v.([]any)
		if !ok || len(l) != 1 {
			break
		}
		v = l[0]
	}
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return quote.Text(string(m))
}
