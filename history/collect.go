package history

import (
	"context"
	"errors"
)

// Collect brings the index up to date with the sources (Update) and loads
// their checkpoints. A row that does not decode (ErrIndex) empties the
// index and reads every capsule again, once; Updated.Rebuilt then says
// why.
func Collect(ctx context.Context, x *Index, sources []string, opts UpdateOptions) ([]*Checkpoint, *Updated, error) {
	u, err := Update(ctx, x, sources, opts)
	if err != nil {
		return nil, nil, err
	}
	cps, err := x.Load(ctx, u.Refs)
	if !errors.Is(err, ErrIndex) {
		return cps, u, err
	}
	reason := err.Error()
	if err := x.Reset(ctx); err != nil {
		return nil, nil, err
	}
	if u, err = Update(ctx, x, sources, opts); err != nil {
		return nil, nil, err
	}
	u.Rebuilt = reason
	cps, err = x.Load(ctx, u.Refs)
	return cps, u, err
}
