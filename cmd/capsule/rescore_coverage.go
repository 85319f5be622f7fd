package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/quote"
)

// runRescoreCoverage maps the task configs of the results files under
// paths onto the re-scorer's code paths (rescore --coverage).
func runRescoreCoverage(opts rescoreOptions, paths []string, io streams) error {
	outs, err := harness.FindAll(paths...)
	if err != nil {
		return err
	}
	cov := analysis.CoverageOf(outs)
	if cov.Files == 0 {
		return fmt.Errorf("%s: %w: no results file to map (coverage reads the task configurations of results files)", strings.Join(paths, ", "), harness.ErrNoOutput)
	}
	if opts.json {
		return writeJSON(io.out, cov)
	}
	return writeCoverage(io.out, cov)
}

// writeCoverage prints the coverage per task/metric, least covered first,
// then the share overall.
func writeCoverage(w io.Writer, cov *analysis.RescoreCoverage) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tMETRIC\tFROM RESPONSES\tSHARE\tWHAT STOPS THE REST")
	for _, r := range cov.Rows() {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%.0f %%\t%s\n", quote.Text(r.Task), quote.Text(r.Metric), r.Rescored, r.Total,
			100*float64(r.Rescored)/float64(r.Total), quote.Text(r.Reason))
	}
	tw.Flush()
	n := cov.Rescored + cov.Reaggregated + cov.None
	fmt.Fprintf(&b, "\n%d results files, %d task/metric/filter entries (and %d group aggregates, recomputed from their members):\n", cov.Files, n, cov.Group)
	fmt.Fprintf(&b, "  %d re-scorable from the raw responses (%.1f %%), %d only re-aggregated from the logged per-doc values, %d not recomputable\n",
		cov.Rescored, 100*cov.Share, cov.Reaggregated, cov.None)
	_, err := io.WriteString(w, b.String())
	return err
}
