package study

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/quote"
)

// DefaultCommand is how a sweep starts lm-eval when SweepOptions.Command
// is empty.
var DefaultCommand = []string{"lm_eval"}

// Argv is the lm-eval command line of a planned run: command (how lm-eval
// is started; DefaultCommand when empty), then the arguments the pinned
// lm-eval version takes for the run's settings, with its output written to
// outputPath.
func (s *Study) Argv(pr PlannedRun, command []string, outputPath string) ([]string, error) {
	v := cmp.Or(pr.Harness.Version, s.Harness.Version)
	version, err := harness.ParseVersion(v)
	if err != nil {
		return nil, &Error{Path: s.Path, Field: "harness.version", Msg: err.Error()}
	}
	spec := pr.Spec
	if spec.IncludePath != "" {
		// The run's frozen copy, beside its output.
		spec.IncludePath = path.Join(path.Dir(filepath.ToSlash(outputPath)), harness.IncludeDir)
	}
	args, err := harness.Argv(spec, version, outputPath)
	if err != nil {
		return nil, fmt.Errorf("run %s (%s): %w", pr.Name, pr.Label, err)
	}
	if len(command) == 0 {
		command = DefaultCommand
	}
	return append(slices.Clone(command), args...), nil
}

// SweepArgv is the command line Sweep records for a planned run: command
// (DefaultCommand when empty) or, for the local and Slurm runners, the
// Python the run's harness names (PYTHON -m lm_eval), then the run's
// arguments, with the output path relative to the study directory, so that
// the same study records the same command line wherever it lies (a job puts
// its own output path in when it runs).
func (s *Study) SweepArgv(pr PlannedRun, command []string, runnerKind string) ([]string, error) {
	if pr.Harness.Python != "" && (runnerKind == "local" || runnerKind == "slurm") {
		command = []string{pr.Harness.Python, "-m", "lm_eval"}
	}
	return s.Argv(pr, command, "runs/"+pr.Name+"/"+harness.OutputDir)
}

// pythonRE matches the names of a Python interpreter: python, python3,
// python3.11.
var pythonRE = regexp.MustCompile(`^python[0-9.]*$`)

// isLMEvalCommand reports whether command starts lm-eval: lm_eval (by any
// path), or a Python interpreter running the lm_eval module.
func isLMEvalCommand(command []string) bool {
	switch len(command) {
	case 1:
		return path.Base(command[0]) == "lm_eval"
	case 3:
		return pythonRE.MatchString(path.Base(command[0])) && command[1] == "-m" && command[2] == "lm_eval"
	}
	return false
}

// CheckRecord compares a run's record with what the study plans for it:
// its name, its settings, and its command line, which must be a command
// that starts lm-eval followed by exactly the arguments the pinned lm-eval
// version takes for those settings. It returns one line per difference;
// none when the record is what the study would write.
func (s *Study) CheckRecord(pr PlannedRun, rec *harness.RunRecord) []string {
	var out []string
	if rec.Name != pr.Name {
		out = append(out, fmt.Sprintf("names itself %q, not %q", rec.Name, pr.Name))
	}
	sameSpec := reflect.DeepEqual(rec.Spec, pr.Spec)
	if !sameSpec {
		out = append(out, "settings differ from what study.yaml plans: "+specDiff(rec.Spec, pr.Spec))
	}
	version := cmp.Or(pr.Harness.Version, s.Harness.Version)
	if rec.Harness.Version != version {
		out = append(out, fmt.Sprintf("lm-eval %s, where study.yaml plans %s", rec.Harness.Version, version))
	} else if sameSpec && rec.Identity != "" && rec.Identity != s.Identity(pr, rec.Simulated) {
		out = append(out, "not what study.yaml plans now: "+s.staleness(pr, rec, rec.Simulated))
	}
	outputPath, ok := flagValue(rec.Argv, "--output_path")
	if !ok {
		return append(out, fmt.Sprintf("the command line %s has no --output_path", quote.Argv(rec.Argv)))
	}
	want, err := s.Argv(pr, []string{}, outputPath)
	if err != nil {
		return append(out, err.Error())
	}
	want = want[len(DefaultCommand):]
	n := len(rec.Argv) - len(want)
	switch {
	case n < 0 || !slices.Equal(rec.Argv[n:], want):
		out = append(out, fmt.Sprintf("the command line %s is not the one study.yaml's settings give lm-eval %s: %s",
			quote.Argv(rec.Argv), cmp.Or(pr.Harness.Version, s.Harness.Version), quote.Argv(append(slices.Clone(DefaultCommand), want...))))
	case !isLMEvalCommand(rec.Argv[:n]):
		out = append(out, fmt.Sprintf("the command line starts %s, which is not lm_eval or python -m lm_eval", quote.Argv(rec.Argv[:n])))
	}
	return out
}

// flagValue is the value after flag in argv.
func flagValue(argv []string, flag string) (string, bool) {
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == flag {
			return argv[i+1], true
		}
	}
	return "", false
}

// specDiff names the settings in which got differs from want, as their
// JSON: "num_fewshot 8, planned 5".
func specDiff(got, want harness.RunSpec) string {
	var g, w map[string]json.RawMessage
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	json.Unmarshal(gb, &g)
	json.Unmarshal(wb, &w)
	keys := map[string]bool{}
	for k := range g {
		keys[k] = true
	}
	for k := range w {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		if string(g[k]) != string(w[k]) {
			diffs = append(diffs, fmt.Sprintf("%s %s, planned %s", k, orNone(g[k]), orNone(w[k])))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

func orNone(b json.RawMessage) string {
	if len(b) == 0 {
		return "none"
	}
	return string(b)
}
