package gate

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The tests a policy can apply to each gated metric.
const (
	// NonInferiority fails a metric unless the lower bound of its
	// interval of the gain (candidate − baseline, in the better direction)
	// lies above −margin: the candidate must show it is not worse by more
	// than the margin.
	NonInferiority = "non-inferiority"
	// NoSignificantDrop fails a metric only when the upper bound of the
	// gain's interval is below 0, the drop is larger than the margin, and
	// the Holm-adjusted p is at most alpha: the data must show a drop.
	NoSignificantDrop = "no-significant-drop"
)

// The changes allow_changed can list.
const (
	ChangeTaskHashes        = "task_hashes"
	ChangeChatTemplate      = "chat_template"
	ChangeSystemInstruction = "system_instruction"
	ChangeHarnessVersion    = "harness_version"
	ChangeHarnessCommit     = "harness_commit"
	// ChangeDocuments allows documents present on one side only: the
	// metric is then compared on the common documents.
	ChangeDocuments = "documents"
)

var changes = []string{ChangeTaskHashes, ChangeChatTemplate, ChangeSystemInstruction, ChangeHarnessVersion, ChangeHarnessCommit, ChangeDocuments}

// Policy is a gate file: which metrics are gated, with which test, margin
// and alpha, and which differences between the sides are allowed.
type Policy struct {
	// Test is NonInferiority or NoSignificantDrop (the default).
	Test string `json:"test"`
	// Alpha is the family-wise error rate over the gated metrics (Holm);
	// default 0.05. The intervals are two-sided at 1 − alpha.
	Alpha float64 `json:"alpha"`
	// Margin is the default margin: points for metrics in [0, 1] (1 is
	// one point, 0.01 of the metric), the metric's own unit otherwise;
	// default 1.
	Margin float64 `json:"margin"`
	// Metrics are the "metric,filter" keys gated in every task that does
	// not list its own; a bare metric name ("acc") gates every filter of
	// it. Empty: every metric of the task.
	Metrics []string `json:"metrics"`
	// Tasks are the gated tasks with their own margin and metrics. Empty:
	// every task of the baseline.
	Tasks map[string]TaskPolicy `json:"tasks"`
	// AllowChanged lists the differences that do not stop the gate
	// (task_hashes, chat_template, system_instruction, harness_version,
	// harness_commit, documents).
	AllowChanged []string `json:"allow_changed"`
	// Resamples of the paired bootstrap (default 10,000) and its Seed.
	Resamples int    `json:"resamples"`
	Seed      uint64 `json:"seed"`
}

// TaskPolicy is one task's entry under tasks.
type TaskPolicy struct {
	// Margin overrides the policy's margin; NaN when not given.
	Margin  float64  `json:"margin"`
	Metrics []string `json:"metrics"`
}

// DefaultPolicy is the policy of an empty file.
func DefaultPolicy() *Policy {
	return &Policy{Test: NoSignificantDrop, Alpha: 0.05, Margin: 1, Resamples: 10000}
}

// Allowed reports whether the policy lets change differ.
func (p *Policy) Allowed(change string) bool { return slices.Contains(p.AllowChanged, change) }

// margin is a task's margin in points (or the metric's unit).
func (p *Policy) margin(task string) float64 {
	if tp, ok := p.Tasks[task]; ok && !math.IsNaN(tp.Margin) {
		return tp.Margin
	}
	return p.Margin
}

// gated reports whether a task's metric key is gated.
func (p *Policy) gated(task, key string) bool {
	list := p.Metrics
	if tp, ok := p.Tasks[task]; ok && len(tp.Metrics) > 0 {
		list = tp.Metrics
	}
	if len(list) == 0 {
		return true
	}
	metric, _, _ := strings.Cut(key, ",")
	return slices.Contains(list, key) || slices.Contains(list, metric)
}

