package history

import (
	"fmt"
	"sync"

	"github.com/evalcapsule/evalcapsule/gate"
)

// GateWith is the Gater of a gate policy (nil: gate.DefaultPolicy()):
// gate.Evaluate of the candidate's side against the baseline's, from the
// index's per-document values. Each checkpoint's gate.Result is kept in
// results (when not nil), by checkpoint name. It is safe for concurrent
// use (Build gates checkpoints in parallel); the baseline's side is built
// once.
func GateWith(p *gate.Policy, results map[string]*gate.Result) Gater {
	if p == nil {
		p = gate.DefaultPolicy()
	}
	var mu sync.Mutex
	var baseOf *Checkpoint
	var baseSide *gate.Side
	return func(base, cand *Checkpoint) (Verdict, error) {
		mu.Lock()
		if baseOf != base {
			baseOf, baseSide = base, base.Side()
		}
		bs := baseSide
		mu.Unlock()
		r, err := gate.Evaluate(bs, cand.Side(), p)
		if err != nil {
			return Verdict{}, err
		}
		if results != nil {
			mu.Lock()
			results[cand.Name] = r
			mu.Unlock()
		}
		return verdictOf(r), nil
	}
}

// verdictOf is what the history shows of a gate's result.
func verdictOf(r *gate.Result) Verdict {
	v := Verdict{Verdict: r.Verdict, Failed: []string{}, Reasons: []string{}, Metrics: map[string]string{}}
	for _, m := range r.Metrics {
		v.Metrics[FailedKey(m.Task, m.Metric, m.Filter)] = m.Verdict
		if m.Verdict == gate.Regression {
			v.Failed = append(v.Failed, FailedKey(m.Task, m.Metric, m.Filter))
			v.Reasons = append(v.Reasons, fmt.Sprintf("%s %s,%s: Δ %+.2f [%+.2f, %+.2f] %s, margin %g", m.Task, m.Metric, m.Filter,
				m.Delta, m.CILow, m.CIHigh, m.Unit, m.Margin))
		}
	}
	v.Reasons = append(v.Reasons, r.Refusals...)
	return v
}

// DescribePolicy says in words what a policy gates, for the page.
func DescribePolicy(p *gate.Policy, from string) string {
	if p == nil {
		p = gate.DefaultPolicy()
	}
	if from == "" {
		from = "the default policy"
	}
	return fmt.Sprintf("%s: test %s, margin %g (points for metrics in [0, 1]) unless a task sets its own, alpha %g with Holm's correction across the gated metrics, every checkpoint against the baseline",
		from, p.Test, p.Margin, p.Alpha)
}
