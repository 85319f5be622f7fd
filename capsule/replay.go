package capsule

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule/internal/layout"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/buildinfo"
	"github.com/evalcapsule/evalcapsule/internal/quote"
	"github.com/evalcapsule/evalcapsule/study"
)

// ReplaySchema names the replay report's format.
const ReplaySchema = "evalcapsule.replay/v1"

// ReplayReport is what a replay found: every number of the capsule's tables
// re-derived and compared, and, for a rerun, how the re-executed runs
// compare with the packed ones. It is packed as an artifact of its own whose
// subject is the capsule.
type ReplayReport struct {
	Schema string `json:"schema"` // the report's format, "evalcapsule.replay/v1"
	// Capsule is the capsule manifest's digest.
	Capsule  string `json:"capsule"`
	Study    string `json:"study"`    // the study's name
	Level    string `json:"level"`    // "rescore" or "rerun"
	Replayer Packer `json:"replayer"` // the program that replayed the capsule, and its version
	// Compared counts the numbers compared; Diffs lists those that differ.
	Compared int          `json:"compared"`
	Diffs    []ReplayDiff `json:"diffs"` // the numbers of the tables that the replay did not reproduce, in the order compared; null when none
	// Reruns compares each re-executed run with the packed one (rerun).
	Reruns []study.RerunComparison `json:"reruns,omitempty"`
	// TolerateGenerations is set when the rerun let documents whose
	// generations differ pass (ReplayOptions.TolerateGenerations).
	TolerateGenerations bool `json:"tolerate_generations,omitempty"`
	// Problems are what a verification finds wrong with the capsule (see
	// Verify), checked before anything is re-derived.
	Problems []Problem `json:"problems,omitempty"`
	// Differs names every check whose samples, re-scored now, do not give
	// the number lm-eval reported, and every setting lm-eval recorded
	// otherwise than the run's run.json, whatever the packed tables say.
	Differs []string `json:"differs,omitempty"`
	// CodeChecks are the code tasks' checks with their completions
	// executed (ReplayOptions.ExecuteCode); task is "run path: task".
	CodeChecks []analysis.Check `json:"code_checks,omitempty"`
	// CodeExecution says where those completions ran, one per run with
	// code tasks.
	CodeExecution []*analysis.CodeExecution `json:"code_execution,omitempty"`
	// OK is true when nothing differs (and every rerun agrees).
	OK        bool `json:"ok"`
	Simulated bool `json:"simulated"` // whether any run comes from the simulated backend (the capsule says so, or its outputs do)
	// Ref is what the capsule was opened from (not part of the report's
	// JSON: it names the reviewer's copy, not the capsule).
	Ref string `json:"-"`
	// Tables are the tables as the replay re-derived them, to set beside
	// the packed ones (not part of the report's JSON).
	Tables *study.Tables `json:"-"`
}

// ReplayDiff is one number that a replay did not reproduce.
type ReplayDiff struct {
	// Where names the number: table, run or claim, step, task, metric.
	Where    string `json:"where"`
	Packed   string `json:"packed"`   // the packed value, as JSON ("null" where it is absent)
	Replayed string `json:"replayed"` // the value the replay re-derived, as JSON ("null" where it is absent)
}

