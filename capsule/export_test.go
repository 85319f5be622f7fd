package capsule

import (
	"context"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/study"
)

// PackTables is Pack storing the tables given (nil: none) instead of
// computing them, for tests of the format that need tables of a given
// shape, or none.
func PackTables(ctx context.Context, s *study.Study, out string, opts PackOptions, att *analysis.Attribution, rep *analysis.RescoreReport) (PackResult, error) {
	return pack(ctx, s, out, opts, &fixedTables{attribution: att, rescore: rep})
}
