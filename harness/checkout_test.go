package harness

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// gitRepo makes dir a git repository with files committed, and returns its
// HEAD.
func gitRepo(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(head))
}

// LMEvalCheckout records a commit only when lm-eval itself runs from a
// checkout of its sources, whatever git work tree its folder lies in.
func TestLMEvalCheckoutWhereLMEvalLives(t *testing.T) {
	tmp := t.TempDir()
	// The user's own project, with a virtual environment inside it into
	// which lm-eval was pip-installed, and a vendored copy.
	user := filepath.Join(tmp, "project")
	gitRepo(t, user, map[string]string{"train.py": "print(1)\n", ".gitignore": ".venv/\n"})
	venvPkg := filepath.Join(user, ".venv", "lib", "python3.11", "site-packages", "lm_eval")
	vendored := filepath.Join(user, "third_party", "lm_eval")
	// lm-eval's own repository, and a plain install into a virtual
	// environment inside it.
	harness := filepath.Join(tmp, "lm-evaluation-harness")
	head := gitRepo(t, harness, map[string]string{"pyproject.toml": "[project]\nname = \"lm_eval\"\n", "lm_eval/__init__.py": "", ".gitignore": ".venv/\n"})
	inHarnessVenv := filepath.Join(harness, ".venv", "lib", "python3.12", "dist-packages", "lm_eval")
	// A site-packages entry that links to the checkout (flit install --symlink).
	linked := filepath.Join(tmp, "venv2", "lib", "python3.11", "site-packages", "lm_eval")
	for _, d := range []string{venvPkg, vendored, inHarnessVenv} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "__init__.py"), nil, 0o644)
	}
	os.MkdirAll(filepath.Dir(linked), 0o755)
	if err := os.Symlink(filepath.Join(harness, "lm_eval"), linked); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, pkg, commit, why string
	}{
		{"pip install into a venv inside the user's repository", venvPkg, "", "site-packages"},
		{"a copy inside the user's repository", vendored, "", "not lm-eval's"},
		{"pip install into a venv inside lm-eval's checkout", inHarnessVenv, "", "dist-packages"},
		{"lm-eval's checkout", filepath.Join(harness, "lm_eval"), head, ""},
		{"a link to lm-eval's checkout", linked, head, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			py := fakePython{version: "Python 3.11.9", lmEval: "0.4.9.1", lmEvalDir: c.pkg}.write(t, filepath.Join(t.TempDir(), "python3"))
			commit, dirty, err := LMEvalCheckout(context.Background(), py)
			if c.commit == "" {
				if !errors.Is(err, ErrNotCheckout) || !strings.Contains(err.Error(), c.why) {
					t.Fatalf("got commit %q, err %v; want ErrNotCheckout saying %q", commit, err, c.why)
				}
				return
			}
			if err != nil || commit != c.commit || dirty {
				t.Fatalf("got %q %v %v, want %s", commit, dirty, err, c.commit)
			}
		})
	}
	py := fakePython{version: "Python 3.11.9"}.write(t, filepath.Join(tmp, "bin", "python3"))
	if _, _, err := LMEvalCheckout(context.Background(), py); err == nil || errors.Is(err, ErrNotCheckout) || !strings.Contains(err.Error(), "lm_eval is not installed") {
		t.Errorf("no lm_eval: %v", err)
	}
}
