package analysis

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/evalcapsule/evalcapsule/analysis/internal/sandbox"
	"github.com/evalcapsule/evalcapsule/harness"
)

// ErrNoSandbox means code tasks were to be executed but bubblewrap is
// missing or cannot start a sandbox here; nothing runs unsandboxed.
var ErrNoSandbox = sandbox.ErrNoSandbox

// SandboxInstall is how to install the sandbox on Debian.
const SandboxInstall = sandbox.Install

// CodeOptions says whether and how Rescore executes the logged completions
// of code tasks (humaneval, mbpp and their variants). The zero value does
// not execute them: their per-doc pass@k values are then re-aggregated.
type CodeOptions struct {
	// Execute runs every completion against the task's tests in the
	// bubblewrap sandbox.
	Execute bool
	// Python is the interpreter inside the sandbox; "" means
	// /usr/bin/python3.
	Python string
	// Workers is how many programs run at once; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called after each program.
	Progress func(done, total int)
	// Context ends the programs early where the caller takes none
	// (Failures); nil means context.Background. Rescore uses its own.
	Context context.Context
}

// CodeTasks names the tasks of an output whose logged completions are
// programs (humaneval, mbpp and their variants), in samples order.
func CodeTasks(o *harness.Output) []string {
	var out []string
	st := newRunState(o)
	for _, f := range o.Samples {
		if st.codeTasks[f.Task] != nil {
			out = append(out, f.Task)
		}
	}
	return out
}

// codeStyle is how a task builds its predictions from the responses.
type codeStyle int

const (
	humanevalPrompt   codeStyle = iota // prompt + response (build_predictions)
	humanevalInstruct                  // prompt + response up to ``` (build_predictions_instruct)
	mbppPlain                          // the response (take_first)
	mbppExtract                        // the first ``` block (mbpp utils.build_predictions)
)

// codeTask is what rescoring needs of a code task's configuration.
type codeTask struct {
	style codeStyle
	// lastFence: build_predictions_instruct cut at the last ``` before
	// v0.4.9.1, at the first since.
	lastFence bool
	ks        []int  // the k of pass@k, in config order
	mbppName  string // "pass_at_1" for mbpp's metric
}

// detectCodeTask recognises lm-eval's code tasks from their configuration
// (their filter and metric), else, without one, by name.
func detectCodeTask(task string, cfg harness.Value, vr harness.VersionRange) *codeTask {
	filter := ""
	if fl, ok := cfg.Get("filter_list"); ok && fl.Kind == harness.List && len(fl.List) > 0 {
		if n, ok := fl.List[0].Get("name"); ok {
			filter, _ = n.Text()
		}
	}
	ct := &codeTask{lastFence: vr.Hi.Less(harness.Version{0, 4, 9, 1})}
	instruct := strings.Contains(task, "instruct")
	if gp, ok := cfg.Get("gen_prefix"); ok && gp.Kind == harness.String && strings.Contains(gp.Str, "```python") {
		instruct = true
	}
	if ml, ok := cfg.Get("metric_list"); ok && ml.Kind == harness.List {
		for _, m := range ml.List {
			name, _ := m.Get("metric")
			n := name.String()
			if name.Kind == harness.String {
				n = name.Str
			}
			if strings.Contains(n, "pass_at_1") && !strings.Contains(n, "pass_at_k") {
				ct.mbppName = "pass_at_1"
				ct.ks = []int{1}
			}
			if k, ok := m.Get("k"); ok {
				switch k.Kind {
				case harness.Number:
					ct.ks = append(ct.ks, int(k.Num))
				case harness.List:
					for _, e := range k.List {
						if e.Kind == harness.Number && e.IsInt {
							ct.ks = append(ct.ks, int(e.Num))
						}
					}
				}
			}
		}
	}
	switch {
	case filter == "create_test" && instruct:
		ct.style = humanevalInstruct
	case filter == "create_test":
		ct.style = humanevalPrompt
	case filter == "extract_code":
		ct.style = mbppExtract
	case ct.mbppName != "":
		ct.style = mbppPlain
	case cfg.Kind != harness.Object && strings.HasPrefix(task, "humaneval"):
		ct.style, ct.ks = humanevalPrompt, []int{1}
		if instruct {
			ct.style = humanevalInstruct
		}
	case cfg.Kind != harness.Object && strings.HasPrefix(task, "mbpp"):
		ct.style, ct.ks, ct.mbppName = mbppPlain, []int{1}, "pass_at_1"
		if instruct {
			ct.style = mbppExtract
		}
	default:
		return nil
	}
	if len(ct.ks) == 0 {
		return nil
	}
	return ct
}

