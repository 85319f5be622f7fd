package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
)

// Checkout returns the commit and dirty flag of the git checkout holding
// path (a file or directory inside it).
func Checkout(path string) (commit string, dirty bool, err error) {
	repo, err := git.PlainOpenWithOptions(path, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", path, ErrNotCheckout)
	}
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

// LMEvalCheckout finds where python imports lm_eval from and, when that is a
// git checkout (an editable install or a run from the source tree), returns
// its commit and dirty flag.
func LMEvalCheckout(ctx context.Context, python string) (commit string, dirty bool, err error) {
	out, stderr, err := output(ctx, nil, python, "-c", "import lm_eval, os; print(os.path.dirname(lm_eval.__file__))")
	if err != nil {
		if why := lastLine(stderr); why != "" {
			return "", false, fmt.Errorf("locating lm_eval with %s: %w: %s", python, err, why)
		}
		return "", false, fmt.Errorf("locating lm_eval with %s: %w", python, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", false, fmt.Errorf("locating lm_eval with %s: no path", python)
	}
	return Checkout(filepath.Clean(dir))
}
