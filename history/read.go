package history

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
)

// level is the confidence level of the intervals the index stores.
const level = 0.95

// ReadCapsule reads an opened capsule into a checkpoint: every task,
// metric and filter of its runs, with the per-document values from its
// samples (a task two runs have is taken from the first run, by name).
// The capsule is unpacked into a temporary folder, under the limits it
// was opened with, and the folder removed. Ref and Name are set from the
// capsule's Ref; the caller sets Repo and Name for a registry tag.
func ReadCapsule(ctx context.Context, c *capsule.Capsule) (*Checkpoint, error) {
	tmp, err := os.MkdirTemp("", "capsule-history-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "study")
	if err := c.Unpack(ctx, dir); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Ref, err)
	}
	cp := &Checkpoint{
		Digest: c.Descriptor.Digest.String(),
		Ref:    c.Ref,
		Name:   localName(c.Ref),
		Step:   -1,
	}
	if t, err := time.Parse(time.RFC3339, c.Manifest.Annotations[ocispec.AnnotationCreated]); err == nil {
		cp.Created = t
	}
	runs := slices.Clone(c.Config.Runs)
	slices.SortFunc(runs, func(a, b capsule.ConfigRun) int { return strings.Compare(a.Name, b.Name) })
	seen := map[string]bool{}
	for _, r := range runs {
		if r.Record != nil && cp.Model == "" {
			cp.Identity.HarnessVersion = r.Record.Harness.Version
			cp.Identity.HarnessCommit = r.Record.Harness.Commit
			cp.Identity.ModelID = r.Record.Model.ID
			cp.Identity.ModelRevision = r.Record.Model.ResolvedRevision
			if cp.Identity.ModelRevision == "" {
				cp.Identity.ModelRevision = r.Record.Model.Revision
			}
			cp.Model = cp.Identity.ModelID
			if cp.Identity.ModelRevision != "" {
				cp.Model += "@" + cp.Identity.ModelRevision
			}
		}
		if err := readRun(ctx, filepath.Join(dir, "runs", r.Name), cp, seen); err != nil {
			return nil, fmt.Errorf("%s: run %s: %w", c.Ref, r.Name, err)
		}
	}
	slices.SortFunc(cp.Scores, func(a, b *Score) int {
		return strings.Compare(a.Task+"\x00"+a.Key(), b.Task+"\x00"+b.Key())
	})
	cp.Step = ParseStep(cp.Name, cp.Model)
	return cp, nil
}

// readRun adds the scores of one run directory's tasks that seen does not
// hold yet.
func readRun(ctx context.Context, dir string, cp *Checkpoint, seen map[string]bool) error {
	run, err := harness.Read(dir)
	if err != nil {
		return err
	}
	sc, err := analysis.Load(ctx, run, analysis.RescoreOptions{})
	if err != nil {
		return err
	}
	if res := run.Output.Results; res != nil {
		identityOf(res, &cp.Identity)
	}
	added := map[string]bool{}
	for _, s := range sc.Series {
		if seen[s.Task] {
			continue
		}
		added[s.Task] = true
		cp.Scores = append(cp.Scores, scoreOf(s, sc, run.Output.Results))
	}
	for t := range added {
		seen[t] = true
	}
	return nil
}

// scoreOf is one series as the index keeps it, by doc_id.
func scoreOf(s *analysis.Series, sc *analysis.Scores, res *harness.Results) *Score {
	out := &Score{Task: s.Task, Metric: s.Metric, Filter: s.Filter, Higher: true}
	idx := make([]int, len(s.Docs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return s.Docs[a].DocID - s.Docs[b].DocID })
	for _, i := range idx {
		out.Docs = append(out.Docs, s.Docs[i].DocID)
		out.Values = append(out.Values, s.Values[i])
	}
	out.Value = s.Mean()
	if s.Binary() {
		k := 0
		for _, v := range s.Values {
			if v == 1 {
				k++
			}
		}
		out.Low, out.High = analysis.Wilson(k, len(s.Values), level)
	} else if r, ok := sc.FindReported(s.Task, s.Metric, s.Filter); ok {
		out.Low, out.High = analysis.CLTInterval(out.Value, r.Stderr, level)
	} else {
		out.Low, out.High = math.NaN(), math.NaN()
	}
	if res != nil {
		if h, ok := res.Doc.Get("higher_is_better"); ok {
			if t, ok := h.Get(s.Task); ok {
				if v, ok := t.Get(s.Metric); ok {
					if b, ok := v.Truth(); ok {
						out.Higher = b
					}
				}
			}
		}
	}
	return out
}

// identityOf reads the prompt set and chat template lm-eval recorded.
func identityOf(res *harness.Results, id *Identity) {
	if h, ok := res.Doc.Get("task_hashes"); ok {
		for i, k := range h.Keys {
			if s, ok := h.Vals[i].Text(); ok {
				if id.TaskHashes == nil {
					id.TaskHashes = map[string]string{}
				}
				if _, dup := id.TaskHashes[k]; !dup {
					id.TaskHashes[k] = s
				}
			}
		}
	}
	for key, dst := range map[string]*string{"chat_template_sha": &id.ChatTemplate, "system_instruction_sha": &id.SystemInstruction} {
		if v, ok := res.Doc.Get(key); ok && *dst == "" {
			if s, ok := v.Text(); ok {
				*dst = s
			}
		}
	}
}

// stepPattern finds a training step in a tag, folder or model name:
// "step-12000", "step12000", "ckpt_500", "checkpoint-3", "iter_800",
// "global_step1000".
var stepPattern = regexp.MustCompile(`(?i)(?:step|ckpt|checkpoint|iter)[-_]?(\d+)`)

// ParseStep returns the training step the first of names carries (see
// stepPattern), -1 when none does.
func ParseStep(names ...string) int64 {
	for _, n := range names {
		if m := stepPattern.FindAllStringSubmatch(n, -1); m != nil {
			if v, err := strconv.ParseInt(m[len(m)-1][1], 10, 64); err == nil {
				return v
			}
		}
	}
	return -1
}

// localName is a local capsule's name: its base name without ".tar".
func localName(ref string) string {
	return strings.TrimSuffix(filepath.Base(filepath.Clean(ref)), ".tar")
}