var codeBlockRE = regexp.MustCompile("(?s)```(?:\\w+)?\n?(.*?)\n?```")

// extractCodeBlock is mbpp's extract_code_blocks: the first ``` block of
// "```" + text, else of the text with "```python" made "```", else "".
func extractCodeBlock(text string) string {
	if m := codeBlockRE.FindStringSubmatch("```" + text); m != nil {
		return m[1]
	}
	if m := codeBlockRE.FindStringSubmatch(strings.ReplaceAll(text, "```python", "```")); m != nil {
		return m[1]
	}
	return ""
}

// predictions are the programs' candidates of one line, as the task's
// filter builds them, and the test appended to each.
func (ct *codeTask) predictions(s *harness.Sample) (preds []string, test string, err error) {
	if s.Resps.Kind != harness.List || len(s.Resps.List) != 1 || s.Resps.List[0].Kind != harness.List {
		return nil, "", fmt.Errorf("resps is not one list of completions")
	}
	var prompt string
	if ct.style == humanevalPrompt || ct.style == humanevalInstruct {
		p, ok, err := s.DocField("prompt")
		if err != nil || !ok {
			return nil, "", fmt.Errorf("doc has no prompt")
		}
		prompt, _ = p.Text()
	}
	test, ok := s.Target.Text()
	if !ok || s.Target.Kind != harness.String {
		return nil, "", fmt.Errorf("target %s is not the test program", s.Target)
	}
	for _, r := range s.Resps.List[0].List {
		t, _ := r.Text()
		switch ct.style {
		case humanevalPrompt:
			preds = append(preds, prompt+t)
		case humanevalInstruct:
			i := strings.Index(t, "```")
			if ct.lastFence {
				i = strings.LastIndex(t, "```")
			}
			if i >= 0 {
				t = t[:i]
			}
			preds = append(preds, prompt+t)
		case mbppPlain:
			preds = append(preds, t)
		case mbppExtract:
			preds = append(preds, extractCodeBlock(t))
		}
		if ct.style == mbppPlain || ct.style == mbppExtract {
			break // take_first: one prediction per doc
		}
	}
	return preds, test, nil
}

// codeProgram is code_eval's check program: candidate, newline, test.
func codeProgram(pred, test string) string { return pred + "\n" + test }

// PassAtK is the unbiased estimator of Chen et al. (2021) as HF evaluate's
// code_eval computes it: 1.0 when n-c < k, else 1 - prod(1 - k/i) over
// i = n-c+1..n, a left-to-right product of float64s.
func PassAtK(n, c, k int) float64 {
	if n-c < k {
		return 1.0
	}
	prod := 1.0
	for i := n - c + 1; i <= n; i++ {
		prod *= 1.0 - float64(k)/float64(i)
	}
	return 1.0 - prod
}

// codeRun is one execution pass over the code tasks of a Rescore call.
type codeRun struct {
	ctx  context.Context
	sb   *sandbox.Sandbox
	opts CodeOptions
	// slots caps the sandboxes running at once over every samples file
	// read in parallel.
	slots chan struct{}
	mu    sync.Mutex
	done  int
}

func newCodeRun(ctx context.Context, opts CodeOptions) (*codeRun, error) {
	sb, err := sandbox.New(ctx, sandbox.Options{Python: opts.Python})
	if err != nil {
		return nil, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &codeRun{ctx: ctx, sb: sb, opts: opts, slots: make(chan struct{}, workers)}, nil
}

// lineOutcomes are the verdicts on one line's completions.
type lineOutcomes struct {
	preds    []string
	results  []sandbox.Result
	buildErr string
}

// execute runs every completion of a samples file, in parallel, and
// returns the verdicts by line number.
func (cr *codeRun) execute(file harness.SampleFile, ct *codeTask) (map[int]*lineOutcomes, error) {
	r, err := file.Open()
	if err != nil {
		return nil, err
	}
	type job struct {
		lo *lineOutcomes
		i  int
		p  string
	}
	out := map[int]*lineOutcomes{}
	var jobs []job
	for {
		s, err := r.Next()
		if err != nil {
			break
		}
		lo := &lineOutcomes{}
		out[s.Line] = lo
		preds, test, err := ct.predictions(s)
		if err != nil {
			lo.buildErr = err.Error()
			continue
		}
		lo.preds = preds
		lo.results = make([]sandbox.Result, len(preds))
		for i, p := range preds {
			jobs = append(jobs, job{lo, i, codeProgram(p, test)})
		}
	}
	r.Close()
	workers := cap(cr.slots)
	next := make(chan job)
	var wg sync.WaitGroup
	var firstErr error
	var emu sync.Mutex
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				cr.slots <- struct{}{}
				res, err := cr.sb.Run(cr.ctx, j.p)
				<-cr.slots
				emu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				emu.Unlock()
				j.lo.results[j.i] = res
				if cr.opts.Progress != nil {
					cr.mu.Lock()
					cr.done++
					cr.opts.Progress(cr.done, 0)
					cr.mu.Unlock()
				}
			}
		}()
	}
	for _, j := range jobs {
		if cr.ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	if err := cr.ctx.Err(); err != nil {
		return nil, err
	}
	return out, firstErr
}