// LoadPolicy reads a gate policy file (YAML). Errors name the file, the
// field and its line.
func LoadPolicy(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	p, err := ParsePolicy(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// ParsePolicy reads a policy from YAML text.
func ParsePolicy(b []byte) (*Policy, error) {
	p := DefaultPolicy()
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	if len(doc.Content) == 0 {
		return p, nil
	}
	root := doc.Content[0]
	err := mapping(root, "", func(key string, v *yaml.Node) error {
		switch key {
		case "test":
			switch v.Value {
			case NonInferiority, NoSignificantDrop:
				p.Test = v.Value
				return nil
			}
			return fail(v, "test", "%q is not a test: expected %s or %s", v.Value, NonInferiority, NoSignificantDrop)
		case "alpha":
			x, err := number(v, "alpha")
			if err == nil && !(x > 0 && x < 1) {
				err = fail(v, "alpha", "%v is not in (0, 1)", x)
			}
			p.Alpha = x
			return err
		case "margin":
			x, err := margin(v, "margin")
			p.Margin = x
			return err
		case "metrics":
			l, err := strs(v, "metrics")
			p.Metrics = l
			return err
		case "resamples":
			x, err := number(v, "resamples")
			if err == nil && (x < 1 || x != math.Trunc(x) || x > 1e7) {
				err = fail(v, "resamples", "%v is not a whole number from 1 to 10,000,000", x)
			}
			p.Resamples = int(x)
			return err
		case "seed":
			x, err := strconv.ParseUint(v.Value, 10, 64)
			if err != nil || v.Kind != yaml.ScalarNode {
				return fail(v, "seed", "%q is not a non-negative whole number", v.Value)
			}
			p.Seed = x
			return nil
		case "allow_changed":
			l, err := strs(v, "allow_changed")
			if err != nil {
				return err
			}
			for i, c := range l {
				if !slices.Contains(changes, c) {
					return fail(v.Content[i], "allow_changed", "%q is not a change the gate checks: expected one of %s", c, strings.Join(changes, ", "))
				}
			}
			p.AllowChanged = l
			return nil
		case "tasks":
			p.Tasks = map[string]TaskPolicy{}
			return mapping(v, "tasks", func(task string, tv *yaml.Node) error {
				tp := TaskPolicy{Margin: math.NaN()}
				field := "tasks." + task
				err := mapping(tv, field, func(k string, x *yaml.Node) error {
					var err error
					switch k {
					case "margin":
						tp.Margin, err = margin(x, field+".margin")
					case "metrics":
						tp.Metrics, err = strs(x, field+".metrics")
					default:
						err = fail(x, field+"."+k, "unknown field: expected margin or metrics")
					}
					return err
				})
				p.Tasks[task] = tp
				return err
			})
		}
		return fail(v, key, "unknown field: expected test, alpha, margin, metrics, tasks, allow_changed, resamples or seed")
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func fail(n *yaml.Node, field, format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s: %s", ErrPolicy, n.Line, field, fmt.Sprintf(format, args...))
}

// mapping calls f for each key of a mapping node; an empty (null) node is
// an empty mapping.
func mapping(n *yaml.Node, field string, f func(string, *yaml.Node) error) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		if field == "" {
			field = "the file"
		}
		return fail(n, field, "expected a mapping")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			return fail(k, strings.TrimPrefix(field+"."+k.Value, "."), "given twice")
		}
		seen[k.Value] = true
		if err := f(k.Value, n.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}

func number(n *yaml.Node, field string) (float64, error) {
	x, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fail(n, field, "%q is not a number", n.Value)
	}
	return x, nil
}

func margin(n *yaml.Node, field string) (float64, error) {
	x, err := number(n, field)
	if err == nil && x < 0 {
		err = fail(n, field, "%v is negative: a margin is how much worse is tolerated", x)
	}
	return x, err
}

func strs(n *yaml.Node, field string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, fail(n, field, "expected a list")
	}
	var out []string
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || c.Value == "" {
			return nil, fail(c, field, "expected a non-empty string")
		}
		out = append(out, c.Value)
	}
	return out, nil
}