// ReplayOptions configures Replay. The zero value re-derives every number
// of the capsule from its samples (the rescore level) in a temporary folder.
type ReplayOptions struct {
	// Workdir, when set, is a new or empty folder that keeps the unpacked
	// study (Workdir/study) and the re-executed runs (Workdir/rerun). By
	// default a temporary folder is used and removed when Replay returns.
	Workdir string
	// Runner, when set, re-executes every run with it (the rerun level),
	// from its packed settings and lm-eval command line, and compares each
	// with the packed run document by document. RunnerKind is recorded in
	// the reruns' records ("local", "container", "slurm", "simulated").
	Runner     harness.Runner
	RunnerKind string
	// Tolerance is the largest log-likelihood difference a rerun may show
	// (default 1e-4).
	Tolerance float64
	// TolerateGenerations keeps a rerun's verdict on its scores (their
	// CIs) and log-likelihoods (Tolerance) only: documents whose
	// generations, extracted answers or per-document values differ are
	// listed, marked tolerated, and do not fail it. For vLLM and sampled
	// decoding, which are not bit-reproducible. By default any difference
	// of any document fails the replay.
	TolerateGenerations bool
	// Command is how the runner starts lm-eval for a rerun (default
	// lm_eval). The command lines the capsule's records hold are never run:
	// each is rebuilt from the study and must match the packed one.
	Command []string
	// Confirm, when set, is shown every rerun's command line before
	// anything runs; an error from it stops the replay and is returned.
	Confirm func([]study.RerunCommand) error
	// Events, when set, receives every change of a rerun's state.
	Events func(study.RunEvent)
	// ExecuteCode executes the logged completions of the study's code
	// tasks (humaneval, mbpp) in the bubblewrap sandbox, with Python
	// (default /usr/bin/python3), and re-scores their pass@k from the
	// verdicts: a capsule's programs never run otherwise. Without a
	// sandbox the replay is an error (analysis.ErrNoSandbox).
	ExecuteCode bool
	Python      string
	// ReplayerVersion is the replaying program's version, recorded in the
	// report (default: the version of evalcapsule this program was built
	// from).
	ReplayerVersion string
}

// replayTempPrefix names the work directories of replays given no
// Workdir, in the system's temporary directory.
const replayTempPrefix = "capsule-replay-"

