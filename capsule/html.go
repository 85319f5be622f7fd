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
	if r.Level == "rerun" {
		switch {
		case r.OK && r.tolerated() > 0:
			verdict += fmt.Sprintf(" Reruns: the scores are reproduced; the generations of %d document(s) differ and were tolerated (--tolerate generations).", r.tolerated())
		case r.OK:
			verdict += " Reruns: every document and score reproduced."
		default:
			verdict += " Reruns: NOT reproduced (see below)."
		}
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
			Head:    []string{"run", "status", "task", "metric", "filter", "n", "packed", "rerun", "Δ", "95 % CI", "documents identical / differ", "max log-likelihood Δ", "ok"},
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
		r.docsHTML(&b)
		r.environmentHTML(&b)
	}
	return b.String()
}

// docsHTML is every document of every rerun that differs from the packed
// run, with the values around its first difference.
func (r *ReplayReport) docsHTML(b *strings.Builder) {
	t := analysis.HTMLTable{Caption: "documents that differ between the packed run and its rerun",
		Head: []string{"run", "task", "doc", "filter", "kind", "field", "packed", "rerun", "tolerated"}, Numeric: map[int]bool{2: true}}
	for _, rc := range r.Reruns {
		for _, d := range rc.Documents {
			for _, x := range d.Diffs {
				t.Rows = append(t.Rows, []string{rc.Run, d.Task, fmt.Sprint(x.DocID), x.Filter, x.Kind, x.Field, x.Packed, x.Rerun, fmt.Sprint(x.Tolerated)})
			}
		}
	}
	if len(t.Rows) > 0 {
		b.WriteString("\n" + t.HTML())
	}
}

// environmentHTML is every difference of each rerun's environment from
// the packed run's.
func (r *ReplayReport) environmentHTML(b *strings.Builder) {
	t := analysis.HTMLTable{Caption: "environment of each rerun against the packed run's (reported; not a failure by itself)",
		Head: []string{"run", "field", "packed", "rerun"}}
	for _, rc := range r.Reruns {
		for _, e := range rc.Environment {
			pa, pb := e.Packed, e.Rerun
			if e.Unknown == "packed" || e.Unknown == "both" {
				pa = "unknown"
			}
			if e.Unknown == "rerun" || e.Unknown == "both" {
				pb = "unknown"
			}
			t.Rows = append(t.Rows, []string{rc.Run, e.Field, pa, pb})
		}
	}
	if len(t.Rows) > 0 {
		b.WriteString("\n" + t.HTML())
	}
}
