package analysis

import "fmt"

// Attribution explains, for each claim of a model card, the road from the
// card's number to the reproduction: baseline run, each cumulative setting
// change with its effect, final number, and what is left unexplained.
type Attribution struct {
	Study     string             `json:"-"`
	Simulated bool               `json:"-"` // some run was produced by the simulated backend
	Claims    []ClaimAttribution `json:"claims"`
}

// UnmarshalJSON reads what MarshalJSON (the package function) writes,
// `capsule attribute --json`, with NaN where it wrote null. Study and
// Simulated, not written, are left as they are.
func (a *Attribution) UnmarshalJSON(b []byte) error {
	type attribution Attribution
	return unmarshalNaN(b, (*attribution)(a))
}

// ClaimAttribution is the attribution of one claimed number.
type ClaimAttribution struct {
	Task   string `json:"task"`
	Metric string `json:"metric"`
	Filter string `json:"filter"`
	// Card is the number the model card claims; Baseline the first run's,
	// Final the last step's.
	Card     float64 `json:"card"`
	Baseline float64 `json:"baseline"`
	Final    float64 `json:"final"`
	// Unexplained is Card − Final, with a CI from the final run's
	// uncertainty (the card's number has none we know of).
	Unexplained       float64           `json:"unexplained"`
	UnexplainedCILow  float64           `json:"unexplained_ci_low"`
	UnexplainedCIHigh float64           `json:"unexplained_ci_high"`
	Steps             []AttributionStep `json:"steps"`
	Sensitivity       []Sensitivity     `json:"sensitivity"`
	// Shapley holds the order-independent attribution when the runs form a
	// full factorial over the settings (nil otherwise), and Interaction the
	// part of the total effect no single setting carries.
	Shapley     []ShapleyValue `json:"shapley,omitempty"`
	Interaction *float64       `json:"interaction,omitempty"`
	// Statement says in a sentence what the attribution shows, including
	// whether the unexplained residual is significant.
	Statement string `json:"statement,omitempty"`
}

// AttributionStep is one cumulative change from the baseline: a new run or
// a re-scoring of the previous run's samples.
type AttributionStep struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // "run" or "rescore"
	// Value is the score after the step, Delta its change from the
	// previous step, with the paired CI and McNemar p of that change.
	Value  float64 `json:"value"`
	Delta  float64 `json:"delta"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	P      float64 `json:"p"`
}

// Sensitivity is one variant: a single change from the baseline.
type Sensitivity struct {
	Change string  `json:"change"`
	Value  float64 `json:"value"`
	Delta  float64 `json:"delta"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	P      float64 `json:"p"`
}

// ShapleyValue is one setting's order-independent share of the total effect.
type ShapleyValue struct {
	Setting string  `json:"setting"`
	Value   float64 `json:"value"`
}

// ClaimSpec is the claimed number an attribution explains.
type ClaimSpec struct {
	Task, Metric, Filter string
	Card                 float64
}

// PathPoint is the claim's scores after one step of the path: the baseline
// (first point) or a cumulative step.
type PathPoint struct {
	Name   string
	Kind   string // "run" or "rescore"
	Series *Series
}

// VariantPoint is the claim's scores in a one-change variant.
type VariantPoint struct {
	Change string
	Series *Series
}

// FactorialPoint is the claim's scores with a subset of the path's run
// steps applied: bit i of Mask is run step i (in path order, rescore steps
// not counted).
type FactorialPoint struct {
	Mask   uint
	Series *Series
}

// AttributionOptions configures AttributeClaim. The zero value works.
type AttributionOptions struct {
	Resamples int     // of each paired bootstrap; 0 means 10,000
	Level     float64 // of the CIs; 0 means 0.95
	Seed      uint64
	// Intersect pairs runs on their common documents when their sets differ.
	Intersect bool
}

