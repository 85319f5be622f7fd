package capsule

import (
	"fmt"
	"html"
	"strings"

	"github.com/evalcapsule/evalcapsule/analysis"
)

// HTML renders the verification for a notebook: the verdict, and a table
// of the problems when there are any.
func (v *Verification) HTML() string {
	verdict := fmt.Sprintf("Verification of %s: %d files, %d blobs, %d bytes read: ", v.Capsule.Digest, v.Files, v.Blobs, v.Bytes)
	if v.OK {
		return "<p><strong>" + html.EscapeString(verdict+"ok.") + "</strong></p>"
	}
	t := analysis.HTMLTable{Head: []string{"blob", "file", "problem", "expected", "found"}}
	for _, p := range v.Problems {
		t.Rows = append(t.Rows, []string{p.Blob, p.Path, p.What, p.Expected, p.Found})
	}
	return "<p><strong>" + html.EscapeString(fmt.Sprintf("%s%d problem(s).", verdict, len(v.Problems))) + "</strong></p>\n" + t.HTML()
}

// HTML renders the replay for a notebook: the verdict, every number that
// differs and, for a rerun, each run's comparison.
func (r *ReplayReport) HTML() string {
	var b strings.Builder
	verdict := fmt.Sprintf("Replay (%s) of %s: %d numbers re-derived, %d differ", r.Level, r.Capsule, r.Compared, len(r.Diffs))
	if r.OK {
		verdict += "; all identical to the packed tables."
	} else {
		verdict += "."
	}
	if r.Simulated {
		verdict = "SIMULATED study. " + verdict
	}
	b.WriteString("<p><strong>" + html.EscapeString(verdict) + "</strong></p>")
	if len(r.Problems) > 0 {
		t := analysis.HTMLTable{Caption: "the capsule does not verify", Head: []string{"blob", "file", "problem", "expected", "found"}}
		for _, p := range r.Problems {
			t.Rows = append(t.Rows, []string{p.Blob, p.Path, p.What, p.Expected, p.Found})
		}
		b.WriteString("\n" + t.HTML())
	}
	if len(r.Differs) > 0 {
		t := analysis.HTMLTable{Caption: "UNSUPPORTED: numbers lm-eval reported that their samples do not give", Head: []string{"check"}}
		for _, d := range r.Differs {
			t.Rows = append(t.Rows, []string{d})
		}
		b.WriteString("\n" + t.HTML())
	}
	if len(r.Diffs) > 0 {
		t := analysis.HTMLTable{Caption: "numbers that differ", Head: []string{"where", "packed", "replayed"}}
		for _, d := range r.Diffs {
			t.Rows = append(t.Rows, []string{d.Where, d.Packed, d.Replayed})
		}
		b.WriteString("\n" + t.HTML())
	}
	if len(r.Reruns) > 0 {
		t := analysis.HTMLTable{Caption: "runs executed again against the packed ones (points)",
			Head:    []string{"run", "status", "task", "metric", "filter", "n", "packed", "rerun", "Δ", "95 % CI", "generations identical / differ", "max log-likelihood Δ", "ok"},
			Numeric: map[int]bool{5: true, 6: true, 7: true, 8: true, 9: true, 10: true, 11: true}}
		for _, rc := range r.Reruns {
			status := rc.Status
			if rc.Error != "" {
				status += ": " + rc.Error
			}
			if len(rc.Tasks) == 0 {
				t.Rows = append(t.Rows, []string{rc.Run, status, "", "", "", "", "", "", "", "", "", "", fmt.Sprint(rc.OK)})
			}
			for _, k := range rc.Tasks {
				t.Rows = append(t.Rows, []string{rc.Run, status, k.Task, k.Metric, k.Filter, fmt.Sprint(k.N),
					fmt.Sprintf("%.2f", 100*k.Packed), fmt.Sprintf("%.2f", 100*k.Rerun), fmt.Sprintf("%+.2f", 100*k.Delta),
					fmt.Sprintf("[%+.2f, %+.2f]", 100*k.CILow, 100*k.CIHigh),
					fmt.Sprintf("%d / %d", k.GenerationsIdentical, k.GenerationsDiffer), fmt.Sprintf("%.3g", k.MaxLLDiff), fmt.Sprint(rc.OK)})
			}
		}
		b.WriteString("\n" + t.HTML())
	}
	return b.String()
}
