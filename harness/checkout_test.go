package harness

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestCheckout(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	os.MkdirAll(filepath.Join(dir, "lm_eval"), 0o755)
	os.WriteFile(filepath.Join(dir, "lm_eval", "__init__.py"), []byte("x = 1\n"), 0o644)
	git("add", ".")
	git("commit", "-q", "-m", "init")
	head, _ := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()

	commit, dirty, err := Checkout(filepath.Join(dir, "lm_eval"))
	if err != nil || commit != string(head[:40]) || dirty {
		t.Fatalf("clean checkout: %s %v %v", commit, dirty, err)
	}
	os.WriteFile(filepath.Join(dir, "lm_eval", "__init__.py"), []byte("x = 2\n"), 0o644)
	if _, dirty, err := Checkout(filepath.Join(dir, "lm_eval")); err != nil || !dirty {
		t.Fatalf("modified checkout not dirty: %v %v", dirty, err)
	}
	if _, _, err := Checkout(t.TempDir()); !errors.Is(err, ErrNotCheckout) {
		t.Fatalf("plain directory: %v", err)
	}
}
