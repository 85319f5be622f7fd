package gate

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
)

// Side is one evaluated checkpoint, as a run folder, a capsule or the
// history index holds it.
type Side struct {
	// Name is the tag, run folder or checkpoint name, for messages.
	Name string `json:"name"`
	// Identity is what decides whether two sides asked the same questions
	// the same way.
	Identity Identity `json:"identity"`
	// Tasks are the per-document values by task name. A group (mmlu) is
	// there too, its members' documents joined, keyed "member/doc_id".
	Tasks map[string]*TaskValues `json:"tasks"`
	// Differs names, "task metric,filter", the scores whose logged values
	// do not re-score to what lm-eval reported (capsule rescore says how):
	// the gate refuses them on either side. A record mismatch is "record".
	Differs map[string]string `json:"differs,omitempty"`
}

// Identity is what a run was: the harness, the prompts, the model.
type Identity struct {
	HarnessVersion string `json:"harness_version"` // lm-eval's lm_eval_version from the results file; "" when not recorded
	HarnessCommit  string `json:"harness_commit"`  // lm-eval's git_hash (git describe of the folder it ran in); "" when not recorded
	// TaskHashes are lm-eval's task_hashes: per task, a hash over its
	// samples' document, prompt and target hashes.
	TaskHashes map[string]string `json:"task_hashes"`
	// ChatTemplateSHA is lm-eval's chat_template_sha (SHA-256 of the chat
	// template), "" when none was applied.
	ChatTemplateSHA      string `json:"chat_template_sha"`
	SystemInstructionSHA string `json:"system_instruction_sha"` // lm-eval's system_instruction_sha (SHA-256 of it); "" when none was given
	// Model is what was evaluated: never compared (the candidate is meant
	// to be another model), shown in the outputs.
	Model Model `json:"model"`
}

// Model names the checkpoint a side evaluated.
type Model struct {
	ID       string `json:"id"`       // hub id or local path: run.json's model id, else lm-eval's model_name
	Revision string `json:"revision"` // run.json's resolved revision, else its revision, else lm-eval's model_revision; "" when none
	Digest   string `json:"digest"`   // lm-eval's model_sha (the commit the Hub resolved the revision to); "" when not recorded
}

// TaskValues are the per-document values of one task.
type TaskValues struct {
	// Metrics maps lm-eval's "metric,filter" key to doc_id → value.
	Metrics map[string]map[string]float64 `json:"metrics"`
	// Higher says, per metric key, whether higher is better (lm-eval's
	// higher_is_better; true where the results file does not say).
	Higher map[string]bool `json:"higher_is_better"`

	// order caches, per metric key, the documents in the gate's order:
	// a baseline gated against many candidates sorts its ids once.
	order sync.Map // key → *docOrder
}

// docOrder is one metric's documents in the gate's order (sortIDs), with
// their values and the group members ("member" of "member/doc_id") they
// name, sorted.
type docOrder struct {
	once    sync.Once
	ids     []string
	vals    []float64
	members []string
	from    map[string]float64 // the map filled from
}

func (o *docOrder) fill(docs map[string]float64) {
	o.from = docs
	o.ids = make([]string, 0, len(docs))
	for id := range docs {
		o.ids = append(o.ids, id)
	}
	sortIDs(o.ids)
	o.vals = make([]float64, len(o.ids))
	for i, id := range o.ids {
		o.vals[i] = docs[id]
		if j := strings.LastIndexByte(id, '/'); j > 0 {
			if m := id[:j]; len(o.members) == 0 || o.members[len(o.members)-1] != m {
				o.members = append(o.members, m)
			}
		}
	}
	// sortIDs keeps a member's documents together, but a member whose
	// ids are not numbers sorts by the whole id: sort and dedupe anyway.
	slices.Sort(o.members)
	o.members = slices.Compact(o.members)
}

// same reports whether docs is still the map o was filled from, and as
// long: a Side is not to change once gated (see Evaluate); a map replaced
// or grown or shrunk since is ordered afresh.
func (o *docOrder) same(docs map[string]float64) bool {
	return len(docs) == len(o.ids) && reflect.ValueOf(docs).UnsafePointer() == reflect.ValueOf(o.from).UnsafePointer()
}

