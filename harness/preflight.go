package harness

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Preflight checks, before any run of a sweep starts, that lm-eval is
// installed for the Python of every run the local runner would start (the
// interpreter the run's command names, or the one its lm_eval script's "#!"
// line names). A missing lm-eval fails once, naming how to install the
// version the runs pin, instead of failing every run in turn. Simulated
// runs need no lm-eval and are not checked. The installed version is
// compared with the pinned one by each run, where the installed commit is
// known.
func (l LocalRunner) Preflight(ctx context.Context, recs []*RunRecord) error {
	checked := map[string]bool{}
	for _, rec := range recs {
		if rec.Simulated || len(rec.Argv) == 0 {
			continue
		}
		py, err := lmEvalPython(rec.Argv)
		if err != nil {
			var ee *exec.Error
			if errors.As(err, &ee) {
				return fmt.Errorf("%w: %s not found on PATH: lm-eval is not installed (%s)", ErrRunner, rec.Argv[0], installHint(rec.Harness.Version))
			}
			continue // the run itself says what is wrong
		}
		if checked[py] {
			continue
		}
		checked[py] = true
		out, err := exec.CommandContext(ctx, py, "-c", lmEvalVersionScript).CombinedOutput()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			why := strings.TrimSpace(string(out))
			if why == "" {
				why = err.Error()
			}
			return fmt.Errorf("%w: lm-eval is not installed for %s (%s), and the runs pin lm-eval %s (%s)", ErrRunner, py, why, rec.Harness.Version, installHint(rec.Harness.Version))
		}
	}
	return nil
}

// installHint says how to install lm-eval version v in a virtual
// environment and point a study at it.
func installHint(v string) string {
	return fmt.Sprintf("a virtual environment for it: python3 -m venv ~/venvs/lm-eval-%s && ~/venvs/lm-eval-%s/bin/pip install lm-eval==%s, then harness: {python: ~/venvs/lm-eval-%s/bin/python} in the study",
		v, v, v, v)
}
