package study

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return AttributeRuns(s, runs, opts)
}

// AttributeRuns is Attribute over runs already loaded.
func AttributeRuns(s *Study, runs map[string]*analysis.Scores, opts analysis.AttributionOptions) (*analysis.Attribution, error) {
	plan := s.Plan()
	// A suite has no claims: an empty list, never null (the capsule
	// config's schema wants a list).
	att := &analysis.Attribution{Study: s.Name, Claims: []analysis.ClaimAttribution{}}
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
		for i, st := range s.Steps {
			if st.Rescore == nil {
				for _, pr := range plan {
					if pr.Role == "step" && pr.Index == i+1 {
						current = pr
					}
				}
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
		factorial, err := s.factorial(plan, func(pr PlannedRun) (*analysis.Series, error) {
			return series(pr, claim.Filter)
		})
		if err != nil {
			return nil, err
		}
		spec := analysis.ClaimSpec{Task: claim.Task, Metric: claim.Metric, Filter: claim.Filter, Card: claim.Value,
			Aggregate: analysis.Aggregate(claim.Aggregate), Settings: claimSettings(claim, plan[0], final, runs)}
		ca, err := analysis.AttributeClaim(spec, path, variants, s.factorialSteps(), factorial, opts)
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

// factorial finds, for every subset of the factorial's steps (the study's
// factorial, or else every run step), the run whose settings are the
// baseline with exactly those steps applied. Without a factorial in the
// study it returns nil unless all 2^k subsets (k ≤ 4) happen to be among
// the runs; with one, the plan has every corner, and a corner that cannot
// be read is an error.
func (s *Study) factorial(plan []PlannedRun, series func(PlannedRun) (*analysis.Series, error)) ([]analysis.FactorialPoint, error) {
	k := len(s.factorialSteps())
	if k == 0 || k > 4 {
		return nil, nil
	}
	var out []analysis.FactorialPoint
	for mask := uint(0); mask < 1<<k; mask++ {
		spec, h := s.corner(mask)
		pr, ok := findRun(plan, spec, h)
		if !ok {
			if len(s.Factorial) > 0 {
				return nil, fmt.Errorf("%w: factorial corner %b has no planned run", ErrRunMissing, mask)
			}
			return nil, nil
		}
		ser, err := series(pr)
		if err != nil {
			if len(s.Factorial) > 0 {
				return nil, fmt.Errorf("factorial run %s: %w", pr.Name, err)
			}
			return nil, nil
		}
		out = append(out, analysis.FactorialPoint{Mask: mask, Series: ser})
	}
	return out, nil
}

// claimSettings sets each setting the card states for the claim beside
// what the baseline and the final run ran with: the run's settings as
// planned (the record checks hold the results to them), and, where a run
// leaves the few-shot count to the task, the count lm-eval recorded.
func claimSettings(claim Claim, base, final PlannedRun, runs map[string]*analysis.Scores) []analysis.SettingRow {
	card := claim.Settings.Apply(harness.RunSpec{})
	cardH := claim.Settings.Harness(HarnessRef{})
	pos := claimTask(final, claim)
	rows := []analysis.SettingRow{}
	for _, name := range claim.Settings.names() {
		c := settingValue(card, cardH, name, nil, "")
		b := settingValue(base.Spec, base.Harness, name, runs[base.Name], taskAt(base, pos))
		f := settingValue(final.Spec, final.Harness, name, runs[final.Name], taskAt(final, pos))
		rows = append(rows, analysis.SettingRow{Setting: name, Card: c, Baseline: b, Final: f, Match: sameSetting(name, c, f)})
	}
	return rows
}

// names are the settings one by one, a mapping's keys each on their own
// ("model_args.dtype", "harness.version").
func (s Settings) names() []string {
	var out []string
	for _, k := range s.Keys {
		n := s.values[k]
		if n.Kind == yaml.MappingNode && (k == "model_args" || k == "gen_kwargs" || k == "harness") {
			for i := 0; i+1 < len(n.Content); i += 2 {
				out = append(out, k+"."+n.Content[i].Value)
			}
			continue
		}
		out = append(out, k)
	}
	return out
}

func taskAt(pr PlannedRun, pos int) string {
	if pos < 0 || pos >= len(pr.Spec.Tasks) {
		return ""
	}
	return pr.Spec.Tasks[pos]
}

// settingValue is a setting of a run as text, "" where the run leaves it
// unset. sc and task, when given, supply the few-shot count lm-eval
// recorded for a task whose count the run leaves to the task.
func settingValue(sp harness.RunSpec, h HarnessRef, name string, sc *analysis.Scores, task string) string {
	key, sub, _ := strings.Cut(name, ".")
	optInt := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	switch key {
	case "model":
		return sp.Model
	case "model_args":
		v, _ := sp.ModelArgs.Get(sub)
		return v
	case "gen_kwargs":
		v, _ := sp.GenKwargs.Get(sub)
		return v
	case "harness":
		switch sub {
		case "version":
			return h.Version
		case "commit":
			return h.Commit
		case "image":
			return h.Image
		case "python":
			return h.Python
		}
		return ""
	case "tasks":
		return strings.Join(sp.Tasks, ",")
	case "num_fewshot":
		if sp.NumFewshot == nil && sc != nil && task != "" {
			if r := sc.Run.Output.Results; r != nil {
				if n, ok := r.NShot(task); ok {
					return strconv.Itoa(n)
				}
			}
		}
		return optInt(sp.NumFewshot)
	case "batch_size":
		return sp.BatchSize
	case "device":
		return sp.Device
	case "limit":
		if sp.Limit == nil {
			return ""
		}
		return strconv.FormatFloat(*sp.Limit, 'g', -1, 64)
	case "apply_chat_template":
		if sp.ApplyChatTemplate == "" {
			return "false"
		}
		return sp.ApplyChatTemplate
	case "fewshot_as_multiturn":
		if sp.FewshotAsMultiturn != nil {
			return strconv.FormatBool(*sp.FewshotAsMultiturn)
		}
		// lm-eval's default: off before v0.4.10, from then on with a chat
		// template.
		if v, err := harness.ParseVersion(h.Version); err == nil && !v.Less(harness.Version{0, 4, 10}) {
			return strconv.FormatBool(sp.ApplyChatTemplate != "")
		}
		return "false"
	case "system_instruction":
		return sp.SystemInstruction
	case "seed":
		return strings.Trim(fmt.Sprint(sp.Seed), "[]")
	case "log_samples":
		return strconv.FormatBool(sp.LogSamples)
	case "use_cache":
		return sp.UseCache
	case "trust_remote_code":
		return strconv.FormatBool(sp.TrustRemoteCode)
	case "confirm_run_unsafe_code":
		return strconv.FormatBool(sp.ConfirmRunUnsafeCode)
	case "bootstrap_iters":
		return optInt(sp.BootstrapIters)
	case "include_path":
		return sp.IncludePath
	case "max_batch_size":
		return optInt(sp.MaxBatchSize)
	case "metadata":
		return sp.Metadata
	case "samples":
		return sp.Samples
	case "predict_only":
		return strconv.FormatBool(sp.PredictOnly)
	case "cache_requests":
		return sp.CacheRequests
	case "hf_hub_log_args":
		return sp.HFHubLogArgs
	case "wandb_args":
		return sp.WandbArgs
	}
	return ""
}

// sameSetting reports whether a run's value is the card's: the same text,
// the same number, the same truth value in any case, or, for a card that
// asks for a chat template, any template applied.
func sameSetting(name, card, run string) bool {
	if card == run || strings.EqualFold(card, run) && (strings.EqualFold(card, "true") || strings.EqualFold(card, "false")) {
		return true
	}
	if name == "apply_chat_template" && card == "true" {
		return run != "false"
	}
	a, errA := strconv.ParseFloat(card, 64)
	b, errB := strconv.ParseFloat(run, 64)
	return errA == nil && errB == nil && a == b
}