// Replay checks the capsule as Verify does (the config's schema, every
// file the records imply, the records against the study's plan, the
// simulated mark against the lm-eval outputs), unpacks its study (every
// file checked against its digest) and re-derives its tables with the
// options recorded at pack time: every number of the packed tables (each
// check of each run, each step, CI, p-value and residual of each claim) is
// compared bit for bit. With opts.Runner it also re-executes every run,
// from command lines rebuilt from the study, and compares each with the
// packed one. The report's OK is true only when the capsule verifies,
// every number lm-eval reported is what its samples give, nothing differs
// from the packed tables and every rerun agrees. A capsule packed without
// tables is an error (ErrFormat).
func Replay(ctx context.Context, c *Capsule, opts ReplayOptions) (*ReplayReport, error) {
	if c.Config.Attribution == nil || c.Config.Rescore == nil {
		return nil, fmt.Errorf("%w: %s was packed without tables (an incomplete study): verify it with capsule verify; there are no numbers to replay", ErrFormat, c.Ref)
	}
	work := opts.Workdir
	if work == "" {
		// Locked while the replay runs; those of a killed replay (no one
		// holds them) go first.
		layout.RemoveStale(os.TempDir(), replayTempPrefix)
		tmp, release, err := layout.MkdirTemp(os.TempDir(), replayTempPrefix)
		if err != nil {
			return nil, err
		}
		defer release()
		defer os.RemoveAll(tmp)
		work = tmp
	} else if err := checkNewDir(work); err != nil {
		return nil, fmt.Errorf("replay: workdir %w", err)
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	problems, err := ValidateConfig(c.RawConfig)
	if err != nil {
		return nil, err
	}
	problems = append(problems, c.completeness(ctx)...)
	problems = append(problems, c.consistency(ctx)...)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := c.UnpackStudy(ctx, filepath.Join(work, "study"))
	if err != nil {
		return nil, err
	}
	topts := c.Config.TableOptions.AttributionOptions()
	rep, err := replayTables(ctx, s, c.Config, topts)
	if err != nil {
		return nil, err
	}
	rep.Problems = problems
	rep.Differs = differing(rep.Tables.Rescore)
	simulated, _ := c.outputsSimulated(ctx)
	rep.Simulated = rep.Simulated || len(simulated) > 0
	rep.OK = rep.OK && len(rep.Problems) == 0 && len(rep.Differs) == 0
	rep.Capsule = c.Descriptor.Digest.String()
	rep.Ref = c.Ref
	rep.Replayer = Packer{Name: "capsule", Version: cmp.Or(opts.ReplayerVersion, buildinfo.Version())}
	if opts.ExecuteCode {
		if err := replayCode(ctx, s, opts, rep); err != nil {
			return nil, err
		}
	}
	if opts.Runner == nil {
		return rep, nil
	}
	if len(rep.Problems) > 0 {
		// The records are not what the study plans: nothing of them runs.
		return rep, nil
	}
	cmps, err := study.Rerun(ctx, s, filepath.Join(work, "rerun"), study.RerunOptions{
		Runner: opts.Runner, RunnerKind: opts.RunnerKind, Command: opts.Command, Confirm: opts.Confirm,
		Tolerance: opts.Tolerance, TolerateGenerations: opts.TolerateGenerations, Seed: topts.Seed, Events: opts.Events,
	})
	if err != nil {
		return nil, err
	}
	rep.Level = "rerun"
	rep.Reruns = cmps
	rep.TolerateGenerations = opts.TolerateGenerations
	for _, rc := range cmps {
		rep.OK = rep.OK && rc.OK
	}
	return rep, nil
}

// replayCode executes the completions of the study's code tasks and adds
// their checks to the report; one that differs fails the replay.
func replayCode(ctx context.Context, s *study.Study, opts ReplayOptions, rep *ReplayReport) error {
	var outs []*harness.Output
	for _, pr := range s.Plan() {
		run, err := harness.Read(s.RunDir(pr))
		if err != nil {
			return fmt.Errorf("run %s: %w", pr.Name, err)
		}
		if len(analysis.CodeTasks(run.Output)) > 0 {
			outs = append(outs, run.Output)
		}
	}
	if len(outs) == 0 {
		return nil
	}
	res, err := analysis.Rescore(ctx, outs, analysis.RescoreOptions{Code: analysis.CodeOptions{Execute: true, Python: opts.Python}})
	if err != nil {
		return err
	}
	for i, r := range res.Runs {
		code := map[string]bool{}
		for _, t := range analysis.CodeTasks(outs[i]) {
			code[t] = true
		}
		for _, c := range r.Checks {
			if !code[c.Task] {
				continue
			}
			if rel, err := filepath.Rel(s.Dir, r.Path); err == nil {
				c.Task = filepath.ToSlash(rel) + ": " + c.Task
			}
			rep.CodeChecks = append(rep.CodeChecks, c)
			rep.OK = rep.OK && c.Status == analysis.StatusExact
		}
		if r.CodeExecution != nil {
			rep.CodeExecution = append(rep.CodeExecution, r.CodeExecution)
		}
	}
	return nil
}

// checkNewDir refuses a directory that exists and holds something.
func checkNewDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s already exists: give a new folder: %w", dir, fs.ErrExist)
	}
	return nil
}

// replayTables re-derives the tables of an unpacked study and compares
// them with the packed ones, number by number and bit for bit.
func replayTables(ctx context.Context, s *study.Study, packed *Config, opts analysis.AttributionOptions) (*ReplayReport, error) {
	if packed.Rescore == nil || packed.Attribution == nil {
		return nil, fmt.Errorf("%w: the capsule holds no tables to replay against (packed without them)", ErrFormat)
	}
	t, err := study.ComputeTables(ctx, s, opts)
	if err != nil {
		return nil, err
	}
	rep := &ReplayReport{Schema: ReplaySchema, Study: s.Name, Level: "rescore", Simulated: packed.Simulated, Tables: t}
	n, diffs, err := compareJSON(packed.Rescore, t.Rescore, "rescore")
	if err != nil {
		return nil, err
	}
	rep.Compared += n
	rep.Diffs = append(rep.Diffs, diffs...)
	n, diffs, err = compareJSON(packed.Attribution, t.Attribution, "attribution")
	if err != nil {
		return nil, err
	}
	rep.Compared += n
	rep.Diffs = append(rep.Diffs, diffs...)
	rep.OK = len(rep.Diffs) == 0
	return rep, nil
}

