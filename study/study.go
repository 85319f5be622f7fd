package study

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/evalcapsule/evalcapsule/harness"
)

// FileName is the name of the study definition inside a study directory.
const FileName = "study.yaml"

// Study is a study definition (docs/design.md, "The study file"): the model card's
// claims, the pinned harness, the baseline run and the cumulative steps and
// one-change variants that explain the gap.
type Study struct {
	Dir      string
	Path     string
	Name     string
	Model    ModelRef
	Card     Card
	Harness  HarnessRef
	Runner   RunnerSpec
	Baseline harness.RunSpec
	Steps    []Step
	Variants []Variant
	// Factorial names the run steps (at most four) whose 2^k combinations
	// the plan runs, each applied to the baseline alone or with others,
	// for the Shapley attribution; FactorialLine is its line.
	Factorial     []string
	FactorialLine int
	// Kind is KindStudy (a study file without kind: says so) or KindSuite.
	Kind string
}

// The kinds of study file.
const (
	// KindStudy is a model card's claims explained by steps and variants.
	KindStudy = "study"
	// KindSuite is a benchmark suite: tasks with their settings and a
	// pinned harness, no card, no steps, no variants, run against each
	// checkpoint given on the command line (capsule run SUITE --model M).
	// Its settings are the one run each checkpoint gets, named "suite".
	KindSuite = "suite"
)

// IsSuite reports whether the file is a suite.
func (s *Study) IsSuite() bool { return s.Kind == KindSuite }

// ModelRef is the model under study, pinned to a revision.
type ModelRef struct {
	ID       string `json:"id"`
	Revision string `json:"revision,omitempty"`
	// Digest is a local checkpoint's sha256 over its files (SuiteModel),
	// "" for a hub id; a suite's checkpoint records it.
	Digest string `json:"digest,omitempty"`
}

// Card holds the published claims, copied before anything runs.
type Card struct {
	Source string  `json:"source,omitempty"`
	Claims []Claim `json:"claims"`
}

// Claim is one published number and the settings the card states for it.
type Claim struct {
	Task   string  `json:"task"`
	Metric string  `json:"metric"`
	Filter string  `json:"filter"`
	Value  float64 `json:"value"`
	// Aggregate is how the card averages a group's members: "micro" (over
	// all documents, lm-eval's group score) or "macro" (the mean of the
	// members' means, what MMLU cards usually report); "" when the claim
	// does not say, attributed as micro with a note.
	Aggregate string   `json:"aggregate,omitempty"`
	Settings  Settings `json:"-"`
	Line      int      `json:"-"`
}

// HarnessRef pins lm-eval: its version, optionally the commit of a
// checkout, the container image (name@sha256:…) the container runner runs,
// and the Python interpreter (of a virtual environment with that version
// installed) the local and Slurm runners start it with.
type HarnessRef struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Image   string `json:"image,omitempty"`
	Python  string `json:"python,omitempty"`
}

// RunnerSpec says where runs execute; Options holds the runner's own settings
// (partition, gres, ...), validated by the runner.
type RunnerSpec struct {
	Kind    string            `json:"kind"`
	Options map[string]string `json:"options,omitempty"`
}

// RunnerKinds are the runners a study may name.
var RunnerKinds = []string{"local", "container", "slurm", "simulated"}

// Step is one cumulative change on the path from the baseline to the card's
// settings: a new run (Set) or a re-scoring of the previous run's samples.
type Step struct {
	Name    string
	Set     Settings
	Rescore *RescoreStep
	Line    int
}

// Kind is "run" or "rescore".
func (s Step) Kind() string {
	if s.Rescore != nil {
		return "rescore"
	}
	return "run"
}

// RescoreStep is a re-scoring without a new run: another of the task's
// filters, or a regex filter of its own.
type RescoreStep struct {
	Filter      string `json:"filter,omitempty"`
	Regex       string `json:"regex,omitempty"`
	GroupSelect int    `json:"group_select,omitempty"`
}

// Variant is one change from the baseline, for the sensitivity table.
type Variant struct {
	Name string
	Set  Settings
	Line int
}

// Settings is a partial RunSpec: the settings a step, variant or claim
// changes, in the order given.
type Settings struct {
	Keys   []string
	values map[string]*yaml.Node
}

// Has reports whether a setting is changed.
func (s Settings) Has(key string) bool { _, ok := s.values[key]; return ok }

// String renders the settings compactly ("num_fewshot=0, model_args.dtype=float16").
func (s Settings) String() string {
	var parts []string
	for _, k := range s.Keys {
		n := s.values[k]
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				parts = append(parts, k+"."+n.Content[i].Value+"="+scalarText(n.Content[i+1]))
			}
			continue
		}
		parts = append(parts, k+"="+scalarText(n))
	}
	return strings.Join(parts, ", ")
}

