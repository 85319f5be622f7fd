package history

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
)

// Orders a history's checkpoints can be put in (Options.Order).
const (
	// OrderAuto is OrderStep when every checkpoint has a step, else
	// OrderCreated when every capsule has a creation time, else OrderGiven.
	OrderAuto = ""
	// OrderStep sorts by the training step parsed from the tag, folder or
	// model name (ParseStep); ties by name.
	OrderStep = "step"
	// OrderCreated sorts by the capsule's creation time; ties by name.
	OrderCreated = "created"
	// OrderGiven keeps the sources' order (a repository's tags in the
	// registry's order, lexical for the distribution registry).
	OrderGiven = "given"
)

// maxFlipIDs is how many doc ids a flip lists in each direction.
const maxFlipIDs = 10

// Gater gates a candidate checkpoint against the baseline. Verdict is
// "pass", "regression" or "refused"; Reasons say what failed or changed.
// Build calls it from several goroutines at once.
type Gater func(baseline, candidate *Checkpoint) (Verdict, error)

// Verdict is a gate's verdict on one checkpoint.
type Verdict struct {
	// Verdict is the gate's "pass", "regression" or "refused", or
	// "baseline" for the baseline checkpoint.
	Verdict string `json:"verdict"`
	// Failed are the keys (FailedKey: "gsm8k exact_match,strict-match") of
	// the metrics that regressed, empty when none did.
	Failed  []string `json:"failed"`
	Reasons []string `json:"reasons"` // in words, one per regressed metric (Δ, interval and margin in the gate's unit), then why the gate refused
	// Metrics are the gate's verdict per task, metric and filter
	// (FailedKey): pass, regression, refused or not-gated; a metric the
	// gate did not see is absent.
	Metrics map[string]string `json:"metrics"`
}

// Options configures Build.
type Options struct {
	// Order is how the checkpoints are ordered (OrderAuto by default).
	Order string
	// Baseline names the baseline checkpoint: its name (tag), ref or
	// digest. Default: the first checkpoint in order.
	Baseline string
	// Gate, when set, gates every checkpoint but the baseline against it.
	Gate Gater
	// Policy describes the gate's policy in words, for the page.
	Policy string
}

// History is the history of a model line: its checkpoints in order, the
// trend of every task, metric and filter, and the gate's verdicts.
type History struct {
	Order       string        `json:"order"`        // how the checkpoints were ordered: "step", "created" or "given"
	OrderReason string        `json:"order_reason"` // why that order, in words ("asked for (--order)" when given)
	Baseline    string        `json:"baseline"`     // the baseline checkpoint's name (Checkpoint.Name)
	Policy      string        `json:"policy"`       // the gate's policy in words; "" without a gate
	Checkpoints []*Checkpoint `json:"checkpoints"`  // the checkpoints, in Order
	// Verdicts are the gate's, parallel to Checkpoints (the baseline's is
	// "baseline"), empty without a gate.
	Verdicts []Verdict `json:"verdicts"`
	Trends   []*Trend  `json:"trends"` // one per task, metric and filter any checkpoint has, sorted by task, metric, filter
}

// Trend is one task, metric and filter over the checkpoints.
type Trend struct {
	Task   string `json:"task"`             // lm-eval's task name
	Metric string `json:"metric"`           // lm-eval's metric name
	Filter string `json:"filter"`           // lm-eval's filter name
	Higher bool   `json:"higher_is_better"` // lm-eval's higher_is_better for the metric
	// Group is the group whose joined documents hold this task's
	// ("mmlu" for mmlu_anatomy), "" for a task no group joins.
	Group string `json:"group"`
	// Points are parallel to History.Checkpoints; a checkpoint without
	// this score has Missing set.
	Points []Point `json:"points"`
	// Baseline is the baseline checkpoint's Value (lm-eval's, a fraction
	// for a [0, 1] metric), null when it lacks this score.
	Baseline float64 `json:"baseline"`
	// Flips are between each checkpoint and the previous one that has the
	// score, for 0/1 metrics only.
	Flips []Flip `json:"flips"`
}

// Point is one checkpoint's score in a trend.
type Point struct {
	Checkpoint string  `json:"checkpoint"`        // the checkpoint's name (Checkpoint.Name)
	Value      float64 `json:"value"`             // its Score.Value (lm-eval's, a fraction for a [0, 1] metric); null when Missing
	Low        float64 `json:"ci_low"`            // its Score.Low; null when Missing or without an interval
	High       float64 `json:"ci_high"`           // its Score.High; null when Missing or without an interval
	N          int     `json:"n"`                 // how many documents the score is over; 0 when Missing
	Missing    bool    `json:"missing,omitempty"` // true when the checkpoint lacks this score; omitted otherwise
}

