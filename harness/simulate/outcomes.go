package simulate

import "fmt"

// GSM8KOutcomes returns the per-document exact_match of each gsm8k filter
// ("strict-match", "flexible-extract") that Generate would write for o,
// without writing anything: the same documents, answers and filters. The
// statistics' coverage tests draw thousands of simulated runs from it.
func GSM8KOutcomes(o Options) (map[string][]float64, error) {
	return gsm8kOutcomes(o, false)
}

// GSM8KStrictOutcomes is GSM8KOutcomes for strict-match alone, about ten
// times faster (no regexp engine).
func GSM8KStrictOutcomes(o Options) ([]float64, error) {
	out, err := gsm8kOutcomes(o, true)
	return out["strict-match"], err
}

func gsm8kOutcomes(o Options, strictOnly bool) (map[string][]float64, error) {
	c, err := o.resolve()
	if err != nil {
		return nil, err
	}
	if !c.hasGSM8K {
		return nil, fmt.Errorf("simulate: the options do not run gsm8k")
	}
	acc := min(1, max(0, c.GSM8KAccuracy+c.TaskShift["gsm8k"]))
	model := gsm8kModel{accuracy: acc, formatMiss: c.GSM8KFormatMiss, truncated: c.GSM8KTruncated}
	out := map[string][]float64{}
	for _, f := range gsm8kFilters {
		out[f.name] = make([]float64, 0, c.GSM8KDocs)
	}
	for id := 0; id < c.GSM8KDocs; id++ {
		p := newProblem(stream(c.DataSeed, "gsm8k", id))
		answer := p.solution()
		resp := model.respond(stream(c.Seed, "gsm8k-model", id), &p)
		if strictOnly {
			out["strict-match"] = append(out["strict-match"], exactMatchFast(strictFast(resp), answer))
			continue
		}
		for _, f := range gsm8kFilters {
			out[f.name] = append(out[f.name], exactMatch(f.apply(resp), answer))
		}
	}
	return out, nil
}

// ExpectedGSM8K estimates the population value of each gsm8k filter's score
// for the planted rates of o: the mean over docs documents of many seeds.
// The planted effect of a setting is the difference of two such values
// computed with the same seeds.
func ExpectedGSM8K(o Options, seeds, docs int) (map[string]float64, error) {
	sum := map[string]float64{}
	n := 0
	for s := 0; s < seeds; s++ {
		o.Seed = int64(1_000_000 + s)
		o.DataSeed = int64(s)
		o.GSM8KDocs = docs
		out, err := GSM8KOutcomes(o)
		if err != nil {
			return nil, err
		}
		for f, xs := range out {
			for _, x := range xs {
				sum[f] += x
			}
		}
		n += docs
	}
	for f := range sum {
		sum[f] /= float64(n)
	}
	return sum, nil
}
