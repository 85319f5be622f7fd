package capsule_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
)

// cancellingRunner cancels the replay's context once its run is under
// way, and runs at a pace no run finishes in before.
type cancellingRunner struct{ cancel context.CancelFunc }

func (r cancellingRunner) Run(ctx context.Context, dir string, progress func(harness.Progress)) error {
	sim := simulate.Runner{Effects: simulate.DefaultEffects(), Pace: 10 * time.Minute}
	return sim.Run(ctx, dir, func(p harness.Progress) {
		progress(p)
		r.cancel()
	})
}

// TestReplayCancel: a replay whose context is done returns its error, before
// anything runs or from a rerun under way, and reports nothing.
func TestReplayCancel(t *testing.T) {
	c := sweptCapsule(t)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if rep, err := capsule.Replay(done, c, capsule.ReplayOptions{}); !errors.Is(err, context.Canceled) || rep != nil {
		t.Errorf("replay with a cancelled context: %v, %v", rep, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := capsule.Replay(ctx, c, capsule.ReplayOptions{Runner: cancellingRunner{cancel}, RunnerKind: "simulated"})
	if !errors.Is(err, context.Canceled) || rep != nil {
		t.Errorf("replay cancelled during its rerun: %+v, %v", rep, err)
	}
}