func scalarText(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		var xs []string
		for _, c := range n.Content {
			xs = append(xs, scalarText(c))
		}
		return "[" + strings.Join(xs, ",") + "]"
	case yaml.MappingNode:
		var xs []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			xs = append(xs, scalarText(n.Content[i])+":"+scalarText(n.Content[i+1]))
		}
		return "{" + strings.Join(xs, ",") + "}"
	}
	return n.Value
}

// SettingNames are the settings a study may set, with what each takes.
var SettingNames = map[string]string{
	"model":                   "lm-eval's --model (hf, vllm, ...)",
	"model_args":              "a mapping of model arguments",
	"tasks":                   "a list of task names",
	"num_fewshot":             "an integer",
	"batch_size":              "an integer, auto or auto:N",
	"device":                  "a device name",
	"limit":                   "a count or a fraction below 1",
	"gen_kwargs":              "a mapping of generation arguments",
	"apply_chat_template":     "true, false or a template name",
	"fewshot_as_multiturn":    "true or false",
	"system_instruction":      "a string",
	"seed":                    "four integers: random, numpy, torch, fewshot seeds",
	"log_samples":             "true or false",
	"use_cache":               "a path",
	"trust_remote_code":       "true or false",
	"confirm_run_unsafe_code": "true or false",
	"bootstrap_iters":         "an integer",
	"harness":                 "another lm-eval for this step or variant: a mapping of version, commit, image, python",
	"include_path":            "a folder of custom task YAMLs inside the study directory",
	"max_batch_size":          "an integer",
	"metadata":                "a mapping passed to the tasks (lm-eval 0.4.9+)",
	"samples":                 "a mapping of task names to lists of doc ids (lm-eval 0.4.9+)",
	"predict_only":            "true or false",
	"cache_requests":          "true, refresh or delete",
	"hf_hub_log_args":         "lm-eval's key=value string",
	"wandb_args":              "lm-eval's key=value string",
}

// Load reads dir/study.yaml (or a study file given directly) with
// strict validation: unknown keys, wrong types and steps that name unknown
// settings are errors naming the line.
func Load(path string) (*Study, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	file := path
	if st.IsDir() {
		file = filepath.Join(path, FileName)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s, err := Parse(file, b)
	if err != nil {
		return nil, err
	}
	s.Dir = filepath.Dir(file)
	return s, nil
}

// Error locates a problem in a study file.
type Error struct {
	Path  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		loc += ": " + e.Field
	}
	return loc + ": " + e.Msg
}

func (e *Error) Unwrap() error { return ErrStudy }

type studyParser struct{ path string }

func (p *studyParser) fail(n *yaml.Node, field, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{Path: p.path, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Parse parses a study file's bytes; path names it in errors.
func Parse(path string, b []byte) (*Study, error) {
	p := &studyParser{path: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, &Error{Path: path, Msg: "not valid YAML: " + err.Error()}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &Error{Path: path, Msg: "empty study file"}
	}
	root := doc.Content[0]
	s := &Study{Path: path, Kind: KindStudy}
	if root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if k, v := root.Content[i], root.Content[i+1]; k.Value == "kind" {
				if v.Kind != yaml.ScalarNode || (v.Value != KindStudy && v.Value != KindSuite) {
					return nil, p.fail(v, "kind", "expected %s or %s, found %s", KindStudy, KindSuite, nodeKind(v))
				}
				s.Kind = v.Value
			}
		}
	}
	if s.IsSuite() {
		return p.suite(root, s)
	}
	var factorial *yaml.Node // read once the steps are known
	err := p.mapping(root, "", map[string]func(*yaml.Node) error{
		"study": func(n *yaml.Node) error { return p.str(n, "study", &s.Name) },
		"model": func(n *yaml.Node) error {
			return p.mapping(n, "model", map[string]func(*yaml.Node) error{
				"id":       func(n *yaml.Node) error { return p.str(n, "model.id", &s.Model.ID) },
				"revision": func(n *yaml.Node) error { return p.str(n, "model.revision", &s.Model.Revision) },
			}, "id")
		},
		"card": func(n *yaml.Node) error { return p.card(n, &s.Card) },
		"harness": func(n *yaml.Node) error {
			h, err := p.harness(n, "harness", HarnessRef{})
			s.Harness = h
			return err
		},
		"runner": func(n *yaml.Node) error { return p.runner(n, &s.Runner) },
		"baseline": func(n *yaml.Node) error {
			set, err := p.settings(n, "baseline")
			if err != nil {
				return err
			}
			if set.Has("harness") {
				return p.fail(set.values["harness"], "baseline.harness", "the baseline's lm-eval is the study's: set it in the top-level harness (steps and variants may set another)")
			}
			s.Baseline, err = p.apply(harness.RunSpec{}, set, "baseline")
			return err
		},
		"steps":    func(n *yaml.Node) error { return p.steps(n, s) },
		"variants": func(n *yaml.Node) error { return p.variants(n, s) },
		"factorial": func(n *yaml.Node) error {
			factorial = n
			return nil
		},
		"kind": func(n *yaml.Node) error { return nil }, // read above
	}, "study", "model", "card", "baseline")
	if err != nil {
		return nil, err
	}
	if factorial != nil {
		if err := p.factorial(factorial, s); err != nil {
			return nil, err
		}
	}
	if s.Runner.Kind == "" {
		s.Runner.Kind = "local"
	}
	if len(s.Baseline.Tasks) == 0 {
		return nil, p.fail(root, "baseline.tasks", "the baseline must name at least one task")
	}
	if err := p.checkClaims(s); err != nil {
		return nil, err
	}
	return s, nil
}

