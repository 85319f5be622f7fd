package analysis

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// TextOptions configures WriteText. The zero value works.
type TextOptions struct {
	// DocDiffs is how many differing documents to list per check (0: none).
	DocDiffs int
}

// WriteText writes the report as tables, one per run, with the reason of
// every check that is not exact below its table and a summary line.
func (r *RescoreReport) WriteText(w io.Writer, opts TextOptions) error {
	var b strings.Builder
	for i, run := range r.Runs {
		if i > 0 {
			b.WriteByte('\n')
		}
		run.writeText(&b, opts)
	}
	exact, differs, nr := r.Counts()
	errs := len(r.Errors())
	fmt.Fprintf(&b, "\n%d checks: %d exact, %d differ, %d not recomputable", exact+differs+nr+errs, exact, differs, nr)
	if errs > 0 {
		fmt.Fprintf(&b, ", %d input errors (files that cannot be read)", errs)
	}
	fmt.Fprintf(&b, "; %s\n", CountLevels(r.Runs))
	_, err := io.WriteString(w, b.String())
	return err
}

// String renders the report as WriteText does.
func (r *RescoreReport) String() string {
	var b strings.Builder
	r.WriteText(&b, TextOptions{DocDiffs: 3})
	return b.String()
}

func (run *RunReport) writeText(b *strings.Builder, opts TextOptions) {
	py := run.PythonVersion
	if py == "" {
		py = "unknown"
	}
	fmt.Fprintf(b, "%s\n  lm-eval %s, Python %s\n", run.Path, run.LMEvalVersion, py)
	if e := run.CodeExecution; e != nil {
		fmt.Fprintf(b, "  code tasks: %s\n", e)
	}
	b.WriteString("\n")
	// Tasks without samples are many in a results-only file (57 MMLU
	// subjects): one line names them instead of one row each.
	var unlogged []string
	unloggedSeen := map[string]bool{}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TASK\tMETRIC\tFILTER\tN\tREPORTED\tRECOMPUTED\tSTDERR REPORTED\tSTDERR RECOMPUTED\tLEVEL\tSTATUS")
	for _, c := range run.Checks {
		if c.Reason == reasonNoSamples {
			if !unloggedSeen[c.Task] {
				unloggedSeen[c.Task] = true
				unlogged = append(unlogged, c.Task)
			}
			continue
		}
		n := strconv.Itoa(c.N)
		if c.Level == LevelRecord || c.Level == LevelInput {
			n = "-" // a setting or a file, not a count of documents
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Task, c.Metric, c.Filter, n,
			c.Reported, c.Recomputed, c.ReportedStderr, c.RecomputedStderr, c.Level, c.Status)
	}
	tw.Flush()
	var notes []string
	if len(unlogged) > 0 {
		notes = append(notes, fmt.Sprintf("  not recomputable, no samples logged: %s", strings.Join(unlogged, ", ")))
	}
	for _, c := range run.Checks {
		if c.Status == StatusExact && strings.Contains(c.Reason, libmNote) {
			notes = append(notes, fmt.Sprintf("  %s %s,%s (%s): %s", c.Task, c.Metric, c.Filter, c.Status, c.Reason))
			continue
		}
		if c.Status == StatusExact || c.Reason == reasonNoSamples {
			continue
		}
		if c.Level == LevelRecord {
			notes = append(notes, fmt.Sprintf("  record %s (%s): %s", recordName(c), c.Status, c.Reason))
			continue
		}
		if c.Level == LevelInput {
			notes = append(notes, fmt.Sprintf("  input error: %s", c.Reason))
			continue
		}
		notes = append(notes, fmt.Sprintf("  %s %s,%s (%s): %s", c.Task, c.Metric, c.Filter, c.Status, c.Reason))
		for i, d := range c.DocDiffs {
			if i >= opts.DocDiffs {
				break
			}
			if d.Field == "filtered_resps" {
				notes = append(notes, fmt.Sprintf("      line %d doc_id %d filtered_resps: %s", d.Line, d.DocID, d.Recomputed))
			} else {
				notes = append(notes, fmt.Sprintf("      line %d doc_id %d %s: logged %s, recomputed %s", d.Line, d.DocID, d.Field, d.Logged, d.Recomputed))
			}
		}
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		b.WriteString(strings.Join(notes, "\n"))
		b.WriteString("\n")
	}
	for _, w := range run.Warnings {
		fmt.Fprintf(b, "  warning: %s\n", w)
	}
}

// recordName names the field of a record check, with its task.
func recordName(c Check) string {
	if c.Task == "" {
		return c.Metric
	}
	return c.Metric + "[" + c.Task + "]"
}