// AttributeClaim explains one claim: the path from the baseline through each
// cumulative step (Δ, paired CI and McNemar p of each change), the residual
// between the card and the final score, the one-change sensitivity of the
// variants, and, when factorial holds every subset of the (at most four)
// run steps, the Shapley attribution with the interaction.
func AttributeClaim(claim ClaimSpec, path []PathPoint, variants []VariantPoint, steps []string, factorial []FactorialPoint, opts AttributionOptions) (ClaimAttribution, error) {
	copts := CompareOptions{Resamples: opts.Resamples, Level: opts.Level, Seed: opts.Seed, Intersect: opts.Intersect}
	ca := ClaimAttribution{Task: claim.Task, Metric: claim.Metric, Filter: claim.Filter, Card: claim.Card, Steps: []AttributionStep{}, Sensitivity: []Sensitivity{}}
	if len(path) == 0 {
		return ca, fmt.Errorf("attribution of %s: no baseline", claim.Task)
	}
	ca.Baseline = path[0].Series.Mean()
	for i := 1; i < len(path); i++ {
		p, err := pairedSeries(path[i-1].Series, path[i].Series, copts)
		if err != nil {
			return ca, fmt.Errorf("step %q: %w", path[i].Name, err)
		}
		ca.Steps = append(ca.Steps, AttributionStep{Name: path[i].Name, Kind: path[i].Kind, Value: p.B, Delta: p.Delta, CILow: p.CILow, CIHigh: p.CIHigh, P: p.McNemarP})
	}
	final := path[len(path)-1].Series
	ca.Final = final.Mean()
	ca.Unexplained = ca.Card - ca.Final
	lo, hi := finalInterval(final, copts)
	ca.UnexplainedCILow, ca.UnexplainedCIHigh = ca.Card-hi, ca.Card-lo
	for _, v := range variants {
		p, err := pairedSeries(path[0].Series, v.Series, copts)
		if err != nil {
			return ca, fmt.Errorf("variant %q: %w", v.Change, err)
		}
		ca.Sensitivity = append(ca.Sensitivity, Sensitivity{Change: v.Change, Value: p.B, Delta: p.Delta, CILow: p.CILow, CIHigh: p.CIHigh, P: p.McNemarP})
	}
	if k := len(steps); k > 0 && k <= 4 && len(factorial) > 0 {
		values := map[uint]float64{}
		for _, f := range factorial {
			values[f.Mask] = f.Series.Mean()
		}
		if len(values) == 1<<k {
			ca.Shapley, ca.Interaction = shapley(steps, values)
		}
	}
	ca.Statement = statement(ca, opts.level())
	return ca, nil
}

func (o AttributionOptions) level() float64 {
	if o.Level > 0 {
		return o.Level
	}
	return 0.95
}

// pairedSeries pairs two series by document and compares them.
func pairedSeries(a, b *Series, opts CompareOptions) (Paired, error) {
	av, bv, _, err := pairSeries(a, b, opts.Intersect)
	if err != nil {
		return Paired{}, err
	}
	return PairedStats(av, bv, opts.resamples(), opts.level(), opts.Seed)
}

// finalInterval is the CI of the final score: Wilson for 0/1 scores, the
// CLT interval otherwise.
func finalInterval(s *Series, opts CompareOptions) (lo, hi float64) {
	if s.Binary() {
		k := 0
		for _, v := range s.Values {
			if v == 1 {
				k++
			}
		}
		return Wilson(k, len(s.Values), opts.level())
	}
	return CLTInterval(s.Mean(), MeanStderr(s.Values, s.Kind, Naive), opts.level())
}

// shapley returns each setting's Shapley value over the 2^k runs of a full
// factorial, and the interaction: the part of the total effect that the
// one-at-a-time effects do not add up to.
func shapley(names []string, v map[uint]float64) ([]ShapleyValue, *float64) {
	k := len(names)
	fact := func(n int) float64 {
		f := 1.0
		for i := 2; i <= n; i++ {
			f *= float64(i)
		}
		return f
	}
	out := make([]ShapleyValue, k)
	mainSum := 0.0
	for i := 0; i < k; i++ {
		bit := uint(1) << i
		phi := 0.0
		for s := uint(0); s < 1<<k; s++ {
			if s&bit != 0 {
				continue
			}
			size := bitsSet(s)
			w := fact(size) * fact(k-size-1) / fact(k)
			phi += w * (v[s|bit] - v[s])
		}
		out[i] = ShapleyValue{Setting: names[i], Value: phi}
		mainSum += v[bit] - v[0]
	}
	inter := v[1<<k-1] - v[0] - mainSum
	return out, &inter
}

func bitsSet(x uint) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// statement says in one sentence what the attribution found.
func statement(ca ClaimAttribution, level float64) string {
	pts := func(x float64) string { return fmt.Sprintf("%.1f", 100*x) }
	s := fmt.Sprintf("%s %s (%s): card %s, baseline %s, final %s after %d steps", ca.Task, ca.Metric, ca.Filter,
		pts(ca.Card), pts(ca.Baseline), pts(ca.Final), len(ca.Steps))
	switch {
	case ca.UnexplainedCILow > 0:
		s += fmt.Sprintf("; the reproduction stays %s pts below the card (%.0f%% CI %s to %s): not explained by these steps",
			pts(ca.Unexplained), 100*level, pts(ca.UnexplainedCILow), pts(ca.UnexplainedCIHigh))
	case ca.UnexplainedCIHigh < 0:
		s += fmt.Sprintf("; the reproduction is %s pts above the card (%.0f%% CI %s to %s): not explained by these steps",
			pts(-ca.Unexplained), 100*level, pts(-ca.UnexplainedCIHigh), pts(-ca.UnexplainedCILow))
	default:
		s += fmt.Sprintf("; the remaining %s pts are within the final run's noise (%.0f%% CI %s to %s)",
			pts(ca.Unexplained), 100*level, pts(ca.UnexplainedCILow), pts(ca.UnexplainedCIHigh))
	}
	return s + "."
}
