package study

import (
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"github.com/evalcapsule/evalcapsule/harness"
)

// PlannedRun is one lm-eval run a study needs.
type PlannedRun struct {
	// Name is the run's directory under runs/: "baseline",
	// "step-1-<name>", "variant-2-<change>", "factorial-0110" (bit i of
	// the factorial's step i, left to right).
	Name string
	// Role is "baseline", "step", "variant" or "factorial".
	Role string
	// Index is the step's or variant's position (1-based; 0 for the
	// baseline), or a factorial corner's mask.
	Index int
	// Label names the run for people: the step's name, the variant's
	// change, or the steps a factorial corner applies.
	Label string
	Spec  harness.RunSpec
	// Harness is the lm-eval the run pins: the study's, or the one a step
	// (and the steps after it) or the variant sets.
	Harness HarnessRef
}

// SuiteRun is the name of a suite's one run when no checkpoint is pinned;
// a checkpoint's run is named after it (CheckpointName).
const SuiteRun = "suite"

// Dir returns the run's directory in the study.
func (s *Study) RunDir(r PlannedRun) string { return filepath.Join(s.Dir, "runs", r.Name) }

// Plan returns the runs of the study in order: the baseline, each step that
// sets something (steps apply cumulatively; re-scoring steps need no run),
// each variant (one change from the baseline), and each corner of the
// factorial the study names that no run before it already is.
func (s *Study) Plan() []PlannedRun {
	base := s.baseSpec()
	if s.IsSuite() {
		// One run per checkpoint, its study file pinning the model, named
		// after it (a Slurm job is named after its run).
		name := SuiteRun
		if s.Model.ID != "" {
			name = CheckpointName(s.Model)
		}
		return []PlannedRun{{Name: name, Role: "baseline", Label: "suite " + s.Name, Spec: base, Harness: s.Harness}}
	}
	runs := []PlannedRun{{Name: "baseline", Role: "baseline", Label: "baseline", Spec: base, Harness: s.Harness}}
	spec, h := base, s.Harness
	for i, st := range s.Steps {
		if st.Rescore != nil {
			continue
		}
		spec, h = st.Set.Apply(spec), st.Set.Harness(h)
		runs = append(runs, PlannedRun{Name: fmt.Sprintf("step-%d-%s", i+1, slug(st.Name)), Role: "step", Index: i + 1, Label: st.Name, Spec: spec, Harness: h})
	}
	for i, v := range s.Variants {
		runs = append(runs, PlannedRun{Name: fmt.Sprintf("variant-%d-%s", i+1, slug(v.Name)), Role: "variant", Index: i + 1, Label: v.Name,
			Spec: v.Set.Apply(base), Harness: v.Set.Harness(s.Harness)})
	}
	if len(s.Factorial) == 0 {
		return runs
	}
	names := s.factorialSteps()
	for mask := uint(0); mask < 1<<len(names); mask++ {
		spec, h := s.corner(mask)
		if _, ok := findRun(runs, spec, h); ok {
			continue
		}
		bits := make([]byte, len(names))
		var applied []string
		for i, n := range names {
			bits[i] = '0'
			if mask&(1<<i) != 0 {
				bits[i] = '1'
				applied = append(applied, n)
			}
		}
		runs = append(runs, PlannedRun{Name: "factorial-" + string(bits), Role: "factorial", Index: int(mask),
			Label: "factorial: " + strings.Join(applied, " + "), Spec: spec, Harness: h})
	}
	return runs
}

// factorialSteps are the run steps of the factorial, bit i step i: the
// study's factorial, or else every run step.
func (s *Study) factorialSteps() []string {
	if len(s.Factorial) > 0 {
		return s.Factorial
	}
	var out []string
	for _, st := range s.Steps {
		if st.Rescore == nil {
			out = append(out, st.Name)
		}
	}
	return out
}

// corner is the baseline with the factorial steps of mask applied, in the
// steps' order.
func (s *Study) corner(mask uint) (harness.RunSpec, HarnessRef) {
	spec, h := s.baseSpec(), s.Harness
	for _, st := range s.Steps {
		if st.Rescore != nil {
			continue
		}
		for i, name := range s.factorialSteps() {
			if name == st.Name && mask&(1<<i) != 0 {
				spec, h = st.Set.Apply(spec), st.Set.Harness(h)
			}
		}
	}
	return spec, h
}

// findRun is the first planned run with the spec and harness.
func findRun(runs []PlannedRun, spec harness.RunSpec, h HarnessRef) (PlannedRun, bool) {
	for _, pr := range runs {
		if pr.Harness == h && reflect.DeepEqual(pr.Spec, spec) {
			return pr, true
		}
	}
	return PlannedRun{}, false
}

// baseSpec is the baseline with the study's model and revision.
func (s *Study) baseSpec() harness.RunSpec {
	base := s.Baseline
	if s.Model.ID != "" {
		if _, ok := base.ModelArgs.Get("pretrained"); !ok {
			base.ModelArgs = append(harness.KVs{{Key: "pretrained", Value: s.Model.ID}}, base.ModelArgs...)
		}
		if s.Model.Revision != "" {
			if _, ok := base.ModelArgs.Get("revision"); !ok {
				base.ModelArgs = base.ModelArgs.Set("revision", s.Model.Revision)
			}
		}
	}
	return base
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug turns a step name into a directory name: "8-shot CoT task" →
// "8-shot-cot-task".
func slug(s string) string {
	s = strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		s = "run"
	}
	return s
}

// Unfinished says, for each planned run that is not done, why: not run
// yet, or its run.json's status.
func (s *Study) Unfinished() []string {
	var out []string
	for _, pr := range s.Plan() {
		rec, err := harness.ReadRecord(s.RunDir(pr))
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%s (%s) has not been run", pr.Name, pr.Label))
		case rec.Status != harness.StatusDone:
			out = append(out, fmt.Sprintf("%s (%s) is %s", pr.Name, pr.Label, rec.Status))
		}
	}
	return out
}

// Warnings say what the study leaves unpinned that can change its numbers
// between runs, or between the author's runs and a reviewer's rerun.
func (s *Study) Warnings() []string {
	var out []string
	if _, ok := s.Baseline.ModelArgs.Get("revision"); s.Model.Revision == "" && !ok && s.Model.ID != "" && !strings.HasPrefix(s.Model.ID, "simulated/") {
		out = append(out, fmt.Sprintf("model %s is not pinned to a revision: the Hub's main branch can move between runs, and between these runs and a reviewer's rerun; pin its commit (model: {id: %s, revision: <commit sha>})", s.Model.ID, s.Model.ID))
	}
	return out
}
