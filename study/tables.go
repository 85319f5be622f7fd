package study

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
)

// Tables are the numbers a capsule freezes and a replay re-derives: the
// re-scoring of every run and the attribution of every claim.
type Tables struct {
	Rescore     *analysis.RescoreReport
	Attribution *analysis.Attribution
}

// ComputeTables re-scores every planned run of the study from its samples
// and attributes its claims. Paths in the re-scoring are relative to the
// study directory, so that the tables of a study are the same wherever it
// lies (the packer's disk, a reviewer's).
func ComputeTables(ctx context.Context, s *Study, opts analysis.AttributionOptions) (*Tables, error) {
	var outs []*harness.Output
	for _, pr := range s.Plan() {
		run, err := harness.Read(s.RunDir(pr))
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", pr.Name, err)
		}
		outs = append(outs, run.Output)
	}
	rep, err := analysis.Rescore(ctx, outs, analysis.RescoreOptions{})
	if err != nil {
		return nil, err
	}
	for _, r := range rep.Runs {
		if rel, err := filepath.Rel(s.Dir, r.Path); err == nil {
			r.Path = filepath.ToSlash(rel)
		}
	}
	att, err := Attribute(ctx, s, opts)
	if err != nil {
		return nil, err
	}
	return &Tables{Rescore: rep, Attribution: att}, nil
}