// Flip counts the documents that changed between two consecutive
// checkpoints, on the documents both scored.
type Flip struct {
	From         string `json:"from"`           // the earlier checkpoint's name
	To           string `json:"to"`             // the later checkpoint's name
	Common       int    `json:"common"`         // how many documents both scored
	RightToWrong int    `json:"right_to_wrong"` // how many of those went from 1 (right) to 0 (wrong)
	WrongToRight int    `json:"wrong_to_right"` // how many of those went from 0 (wrong) to 1 (right)
	// FirstRightToWrong are the first doc ids (at most 10) that went from
	// right to wrong, in doc order ("12", or "member/12" in a group).
	FirstRightToWrong []string `json:"first_right_to_wrong"`
	// FirstWrongToRight are the first doc ids (at most 10) that went from
	// wrong to right, in doc order ("12", or "member/12" in a group).
	FirstWrongToRight []string `json:"first_wrong_to_right"`
}

// Build orders the checkpoints, draws every trend and flip, and gates
// each checkpoint against the baseline when opts.Gate is set.
func Build(cps []*Checkpoint, opts Options) (*History, error) {
	if len(cps) == 0 {
		return nil, ErrNoCheckpoints
	}
	h := &History{Policy: opts.Policy, Verdicts: []Verdict{}, Trends: []*Trend{}}
	var err error
	h.Checkpoints, h.Order, h.OrderReason, err = order(cps, opts.Order)
	if err != nil {
		return nil, err
	}
	base := h.Checkpoints[0]
	if opts.Baseline != "" {
		i := slices.IndexFunc(h.Checkpoints, func(c *Checkpoint) bool {
			return c.Name == opts.Baseline || c.Ref == opts.Baseline || c.Digest == opts.Baseline
		})
		if i < 0 {
			names := make([]string, len(h.Checkpoints))
			for j, c := range h.Checkpoints {
				names[j] = c.Name
			}
			return nil, fmt.Errorf("%w: %q is none of the checkpoints (%s)", ErrBaseline, opts.Baseline, strings.Join(names, ", "))
		}
		base = h.Checkpoints[i]
	}
	h.Baseline = base.Name
	h.trends(base)
	if opts.Gate != nil {
		if err := h.gate(base, opts.Gate); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// gate gates every checkpoint but the baseline, as many at a time as
// there are CPUs: each verdict depends on its two sides alone.
func (h *History) gate(base *Checkpoint, g Gater) error {
	h.Verdicts = make([]Verdict, len(h.Checkpoints))
	var eg errgroup.Group
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for i, c := range h.Checkpoints {
		if c == base {
			h.Verdicts[i] = Verdict{Verdict: "baseline", Failed: []string{}, Reasons: []string{}, Metrics: map[string]string{}}
			continue
		}
		eg.Go(func() error {
			v, err := g(base, c)
			if err != nil {
				return fmt.Errorf("gating %s against %s: %w", c.Name, base.Name, err)
			}
			h.Verdicts[i] = v
			return nil
		})
	}
	return eg.Wait()
}

// order sorts a copy of cps as asked.
func order(cps []*Checkpoint, how string) ([]*Checkpoint, string, string, error) {
	out := slices.Clone(cps)
	reason := ""
	if how == OrderAuto {
		switch {
		case !slices.ContainsFunc(cps, func(c *Checkpoint) bool { return c.Step < 0 }):
			how, reason = OrderStep, "every checkpoint's tag, folder or model names a step"
		case !slices.ContainsFunc(cps, func(c *Checkpoint) bool { return c.Created.IsZero() }):
			how, reason = OrderCreated, "not every checkpoint names a step; every capsule has a creation time"
		default:
			how, reason = OrderGiven, "neither a step nor a creation time for every checkpoint"
		}
	} else {
		reason = "asked for (--order)"
	}
	switch how {
	case OrderStep:
		if i := slices.IndexFunc(cps, func(c *Checkpoint) bool { return c.Step < 0 }); i >= 0 {
			return nil, "", "", fmt.Errorf("order by step: %s names no step (step-N, ckpt-N, checkpoint-N, iter-N)", cps[i].Ref)
		}
		slices.SortStableFunc(out, func(a, b *Checkpoint) int {
			if a.Step != b.Step {
				return int(max(-1, min(1, a.Step-b.Step)))
			}
			return strings.Compare(a.Name, b.Name)
		})
	case OrderCreated:
		slices.SortStableFunc(out, func(a, b *Checkpoint) int {
			if c := a.Created.Compare(b.Created); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
	case OrderGiven:
	default:
		return nil, "", "", fmt.Errorf("order %q: expected %s, %s or %s", how, OrderStep, OrderCreated, OrderGiven)
	}
	return out, how, reason, nil
}

// trends draws every task, metric and filter any checkpoint has.
func (h *History) trends(base *Checkpoint) {
	type key struct{ task, metric, filter string }
	var keys []key
	seen := map[key]bool{}
	for _, c := range h.Checkpoints {
		for _, s := range c.Scores {
			k := key{s.Task, s.Metric, s.Filter}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return strings.Compare(a.task+"\x00"+a.metric+"\x00"+a.filter, b.task+"\x00"+b.metric+"\x00"+b.filter)
	})
	groups := groupsOf(h.Checkpoints)
	for _, k := range keys {
		t := &Trend{Task: k.task, Metric: k.metric, Filter: k.filter, Higher: true, Baseline: math.NaN(), Flips: []Flip{}, Group: groups[k.task]}
		var prev *Score
		var prevName string
		prevBinary := false
		for _, c := range h.Checkpoints {
			s := c.find(k.task, k.metric, k.filter)
			if s == nil {
				t.Points = append(t.Points, Point{Checkpoint: c.Name, Value: math.NaN(), Low: math.NaN(), High: math.NaN(), Missing: true})
				continue
			}
			t.Higher = s.Higher
			t.Points = append(t.Points, Point{Checkpoint: c.Name, Value: s.Value, Low: s.Low, High: s.High, N: len(s.Docs)})
			if c == base {
				t.Baseline = s.Value
			}
			binary := s.Binary()
			if prev != nil && prevBinary && binary {
				t.Flips = append(t.Flips, flips(prevName, c.Name, prev, s))
			}
			prev, prevName, prevBinary = s, c.Name, binary
		}
		h.Trends = append(h.Trends, t)
	}
}

// groupsOf maps each task a group's joined documents name ("mmlu_anatomy/3"
// in mmlu) to the smallest such group: mmlu_anatomy to mmlu_stem rather
// than mmlu.
func groupsOf(cps []*Checkpoint) map[string]string {
	size := map[string]int{}
	out := map[string]string{}
	for _, c := range cps {
		for _, s := range c.Scores {
			members := map[string]bool{}
			for _, d := range s.Docs {
				if i := strings.LastIndexByte(d, '/'); i > 0 {
					members[d[:i]] = true
				}
			}
			for m := range members {
				if g, ok := out[m]; !ok || len(members) < size[g] || (len(members) == size[g] && s.Task < g) {
					out[m] = s.Task
				}
			}
			if len(members) > 0 {
				size[s.Task] = len(members)
			}
		}
	}
	return out
}

func (c *Checkpoint) find(task, metric, filter string) *Score {
	for _, s := range c.Scores {
		if s.Task == task && s.Metric == metric && s.Filter == filter {
			return s
		}
	}
	return nil
}

// flips compares two 0/1 series on their common documents (both in doc
// order).
func flips(from, to string, a, b *Score) Flip {
	f := Flip{From: from, To: to, FirstRightToWrong: []string{}, FirstWrongToRight: []string{}}
	i, j := 0, 0
	for i < len(a.Docs) && j < len(b.Docs) {
		c := 0
		if a.Docs[i] != b.Docs[j] { // the same documents, mostly: skip parsing them
			c = compareDocs(a.Docs[i], b.Docs[j])
		}
		switch {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			f.Common++
			switch {
			case a.Values[i] == 1 && b.Values[j] == 0:
				f.RightToWrong++
				if len(f.FirstRightToWrong) < maxFlipIDs {
					f.FirstRightToWrong = append(f.FirstRightToWrong, a.Docs[i])
				}
			case a.Values[i] == 0 && b.Values[j] == 1:
				f.WrongToRight++
				if len(f.FirstWrongToRight) < maxFlipIDs {
					f.FirstWrongToRight = append(f.FirstWrongToRight, a.Docs[i])
				}
			}
			i++
			j++
		}
	}
	return f
}
