package study

import (
	"context"
	"fmt"
	"os"
	"reflect"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
)

// LoadRuns reads the output of every planned run of the study.
func LoadRuns(ctx context.Context, s *Study, opts analysis.RescoreOptions) (map[string]*analysis.Scores, error) {
	out := map[string]*analysis.Scores{}
	for _, pr := range s.Plan() {
		dir := s.RunDir(pr)
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("%s: %w: %s (%s) has not been run; run it with: capsule run %s", dir, ErrRunMissing, pr.Name, pr.Label, s.Dir)
		}
		run, err := harness.Read(dir)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", pr.Name, err)
		}
		sc, err := analysis.Load(ctx, run, opts)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", pr.Name, err)
		}
		out[pr.Name] = sc
	}
	return out, nil
}

// Attribute explains every claim of the study's card across its runs: the
// path baseline → steps → final, the residual to the card, the sensitivity
// of the variants and, when the runs form a full factorial over the run
// steps, the Shapley attribution.
func Attribute(ctx context.Context, s *Study, opts analysis.AttributionOptions) (*analysis.Attribution, error) {
	runs, err := LoadRuns(ctx, s, analysis.RescoreOptions{})
	if err != nil {
		return nil, err
	}
	return AttributeRuns(s, runs, opts)
}

// AttributeRuns is Attribute over runs already loaded.
func AttributeRuns(s *Study, runs map[string]*analysis.Scores, opts analysis.AttributionOptions) (*analysis.Attribution, error) {
	plan := s.Plan()
	att := &analysis.Attribution{Study: s.Name}
	for _, sc := range runs {
		if r := sc.Run.Output.Results; r != nil && r.Simulated() {
			att.Simulated = true
		}
	}
	final := finalRun(plan)
	for _, claim := range s.Card.Claims {
		pos := claimTask(final, claim)
		series := func(pr PlannedRun, filter string) (*analysis.Series, error) {
			return claimSeries(runs, pr, pos, claim.Metric, filter)
		}
		filter := claim.Filter
		base, err := series(plan[0], filter)
		if err != nil {
			return nil, err
		}
		path := []analysis.PathPoint{{Name: "baseline", Kind: "run", Series: base}}
		current := plan[0]
		var runSteps []string
		var stepRuns []PlannedRun
		for i, st := range s.Steps {
			if st.Rescore == nil {
				for _, pr := range plan {
					if pr.Role == "step" && pr.Index == i+1 {
						current = pr
					}
				}
				runSteps = append(runSteps, st.Name)
				stepRuns = append(stepRuns, current)
				ser, err := series(current, filter)
				if err != nil {
					return nil, fmt.Errorf("step %q: %w", st.Name, err)
				}
				path = append(path, analysis.PathPoint{Name: st.Name, Kind: "run", Series: ser})
				continue
			}
			var ser *analysis.Series
			if st.Rescore.Filter != "" {
				filter = st.Rescore.Filter
				ser, err = series(current, filter)
			} else {
				ser, err = analysis.Counterfactual(runs[current.Name], current.Spec.Tasks[pos], claim.Metric, st.Rescore.Regex, st.Rescore.GroupSelect)
			}
			if err != nil {
				return nil, fmt.Errorf("step %q: %w", st.Name, err)
			}
			path = append(path, analysis.PathPoint{Name: st.Name, Kind: "rescore", Series: ser})
		}
		var variants []analysis.VariantPoint
		for _, pr := range plan {
			if pr.Role != "variant" {
				continue
			}
			ser, err := series(pr, claim.Filter)
			if err != nil {
				return nil, fmt.Errorf("variant %q: %w", pr.Label, err)
			}
			variants = append(variants, analysis.VariantPoint{Change: pr.Label, Series: ser})
		}
		factorial := s.factorial(plan, func(pr PlannedRun) *analysis.Series {
			ser, _ := series(pr, claim.Filter)
			return ser
		})
		ca, err := analysis.AttributeClaim(analysis.ClaimSpec{Task: claim.Task, Metric: claim.Metric, Filter: claim.Filter, Card: claim.Value},
			path, variants, runSteps, factorial, opts)
		if err != nil {
			return nil, err
		}
		att.Claims = append(att.Claims, ca)
	}
	return att, nil
}

// finalRun is the run of the last run step (the baseline when there is none).
func finalRun(plan []PlannedRun) PlannedRun {
	final := plan[0]
	for _, pr := range plan {
		if pr.Role == "step" {
			final = pr
		}
	}
	return final
}

// claimTask is the position of the claim's task in the final run's task
// list (Parse checks that the final run has it).
func claimTask(final PlannedRun, claim Claim) int {
	for i, t := range final.Spec.Tasks {
		if t == claim.Task {
			return i
		}
	}
	return -1
}

// claimSeries is a run's scores of the claim's task, metric and filter. The
// claim's task in a run is the task at the same position of the run's task
// list: steps rename tasks (gsm8k → gsm8k_cot_llama).
func claimSeries(runs map[string]*analysis.Scores, pr PlannedRun, pos int, metric, filter string) (*analysis.Series, error) {
	if pos < 0 || pos >= len(pr.Spec.Tasks) {
		return nil, fmt.Errorf("%w: run %s runs %d tasks; the claim's task is number %d of the final step", ErrRunMissing, pr.Name, len(pr.Spec.Tasks), pos+1)
	}
	ser, err := runs[pr.Name].Lookup(pr.Spec.Tasks[pos], metric, filter)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", pr.Name, err)
	}
	return ser, nil
}

// factorial finds, for every subset of the run steps, a run whose settings
// are the baseline with exactly those steps applied; it returns nil unless
// all 2^k subsets (k ≤ 4) are there.
func (s *Study) factorial(plan []PlannedRun, series func(PlannedRun) *analysis.Series) []analysis.FactorialPoint {
	var sets []Settings
	for _, st := range s.Steps {
		if st.Rescore == nil {
			sets = append(sets, st.Set)
		}
	}
	k := len(sets)
	if k == 0 || k > 4 {
		return nil
	}
	var out []analysis.FactorialPoint
	for mask := uint(0); mask < 1<<k; mask++ {
		spec := plan[0].Spec
		for i, set := range sets {
			if mask&(1<<i) != 0 {
				spec = set.Apply(spec)
			}
		}
		var found *analysis.Series
		for _, pr := range plan {
			if reflect.DeepEqual(pr.Spec, spec) {
				if ser := series(pr); ser != nil {
					found = ser
					break
				}
			}
		}
		if found == nil {
			return nil
		}
		out = append(out, analysis.FactorialPoint{Mask: mask, Series: found})
	}
	return out
}
