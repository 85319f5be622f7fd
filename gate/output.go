package gate

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/evalcapsule/evalcapsule/internal/quote"
)

// num is a float64 that is null in JSON when NaN or infinite.
type num float64

func (x num) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

type jsonMetric struct {
	Task           string   `json:"task"`
	Metric         string   `json:"metric"`
	Filter         string   `json:"filter"`
	Verdict        string   `json:"verdict"`
	Reason         string   `json:"reason"`
	Test           string   `json:"test"`
	HigherIsBetter bool     `json:"higher_is_better"`
	Unit           string   `json:"unit"`
	N              int      `json:"n"`
	OnlyBaseline   int      `json:"only_baseline"`
	OnlyCandidate  int      `json:"only_candidate"`
	Missing        []string `json:"missing_examples"`
	Baseline       num      `json:"baseline"`
	Candidate      num      `json:"candidate"`
	Delta          num      `json:"delta"`
	CILow          num      `json:"ci_low"`
	CIHigh         num      `json:"ci_high"`
	Level          num      `json:"level"`
	P              num      `json:"p"`
	PHolm          num      `json:"p_holm"`
	PTest          string   `json:"p_test"`
	Margin         num      `json:"margin"`
}

type jsonChange struct {
	Field     string `json:"field"`
	Task      string `json:"task"`
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	Allowed   bool   `json:"allowed"`
}

// MarshalJSON writes the result in snake_case; a number that does not
// exist for a metric (a refused one has no delta) is null.
func (r *Result) MarshalJSON() ([]byte, error) {
	doc := struct {
		Baseline       string       `json:"baseline"`
		Candidate      string       `json:"candidate"`
		BaselineModel  Model        `json:"baseline_model"`
		CandidateModel Model        `json:"candidate_model"`
		Verdict        string       `json:"verdict"`
		Test           string       `json:"test"`
		Alpha          float64      `json:"alpha"`
		Changes        []jsonChange `json:"changes"`
		Refusals       []string     `json:"refusals"`
		Metrics        []jsonMetric `json:"metrics"`
		TasksNotGated  []string     `json:"tasks_not_gated"`
	}{TasksNotGated: append([]string{}, r.TasksNotGated...), Baseline: r.Baseline, Candidate: r.Candidate, BaselineModel: r.BaselineModel, CandidateModel: r.CandidateModel,
		Verdict: r.Verdict, Test: r.Policy.Test, Alpha: r.Policy.Alpha,
		Changes: []jsonChange{}, Refusals: append([]string{}, r.Refusals...), Metrics: []jsonMetric{}}
	for _, c := range r.Changes {
		doc.Changes = append(doc.Changes, jsonChange(c))
	}
	for _, m := range r.Metrics {
		j := jsonMetric{Task: m.Task, Metric: m.Metric, Filter: m.Filter, Verdict: m.Verdict, Reason: m.Reason,
			Test: m.Test, HigherIsBetter: m.HigherIsBetter, Unit: m.Unit, N: m.N, OnlyBaseline: m.OnlyBaseline,
			OnlyCandidate: m.OnlyCandidate, Missing: append([]string{}, m.Missing...), PTest: m.PTest}
		nan := num(math.NaN())
		j.Baseline, j.Candidate, j.Delta, j.CILow, j.CIHigh, j.Level, j.P, j.PHolm, j.Margin = nan, nan, nan, nan, nan, nan, nan, nan, nan
		if m.Verdict == Pass || m.Verdict == Regression {
			j.Baseline, j.Candidate, j.Delta = num(m.Baseline), num(m.Candidate), num(m.Delta)
			j.CILow, j.CIHigh, j.Level = num(m.CILow), num(m.CIHigh), num(m.Level)
			j.P, j.PHolm, j.Margin = num(m.P), num(m.PHolm), num(m.Margin)
		}
		doc.Metrics = append(doc.Metrics, j)
	}
	return json.Marshal(doc)
}

// key is the metric's "metric,filter", or the metric alone.
func (m MetricResult) key() string {
	if m.Filter == "" {
		return m.Metric
	}
	return m.Metric + "," + m.Filter
}

// numbers is the metric's numbers in one line.
func (m MetricResult) numbers() string {
	u := ""
	if m.Unit == "points" {
		u = " pt"
	}
	return fmt.Sprintf("baseline %.2f, candidate %.2f, Δ %+.2f%s [%+.2f, %+.2f] (%.4g%% CI), p %.3g, Holm p %.3g, margin %g%s, n %d",
		m.Baseline, m.Candidate, m.Delta, u, m.CILow, m.CIHigh, 100*m.Level, m.P, m.PHolm, m.Margin, u, m.N)
}

