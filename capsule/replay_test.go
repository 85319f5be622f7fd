package capsule_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalcapsule/evalcapsule/capsule"
)

// Replay of a packed study re-derives every number identically, keeps
// what it unpacked in a new workdir, and refuses a workdir that holds
// something.
func TestReplay(t *testing.T) {
	ctx := context.Background()
	_, layout := packedLayout(t)
	c, err := capsule.Open(ctx, layout, capsule.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	work := filepath.Join(t.TempDir(), "new", "work")
	rep, err := capsule.Replay(ctx, c, capsule.ReplayOptions{Workdir: work})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Compared == 0 || len(rep.Diffs) != 0 || rep.Level != "rescore" || rep.Capsule != c.Descriptor.Digest.String() {
		t.Errorf("replay: ok %v, %d compared, %d diffs, level %s, capsule %s", rep.OK, rep.Compared, len(rep.Diffs), rep.Level, rep.Capsule)
	}
	if rep.Tables == nil || len(rep.Tables.Attribution.Claims) != len(c.Config.Attribution.Claims) {
		t.Errorf("replayed tables: %+v", rep.Tables)
	}
	if _, err := os.Stat(filepath.Join(work, "study", "study.yaml")); err != nil {
		t.Errorf("the unpacked study is not kept: %v", err)
	}
	if _, err := capsule.Replay(ctx, c, capsule.ReplayOptions{Workdir: work}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a workdir that holds something: %v", err)
	}
}

// A replay given no workdir works in a temporary directory ("capsule-replay-N")
// that it removes; one a killed replay left (no one holding it) goes at the
// next replay.
func TestReplayRemovesLeftovers(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	stale := filepath.Join(tmp, "capsule-replay-1414213562")
	if err := os.MkdirAll(filepath.Join(stale, "study", "runs"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, layout := packedLayout(t)
	c := mustOpen(t, layout, capsule.OpenOptions{})
	defer c.Close()
	if _, err := capsule.Replay(ctx, c, capsule.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in the temporary directory: %v", entries)
	}
}
