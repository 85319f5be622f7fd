package capsule_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
)

// diffConfig is a capsule's config with one run per name and a reported
// strict-match score per run.
func diffConfig(studyYAML, lmEval string, scores map[string]float64, names ...string) *capsule.Config {
	c := &capsule.Config{StudyYAML: studyYAML, Rescore: &analysis.RescoreReport{}}
	for _, n := range names {
		c.Runs = append(c.Runs, capsule.ConfigRun{Name: n, Record: &harness.RunRecord{Name: n, Status: "succeeded",
			Argv: []string{"lm_eval", "--tasks", "gsm8k"}, Harness: harness.HarnessInfo{Version: lmEval}}})
		c.Rescore.Runs = append(c.Rescore.Runs, &analysis.RunReport{Path: "runs/" + n + "/output/results.json", Checks: []analysis.Check{
			{Task: "gsm8k", Metric: "exact_match", Filter: "strict-match", Reported: analysis.Num(scores[n]), ReportedStderr: analysis.Num(0.01)}}})
	}
	return c
}

// The text of the differences names both capsules and shows the study
// file's diff, each run that changed with its fields, and the scores that
// differ; capsules without differences say whether they are the same one.
func TestDifferencesString(t *testing.T) {
	a := diffConfig("study: s\nsteps: []\n", "0.4.8", map[string]float64{"baseline": 0.25, "old": 0.3}, "baseline", "old")
	b := diffConfig("study: s\nsteps: [x]\n", "0.4.9.1", map[string]float64{"baseline": 0.27, "new": 0.3}, "baseline", "new")
	d := capsule.Diff(a, b)
	d.A, d.B, d.DigestA, d.DigestB = "old.capsule", "new.capsule", "sha256:aa", "sha256:bb"
	s := d.String()
	lines := strings.Split(s, "\n")
	if d.Same || lines[0] != "a: old.capsule (sha256:aa)" || lines[1] != "b: new.capsule (sha256:bb)" {
		t.Errorf("head:\n%s", s)
	}
	for _, re := range []string{`^study\.yaml$`, `^-steps: \[\]$`, `^\+steps: \[x\]$`,
		`^  baseline: changed$`, `^    harness\.version +0\.4\.8 +→ 0\.4\.9\.1$`, `^  new: added$`, `^  old: removed$`,
		`^  RUN +TASK +METRIC +FILTER +A +B$`, `^  baseline +gsm8k +exact_match +strict-match +0\.25 ± 0\.01 +0\.27 ± 0\.01$`,
		`^  new +gsm8k +exact_match +strict-match +- ± - +0\.3 ± 0\.01$`} {
		if !regexp.MustCompile(`(?m)` + re).MatchString(s) {
			t.Errorf("no line %s:\n%s", re, s)
		}
	}

	same := capsule.Diff(a, a)
	same.A, same.B, same.DigestA, same.DigestB = "a.capsule", "a.tar", "sha256:aa", "sha256:aa"
	if s := same.String(); !same.Same || !strings.HasSuffix(s, "\nthe same capsule\n") {
		t.Errorf("one capsule twice:\n%s", s)
	}
	same.DigestB = "sha256:cc"
	if s := same.String(); !strings.HasSuffix(s, "\nno differences in the study, the runs' settings and environment, or the scores\n") {
		t.Errorf("two capsules without differences:\n%s", s)
	}
	if s := capsule.Diff(a, a).String(); strings.Contains(s, "a: ") || strings.Contains(s, "the same capsule") {
		t.Errorf("unnamed capsules named, or taken for one:\n%s", s)
	}
}
