package analysis

import (
	"context"
	"fmt"
	"strings"

	"github.com/evalcapsule/evalcapsule/analysis/internal/sandbox"
	"github.com/evalcapsule/evalcapsule/harness"
)

// The failure classes of a code task's completion (humaneval, mbpp), read
// from what happened when it was executed in the sandbox. A document is a
// miss when its pass@k is below 1; its class is that of its first failing
// completion.
const (
	// SyntaxFailure: the program does not compile (SyntaxError,
	// IndentationError, TabError).
	SyntaxFailure FailureClass = "syntax-error"
	// AssertionFailure: it ran and a test's assert failed.
	AssertionFailure FailureClass = "assertion-failed"
	// ExceptionFailure: it raised another exception.
	ExceptionFailure FailureClass = "exception"
	// TimeoutFailure: it ran past the task's timeout (code_eval's 3 s).
	TimeoutFailure FailureClass = "timeout"
	// LimitFailure: a sandbox limit stopped it: memory (MemoryError),
	// file size, CPU time, or the sandbox was killed without a verdict.
	LimitFailure FailureClass = "killed-by-limit"
)

// CodeFailureClasses lists the classes of a code task's miss.
var CodeFailureClasses = []FailureClass{SyntaxFailure, AssertionFailure, ExceptionFailure, TimeoutFailure, LimitFailure}

// codeClass is the class of one completion that did not pass.
func codeClass(r sandbox.Result) FailureClass {
	switch r.Outcome {
	case sandbox.TimedOut:
		return TimeoutFailure
	case sandbox.Killed:
		return LimitFailure
	}
	switch r.Type {
	case "SyntaxError", "IndentationError", "TabError":
		return SyntaxFailure
	case "AssertionError":
		return AssertionFailure
	case "MemoryError":
		return LimitFailure
	}
	if strings.HasPrefix(r.Detail, "[Errno 27]") { // EFBIG: the file-size limit
		return LimitFailure
	}
	return ExceptionFailure
}

func verdictText(r sandbox.Result) string {
	switch {
	case r.Outcome == sandbox.Failed && r.Detail != "":
		return "failed: " + r.Type + ": " + r.Detail
	case r.Outcome == sandbox.Failed:
		return "failed: " + r.Type
	case r.Detail != "":
		return string(r.Outcome) + ": " + r.Detail
	}
	return string(r.Outcome)
}

// codeMisses executes a code task's completions and classifies the
// documents whose pass@k (the metric asked for) is below 1.
func codeMisses(sc *Scores, series *Series, ct *codeTask, metric string, opts FailureOptions) (int, []Failure, error) {
	if !opts.Code.Execute {
		return 0, nil, fmt.Errorf("%w: %s is a code task: its misses are classified by executing its completions (--execute-code runs them in the sandbox)", ErrNotRecomputable, series.Task)
	}
	ctx := opts.Code.Context
	if ctx == nil {
		ctx = context.Background()
	}
	cr, err := newCodeRun(ctx, opts.Code)
	if err != nil {
		return 0, nil, err
	}
	outcomes, err := cr.execute(series.File, ct)
	if err != nil {
		return 0, nil, err
	}
	r, err := series.File.Open()
	if err != nil {
		return 0, nil, err
	}
	defer r.Close()
	n := 0
	var misses []Failure
	for {
		s, err := r.Next()
		if err != nil {
			break
		}
		if s.Filter != "" && s.Filter != series.Filter {
			continue
		}
		n++
		lo := outcomes[s.Line]
		lr := ct.rescoreLine(s, []string{metric}, lo)
		pd, ok := findPerDoc(lr.values, metric)
		if !ok {
			why := lr.err
			if why == "" {
				why = lr.unsupported
			}
			return 0, nil, fmt.Errorf("%w: %s line %d: %s", ErrNotRecomputable, series.File.Path, s.Line, why)
		}
		if pd.value >= 1 {
			continue
		}
		f := Failure{DocID: s.DocID, Line: s.Line, Class: ExceptionFailure}
		f.Target, _ = s.Target.Text()
		for i, res := range lo.results {
			if res.Outcome == sandbox.Passed {
				continue
			}
			f.Class = codeClass(res)
			f.Extracted = map[string]string{"verdict": fmt.Sprintf("completion %d of %d: %s", i+1, len(lo.results), verdictText(res))}
			tb := opts.TailBytes
			if tb <= 0 {
				tb = 300
			}
			f.OutputTail = tail(lo.preds[i], tb)
			break
		}
		misses = append(misses, f)
	}
	return n, misses, nil
}

// codeTaskOf is the code task a run's task is, nil if it is not one.
func codeTaskOf(sc *Scores, task string) *codeTask {
	cfg := harness.Value{}
	vr := harness.VersionRange{Lo: harness.Releases[0], Hi: harness.Releases[len(harness.Releases)-1]}
	if r := sc.Run.Output.Results; r != nil {
		cfg = r.Configs[task]
		vr = harness.DetectVersion(r, true, false)
	}
	return detectCodeTask(task, cfg, vr)
}
