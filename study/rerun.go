package study

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
)

// RerunComparison compares one re-executed run with its packed original.
type RerunComparison struct {
	Run    string      `json:"run"`
	Status string      `json:"status"` // of the rerun
	Image  string      `json:"image,omitempty"`
	Tasks  []RerunTask `json:"tasks"`
	Error  string      `json:"error,omitempty"`
	OK     bool        `json:"ok"`
}

// RerunTask compares one task, metric and filter of a rerun with the
// packed run: the documents' generations or log-likelihoods, and the score
// with the paired CI of the difference.
type RerunTask struct {
	Task   string  `json:"task"`
	Metric string  `json:"metric"`
	Filter string  `json:"filter"`
	N      int     `json:"n"`
	Packed float64 `json:"packed"`
	Rerun  float64 `json:"rerun"`
	Delta  float64 `json:"delta"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// WithinCI is true when the paired CI of the difference holds 0.
	WithinCI bool `json:"within_ci"`
	// Generations counts documents whose generated text is identical, and
	// differing ones; MaxLLDiff is the largest log-likelihood difference,
	// LLWithinTolerance whether it is under the tolerance.
	GenerationsIdentical int     `json:"generations_identical"`
	GenerationsDiffer    int     `json:"generations_differ"`
	MaxLLDiff            float64 `json:"max_ll_diff"`
	LLWithinTolerance    bool    `json:"ll_within_tolerance"`
}

// RerunOptions configures Rerun. Runner is required.
type RerunOptions struct {
	Runner     harness.Runner
	RunnerKind string
	// Command is how the runner starts lm-eval (default DefaultCommand,
	// lm_eval on the PATH of the machine or image that runs it). The
	// command a packed record holds is never run: each run's command line
	// is rebuilt from the study.
	Command []string
	// Confirm, when set, is shown every command line before anything runs;
	// an error from it stops the rerun before it starts and is returned.
	Confirm func([]RerunCommand) error
	// Tolerance for log-likelihoods (default 1e-4: GPU kernels and batch
	// sizes move them in the last digits).
	Tolerance float64
	// Seed of the paired bootstraps.
	Seed   uint64
	Events func(RunEvent)
}

// RerunCommand is one run a rerun executes: the run, and the lm-eval
// command line rebuilt from the study's settings for the pinned version.
type RerunCommand struct {
	Run  string
	Argv []string
}

// Rerun re-executes every run of an unpacked capsule into workspace (a new
// directory: workspace/runs/<name>) and compares each with the packed run.
// Each run's command line is rebuilt from study.yaml's settings for the
// pinned lm-eval, never taken from the packed record: a record that does
// not match what the study plans (CheckRecord) stops the rerun before
// anything runs, with an error wrapping ErrMismatch.
func Rerun(ctx context.Context, s *Study, workspace string, opts RerunOptions) ([]RerunComparison, error) {
	if opts.Runner == nil {
		return nil, fmt.Errorf("no runner")
	}
	tol := opts.Tolerance
	if tol == 0 {
		tol = 1e-4
	}
	type rerun struct {
		pr   PlannedRun
		orig *harness.RunRecord
		dir  string
		argv []string
	}
	var plan []rerun
	var cmds []RerunCommand
	for _, pr := range s.Plan() {
		orig, err := harness.ReadRecord(s.RunDir(pr))
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", pr.Name, err)
		}
		if diffs := s.CheckRecord(pr, orig); len(diffs) > 0 {
			return nil, fmt.Errorf("%w: run %s: %s", ErrMismatch, pr.Name, strings.Join(diffs, "; "))
		}
		dir := filepath.Join(workspace, "runs", pr.Name)
		argv, err := s.Argv(pr, opts.Command, dir+"/"+harness.OutputDir)
		if err != nil {
			return nil, err
		}
		plan = append(plan, rerun{pr, orig, dir, argv})
		cmds = append(cmds, RerunCommand{Run: pr.Name, Argv: argv})
	}
	if opts.Confirm != nil {
		if err := opts.Confirm(cmds); err != nil {
			return nil, err
		}
	}
	var out []RerunComparison
	for _, r := range plan {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		pr, orig, dir := r.pr, r.orig, r.dir
		packedDir := s.RunDir(pr)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return out, err
		}
		if pr.Spec.IncludePath != "" {
			// The tasks the packed run used, frozen beside its output.
			if err := freezeIncludes(filepath.Join(packedDir, harness.IncludeDir), orig.Includes, dir); err != nil {
				return out, fmt.Errorf("run %s: its frozen include_path: %w", pr.Name, err)
			}
		}
		rec := &harness.RunRecord{Name: pr.Name, Label: pr.Label, Status: harness.StatusPlanned, Spec: pr.Spec, Argv: r.argv, Includes: orig.Includes,
			Harness: harness.HarnessInfo{Version: s.Harness.Version, Commit: s.Harness.Commit}, Model: orig.Model, Seeds: pr.Spec.Seed,
			Runner: harness.RunnerInfo{Kind: opts.RunnerKind}, Simulated: orig.Simulated}
		if err := harness.WriteRecord(dir, rec); err != nil {
			return out, err
		}
		if opts.Events != nil {
			opts.Events(RunEvent{Run: pr, Status: harness.StatusRunning})
		}
		rc := RerunComparison{Run: pr.Name}
		if orig.Image != nil {
			rc.Image = orig.Image.Ref
		}
		runErr := opts.Runner.Run(ctx, dir, func(p harness.Progress) {
			if opts.Events != nil {
				opts.Events(RunEvent{Run: pr, Status: harness.StatusRunning, Progress: p})
			}
		})
		after, err := harness.ReadRecord(dir)
		if err == nil {
			rc.Status = after.Status
		}
		if runErr != nil || rc.Status != harness.StatusDone {
			rc.Error = fmt.Sprint(runErr)
			if after != nil && after.Error != "" {
				rc.Error = after.Error
			}
			out = append(out, rc)
			continue
		}
		tasks, err := compareRuns(ctx, packedDir, dir, tol, opts.Seed)
		if err != nil {
			rc.Error = err.Error()
			out = append(out, rc)
			continue
		}
		rc.Tasks = tasks
		rc.OK = len(tasks) > 0
		for _, t := range tasks {
			rc.OK = rc.OK && t.WithinCI && t.LLWithinTolerance
		}
		if opts.Events != nil {
			opts.Events(RunEvent{Run: pr, Status: rc.Status})
		}
		out = append(out, rc)
	}
	return out, nil
}

// compareRuns pairs the packed and the re-executed run document by document.
func compareRuns(ctx context.Context, packedDir, rerunDir string, tol float64, seed uint64) ([]RerunTask, error) {
	load := func(dir string) (*analysis.Scores, error) {
		run, err := harness.Read(dir)
		if err != nil {
			return nil, err
		}
		return analysis.Load(ctx, run, analysis.RescoreOptions{})
	}
	a, err := load(packedDir)
	if err != nil {
		return nil, err
	}
	b, err := load(rerunDir)
	if err != nil {
		return nil, err
	}
	cs, err := analysis.Compare(a, b, analysis.CompareOptions{Seed: seed, PromptDiffs: -1})
	if err != nil {
		return nil, err
	}
	var out []RerunTask
	for _, c := range cs.Comparisons {
		sa, _ := a.Find(c.Task, c.Metric, c.Filter)
		sb, _ := b.Find(c.Task, c.Metric, c.Filter)
		t := RerunTask{Task: c.Task, Metric: c.Metric, Filter: c.Filter, N: c.N, Packed: c.A, Rerun: c.B, Delta: c.Delta, CILow: c.CILow, CIHigh: c.CIHigh}
		t.WithinCI = (c.CILow <= 0 && 0 <= c.CIHigh) || c.Delta == 0
		same, differ, maxLL, err := compareResponses(sa.File, sb.File, c.Filter)
		if err != nil {
			return nil, err
		}
		t.GenerationsIdentical, t.GenerationsDiffer, t.MaxLLDiff = same, differ, maxLL
		t.LLWithinTolerance = maxLL <= tol
		out = append(out, t)
	}
	return out, nil
}

// compareResponses compares the raw responses of two samples files under
// one filter, document by document: generated texts for equality, log-
// likelihoods by their largest difference.
func compareResponses(fa, fb harness.SampleFile, filter string) (same, differ int, maxLL float64, err error) {
	read := func(f harness.SampleFile) (map[int][]harness.Value, error) {
		r, err := f.Open()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		out := map[int][]harness.Value{}
		for {
			s, err := r.Next()
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			if s.Filter != "" && s.Filter != filter {
				continue
			}
			if _, dup := out[s.DocID]; !dup && s.Resps.Kind == harness.List {
				out[s.DocID] = s.Resps.List
			}
		}
	}
	a, err := read(fa)
	if err != nil {
		return 0, 0, 0, err
	}
	b, err := read(fb)
	if err != nil {
		return 0, 0, 0, err
	}
	for id, ra := range a {
		rb, ok := b[id]
		if !ok || len(ra) != len(rb) {
			differ++
			continue
		}
		identical := true
		for i := range ra {
			la, lb := leaves(ra[i]), leaves(rb[i])
			if len(la) != len(lb) {
				identical = false
				continue
			}
			for j := range la {
				x, errX := parseLL(la[j])
				y, errY := parseLL(lb[j])
				if errX == nil && errY == nil {
					maxLL = math.Max(maxLL, math.Abs(x-y))
					if x != y {
						identical = false
					}
					continue
				}
				if la[j] != lb[j] {
					identical = false
				}
			}
		}
		if identical {
			same++
		} else {
			differ++
		}
	}
	return same, differ, maxLL, nil
}

// leaves flattens a response to its text leaves.
func leaves(v harness.Value) []string {
	if v.Kind == harness.List {
		var out []string
		for _, e := range v.List {
			out = append(out, leaves(e)...)
		}
		return out
	}
	t, _ := v.Text()
	return []string{t}
}

// parseLL reads a log-likelihood leaf (a float's repr); generated text and
// booleans are not numbers.
func parseLL(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