// summary says where the programs ran, for the checks' reasons.
func (cr *codeRun) summary(n int) string {
	return fmt.Sprintf("%d programs executed in the bubblewrap sandbox with %s (%s), code_eval's 3 s timeout each", n, cr.sb.PythonVersion, cr.sb.Python())
}

// rescoreCodeLine re-derives a code task's predictions and, when the
// completions were executed, its per-doc pass@k values.
func (ct *codeTask) rescoreLine(s *harness.Sample, want []string, lo *lineOutcomes) lineResult {
	var res lineResult
	preds, _, err := ct.predictions(s)
	if err != nil {
		res.err = err.Error()
		return res
	}
	// The logged filtered_resps: one list of predictions (create_test,
	// extract_code) or one string (take_first).
	if s.Filtered.Kind == harness.List && len(s.Filtered.List) == 1 {
		f := s.Filtered.List[0]
		same := false
		if f.Kind == harness.String {
			same = len(preds) == 1 && f.Str == preds[0]
		} else if f.Kind == harness.List && len(f.List) == len(preds) {
			same = true
			for i, e := range f.List {
				if t, ok := e.Text(); !ok || t != preds[i] {
					same = false
				}
			}
		}
		res.filteredOK = true
		if !same {
			res.filteredDiff = fmt.Sprintf("logged %s, recomputed %q", truncate(f.String(), 200), truncate(fmt.Sprint(preds), 200))
		}
	}
	res.filtered = preds
	if lo == nil {
		res.unsupported = "the completions were not executed (capsule rescore --execute-code runs them in the sandbox)"
		return res
	}
	if lo.buildErr != "" {
		res.err = lo.buildErr
		return res
	}
	n, c := len(lo.results), 0
	for _, r := range lo.results {
		if r.Outcome == sandbox.Passed {
			c++
		}
	}
	for _, name := range want {
		k := 0
		switch {
		case name == ct.mbppName && name != "":
			k = 1
		case strings.HasPrefix(name, "pass@"):
			k, _ = strconv.Atoi(name[len("pass@"):])
		}
		if k <= 0 || n < k {
			res.unsupported = fmt.Sprintf("per-doc metric %q is not a pass@k of %d completions", name, n)
			continue
		}
		res.values = append(res.values, perDoc{name: name, value: PassAtK(n, c, k), kind: NumpyFloat})
	}
	return res
}

// CodeExecution is where and how the completions of a run's code tasks
// were executed.
type CodeExecution struct {
	Sandbox       string `json:"sandbox"`        // the sandbox the programs ran in: "bubblewrap"
	Python        string `json:"python"`         // the interpreter's path inside the sandbox, e.g. "/usr/bin/python3"
	PythonVersion string `json:"python_version"` // what that interpreter said its version is, e.g. "3.11.2"
	Programs      int    `json:"programs"`       // how many programs (one per completion) were executed
	TimeoutMS     int    `json:"timeout_ms"`     // each program's timeout in milliseconds (code_eval's default, 3000)
}

func (e *CodeExecution) String() string {
	return fmt.Sprintf("%d programs executed in the %s sandbox with Python %s (%s), %g s timeout each", e.Programs, e.Sandbox, e.PythonVersion, e.Python, float64(e.TimeoutMS)/1000)
}

// codeExecution sums up the programs a run's code tasks ran.
func (st *runState) codeExecution() *CodeExecution {
	if st.code == nil {
		return nil
	}
	n := 0
	for _, acc := range st.tasks {
		for _, f := range acc.filters {
			n += f.executed
		}
	}
	if n == 0 {
		return nil
	}
	return &CodeExecution{Sandbox: "bubblewrap", Python: st.code.sb.Python(), PythonVersion: strings.TrimPrefix(st.code.sb.PythonVersion, "Python "), Programs: n, TimeoutMS: 3000}
}
