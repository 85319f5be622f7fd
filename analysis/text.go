package analysis

import (
	"fmt"
	"sort"
	"strings"
)

// The text views: what the CLI prints and a notebook shows where HTML is
// not rendered. Each carries what the HTML view shows, in the same order.

// simulatedNote says that an attribution's numbers are not a model's.
const simulatedNote = "some runs come from the simulated backend; no model was run for them."

// String renders the comparisons as text: the table, each task's changed
// prompts once, and the tasks not compared.
func (cs *Comparisons) String() string {
	var b strings.Builder
	b.WriteString(cs.Table().String())
	for _, d := range cs.promptDiffs() {
		fmt.Fprintf(&b, "\n%s doc_id %d: prompt A → B\n%s", d.task, d.DocID, indent(d.Diff))
	}
	if len(cs.PromptSets) > 0 {
		b.WriteString("\n" + cs.promptSetsLine() + "\n")
	}
	if len(cs.Skipped) > 0 {
		b.WriteString("\nnot compared: " + strings.Join(cs.Skipped, "; ") + "\n")
	}
	if notes := cs.notes(); len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	return b.String()
}

// notes are the lines after the comparisons: the rows compared unpaired,
// and the trimmed samples.
func (cs *Comparisons) notes() []string {
	var out []string
	for _, c := range cs.Comparisons {
		if c.Unpaired != "" {
			out = append(out, "rows \"n/a: unpaired\": "+whyUnpaired+"; Δ and its unpaired CI come from lm-eval's values and stderrs")
			break
		}
	}
	for _, t := range cs.Trimmed {
		out = append(out, "warning: "+t.String()+"; n counts the documents both runs logged")
	}
	return out
}

// promptSetsLine names the prompt hashes that differ between the runs.
func (cs *Comparisons) promptSetsLine() string {
	var parts []string
	for _, p := range cs.PromptSets {
		name := p.Field
		if p.Task != "" {
			name = p.Task + " " + p.Field
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s", name, shortHash(p.A), shortHash(p.B)))
	}
	return "prompt set changed: " + strings.Join(parts, "; ")
}

// shortHash shows a hash by its first 12 digits, none (null) as "-".
func shortHash(h string) string {
	switch {
	case h == "":
		return "-"
	case len(h) > 12:
		return h[:12]
	}
	return h
}

// taskPromptDiff is a changed prompt with its task.
type taskPromptDiff struct {
	task string
	PromptDiff
}

// promptDiffs is each task's changed prompts once: every metric and filter
// of a task shares them.
func (cs *Comparisons) promptDiffs() []taskPromptDiff {
	var out []taskPromptDiff
	shown := map[string]bool{}
	for _, c := range cs.Comparisons {
		if shown[c.Task] {
			continue
		}
		shown[c.Task] = len(c.PromptDiffs) > 0
		for _, d := range c.PromptDiffs {
			out = append(out, taskPromptDiff{c.Task, d})
		}
	}
	return out
}

// String renders the failure reading as text: the summary, the classes
// with their shares, the members not read, the agreement with hand labels
// when there are any, and the sample, a block per miss.
func (fr *FailureReport) String() string {
	var b strings.Builder
	b.WriteString(fr.summary() + "\n")
	b.WriteString(fr.ClassTable().String())
	if len(fr.Unread) > 0 {
		b.WriteString("not read (no samples): " + strings.Join(fr.Unread, ", ") + "\n")
	}
	if a := fr.Agreement; a != nil {
		if a.Labelled > 0 {
			fmt.Fprintf(&b, "hand labels: %d, of which %d agree with the automatic class (Cohen's κ %.2f)\n", a.Labelled, a.Agree, a.Kappa)
		} else {
			b.WriteString("hand labels: none on a missed document\n")
		}
	}
	if fr.SampleClass != "" {
		fmt.Fprintf(&b, "\na seeded sample of %d misses of class %s\n", len(fr.Samples), fr.SampleClass)
	} else {
		fmt.Fprintf(&b, "\na seeded sample of %d misses\n", len(fr.Samples))
	}
	for _, f := range fr.Samples {
		b.WriteString("\n")
		if f.Task != "" {
			b.WriteString(f.Task + " ")
		}
		fmt.Fprintf(&b, "doc_id %d: %s", f.DocID, f.Class)
		if f.Label != "" {
			b.WriteString(", hand label " + string(f.Label))
		}
		if fr.MultipleChoice {
			fmt.Fprintf(&b, "\n  gold: %s\n  chosen: %s\n", f.Gold.text(), f.Chosen.text())
			continue
		}
		var ex []string
		for _, k := range f.filters() {
			ex = append(ex, fmt.Sprintf("%s=%q", k, f.Extracted[k]))
		}
		final := "none"
		if f.FinalAnswer != "" {
			final = fmt.Sprintf("%q", f.FinalAnswer)
		}
		fmt.Fprintf(&b, "\n  target: %s\n  final answer: %s\n  extracted: %s\n  output tail: %s\n", oneLine(f.targetLine()), final, strings.Join(ex, ", "), oneLine(f.OutputTail))
	}
	return b.String()
}

// text describes a choice on one line: index, quoted text, log-likelihood,
// probability and rank.
func (c *ChoiceScore) text() string {
	if c == nil {
		return "not among the choices"
	}
	return fmt.Sprintf("%s, log-likelihood %s, p %.3f, rank %d", c.label(), c.ll(), c.Probability, c.Rank)
}

// filters are the filters that extracted something, sorted.
func (f Failure) filters() []string {
	names := make([]string, 0, len(f.Extracted))
	for k := range f.Extracted {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// targetLine is the target's last line: where a GSM8K target states its
// answer.
func (f Failure) targetLine() string {
	lines := strings.Split(strings.TrimSpace(f.Target), "\n")
	return lines[len(lines)-1]
}

// String renders the claim as text: the statement, the path, the card's
// settings beside the runs', the sensitivity, the Holm family and, for a
// full factorial, the Shapley attribution.
func (ca ClaimAttribution) String() string {
	var b strings.Builder
	if ca.Statement != "" {
		b.WriteString(ca.Statement + "\n")
	}
	b.WriteString(ca.StepTable().String())
	if len(ca.Settings) > 0 {
		b.WriteString("\n" + ca.SettingsTable().String())
	}
	if len(ca.Sensitivity) > 0 {
		b.WriteString("\n" + ca.SensitivityTable().String())
	}
	if ca.HolmFamily != "" {
		b.WriteString("Holm p: " + ca.HolmFamily + ".\n")
	}
	for _, n := range ca.Notes {
		b.WriteString("note: " + n + ".\n")
	}
	if len(ca.Shapley) > 0 {
		b.WriteString("\n" + ca.ShapleyTable().String())
	}
	return b.String()
}

// String renders the attribution as text: whether it is simulated, the
// study and the units, then every claim.
func (a *Attribution) String() string {
	var b strings.Builder
	if a.Simulated {
		b.WriteString("SIMULATED: " + simulatedNote + "\n")
	}
	if a.Study != "" {
		b.WriteString("study " + a.Study + " ")
	}
	b.WriteString("(scores in points, CIs at 95 %)\n")
	for _, ca := range a.Claims {
		b.WriteString("\n" + ca.String())
	}
	return b.String()
}

// indent indents every line by two spaces.
func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	s = strings.Join(lines, "")
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// oneLine shows line ends as ⏎, so that a value stays on its line.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "⏎") }