// mapping walks a mapping node, calling the handler of each key; unknown
// and missing required keys are errors.
func (p *studyParser) mapping(n *yaml.Node, field string, handlers map[string]func(*yaml.Node) error, required ...string) error {
	if n.Kind != yaml.MappingNode {
		return p.fail(n, field, "expected a mapping, found %s", nodeKind(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		h, ok := handlers[k.Value]
		if !ok {
			return p.fail(k, join(field, k.Value), "unknown key %q (expected one of %s)", k.Value, keysOf(handlers))
		}
		if seen[k.Value] {
			return p.fail(k, join(field, k.Value), "key %q given twice", k.Value)
		}
		seen[k.Value] = true
		if err := h(v); err != nil {
			return err
		}
	}
	for _, r := range required {
		if !seen[r] {
			return p.fail(n, join(field, r), "missing required key %q", r)
		}
	}
	return nil
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func keysOf(m map[string]func(*yaml.Node) error) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an alias"
}

func (p *studyParser) str(n *yaml.Node, field string, dst *string) error {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return p.fail(n, field, "expected a string, found %s", nodeKind(n))
	}
	*dst = n.Value
	return nil
}

func (p *studyParser) card(n *yaml.Node, c *Card) error {
	return p.mapping(n, "card", map[string]func(*yaml.Node) error{
		"source": func(n *yaml.Node) error { return p.str(n, "card.source", &c.Source) },
		"claims": func(n *yaml.Node) error {
			if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
				return p.fail(n, "card.claims", "expected a non-empty list of claims")
			}
			for i, cn := range n.Content {
				field := fmt.Sprintf("card.claims[%d]", i)
				cl := Claim{Line: cn.Line}
				err := p.mapping(cn, field, map[string]func(*yaml.Node) error{
					"task":   func(n *yaml.Node) error { return p.str(n, field+".task", &cl.Task) },
					"metric": func(n *yaml.Node) error { return p.str(n, field+".metric", &cl.Metric) },
					"filter": func(n *yaml.Node) error { return p.str(n, field+".filter", &cl.Filter) },
					"value": func(n *yaml.Node) error {
						v, err := strconv.ParseFloat(n.Value, 64)
						if n.Kind != yaml.ScalarNode || err != nil || math.IsNaN(v) {
							return p.fail(n, field+".value", "expected a number, found %s", nodeKind(n))
						}
						cl.Value = v
						return nil
					},
					"settings": func(n *yaml.Node) error {
						var err error
						cl.Settings, err = p.settings(n, field+".settings")
						return err
					},
					"aggregate": func(n *yaml.Node) error {
						if err := p.str(n, field+".aggregate", &cl.Aggregate); err != nil {
							return err
						}
						if cl.Aggregate != "micro" && cl.Aggregate != "macro" {
							return p.fail(n, field+".aggregate", "expected micro (the mean over all documents, lm-eval's group score) or macro (the mean of the members' means), found %q", cl.Aggregate)
						}
						return nil
					},
				}, "task", "metric", "value")
				if err != nil {
					return err
				}
				if cl.Filter == "" {
					cl.Filter = "none"
				}
				c.Claims = append(c.Claims, cl)
			}
			return nil
		},
	}, "claims")
}

