package history_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/history"
)

func openIndex(t *testing.T, path string) *history.Index {
	t.Helper()
	x, err := history.OpenIndex(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// The index gives back what was read from the capsule, per-document values
// included, and what it holds matches the capsule's own scores.
func TestIndex_RoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ref := packCheckpoint(t, dir, ckpt{step: 100, gsm8k: 0.4, mmlu: 0.5})
	c, err := capsule.OpenRef(ctx, ref, capsule.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want, err := history.ReadCapsule(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if want.Digest != c.Descriptor.Digest.String() || want.Step != 100 || want.Model != "simulated/line-step-100" {
		t.Fatalf("read %s step %d model %s, want the manifest digest %s, step 100", want.Digest, want.Step, want.Model, c.Descriptor.Digest)
	}
	// Every score lm-eval reported in the capsule is what the index keeps.
	reported := 0
	for _, run := range c.Config.Rescore.Runs {
		for _, r := range run.Checks {
			for _, s := range want.Scores {
				if s.Task != r.Task || s.Metric != r.Metric || s.Filter != r.Filter || !r.Reported.Set {
					continue
				}
				reported++
				if math.Abs(s.Value-r.Reported.Value) > 1e-12 {
					t.Errorf("%s %s: index %v, lm-eval reported %v", s.Task, s.Key(), s.Value, r.Reported.Value)
				}
				if !(s.Low <= s.Value && s.Value <= s.High) {
					t.Errorf("%s %s: CI [%v, %v] does not hold %v", s.Task, s.Key(), s.Low, s.High, s.Value)
				}
			}
		}
	}
	if reported == 0 {
		t.Fatal("no score of the index matches one lm-eval reported")
	}

	x := openIndex(t, filepath.Join(t.TempDir(), "history.db"))
	if err := x.Put(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := x.Load(ctx, []string{ref})
	if err != nil {
		t.Fatal(err)
	}
	g := got[0]
	if g.Digest != want.Digest || g.Name != want.Name || !g.Created.Equal(want.Created) || g.Model != want.Model ||
		g.Identity.HarnessVersion != want.Identity.HarnessVersion || len(g.Identity.TaskHashes) != len(want.Identity.TaskHashes) {
		t.Fatalf("loaded %+v\nwant %+v", g, want)
	}
	if len(g.Scores) != len(want.Scores) {
		t.Fatalf("%d scores loaded, %d stored", len(g.Scores), len(want.Scores))
	}
	for i, s := range want.Scores {
		l := g.Scores[i]
		if l.Task != s.Task || l.Key() != s.Key() || l.Value != s.Value || l.Higher != s.Higher || len(l.Docs) != len(s.Docs) {
			t.Fatalf("score %d: loaded %+v, stored %+v", i, l, s)
		}
		for j := range s.Docs {
			if l.Docs[j] != s.Docs[j] || l.Values[j] != s.Values[j] {
				t.Fatalf("%s %s doc %d: loaded %s=%v, stored %s=%v", s.Task, s.Key(), j, l.Docs[j], l.Values[j], s.Docs[j], s.Values[j])
			}
		}
	}
}

// An index of another schema version, or a file that is not a database,
// is rebuilt and says why; one that is fine is kept.
func TestIndex_Rebuild(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ref := packCheckpoint(t, dir, ckpt{step: 1, gsm8k: 0.4, mmlu: 0.5})
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"kept", func(*testing.T, string) {}},
		{"schema version", func(t *testing.T, path string) {
			x := openIndex(t, path)
			if _, err := history.ExecForTest(x, "PRAGMA user_version = 99"); err != nil {
				t.Fatal(err)
			}
			x.Close()
		}},
		{"not a database", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("this is not an SQLite database, it is garbage of some length.......\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"damaged pages", func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for i := 100; i < len(b); i += 7 {
				b[i] ^= 0x5a
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.db")
			x := openIndex(t, path)
			u, err := history.Update(ctx, x, []string{ref}, history.UpdateOptions{})
			if err != nil || u.Read != 1 {
				t.Fatalf("first update: %+v, %v", u, err)
			}
			x.Close()
			tc.damage(t, path)
			x = openIndex(t, path)
			if (x.Rebuilt == "") != (tc.name == "kept") {
				t.Fatalf("Rebuilt = %q", x.Rebuilt)
			}
			u, err = history.Update(ctx, x, []string{ref}, history.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantRead := 1
			if tc.name == "kept" {
				wantRead = 0
			}
			if u.Read != wantRead || u.Read+u.Skipped != 1 {
				t.Fatalf("update after %s: read %d, skipped %d; want read %d", tc.name, u.Read, u.Skipped, wantRead)
			}
			if _, err := x.Load(ctx, u.Refs); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A row whose per-document values do not decode is ErrIndex, never values.
func TestIndex_CorruptValues(t *testing.T) {
	ctx := context.Background()
	ref := packCheckpoint(t, t.TempDir(), ckpt{step: 1, gsm8k: 0.4, mmlu: 0.5})
	x := openIndex(t, filepath.Join(t.TempDir(), "history.db"))
	if _, err := history.Update(ctx, x, []string{ref}, history.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, blob := range []string{"x'ff'", "substr(docs, 1, length(docs) - 3)", "docs || x'00'"} {
		if _, err := history.ExecForTest(x, "UPDATE scores SET docs = "+blob+" WHERE rowid = (SELECT min(rowid) FROM scores)"); err != nil {
			t.Fatal(err)
		}
		_, err := x.Load(ctx, []string{ref})
		if !errors.Is(err, history.ErrIndex) {
			t.Fatalf("docs = %s: %v, want ErrIndex", blob, err)
		}
		x.Reset(ctx)
		if _, err := history.Update(ctx, x, []string{ref}, history.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// A second update reads only the capsules it has not seen; a folder that
// names a capsule already indexed is linked, not read.
func TestUpdate_Incremental(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := packCheckpoint(t, dir, ckpt{step: 1, gsm8k: 0.4, mmlu: 0.5})
	b := packCheckpoint(t, dir, ckpt{step: 2, gsm8k: 0.45, mmlu: 0.5})
	x := openIndex(t, filepath.Join(t.TempDir(), "history.db"))
	u, err := history.Update(ctx, x, []string{a}, history.UpdateOptions{})
	if err != nil || u.Read != 1 || u.Skipped != 0 {
		t.Fatalf("first: %+v %v", u, err)
	}
	var opened []string
	u, err = history.Update(ctx, x, []string{a, b}, history.UpdateOptions{Progress: func(ref string, read bool) {
		if read {
			opened = append(opened, ref)
		}
	}})
	if err != nil || u.Read != 1 || u.Skipped != 1 || len(opened) != 1 || opened[0] != b {
		t.Fatalf("second: %+v (read %v) %v", u, opened, err)
	}
	copyDir(t, a, filepath.Join(dir, "again"))
	u, err = history.Update(ctx, x, []string{filepath.Join(dir, "again")}, history.UpdateOptions{})
	if err != nil || u.Read != 0 || u.Skipped != 1 {
		t.Fatalf("copy of a: %+v %v", u, err)
	}
	got, err := x.Load(ctx, []string{filepath.Join(dir, "again")})
	if err != nil || got[0].Name != "again" {
		t.Fatalf("loaded %v, %v", got, err)
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}
