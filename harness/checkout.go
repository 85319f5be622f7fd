package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
)

// Checkout returns the commit and dirty flag of the git checkout holding
// path (a file or directory inside it).
func Checkout(path string) (commit string, dirty bool, err error) {
	repo, err := openRepo(path)
	if err != nil {
		return "", false, err
	}
	return repoState(path, repo)
}

func openRepo(path string) (*git.Repository, error) {
	// EnableDotGitCommonDir: a `git worktree add` checkout keeps its
	// objects in the main repository's .git.
	repo, err := git.PlainOpenWithOptions(path, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, ErrNotCheckout)
	}
	return repo, nil
}

func repoState(path string, repo *git.Repository) (commit string, dirty bool, err error) {
	head, err := repo.Head()
	if err != nil {
		return "", false, fmt.Errorf("%s: reading HEAD: %w", path, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return head.Hash().String(), false, nil // a bare repository has no changes
	}
	st, err := wt.Status()
	if err != nil {
		return head.Hash().String(), false, fmt.Errorf("%s: status: %w", path, err)
	}
	return head.Hash().String(), !st.IsClean(), nil
}

// lmEvalLocationScript prints the folder python imports lm_eval from
// (os.path.dirname(lm_eval.__file__)) without running the package: older
// releases import torch and transformers at import time.
const lmEvalLocationScript = `import importlib.util, os, sys
spec = importlib.util.find_spec("lm_eval")
if spec is None or not spec.origin:
    sys.exit("lm_eval is not installed")
print(os.path.dirname(spec.origin))`

// LMEvalCheckout finds where python imports lm_eval from and, when lm-eval
// itself runs from a git checkout of its sources (an editable install, or a
// run from the source tree), returns that checkout's commit and dirty flag.
//
// The package's folder decides, not the working directory: it must be the
// lm_eval/ folder at the top of a git work tree, as in lm-eval's own
// repository, and must not lie in site-packages or dist-packages. A copy
// installed there (say, into a virtual environment inside the user's own
// repository, or inside an lm-eval checkout) is not what that work tree's
// commit describes. Otherwise the error matches ErrNotCheckout and says why.
func LMEvalCheckout(ctx context.Context, python string) (commit string, dirty bool, err error) {
	out, stderr, err := output(ctx, nil, python, "-c", lmEvalLocationScript)
	if err != nil {
		if why := lastLine(stderr); why != "" {
			return "", false, fmt.Errorf("locating lm_eval with %s: %w: %s", python, err, why)
		}
		return "", false, fmt.Errorf("locating lm_eval with %s: %w", python, err)
	}
	// The last line: an import may print warnings first.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	dir := strings.TrimSpace(lines[len(lines)-1])
	if dir == "" {
		return "", false, fmt.Errorf("locating lm_eval with %s: no path", python)
	}
	return lmEvalSourceCheckout(filepath.Clean(dir))
}

// lmEvalSourceCheckout is LMEvalCheckout for the package folder pkg, with
// symbolic links resolved first.
func lmEvalSourceCheckout(pkg string) (commit string, dirty bool, err error) {
	real, err := filepath.EvalSymlinks(pkg)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w: %v", pkg, ErrNotCheckout, err)
	}
	if real, err = filepath.Abs(real); err != nil {
		return "", false, fmt.Errorf("%s: %w: %v", pkg, ErrNotCheckout, err)
	}
	for _, part := range strings.Split(real, string(filepath.Separator)) {
		if part == "site-packages" || part == "dist-packages" {
			return "", false, fmt.Errorf("%s: an installed copy (in %s), %w", pkg, part, ErrNotCheckout)
		}
	}
	repo, err := openRepo(real)
	if err != nil {
		return "", false, err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", false, fmt.Errorf("%s: %w: %v", pkg, ErrNotCheckout, err)
	}
	top, err := filepath.EvalSymlinks(wt.Filesystem.Root())
	if err != nil {
		return "", false, fmt.Errorf("%s: %w: %v", pkg, ErrNotCheckout, err)
	}
	if filepath.Join(top, "lm_eval") != real || filepath.Base(real) != "lm_eval" {
		return "", false, fmt.Errorf("%s: inside the git work tree %s, which is not lm-eval's (its lm_eval/ is not at the top): %w", pkg, top, ErrNotCheckout)
	}
	if _, err := os.Stat(filepath.Join(real, "__init__.py")); err != nil {
		return "", false, fmt.Errorf("%s: no __init__.py: %w", pkg, ErrNotCheckout)
	}
	return repoState(pkg, repo)
}
