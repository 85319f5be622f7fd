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
	"github.com/evalcapsule/evalcapsule/gate"
	"github.com/evalcapsule/evalcapsule/harness"
)

// level is the confidence level of the intervals the index stores.
const level = 0.95

// ReadCapsule reads an opened capsule into a checkpoint: every task,
// metric and filter of its runs (groups whose score is a mean over their
// members' documents included), with the per-document values from its
// samples, read as the gate reads a run (gate.SideFromRun). A task two
// runs have is taken from the first run, by name. The capsule is unpacked
// into a temporary folder, under the limits it was opened with, and the
// folder removed. Ref and Name are set from the capsule's Ref; the caller
// sets Repo and Name for a registry tag.
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
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: %w: the capsule has no run", c.Ref, ErrNoCheckpoints)
	}
	seen := map[string]bool{}
	for i, r := range runs {
		run, err := harness.Read(filepath.Join(dir, "runs", r.Name))
		if err != nil {
			return nil, fmt.Errorf("%s: run %s: %w", c.Ref, r.Name, err)
		}
		side, err := gate.SideFromRun(ctx, run, r.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: run %s: %w", c.Ref, r.Name, err)
		}
		if i == 0 {
			cp.Identity = side.Identity
		}
		for task, tv := range side.Tasks {
			if seen[task] {
				continue
			}
			seen[task] = true
			for key, docs := range tv.Metrics {
				cp.Scores = append(cp.Scores, scoreOf(task, key, docs, tv.Higher[key]))
			}
		}
	}
	slices.SortFunc(cp.Scores, func(a, b *Score) int {
		return strings.Compare(a.Task+"\x00"+a.Key(), b.Task+"\x00"+b.Key())
	})
	cp.Model = cp.Identity.Model.ID
	if r := cp.Identity.Model.Revision; r != "" {
		cp.Model += "@" + r
	} else if d := cp.Identity.Model.Digest; d != "" {
		cp.Model += "@" + d
	}
	cp.Step = ParseStep(cp.Name, cp.Identity.Model.ID)
	return cp, nil
}

// scoreOf is one metric of a task as the index keeps it: the values in
// doc order, their mean and its 95 % interval (Wilson's for 0/1 values,
// the normal one from the values' standard error otherwise).
func scoreOf(task, key string, docs map[string]float64, higher bool) *Score {
	metric, filter, _ := strings.Cut(key, ",")
	s := &Score{Task: task, Metric: metric, Filter: filter, Higher: higher}
	s.Docs = make([]string, 0, len(docs))
	for d := range docs {
		s.Docs = append(s.Docs, d)
	}
	slices.SortFunc(s.Docs, compareDocs)
	s.Values = make([]float64, len(s.Docs))
	sum := 0.0
	for i, d := range s.Docs {
		s.Values[i] = docs[d]
		sum += s.Values[i]
	}
	n := float64(len(s.Values))
	s.Value = sum / n
	if s.Binary() {
		k := int(math.Round(sum))
		s.Low, s.High = analysis.Wilson(k, len(s.Values), level)
		return s
	}
	ss := 0.0
	for _, v := range s.Values {
		ss += (v - s.Value) * (v - s.Value)
	}
	se := math.NaN()
	if n > 1 {
		se = math.Sqrt(ss/(n-1)) / math.Sqrt(n)
	}
	s.Low, s.High = analysis.CLTInterval(s.Value, se, level)
	return s
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

// localName is a local capsule's name: its base name without ".tar" or
// ".capsule".
func localName(ref string) string {
	base := filepath.Base(filepath.Clean(ref))
	return strings.TrimSuffix(strings.TrimSuffix(base, ".tar"), ".capsule")
}
