package analysis

import (
	"fmt"
	"strings"

	"github.com/evalcapsule/evalcapsule/harness"
)

// groupMode is one of the ways lm-eval releases aggregated groups.
type groupMode int

const (
	// modeLeaves: v0.4.4+, value and pooled stderr over all leaf tasks.
	modeLeaves groupMode = iota
	// modeChildren: v0.4.2-v0.4.3, pooled over direct children, bottom-up.
	modeChildren
	// modeCombined: v0.4.0-v0.4.1, the sequential combined-variance formula.
	modeCombined
)

var modeRange = map[groupMode][2]harness.Version{
	modeLeaves:   {{0, 4, 4}, {0, 4, 13}},
	modeChildren: {{0, 4, 2}, {0, 4, 3}},
	modeCombined: {{0, 4, 0}, {0, 4, 1}},
}

func (m groupMode) describe(n int, weighted bool) string {
	w := "size-weighted"
	if !weighted {
		w = "unweighted"
	}
	switch m {
	case modeChildren:
		return fmt.Sprintf("%s mean and pooled stderr over %d direct members (v0.4.2-v0.4.3 rule)", w, n)
	case modeCombined:
		return fmt.Sprintf("size-weighted mean and sequential combined variance over %d direct members (v0.4.0-v0.4.1 rule)", n)
	}
	return fmt.Sprintf("%s mean and pooled stderr over %d leaf tasks (v0.4.4+ rule)", w, n)
}

// member is one task or group that enters a group's aggregate.
type member struct {
	name   string
	value  float64
	stderr Number
	size   int
	isLeaf bool
}

// groupChecks fills in the checks of groups (indices into rr.Checks) from
// their members' reported values. Each group is tried under the aggregation
// rule of every release the file may come from; the rules that reproduce
// every group narrow the version range, and each check reports the first of
// those rules.
func (st *runState) groupChecks(rr *RunReport, idx []int) {
	if len(idx) == 0 {
		return
	}
	var modes []groupMode
	for _, m := range []groupMode{modeLeaves, modeChildren, modeCombined} {
		r := modeRange[m]
		if st.version.Overlaps(r[0], r[1]) {
			modes = append(modes, m)
		}
	}
	outcomes := make([]map[groupMode]Check, len(idx))
	common := map[groupMode]int{}
	for k, i := range idx {
		outcomes[k] = map[groupMode]Check{}
		for _, m := range modes {
			c := rr.Checks[i]
			st.groupCheck(&c, m)
			outcomes[k][m] = c
			if c.Status == StatusExact {
				common[m]++
			}
		}
	}
	var agreed []groupMode
	for _, m := range modes {
		if common[m] == len(idx) {
			agreed = append(agreed, m)
		}
	}
	for k, i := range idx {
		pick := func() Check {
			for _, m := range agreed {
				return outcomes[k][m]
			}
			for _, m := range modes {
				if c := outcomes[k][m]; c.Status == StatusExact {
					return c
				}
			}
			var tried []string
			var first *Check
			for _, m := range modes {
				c := outcomes[k][m]
				if first == nil && c.Level == LevelGroup {
					first = &c
				}
				tried = append(tried, c.Reason)
			}
			if first == nil {
				c := outcomes[k][modes[0]]
				return c
			}
			out := *first
			out.Reason = strings.Join(uniq(tried), "; ")
			return out
		}
		rr.Checks[i] = pick()
	}
	if len(agreed) > 0 {
		lo, hi := modeRange[agreed[len(agreed)-1]][0], modeRange[agreed[0]][1]
		if st.version.Lo.Less(lo) || hi.Less(st.version.Hi) {
			if st.version.Lo.Less(lo) {
				st.version.Lo = lo
			}
			if hi.Less(st.version.Hi) {
				st.version.Hi = hi
			}
			if !st.version.Hi.Less(st.version.Lo) {
				st.version.Evidence = append(st.version.Evidence, "group aggregates follow the "+agreed[0].short()+" rule")
			}
		}
	}
}

func (m groupMode) short() string {
	switch m {
	case modeChildren:
		return "direct-children"
	case modeCombined:
		return "combined-variance"
	}
	return "leaves"
}