// ordered is the documents of metric key in the gate's order, computed
// once per TaskValues and key (and afresh when Metrics[key] has changed
// since).
func (tv *TaskValues) ordered(key string) *docOrder {
	docs := tv.Metrics[key]
	e, _ := tv.order.LoadOrStore(key, &docOrder{})
	o := e.(*docOrder)
	o.once.Do(func() { o.fill(docs) })
	if o.same(docs) {
		return o
	}
	f := &docOrder{}
	f.fill(docs)
	return f
}

// SideFromRun reads a run (a run folder or an lm-eval output, as
// harness.Read opens it) into a Side named name: every task's
// per-document values through analysis.Load, each group the results file
// names joined from its members, and the identity from the results file
// and run.json.
func SideFromRun(ctx context.Context, run *harness.Run, name string) (*Side, error) {
	sc, err := analysis.Load(ctx, run, analysis.RescoreOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSide, name, err)
	}
	res := run.Output.Results
	s := &Side{Name: name, Tasks: map[string]*TaskValues{}, Identity: identityOf(res, run.Record)}
	for _, se := range sc.Series {
		addSeries(s, se, res)
	}
	for _, c := range sc.Report.Checks {
		if c.Status != analysis.StatusDiffers {
			continue
		}
		if s.Differs == nil {
			s.Differs = map[string]string{}
		}
		key := c.Task + " " + c.Metric + "," + c.Filter
		if c.Level == analysis.LevelRecord {
			key = "record"
		}
		s.Differs[key] = c.Reason
	}
	if res != nil {
		groups := append([]string(nil), res.Groups...)
		sort.Strings(groups)
		for _, g := range groups {
			tr, ok := res.Task(g)
			if !ok {
				continue
			}
			for _, m := range tr.Metrics {
				se, err := sc.Lookup(g, m.Metric, m.Filter)
				if err != nil {
					// A group whose score is not the mean over its
					// members' logged documents: named, so that a gate
					// of it says why it is missing.
					if s.Differs == nil {
						s.Differs = map[string]string{}
					}
					s.Differs[g+" "+m.Key()] = err.Error()
					continue
				}
				addSeries(s, se, res)
			}
		}
	}
	return s, nil
}

func addSeries(s *Side, se *analysis.Series, res *harness.Results) {
	tv := s.Tasks[se.Task]
	if tv == nil {
		tv = &TaskValues{Metrics: map[string]map[string]float64{}, Higher: map[string]bool{}}
		s.Tasks[se.Task] = tv
	}
	key := se.Metric + "," + se.Filter
	docs := make(map[string]float64, len(se.Values))
	for i, d := range se.Docs {
		id := strconv.Itoa(d.DocID)
		if d.Task != "" {
			id = d.Task + "/" + id
		}
		docs[id] = se.Values[i]
	}
	tv.Metrics[key] = docs
	tv.Higher[key] = higherIsBetter(res, se.Task, se.Metric)
}

func higherIsBetter(res *harness.Results, task, metric string) bool {
	if res == nil {
		return true
	}
	if all, ok := res.Doc.Get("higher_is_better"); ok {
		if t, ok := all.Get(task); ok {
			if v, ok := t.Get(metric); ok {
				if b, ok := v.Truth(); ok {
					return b
				}
			}
		}
	}
	return true
}

func identityOf(res *harness.Results, rec *harness.RunRecord) Identity {
	var id Identity
	if res != nil {
		id.HarnessVersion, _ = res.LMEvalVersion()
		id.HarnessCommit, _ = res.GitHash()
		id.TaskHashes = res.TaskHashes()
		id.ChatTemplateSHA, _ = res.ChatTemplateSHA()
		id.SystemInstructionSHA, _ = res.SystemInstructionSHA()
		id.Model.ID, _ = res.ModelName()
		id.Model.Revision, _ = res.ModelRevision()
		id.Model.Digest, _ = res.ModelSHA()
	}
	if rec != nil {
		if rec.Model.ID != "" {
			id.Model.ID = rec.Model.ID
		}
		if r := rec.Model.ResolvedRevision; r != "" {
			id.Model.Revision = r
		} else if rec.Model.Revision != "" {
			id.Model.Revision = rec.Model.Revision
		}
	}
	if id.TaskHashes == nil {
		id.TaskHashes = map[string]string{}
	}
	return id
}