// compareJSON compares two values through their JSON form: every number
// bit for bit, every string that is a status, level, name or version
// exactly; explanations (reasons, statements) are not compared, since they
// name paths that differ between machines.
func compareJSON(packed, replayed any, root string) (int, []ReplayDiff, error) {
	a, err := toGeneric(packed)
	if err != nil {
		return 0, nil, err
	}
	b, err := toGeneric(replayed)
	if err != nil {
		return 0, nil, err
	}
	c := &comparer{}
	c.walk(root, a, b)
	return c.n, c.diffs, nil
}

func toGeneric(v any) (any, error) {
	bs, err := analysis.MarshalJSON(v)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(strings.NewReader(string(bs)))
	d.UseNumber()
	var out any
	return out, d.Decode(&out)
}

type comparer struct {
	n     int
	diffs []ReplayDiff
}

// prose names the fields that explain rather than state a number.
var prose = map[string]bool{"reason": true, "statement": true, "path": true}

func (c *comparer) diff(where string, a, b any) {
	c.diffs = append(c.diffs, ReplayDiff{Where: where, Packed: show(a), Replayed: show(b)})
}

func show(v any) string {
	if v == nil {
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (c *comparer) walk(where string, a, b any) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			c.diff(where, a, b)
			return
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		var ks []string
		for k := range keys {
			if !prose[k] {
				ks = append(ks, k)
			}
		}
		sort.Strings(ks)
		for _, k := range ks {
			c.walk(where+"."+k, x[k], y[k])
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			c.diff(where+" (length)", len(x), lenOf(b))
			return
		}
		for i := range x {
			c.walk(where+"["+label(x[i], i)+"]", x[i], y[i])
		}
	case json.Number:
		c.n++
		y, ok := b.(json.Number)
		if !ok || !sameNumber(x, y) {
			c.diff(where, a, b)
		}
	default:
		if a != nil || b != nil {
			c.n++
		}
		if fmt.Sprint(a) != fmt.Sprint(b) {
			c.diff(where, a, b)
		}
	}
}

func lenOf(v any) int {
	if l, ok := v.([]any); ok {
		return len(l)
	}
	return -1
}

// sameNumber compares two JSON numbers as float64 bits (the JSON of a
// float64 round-trips it exactly).
func sameNumber(a, b json.Number) bool {
	x, err1 := strconv.ParseFloat(string(a), 64)
	y, err2 := strconv.ParseFloat(string(b), 64)
	if err1 != nil || err2 != nil {
		return a == b
	}
	return math.Float64bits(x) == math.Float64bits(y)
}

// label names an array element by what identifies it, so that a diff says
// "claims[gsm8k exact_match,strict-match].steps[chat template on].delta".
func label(v any, i int) string {
	m, ok := v.(map[string]any)
	if !ok {
		return strconv.Itoa(i)
	}
	str := func(k string) string {
		if s, ok := m[k].(string); ok {
			return s
		}
		return ""
	}
	switch {
	case str("task") != "" && str("metric") != "":
		return fmt.Sprintf("%s %s,%s", str("task"), str("metric"), str("filter"))
	case str("name") != "":
		return str("name")
	case str("change") != "":
		return str("change")
	case str("setting") != "":
		return str("setting")
	case str("path") != "":
		return str("path")
	}
	return strconv.Itoa(i)
}