// groupCheck recomputes one group metric under one aggregation rule.
func (st *runState) groupCheck(c *Check, mode groupMode) {
	t, _ := st.res.Task(c.Task)
	var rm harness.MetricResult
	for _, m := range t.Metrics {
		if m.Metric == c.Metric && m.Filter == c.Filter {
			rm = m
		}
	}
	c.Reported, c.ReportedStderr = numberOf(rm.Value), numberOf(rm.Stderr)
	c.Level = LevelGroup
	key := c.Metric + "," + c.Filter
	members, err := st.members(c.Task, key, mode)
	if err == nil && len(members) == 0 {
		err = fmt.Errorf("no member reports %s", key)
	}
	if err != nil {
		c.Level, c.Status, c.Reason = LevelNone, StatusNotRecomputable, err.Error()
		return
	}
	c.N = 0
	for _, m := range members {
		c.N += m.size
	}
	var tried []string
	var first *Check
	for _, weighted := range weightings(mode) {
		for _, rule := range st.pyRules {
			for _, vkind := range []PyKind{PyFloat, NumpyFloat} {
				val, se := groupAggregate(members, mode, weighted, rule, vkind)
				desc := mode.describe(len(members), weighted)
				if len(st.pyRules) > 1 {
					desc += fmt.Sprintf(", %s summation", rule)
				}
				cand := *c
				cand.Recomputed, cand.RecomputedStderr = val, se
				if val.Equal(c.Reported) && se.Equal(c.ReportedStderr) {
					cand.Status, cand.Reason = StatusExact, desc
					*c = cand
					return
				}
				if first == nil {
					f := cand
					first = &f
				}
				tried = append(tried, desc)
				if rule == Naive {
					break // value kinds only matter for compensated sums
				}
			}
		}
	}
	*c = *first
	c.Status = StatusDiffers
	c.Reason = "differs under " + strings.Join(uniq(tried), "; under ")
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// weightings lists the weight_by_size settings to try: groups always
// weighted by size before v0.4.4; from v0.4.4 the group's YAML decides (its
// default was False until v0.4.12 and True after), and the results file does
// not record it.
func weightings(mode groupMode) []bool {
	if mode != modeLeaves {
		return []bool{true}
	}
	return []bool{true, false}
}

// members gathers what a group aggregates under a rule: the reported value,
// stderr and size of each leaf (modeLeaves) or direct member.
func (st *runState) members(group, key string, mode groupMode) ([]member, error) {
	var names []string
	if mode == modeLeaves {
		names = st.res.Leaves(group)
	} else {
		names = st.res.Members(group)
	}
	var out []member
	for _, name := range names {
		t, ok := st.res.Task(name)
		if !ok {
			continue
		}
		var rm *harness.MetricResult
		for i := range t.Metrics {
			if t.Metrics[i].Key() == key {
				rm = &t.Metrics[i]
			}
		}
		if rm == nil {
			continue // lm-eval skips members without the metric
		}
		if rm.Value.Kind != harness.Number {
			return nil, fmt.Errorf("results[%q][%q] is %s, not a number", name, key, rm.Value)
		}
		size, err := st.size(name, key, mode)
		if err != nil {
			return nil, err
		}
		out = append(out, member{name: name, value: rm.Value.Num, stderr: numberOf(rm.Stderr), size: size, isLeaf: !st.res.IsGroup(name)})
	}
	return out, nil
}

// size is a member's document count: n-samples' effective count for a task
// (or its samples, for files without n-samples), the sum over its members for
// a group.
func (st *runState) size(name, key string, mode groupMode) (int, error) {
	if st.res.IsGroup(name) {
		total := 0
		for _, m := range st.res.Members(name) {
			if t, ok := st.res.Task(m); ok {
				has := false
				for _, x := range t.Metrics {
					if x.Key() == key {
						has = true
					}
				}
				if !has && !st.res.IsGroup(m) {
					continue
				}
			}
			n, err := st.size(m, key, mode)
			if err != nil {
				return 0, err
			}
			total += n
		}
		return total, nil
	}
	if ns, ok := st.res.NSamples[name]; ok {
		return ns.Effective, nil
	}
	if acc, ok := st.tasks[name]; ok {
		_, filter, _ := strings.Cut(key, ",")
		if fa, ok := acc.byName[filter]; ok {
			return fa.lines, nil
		}
	}
	return 0, fmt.Errorf("the size of %q is unknown (no n-samples entry and no samples)", name)
}

// groupAggregate computes a group's value and stderr from its members.
func groupAggregate(ms []member, mode groupMode, weighted bool, rule Summation, valueKind PyKind) (Number, Number) {
	values := make([]float64, len(ms))
	sizes := make([]int, len(ms))
	var stderrs []float64
	var kinds []PyKind
	na := false
	for i, m := range ms {
		values[i], sizes[i] = m.value, m.size
		if !m.stderr.Set || m.stderr.NA || m.stderr.Text != "" {
			na = true
			continue
		}
		stderrs = append(stderrs, m.stderr.Value)
		if m.isLeaf {
			kinds = append(kinds, PyFloat)
		} else {
			kinds = append(kinds, NumpyFloat) // a group's stderr comes from np.sqrt
		}
	}
	if mode == modeCombined {
		if na {
			return Num(SubtaskMean(values, sizes, true, Naive)), NA
		}
		v, se := CombinedStderr(values, stderrs, sizes)
		return Num(v), Num(se)
	}
	r := rule
	if valueKind == NumpyFloat {
		r = Naive
	}
	val := Num(SubtaskMean(values, sizes, weighted, r))
	if na {
		return val, NA
	}
	return val, Num(PooledStderr(stderrs, sizes, kinds, rule))
}