// WriteText writes the result for a terminal: one line per metric, every
// name from the sides escaped.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gate %s: candidate %s against baseline %s (%s, alpha %g, Holm over the gated metrics)\n",
		strings.ToUpper(r.Verdict), quote.Text(r.Candidate), quote.Text(r.Baseline), r.Policy.Test, r.Policy.Alpha)
	for _, c := range r.Changes {
		allowed := "not allowed"
		if c.Allowed {
			allowed = "allowed by the policy"
		}
		fmt.Fprintf(&b, "  %s: %s\n", quote.Text(c.String()), allowed)
	}
	for _, m := range r.Metrics {
		fmt.Fprintf(&b, "  %-10s %s %s", m.Verdict, quote.Text(m.Task), quote.Text(m.key()))
		if m.Verdict == Pass || m.Verdict == Regression {
			fmt.Fprintf(&b, ": %s", m.numbers())
		}
		fmt.Fprintf(&b, "\n             %s\n", quote.Text(m.Reason))
	}
	for _, s := range r.Refusals {
		fmt.Fprintf(&b, "  refused: %s\n", quote.Text(s))
	}
	if n := len(r.TasksNotGated); n > 0 {
		fmt.Fprintf(&b, "  not gated: %d tasks the policy does not list: %s\n", n, quote.Text(shortList(r.TasksNotGated, 8)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// md escapes text for a Markdown table cell.
func md(s string) string {
	s = quote.Text(s)
	r := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`)
	return r.Replace(s)
}

// WriteMarkdown writes the result as a Markdown summary, for a CI step
// summary ($GITHUB_STEP_SUMMARY).
func (r *Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	mark := map[string]string{Pass: "✅ pass", Regression: "❌ regression", Refused: "⛔ refused", NotGated: "– not gated"}
	fmt.Fprintf(&b, "## Gate: %s\n\n", mark[r.Verdict])
	fmt.Fprintf(&b, "Candidate **%s** against baseline **%s**; test `%s`, alpha %g, Holm-corrected over the gated metrics.\n\n",
		md(r.Candidate), md(r.Baseline), r.Policy.Test, r.Policy.Alpha)
	if len(r.Changes) > 0 {
		b.WriteString("Settings that differ:\n\n")
		for _, c := range r.Changes {
			allowed := "**not allowed**"
			if c.Allowed {
				allowed = "allowed by the policy"
			}
			fmt.Fprintf(&b, "- %s: %s\n", md(c.String()), allowed)
		}
		b.WriteString("\n")
	}
	b.WriteString("| task | metric | verdict | baseline | candidate | Δ | CI | p (Holm) | margin | n | why |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---|---:|---:|---:|---|\n")
	for _, m := range r.Metrics {
		if m.Verdict == Pass || m.Verdict == Regression {
			fmt.Fprintf(&b, "| %s | %s | %s | %.2f | %.2f | %+.2f | [%+.2f, %+.2f] | %.3g | %g | %d | %s |\n",
				md(m.Task), md(m.key()), mark[m.Verdict], m.Baseline, m.Candidate, m.Delta, m.CILow, m.CIHigh, m.PHolm, m.Margin, m.N, md(m.Reason))
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | | | | | | | | %s |\n", md(m.Task), md(m.key()), mark[m.Verdict], md(m.Reason))
	}
	if len(r.Refusals) > 0 {
		b.WriteString("\nRefused:\n\n")
		for _, s := range r.Refusals {
			fmt.Fprintf(&b, "- %s\n", md(s))
		}
	}
	if n := len(r.TasksNotGated); n > 0 {
		fmt.Fprintf(&b, "\nNot gated: %d tasks the policy does not list: %s\n", n, md(shortList(r.TasksNotGated, 8)))
	}
	b.WriteString("\nValues in points for metrics in [0, 1]; Δ = candidate − baseline over the documents both scored; CI paired bootstrap at Holm's level for the metric's rank.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// xmlText escapes what XML 1.0 cannot hold (control characters) the way
// the terminal sees them, keeping line breaks.
func xmlText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = quote.Text(l)
	}
	return strings.Join(lines, "\n")
}

// WriteJUnit writes JUnit XML: one test suite "gate" with one test case
// per metric (classname the task, name "metric,filter"); a regression is
// a failure carrying the numbers, a refusal an error saying why, a metric
// the policy does not gate a skipped case.
func (r *Result) WriteJUnit(w io.Writer) error {
	s := junitSuite{Name: xmlText("gate " + r.Candidate + " vs " + r.Baseline)}
	for _, m := range r.Metrics {
		c := junitCase{Name: xmlText(m.key()), Classname: xmlText(m.Task)}
		switch m.Verdict {
		case Pass:
			c.SystemOut = xmlText(m.numbers() + "\n" + m.Reason)
		case Regression:
			c.Failure = &junitProblem{Message: xmlText(m.Reason), Type: "regression", Text: xmlText(m.numbers())}
			s.Failures++
		case Refused:
			c.Error = &junitProblem{Message: xmlText(m.Reason), Type: "refused", Text: xmlText(m.Reason)}
			s.Errors++
		case NotGated:
			c.Skipped = &junitProblem{Message: xmlText(m.Reason)}
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
		s.Tests++
	}
	if len(s.Cases) == 0 || (r.Verdict == Refused && s.Errors == 0) {
		why := strings.Join(r.Refusals, "; ")
		s.Cases = append(s.Cases, junitCase{Name: "gate", Classname: "gate", Error: &junitProblem{Message: xmlText(why), Type: "refused", Text: xmlText(why)}})
		s.Tests++
		s.Errors++
	}
	doc := junitSuites{Name: "capsule gate", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Skipped: s.Skipped, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// shortList joins the first n names, saying how many more there are.
func shortList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(", … (%d more)", len(names)-n)
}