// String is the replay for people: the verdict line by line, every number
// that differs, and for a rerun each run's comparison.
func (r *ReplayReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "replay of %s (%s), study %s\n", r.Ref, r.Capsule, r.Study)
	if r.Simulated {
		fmt.Fprintln(&b, "  SIMULATED: the capsule's runs come from the simulated backend")
	}
	if len(r.Problems) > 0 {
		fmt.Fprintf(&b, "  verify: %d problem(s); the capsule is not what it says:\n", len(r.Problems))
		for _, p := range r.Problems {
			b.WriteString("    " + strings.TrimPrefix(p.Error(), ErrFormat.Error()+": ") + "\n")
		}
	}
	if len(r.Differs) > 0 {
		fmt.Fprintf(&b, "  UNSUPPORTED: %s:\n", unsupported(r.Differs))
		for _, d := range r.Differs {
			b.WriteString("    " + d + "\n")
		}
	}
	if len(r.Diffs) == 0 {
		fmt.Fprintf(&b, "  rescore: %d numbers re-derived from the samples, all identical to the packed tables\n", r.Compared)
	} else {
		fmt.Fprintf(&b, "  rescore: %d numbers re-derived, %d DIFFER from the packed tables:\n", r.Compared, len(r.Diffs))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "    WHERE\tPACKED\tREPLAYED")
		for _, d := range r.Diffs {
			fmt.Fprintf(tw, "    %s\t%s\t%s\n", d.Where, d.Packed, d.Replayed)
		}
		tw.Flush()
	}
	for _, e := range r.CodeExecution {
		fmt.Fprintf(&b, "  code tasks: %s\n", e)
	}
	for _, c := range r.CodeChecks {
		fmt.Fprintf(&b, "    %s %s,%s: %s %s (%s)\n", quote.Text(c.Task), c.Metric, c.Filter, c.Level, c.Status, quote.Text(c.Reason))
	}
	if r.Level == "rerun" {
		r.writeReruns(&b)
	}
	switch {
	case r.OK && r.tolerated() > 0:
		fmt.Fprintf(&b, "OK: the capsule's scores are reproduced; the generations of %d document(s) DIFFER and were tolerated (--tolerate generations)\n", r.tolerated())
	case r.OK:
		fmt.Fprintln(&b, "OK: the capsule's numbers are reproduced")
	default:
		fmt.Fprintln(&b, "FAILED: the capsule's numbers are not reproduced (see above)")
	}
	return b.String()
}

// tolerated counts the documents of every rerun whose differences were
// tolerated.
func (r *ReplayReport) tolerated() int {
	n := 0
	for _, rc := range r.Reruns {
		n += rc.Tolerated
	}
	return n
}

// shownDocs is how many differing documents the text names per task; the
// JSON report has them all.
const shownDocs = 5

// shownText bounds each side of a document's difference in the text.
const shownText = 60

// writeReruns writes each rerun's comparison: the scores, then per run the
// documents that differ (per task, the first few with their difference)
// and the environment's differences.
func (r *ReplayReport) writeReruns(b *strings.Builder) {
	fmt.Fprintf(b, "  rerun: %d runs re-executed\n", len(r.Reruns))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    RUN\tTASK\tMETRIC\tFILTER\tPACKED\tRERUN\tΔ [95% CI]\tDOCUMENTS SAME/DIFF\tMAX |ΔLL|\tOK")
	for _, rc := range r.Reruns {
		if rc.Error != "" {
			fmt.Fprintf(tw, "    %s\t%s\t\t\t\t\t\t\t\tFAILED\n", quote.Text(rc.Run), quote.Text(rc.Error))
			continue
		}
		for _, t := range rc.Tasks {
			ok := "yes"
			if !t.WithinCI || !t.LLWithinTolerance {
				ok = "NO"
			} else if t.GenerationsDiffer > 0 {
				ok = "NO: documents differ"
				if docsTolerated(rc, t.Task) {
					ok = "yes, differences tolerated"
				}
			}
			filter := t.Filter
			if filter == "" {
				filter = "-"
			}
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%.4f\t%.4f\t%+.4f [%+.4f, %+.4f]\t%d/%d\t%.2g\t%s\n", quote.Text(rc.Run), quote.Text(t.Task), quote.Text(t.Metric), quote.Text(filter),
				t.Packed, t.Rerun, t.Delta, t.CILow, t.CIHigh, t.GenerationsIdentical, t.GenerationsDiffer, t.MaxLLDiff, ok)
		}
	}
	tw.Flush()
	for _, rc := range r.Reruns {
		run := quote.Text(rc.Run)
		for _, u := range rc.Unpaired {
			fmt.Fprintf(b, "  %s: UNPAIRED: %s\n", run, quote.Text(u))
		}
		for _, d := range rc.Documents {
			if d.Differ == 0 {
				continue
			}
			verdict := "DIFFER from the packed run"
			if allTolerated(d.Diffs) {
				verdict = "differ from the packed run: TOLERATED (--tolerate generations: the verdict rests on the scores)"
			}
			fmt.Fprintf(b, "  %s: %s: %d of %d documents %s (%s)\n", run, quote.Text(d.Task), d.Differ, d.Documents, verdict, kindCounts(d.Kinds))
			writeDocDiffs(b, d.Diffs)
		}
		if len(rc.Environment) > 0 {
			fmt.Fprintf(b, "  %s: environment: %d difference(s) from the packed run's (reported, not a failure by itself):\n", run, len(rc.Environment))
			for _, e := range rc.Environment {
				fmt.Fprintf(b, "      %s\n", quote.Text(e.String()))
			}
		} else if rc.Error == "" {
			fmt.Fprintf(b, "  %s: environment: the same as the packed run's\n", run)
		}
	}
}

