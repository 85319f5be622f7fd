package harness

import (
	"slices"
	"testing"
)

// The recorded, study-relative include_path is pointed at the run's own
// frozen copy when lm-eval runs; a command line without one is left alone.
func TestWithFlag(t *testing.T) {
	argv := []string{"lm_eval", "--tasks", "x", "--include_path", "runs/v/include", "--output_path", "runs/v/output"}
	got := withFlag(argv, "--include_path", "/work/run/include")
	if !slices.Equal(got, []string{"lm_eval", "--tasks", "x", "--include_path", "/work/run/include", "--output_path", "runs/v/output"}) || argv[4] != "runs/v/include" {
		t.Errorf("withFlag: %q (argv now %q)", got, argv)
	}
	if got := withFlag([]string{"lm_eval", "--include_path=runs/v/include"}, "--include_path", "/r/include"); got[1] != "--include_path=/r/include" {
		t.Errorf("withFlag of --include_path=…: %q", got)
	}
	if got := withFlag([]string{"lm_eval", "--tasks", "x"}, "--include_path", "/r/include"); len(got) != 3 {
		t.Errorf("withFlag added a flag: %q", got)
	}
}