func (p *studyParser) runner(n *yaml.Node, r *RunnerSpec) error {
	if n.Kind != yaml.MappingNode {
		return p.fail(n, "runner", "expected a mapping with a kind, found %s", nodeKind(n))
	}
	r.Options = map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return p.fail(v, "runner."+k.Value, "expected a scalar, found %s", nodeKind(v))
		}
		if k.Value == "kind" {
			r.Kind = v.Value
			ok := false
			for _, kind := range RunnerKinds {
				ok = ok || kind == v.Value
			}
			if !ok {
				return p.fail(v, "runner.kind", "unknown runner %q (expected one of %s)", v.Value, strings.Join(RunnerKinds, ", "))
			}
			continue
		}
		r.Options[k.Value] = v.Value
	}
	if r.Kind == "" {
		return p.fail(n, "runner.kind", "missing required key \"kind\"")
	}
	return nil
}

// settings reads a mapping of settings, checking every name.
func (p *studyParser) settings(n *yaml.Node, field string) (Settings, error) {
	s := Settings{values: map[string]*yaml.Node{}}
	if n.Kind != yaml.MappingNode {
		return s, p.fail(n, field, "expected a mapping of settings, found %s", nodeKind(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, ok := SettingNames[k.Value]; !ok {
			var names []string
			for name := range SettingNames {
				names = append(names, name)
			}
			sort.Strings(names)
			return s, p.fail(k, join(field, k.Value), "unknown setting %q (known settings: %s)", k.Value, strings.Join(names, ", "))
		}
		if _, dup := s.values[k.Value]; dup {
			return s, p.fail(k, join(field, k.Value), "setting %q given twice", k.Value)
		}
		s.Keys = append(s.Keys, k.Value)
		s.values[k.Value] = v
	}
	// Type-check now, against an empty spec, so errors point at the line.
	_, err := p.apply(harness.RunSpec{}, s, field)
	return s, err
}

// apply returns spec with the settings applied. model_args and gen_kwargs
// are merged key by key; everything else replaces.
func (p *studyParser) apply(spec harness.RunSpec, s Settings, field string) (harness.RunSpec, error) {
	out := spec
	out.ModelArgs = append(harness.KVs(nil), spec.ModelArgs...)
	out.GenKwargs = append(harness.KVs(nil), spec.GenKwargs...)
	for _, k := range s.Keys {
		n := s.values[k]
		f := join(field, k)
		var err error
		switch k {
		case "model":
			err = p.str(n, f, &out.Model)
		case "model_args", "gen_kwargs":
			if n.Kind != yaml.MappingNode {
				return out, p.fail(n, f, "expected a mapping, found %s", nodeKind(n))
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				kn, vn := n.Content[i], n.Content[i+1]
				kv, err := p.kvValue(kn.Value, vn, f+"."+kn.Value)
				if err != nil {
					return out, err
				}
				if what, ok := kv.Secret(); ok {
					return out, p.fail(vn, f+"."+kn.Value, "this is %s: pass it in the environment (HF_TOKEN reaches every runner), never in study.yaml, which is copied into every run.json and capsule", what)
				}
				if k == "model_args" {
					out.ModelArgs = out.ModelArgs.With(kv)
				} else {
					out.GenKwargs = out.GenKwargs.With(kv)
				}
			}
		case "tasks":
			out.Tasks = nil
			if n.Kind == yaml.ScalarNode {
				for _, t := range strings.Split(n.Value, ",") {
					out.Tasks = append(out.Tasks, strings.TrimSpace(t))
				}
				break
			}
			if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
				return out, p.fail(n, f, "expected a list of task names, found %s", nodeKind(n))
			}
			for _, c := range n.Content {
				if c.Kind != yaml.ScalarNode {
					return out, p.fail(c, f, "expected a task name, found %s", nodeKind(c))
				}
				out.Tasks = append(out.Tasks, c.Value)
			}
		case "harness":
			_, err = p.harness(n, f, HarnessRef{})
		case "include_path":
			err = p.str(n, f, &out.IncludePath)
			if err == nil && (filepath.IsAbs(out.IncludePath) || !filepath.IsLocal(out.IncludePath)) {
				return out, p.fail(n, f, "expected a folder inside the study directory, relative to it, found %q", out.IncludePath)
			}
		case "max_batch_size":
			v, e := strconv.Atoi(n.Value)
			if n.Kind != yaml.ScalarNode || e != nil || v < 1 {
				return out, p.fail(n, f, "expected a positive integer, found %s", nodeKind(n))
			}
			out.MaxBatchSize = &v
		case "metadata", "samples":
			if n.Kind != yaml.MappingNode {
				return out, p.fail(n, f, "expected a mapping, found %s", nodeKind(n))
			}
			var b strings.Builder
			if err := p.kvJSON(&b, n, f, 0); err != nil {
				return out, err
			}
			if k == "metadata" {
				out.Metadata = b.String()
			} else {
				out.Samples = b.String()
			}
		case "predict_only":
			out.PredictOnly, err = p.boolean(n, f)
		case "cache_requests":
			err = p.str(n, f, &out.CacheRequests)
			if err == nil && out.CacheRequests != "true" && out.CacheRequests != "refresh" && out.CacheRequests != "delete" {
				return out, p.fail(n, f, "expected true, refresh or delete, found %q", out.CacheRequests)
			}
		case "hf_hub_log_args":
			err = p.str(n, f, &out.HFHubLogArgs)
		case "wandb_args":
			err = p.str(n, f, &out.WandbArgs)
		case "num_fewshot", "bootstrap_iters":
			v, e := strconv.Atoi(n.Value)
			if n.Kind != yaml.ScalarNode || e != nil || v < 0 {
				return out, p.fail(n, f, "expected a non-negative integer, found %s", nodeKind(n))
			}
			if k == "num_fewshot" {
				out.NumFewshot = &v
			} else {
				out.BootstrapIters = &v
			}
		case "batch_size":
			if n.Kind != yaml.ScalarNode || !batchRE.MatchString(n.Value) {
				return out, p.fail(n, f, "expected an integer, auto or auto:N, found %s", nodeKind(n))
			}
			out.BatchSize = n.Value
		case "device":
			err = p.str(n, f, &out.Device)
		case "limit":
			v, e := strconv.ParseFloat(n.Value, 64)
			if n.Kind != yaml.ScalarNode || e != nil || v <= 0 || (v >= 1 && v != math.Trunc(v)) {
				return out, p.fail(n, f, "expected a positive count or a fraction below 1, found %s", nodeKind(n))
			}
			out.Limit = &v
		case "apply_chat_template":
			if n.Kind != yaml.ScalarNode {
				return out, p.fail(n, f, "expected true, false or a template name, found %s", nodeKind(n))
			}
			switch n.Value {
			case "false", "False", "no":
				out.ApplyChatTemplate = ""
			case "true", "True", "yes":
				out.ApplyChatTemplate = "true"
			default:
				out.ApplyChatTemplate = n.Value
			}
		case "fewshot_as_multiturn":
			var b bool
			b, err = p.boolean(n, f)
			out.FewshotAsMultiturn = &b
		case "system_instruction":
			err = p.str(n, f, &out.SystemInstruction)
		case "seed":
			out.Seed = nil
			if n.Kind == yaml.ScalarNode {
				v, e := strconv.Atoi(n.Value)
				if e != nil {
					return out, p.fail(n, f, "expected an integer or four integers, found %s", nodeKind(n))
				}
				out.Seed = []int{v, v, v, v}
				break
			}
			if n.Kind != yaml.SequenceNode || len(n.Content) != 4 {
				return out, p.fail(n, f, "expected four integers (random, numpy, torch, fewshot seeds), found %s", nodeKind(n))
			}
			for _, c := range n.Content {
				v, e := strconv.Atoi(c.Value)
				if c.Kind != yaml.ScalarNode || e != nil {
					return out, p.fail(c, f, "expected an integer, found %s", nodeKind(c))
				}
				out.Seed = append(out.Seed, v)
			}
		case "log_samples":
			out.LogSamples, err = p.boolean(n, f)
		case "use_cache":
			err = p.str(n, f, &out.UseCache)
		case "trust_remote_code":
			out.TrustRemoteCode, err = p.boolean(n, f)
		case "confirm_run_unsafe_code":
			out.ConfirmRunUnsafeCode, err = p.boolean(n, f)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// harness reads a harness mapping over base: the top-level one (version
// required) or a step's or variant's change of it.
func (p *studyParser) harness(n *yaml.Node, field string, base HarnessRef) (HarnessRef, error) {
	h := base
	var required []string
	if field == "harness" {
		required = []string{"version"}
	}
	err := p.mapping(n, field, map[string]func(*yaml.Node) error{
		"version": func(n *yaml.Node) error {
			if err := p.str(n, field+".version", &h.Version); err != nil {
				return err
			}
			if _, err := harness.ParseVersion(h.Version); err != nil {
				return p.fail(n, field+".version", "%v", err)
			}
			return nil
		},
		"commit": func(n *yaml.Node) error { return p.str(n, field+".commit", &h.Commit) },
		"image":  func(n *yaml.Node) error { return p.str(n, field+".image", &h.Image) },
		"python": func(n *yaml.Node) error { return p.str(n, field+".python", &h.Python) },
	}, required...)
	return h, err
}

// Harness returns h with the settings' harness change applied: the lm-eval
// a step or variant runs instead of the study's.
func (s Settings) Harness(h HarnessRef) HarnessRef {
	n, ok := s.values["harness"]
	if !ok {
		return h
	}
	out, _ := (&studyParser{}).harness(n, "harness change", h)
	return out
}

// kvValue converts the YAML value of one model_args or gen_kwargs key into
// a run-spec value, keeping what the YAML says it is:
//
//   - A scalar stays text, as written, for lm-eval's key=value form to type
//     ("5" → 5, "true" → True, "bfloat16" → "bfloat16"); quoted, it is text
//     too ("no", "5", "null").
//   - Unquoted null, Null, NULL, ~ or nothing is Python's None (a JSON
//     value); unquoted yes/no/on/off are the booleans PyYAML (which lm-eval
//     reads its own YAML with) makes of them, written as the text "true" or
//     "false".
//   - A list or a mapping is a JSON value: the Python list or dict, with
//     each scalar inside typed as YAML types it (strings, ints, floats,
//     booleans, null); `until: ["Question:", "</s>"]` is a list of two
//     strings.
//
// What has no Python value to match it exactly is refused, naming the
// line: aliases and merge keys, non-string keys of a nested mapping, inf
// and nan, ints written other than in decimal, other tags.
func (p *studyParser) kvValue(key string, n *yaml.Node, field string) (harness.KV, error) {
	if n.Kind == yaml.ScalarNode {
		switch {
		case n.Tag == "!!null":
			return harness.KV{Key: key, Value: "null", JSON: true}, nil
		case kvPlain(n) && kvYAML11Bool[n.Value] != "":
			return harness.KV{Key: key, Value: kvYAML11Bool[n.Value]}, nil
		}
		return harness.KV{Key: key, Value: n.Value}, nil
	}
	var b strings.Builder
	if err := p.kvJSON(&b, n, field, 0); err != nil {
		return harness.KV{}, err
	}
	return harness.KV{Key: key, Value: b.String(), JSON: true}, nil
}

// kvYAML11Bool are the plain scalars that YAML 1.1 (and so PyYAML) reads as
// booleans and YAML 1.2 as strings, as the text lm-eval types to the bool.
var kvYAML11Bool = map[string]string{
	"yes": "true", "Yes": "true", "YES": "true", "on": "true", "On": "true", "ON": "true",
	"no": "false", "No": "false", "NO": "false", "off": "false", "Off": "false", "OFF": "false",
}

// kvPlain reports whether a scalar is written unquoted and untagged.
func kvPlain(n *yaml.Node) bool {
	return n.Style&(yaml.TaggedStyle|yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
}

var (
	kvIntRE   = regexp.MustCompile(`^[-+]?(0|[1-9][0-9]*)$`)
	kvFloatRE = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
)

// kvMaxDepth bounds the nesting of a list or mapping value.
const kvMaxDepth = 64

// kvJSON writes a YAML node inside a list or mapping value as JSON.
func (p *studyParser) kvJSON(b *strings.Builder, n *yaml.Node, field string, depth int) error {
	if depth > kvMaxDepth {
		return p.fail(n, field, "nested deeper than %d", kvMaxDepth)
	}
	switch n.Kind {
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := p.kvJSON(b, c, fmt.Sprintf("%s[%d]", field, i), depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case yaml.MappingNode:
		b.WriteByte('{')
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			if kn.Kind != yaml.ScalarNode || kn.Tag != "!!str" {
				if kn.Tag == "!!merge" {
					return p.fail(kn, field, "merge keys (<<) are not supported here; write the keys out")
				}
				return p.fail(kn, field, "a key of a nested mapping must be a string (JSON and lm-eval have no other), found %s; quote it", nodeKind(kn))
			}
			if seen[kn.Value] {
				return p.fail(kn, field+"."+kn.Value, "key %q given twice", kn.Value)
			}
			seen[kn.Value] = true
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(kvJSONString(kn.Value))
			b.WriteByte(':')
			if err := p.kvJSON(b, vn, field+"."+kn.Value, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case yaml.ScalarNode:
	default:
		return p.fail(n, field, "aliases are not supported in model_args and gen_kwargs; write the value out")
	}
	switch v := n.Value; {
	case n.Tag == "!!null":
		b.WriteString("null")
	case n.Tag == "!!bool":
		b.WriteString(strconv.FormatBool(strings.ToLower(v) == "true"))
	case n.Tag == "!!str" && kvPlain(n) && kvYAML11Bool[v] != "":
		b.WriteString(kvYAML11Bool[v])
	case n.Tag == "!!int":
		if !kvIntRE.MatchString(v) {
			return p.fail(n, field, "write the integer %s in decimal without leading zeros, or quote it for a string", v)
		}
		v = strings.TrimPrefix(v, "+")
		if v == "-0" {
			v = "0"
		}
		b.WriteString(v)
	case n.Tag == "!!float":
		f, err := strconv.ParseFloat(v, 64)
		if !kvFloatRE.MatchString(v) || err != nil || math.IsInf(f, 0) {
			return p.fail(n, field, "%s has no JSON form (write a finite decimal number, or quote it for a string)", v)
		}
		b.WriteString(harness.FormatFloat(f, false))
	case n.Tag == "!!str" || n.Tag == "!!timestamp":
		b.WriteString(kvJSONString(v))
	default:
		return p.fail(n, field, "the YAML tag %s is not supported here", n.Tag)
	}
	return nil
}

// kvJSONString writes s as a JSON string, leaving <, > and & as they are.
func kvJSONString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(buf.String(), "\n")
}

var batchRE = regexp.MustCompile(`^(\d+|auto(:\d+)?)$`)

func (p *studyParser) boolean(n *yaml.Node, field string) (bool, error) {
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "true", "True", "yes":
			return true, nil
		case "false", "False", "no":
			return false, nil
		}
	}
	return false, p.fail(n, field, "expected true or false, found %s", nodeKind(n))
}

func (p *studyParser) steps(n *yaml.Node, s *Study) error {
	if n.Kind != yaml.SequenceNode {
		return p.fail(n, "steps", "expected a list of steps, found %s", nodeKind(n))
	}
	for i, sn := range n.Content {
		field := fmt.Sprintf("steps[%d]", i)
		st := Step{Line: sn.Line}
		err := p.mapping(sn, field, map[string]func(*yaml.Node) error{
			"name": func(n *yaml.Node) error { return p.str(n, field+".name", &st.Name) },
			"set": func(n *yaml.Node) error {
				var err error
				st.Set, err = p.settings(n, field+".set")
				return err
			},
			"rescore": func(n *yaml.Node) error {
				r := &RescoreStep{}
				st.Rescore = r
				return p.mapping(n, field+".rescore", map[string]func(*yaml.Node) error{
					"filter": func(n *yaml.Node) error { return p.str(n, field+".rescore.filter", &r.Filter) },
					"regex":  func(n *yaml.Node) error { return p.str(n, field+".rescore.regex", &r.Regex) },
					"group_select": func(n *yaml.Node) error {
						v, err := strconv.Atoi(n.Value)
						if err != nil {
							return p.fail(n, field+".rescore.group_select", "expected an integer, found %s", nodeKind(n))
						}
						r.GroupSelect = v
						return nil
					},
				})
			},
		}, "name")
		if err != nil {
			return err
		}
		switch {
		case st.Rescore == nil && st.Set.Keys == nil:
			return p.fail(sn, field, "a step needs either set (a new run) or rescore (a re-scoring of the previous run)")
		case st.Rescore != nil && st.Set.Keys != nil:
			return p.fail(sn, field, "a step has either set or rescore, not both")
		case st.Rescore != nil && (st.Rescore.Filter == "") == (st.Rescore.Regex == ""):
			return p.fail(sn, field+".rescore", "give either filter (another of the task's filters) or regex")
		}
		s.Steps = append(s.Steps, st)
	}
	return nil
}

func (p *studyParser) variants(n *yaml.Node, s *Study) error {
	if n.Kind != yaml.SequenceNode {
		return p.fail(n, "variants", "expected a list of setting changes, found %s", nodeKind(n))
	}
	for i, vn := range n.Content {
		field := fmt.Sprintf("variants[%d]", i)
		set, err := p.settings(vn, field)
		if err != nil {
			return err
		}
		if len(set.Keys) == 0 {
			return p.fail(vn, field, "a variant must change at least one setting")
		}
		s.Variants = append(s.Variants, Variant{Name: set.String(), Set: set, Line: vn.Line})
	}
	return nil
}

// factorial reads the list of run steps whose combinations the plan runs.
func (p *studyParser) factorial(n *yaml.Node, s *Study) error {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return p.fail(n, "factorial", "expected a list of step names, found %s", nodeKind(n))
	}
	if len(n.Content) > 4 {
		return p.fail(n, "factorial", "a factorial of %d steps needs %d runs; at most 4 steps (16 runs)", len(n.Content), 1<<len(n.Content))
	}
	var runSteps []string
	for _, st := range s.Steps {
		if st.Rescore == nil {
			runSteps = append(runSteps, st.Name)
		}
	}
	seen := map[string]bool{}
	for i, c := range n.Content {
		field := fmt.Sprintf("factorial[%d]", i)
		var name string
		if err := p.str(c, field, &name); err != nil {
			return err
		}
		var step *Step
		count := 0
		for j := range s.Steps {
			if s.Steps[j].Name == name {
				step = &s.Steps[j]
				count++
			}
		}
		switch {
		case count > 1:
			return p.fail(c, field, "%d steps are named %q; name them apart to combine one", count, name)
		case step == nil:
			return p.fail(c, field, "unknown step %q (the run steps are %s)", name, quoteList(runSteps))
		case step.Rescore != nil:
			return p.fail(c, field, "step %q re-scores the previous run; a factorial combines run steps (%s)", name, quoteList(runSteps))
		case seen[name]:
			return p.fail(c, field, "step %q named twice", name)
		}
		seen[name] = true
		s.Factorial = append(s.Factorial, name)
	}
	s.FactorialLine = n.Line
	return nil
}

func quoteList(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

// checkClaims requires every claim's task to be run by the last step (or
// the baseline).
func (p *studyParser) checkClaims(s *Study) error {
	final := s.Baseline
	for _, st := range s.Steps {
		if st.Rescore == nil {
			final, _ = p.apply(final, st.Set, "")
		}
	}
	for i, c := range s.Card.Claims {
		found := false
		for _, t := range final.Tasks {
			found = found || t == c.Task
		}
		if !found {
			return &Error{Path: p.path, Line: c.Line, Field: fmt.Sprintf("card.claims[%d].task", i),
				Msg: fmt.Sprintf("task %q is not run by the final step (its tasks are %s)", c.Task, strings.Join(final.Tasks, ", "))}
		}
	}
	return nil
}

// Apply returns spec with the settings applied (model_args and gen_kwargs
// merged key by key).
func (s Settings) Apply(spec harness.RunSpec) harness.RunSpec {
	out, _ := (&studyParser{}).apply(spec, s, "")
	return out
}

// suite parses a suite file: a name, the pinned harness, a runner, and the
// settings every checkpoint is run with. A model may be given (a
// checkpoint's own study file pins it); a card, a baseline, steps,
// variants or a factorial may not.
func (p *studyParser) suite(root *yaml.Node, s *Study) (*Study, error) {
	no := func(key string) func(*yaml.Node) error {
		return func(n *yaml.Node) error {
			return p.fail(n, key, "a suite has no %s: it runs its settings against each checkpoint (capsule run SUITE --model PATH_OR_ID); for a card's claims and their steps write a study (no kind: suite)", key)
		}
	}
	err := p.mapping(root, "", map[string]func(*yaml.Node) error{
		"kind":  func(n *yaml.Node) error { return nil },
		"study": func(n *yaml.Node) error { return p.str(n, "study", &s.Name) },
		"model": func(n *yaml.Node) error {
			return p.mapping(n, "model", map[string]func(*yaml.Node) error{
				"id":       func(n *yaml.Node) error { return p.str(n, "model.id", &s.Model.ID) },
				"revision": func(n *yaml.Node) error { return p.str(n, "model.revision", &s.Model.Revision) },
				"digest":   func(n *yaml.Node) error { return p.str(n, "model.digest", &s.Model.Digest) },
			}, "id")
		},
		"harness": func(n *yaml.Node) error {
			h, err := p.harness(n, "harness", HarnessRef{})
			s.Harness = h
			return err
		},
		"runner": func(n *yaml.Node) error { return p.runner(n, &s.Runner) },
		"settings": func(n *yaml.Node) error {
			set, err := p.settings(n, "settings")
			if err != nil {
				return err
			}
			if set.Has("harness") {
				return p.fail(set.values["harness"], "settings.harness", "a suite's lm-eval is pinned once, in the top-level harness")
			}
			s.Baseline, err = p.apply(harness.RunSpec{}, set, "settings")
			return err
		},
		"card": no("card"), "baseline": no("baseline"), "steps": no("steps"), "variants": no("variants"), "factorial": no("factorial"),
	}, "study", "harness", "settings")
	if err != nil {
		return nil, err
	}
	if s.Runner.Kind == "" {
		s.Runner.Kind = "local"
	}
	if len(s.Baseline.Tasks) == 0 {
		return nil, p.fail(root, "settings.tasks", "a suite must name at least one task")
	}
	return s, nil
}