// writeDocDiffs names the first documents that differ, each with its
// first difference, and how many more there are.
func writeDocDiffs(b *strings.Builder, diffs []study.DocDiff) {
	var ids []int
	first := map[int]study.DocDiff{}
	more := map[int]int{}
	for _, d := range diffs {
		if _, ok := first[d.DocID]; !ok {
			ids = append(ids, d.DocID)
			first[d.DocID] = d
			continue
		}
		more[d.DocID]++
	}
	for i, id := range ids {
		if i == shownDocs {
			fmt.Fprintf(b, "      … and %d more document(s): the JSON report (--json, -o) lists them all\n", len(ids)-shownDocs)
			break
		}
		d := first[id]
		where := d.Field
		if d.Filter != "" {
			where = d.Filter + " " + where
		}
		line := fmt.Sprintf("      doc %d %s (%s): packed %s, rerun %s", id, quote.Text(where), d.Kind, showText(d.Packed), showText(d.Rerun))
		if d.Offset > 0 {
			line += fmt.Sprintf(" (from byte %d)", d.Offset)
		}
		if n := more[id]; n > 0 {
			line += fmt.Sprintf("; %d more difference(s)", n)
		}
		if d.Tolerated {
			line += "; tolerated"
		}
		b.WriteString(line + "\n")
	}
}

// showText quotes one side of a difference for the terminal: escaped as
// Go quotes a string (line breaks, escapes and controls shown, not
// obeyed), cut to shownText characters.
func showText(s string) string {
	rs := []rune(s)
	if len(rs) > shownText {
		s = string(rs[:shownText]) + "…"
	}
	return strconv.Quote(s)
}

// docsTolerated reports whether every difference of a task's documents
// was tolerated.
func docsTolerated(rc study.RerunComparison, task string) bool {
	for _, d := range rc.Documents {
		if d.Task == task {
			return allTolerated(d.Diffs)
		}
	}
	return false
}

func allTolerated(diffs []study.DocDiff) bool {
	for _, d := range diffs {
		if !d.Tolerated {
			return false
		}
	}
	return len(diffs) > 0
}

// kindCounts is "response 1, filtered 2", in a fixed order.
func kindCounts(k map[string]int) string {
	var parts []string
	for _, name := range []string{study.DiffMissing, study.DiffInput, study.DiffResponse, study.DiffLoglikelihood, study.DiffFiltered, study.DiffValue} {
		if k[name] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", name, k[name]))
		}
	}
	return strings.Join(parts, ", ")
}

// UnpackStudy writes the capsule's study into dir (a new or empty folder),
// every file checked against its digest, and loads it.
func (c *Capsule) UnpackStudy(ctx context.Context, dir string) (*study.Study, error) {
	if err := c.Unpack(ctx, dir); err != nil {
		return nil, err
	}
	return study.Load(dir)
}
