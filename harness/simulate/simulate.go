package simulate

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// Defaults of Options. The planted model is loosely a small base model: a
// third of GSM8K right after flexible extraction, strict-match lower because
// a quarter of its answers miss the "#### N" format, MMLU somewhat above
// chance.
const (
	DefaultModel           = "simulated/model-1b"
	DefaultGSM8KDocs       = 1319 // the gsm8k test split
	DefaultNumFewshot      = 5
	DefaultLMEvalVersion   = "0.4.9.1"
	DefaultPythonVersion   = "3.10.12"
	DefaultGSM8KAccuracy   = 0.35
	DefaultGSM8KFormatMiss = 0.25
	DefaultGSM8KTruncated  = 0.06
	DefaultMMLUAccuracy    = 0.40
)

// ErrExists is returned (wrapped) when an output file Generate would write
// is already there; nothing is changed then.
var ErrExists = fmt.Errorf("simulate: output %w", fs.ErrExist)

// Options describes one simulated lm-eval run. The zero value is valid and
// simulates `lm_eval --tasks gsm8k,mmlu --num_fewshot 5 --log_samples` at
// full size. For the float knobs, 0 selects the default and a negative value
// means zero, so that the zero Options stays the default run.
type Options struct {
	// Seed selects the simulated model's answers: the same Options give
	// byte-identical files.
	Seed int64
	// DataSeed selects the dataset: the questions, choices and few-shot
	// examples. Runs of one study share it (the default 0), so their
	// documents pair up; the same Seed with other rates or settings then
	// gives paired runs of one model.
	DataSeed int64
	// Model is the model name, written as pretrained=<Model> into
	// model_args; it names the output sub-directory as lm-eval sanitizes
	// it ("simulated/model-1b" → "simulated__model-1b").
	Model string
	// Tasks to run: any of "gsm8k", "gsm8k_cot_llama", "gsm8k_llama" (the
	// same problems under each task's prompt, answer phrase and filters)
	// and "mmlu" (the 57 subject tasks, the four category groups and the
	// mmlu group) or "mmlu_llama" (the same subjects and questions under
	// Meta's generative prompt: mmlu_llama_<subject>, its category groups
	// and the mmlu_llama group; from lm-eval v0.4.8). Default gsm8k and
	// mmlu.
	Tasks []string
	// GSM8KDocs is the number of test documents of each GSM8K task
	// (default 1319).
	GSM8KDocs int
	// MMLUDocsPerSubject caps each subject's documents; 0 keeps the real
	// test sizes (14,042 questions in all).
	MMLUDocsPerSubject int
	// NumFewshot is --num_fewshot for every task: 0 selects 5, a negative
	// value zero-shot. MMLU has five dev examples per subject, so at most 5.
	NumFewshot int
	// LMEvalVersion is the lm-eval release whose file format is written
	// (default 0.4.9.1): any release from v0.4.3 to v0.4.11. Other
	// releases are refused with an error naming them.
	LMEvalVersion string
	// PythonVersion is written into pretty_env_info and decides the
	// summation rule of the reported means (CPython 3.12 changed sum()).
	PythonVersion string
	// ChatTemplate is --apply_chat_template: prompts are rendered with the
	// simulated model's chat template (recorded in the results), with
	// FewshotAsMultiturn each few-shot example as a turn of its own.
	ChatTemplate, FewshotAsMultiturn bool
	// Date is when the run saved its results: it gives date_id, the file
	// name suffix. Default 2025-01-01T00:00:00 UTC plus (Seed mod 2^31)
	// seconds, so that output is reproducible.
	Date time.Time

	// GSM8KAccuracy is the share of gsm8k documents the planted model
	// reasons to the right number (default 0.35).
	GSM8KAccuracy float64
	// GSM8KFormatMiss is the share of finished gsm8k answers given without
	// the "#### N" line, so that only flexible-extract finds them
	// (default 0.25).
	GSM8KFormatMiss float64
	// GSM8KTruncated is the share of gsm8k generations cut off before any
	// final answer (default 0.06).
	GSM8KTruncated float64
	// Churn is the share of GSM8K documents whose correctness is drawn
	// anew, from a stream of their own (default 0: none): a setting then
	// turns some documents wrong while it turns others right, as a real
	// change of prompt does.
	Churn float64
	// MMLUAccuracy is the planted model's expected MMLU accuracy (default
	// 0.40); each subject's accuracy varies around it by up to ±0.12 with
	// the size-weighted mean kept at this value.
	MMLUAccuracy float64
	// TaskShift adds, per GSM8K-family task name ("gsm8k_cot_llama"), to
	// that task's planted accuracy alone (clamped to [0, 1]): a change of
	// one task, such as a regression planted in one checkpoint of a model
	// line. Nil: none.
	TaskShift map[string]float64
}

// Output says what Generate wrote.
type Output struct {
	// Dir is the directory holding the files: dir/<model_name_sanitized>,
	// or, for lm-eval v0.4.9 and later given a dir ending in ".json", the
	// directory that path is in.
	Dir string
	// DateID is the timestamp suffix shared by all files of the run.
	DateID string
	// ResultsPath is results_<date_id>.json (<stem>_<date_id>.json for a
	// dir "<stem>.json" from v0.4.9 on).
	ResultsPath string
	// SamplesPaths are the samples_<task>_<date_id>.jsonl files, one per
	// leaf task, sorted by task name.
	SamplesPaths []string
	// Bytes is the size of all files written.
	Bytes int64
	// Lines is the number of sample lines written.
	Lines int
	// Scores are the values written into the results file, tasks in
	// evaluation order followed by the groups.
	Scores []Score
	// LMEvalVersion is the release whose file format was written.
	LMEvalVersion string
}

// Score is one metric of one task or group as the results file reports it.
type Score struct {
	Task   string // "gsm8k", "mmlu_anatomy", "mmlu_stem", "mmlu"
	Metric string // "exact_match", "acc"
	Filter string // "strict-match", "flexible-extract", "none"
	Value  float64
	Stderr float64 // NaN where lm-eval writes "N/A"
	N      int     // documents (for a group, of all its leaves)
	Group  bool
}

// config is Options with defaults applied and derived values.
type config struct {
	Options
	f          format
	numFewshot int
	rule       pynum.Summation
	sanitized  string
	dateID     string
	leaves     []leafTask  // evaluation order
	math       []*mathTask // sorted by name
	hasGSM8K   bool        // the gsm8k task itself
	hasMMLU    bool
	mmlu       *mmluFamily        // the MMLU group run, when hasMMLU
	subjectAcc map[string]float64 // planted accuracy per MMLU subject
}

// leafTask is one task that writes a samples file.
type leafTask struct {
	name    string
	subject *subject  // MMLU
	math    *mathTask // the GSM8K family
	docs    int
}

func (o Options) resolve() (*config, error) {
	c := &config{Options: o}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if strings.ContainsAny(c.Model, ",=") {
		return nil, fmt.Errorf("simulate: model name %q: must not contain ',' or '=' (it goes into model_args)", c.Model)
	}
	if c.LMEvalVersion == "" {
		c.LMEvalVersion = DefaultLMEvalVersion
	}
	f, err := formatFor(c.LMEvalVersion)
	if err != nil {
		return nil, err
	}
	c.f = f
	c.LMEvalVersion = f.version.String()
	if c.PythonVersion == "" {
		c.PythonVersion = DefaultPythonVersion
	}
	major, minor, ok := parsePythonVersion(c.PythonVersion)
	if !ok {
		return nil, fmt.Errorf("simulate: python version %q: want major.minor.patch", c.PythonVersion)
	}
	c.rule = pynum.SummationFor(major, minor)
	switch {
	case c.NumFewshot == 0:
		c.numFewshot = DefaultNumFewshot
	case c.NumFewshot > 0:
		c.numFewshot = c.NumFewshot
	}
	if c.GSM8KDocs == 0 {
		c.GSM8KDocs = DefaultGSM8KDocs
	}
	if c.GSM8KDocs < 0 || c.MMLUDocsPerSubject < 0 {
		return nil, errors.New("simulate: document counts must not be negative")
	}
	for _, k := range []struct {
		p   *float64
		def float64
	}{
		{&c.GSM8KAccuracy, DefaultGSM8KAccuracy},
		{&c.GSM8KFormatMiss, DefaultGSM8KFormatMiss},
		{&c.GSM8KTruncated, DefaultGSM8KTruncated},
		{&c.MMLUAccuracy, DefaultMMLUAccuracy},
		{&c.Churn, 0},
	} {
		switch {
		case math.IsNaN(*k.p) || *k.p > 1:
			return nil, fmt.Errorf("simulate: planted rate %v is not in [0, 1]", *k.p)
		case *k.p == 0:
			*k.p = k.def
		case *k.p < 0:
			*k.p = 0
		}
	}
	if c.Date.IsZero() {
		c.Date = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(c.Seed%(1<<31)) * time.Second)
	}
	// datetime.now().isoformat().replace(":", "-"). Python leaves the
	// fraction out when the microsecond is 0; lm-eval's clock never lands
	// there in practice and readers expect the six digits, so they are
	// always written.
	c.dateID = c.Date.Format("2006-01-02T15-04-05.000000")
	c.sanitized = sanitizeModelName(c.Model)
	if c.sanitized == "." || c.sanitized == ".." {
		return nil, fmt.Errorf("simulate: model name %q is not a usable directory name", c.Model)
	}

	tasks := c.Tasks
	if len(tasks) == 0 {
		tasks = []string{"gsm8k", "mmlu"}
	}
	seen := map[string]bool{}
	for _, t := range tasks {
		if seen[t] {
			continue
		}
		seen[t] = true
		if fam := mmluFamilyNamed(t); fam != nil {
			if c.mmlu != nil {
				return nil, fmt.Errorf("simulate: tasks %s and %s in one run are not simulated: run them one at a time", c.mmlu.group, t)
			}
			if v := fam.sinceVersion(); c.f.version.Less(v) {
				return nil, fmt.Errorf("simulate: task %s is not in lm-eval %s (it came with v%s)", t, c.LMEvalVersion, v)
			}
			c.hasMMLU, c.mmlu = true, fam
			continue
		}
		m := mathTaskNamed(t)
		if m == nil {
			return nil, fmt.Errorf("simulate: unknown task %q (want %s)", t, strings.Join(TaskNames(), ", "))
		}
		if v := (harness.Version{m.since[0], m.since[1], m.since[2]}); c.f.version.Less(v) {
			return nil, fmt.Errorf("simulate: task %s is not in lm-eval %s (it came with v%s)", t, c.LMEvalVersion, v)
		}
		if m.fixedShots > 0 && c.numFewshot > m.fixedShots {
			return nil, fmt.Errorf("simulate: %d-shot %s: the task has only %d few-shot examples", c.numFewshot, t, m.fixedShots)
		}
		c.hasGSM8K = c.hasGSM8K || t == "gsm8k"
		c.math = append(c.math, m)
	}
	sort.Slice(c.math, func(i, j int) bool { return c.math[i].name < c.math[j].name })
	if c.hasMMLU && c.numFewshot > 5 {
		return nil, fmt.Errorf("simulate: %d-shot %s: each subject has only 5 dev examples", c.numFewshot, c.mmlu.group)
	}
	// lm-eval sorts the task names, then loads them through a ChainMap,
	// which reverses them: "gsm8k,mmlu" evaluates mmlu first. v0.4.3 also
	// loads each group's members through a ChainMap without reversing them
	// first, so its MMLU subjects come in the reverse order (humanities
	// first, each category's subjects from the end of the alphabet).
	if c.hasMMLU {
		for _, i := range subjectOrder(c.f) {
			n := subjects[i].size
			if c.MMLUDocsPerSubject > 0 && c.MMLUDocsPerSubject < n {
				n = c.MMLUDocsPerSubject
			}
			c.leaves = append(c.leaves, leafTask{name: c.mmlu.task(subjects[i]), subject: &subjects[i], docs: n})
		}
	}
	for i := len(c.math) - 1; i >= 0; i-- { // reversed, as the ChainMap does
		c.leaves = append(c.leaves, leafTask{name: c.math[i].name, math: c.math[i], docs: c.GSM8KDocs})
	}
	for _, l := range c.leaves {
		if l.docs == 0 {
			return nil, fmt.Errorf("simulate: task %s has no documents", l.name)
		}
	}
	c.subjectAcc = subjectAccuracies(c)
	return c, nil
}

// TaskNames are the tasks the simulator writes, sorted.
func TaskNames() []string {
	names := []string{"mmlu", "mmlu_llama"}
	for _, t := range mathTasks {
		names = append(names, t.name)
	}
	sort.Strings(names)
	return names
}

var pythonVersionRE = regexp.MustCompile(`^(\d+)\.(\d+)\.\d+`)

func parsePythonVersion(v string) (major, minor int, ok bool) {
	m := pythonVersionRE.FindStringSubmatch(v)
	if m == nil {
		return 0, 0, false
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	return major, minor, true
}

var unsafeNameRE = regexp.MustCompile(`["<>:/|\\?*\[\]]+`)

// sanitizeModelName is lm-eval's sanitize_model_name.
func sanitizeModelName(name string) string { return unsafeNameRE.ReplaceAllString(name, "__") }

// Generate writes the files lm-eval (the release Options.LMEvalVersion
// names, 0.4.9.1 by default) writes for `--output_path dir --log_samples`:
// dir/<model_name_sanitized>/ holding results_<date_id>.json and one
// samples_<task>_<date_id>.jsonl per leaf task (from v0.4.9 a dir ending in
// ".json" names the results file instead, <stem>_<date_id>.json, with the
// samples beside it). The run is simulated: no model is evaluated, and the
// model name, config.model ("simulated") and model_args
// ("…,simulated=True") say so.
//
// Every file is written in full into a temporary directory beside the
// target and moved into place at the end, the results file last, so a reader
// never sees a partial run (a crash can leave a hidden .simulate-* directory
// in dir, never a partial output file). Generate refuses to overwrite: if
// any of the files exists it returns an error wrapping ErrExists and changes
// nothing.
func Generate(dir string, opts Options) (Output, error) {
	c, err := opts.resolve()
	if err != nil {
		return Output{}, err
	}
	// EvaluationTracker: <output_path>/<model>/results_<date_id>.json, or
	// from v0.4.9 <parent>/<stem>_<date_id>.json for a path whose suffix
	// (pathlib's: a leading dot does not start one) is ".json".
	modelDir, resultsName, tmpParent := filepath.Join(dir, c.sanitized), "results_"+c.dateID+".json", dir
	if base := filepath.Base(dir); c.f.jsonOutputPath && strings.HasSuffix(base, ".json") && base != ".json" {
		modelDir = filepath.Dir(dir)
		resultsName = strings.TrimSuffix(base, ".json") + "_" + c.dateID + ".json"
		tmpParent = modelDir
	}
	out := Output{Dir: modelDir, DateID: c.dateID, ResultsPath: filepath.Join(modelDir, resultsName), LMEvalVersion: c.LMEvalVersion}
	names := []string{resultsName}
	for _, l := range c.leaves {
		names = append(names, samplesName(l.name, c.dateID))
	}
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(modelDir, n)); err == nil {
			return Output{}, fmt.Errorf("%w: %s", ErrExists, filepath.Join(modelDir, n))
		}
	}
	if err := os.MkdirAll(tmpParent, 0o755); err != nil {
		return Output{}, fmt.Errorf("simulate: %w", err)
	}
	tmp, err := os.MkdirTemp(tmpParent, ".simulate-"+c.sanitized+"-")
	if err != nil {
		return Output{}, fmt.Errorf("simulate: %w", err)
	}
	defer os.RemoveAll(tmp)

	runs, err := writeSamples(c, tmp)
	if err != nil {
		return Output{}, err
	}
	results, scores := buildResults(c, runs)
	resultsBytes := appendIndented(nil, results, 0)
	if err := os.WriteFile(filepath.Join(tmp, names[0]), resultsBytes, 0o644); err != nil {
		return Output{}, fmt.Errorf("simulate: %w", err)
	}
	out.Bytes = int64(len(resultsBytes))
	for _, r := range runs {
		out.Bytes += r.bytes
		out.Lines += r.lines
		out.SamplesPaths = append(out.SamplesPaths, filepath.Join(modelDir, samplesName(r.leaf.name, c.dateID)))
	}
	sort.Strings(out.SamplesPaths)
	out.Scores = scores
	// Samples first, results last: the results file marks a complete run.
	order := append(append([]string(nil), names[1:]...), names[0])
	if err := publish(tmp, modelDir, order); err != nil {
		return Output{}, err
	}
	return out, nil
}

func samplesName(task, dateID string) string { return "samples_" + task + "_" + dateID + ".jsonl" }

// publish moves the named files from tmp into dst without replacing any
// existing file. A missing dst is created by renaming tmp's content over in
// one step; otherwise each file is hard-linked into place (which fails
// rather than overwrite), and on any failure the files already placed are
// removed again.
func publish(tmp, dst string, names []string) error {
	if _, err := os.Lstat(dst); errors.Is(err, os.ErrNotExist) {
		staged, err := os.MkdirTemp(tmp, "dir-")
		if err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
		for _, n := range names {
			if err := os.Rename(filepath.Join(tmp, n), filepath.Join(staged, n)); err != nil {
				return fmt.Errorf("simulate: %w", err)
			}
		}
		if err := os.Chmod(staged, 0o755); err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
		if err := os.Rename(staged, dst); err == nil {
			return nil
		}
		// Someone created dst meanwhile: fall back to placing the files.
		for _, n := range names {
			if err := os.Rename(filepath.Join(staged, n), filepath.Join(tmp, n)); err != nil {
				return fmt.Errorf("simulate: %w", err)
			}
		}
	}
	var placed []string
	undo := func() {
		for _, p := range placed {
			os.Remove(p)
		}
	}
	for _, n := range names {
		from, to := filepath.Join(tmp, n), filepath.Join(dst, n)
		err := os.Link(from, to)
		if err != nil && !errors.Is(err, os.ErrExist) {
			// No hard links here (some network and FUSE file systems):
			// check, then rename.
			if _, statErr := os.Lstat(to); statErr == nil {
				err = os.ErrExist
			} else {
				err = os.Rename(from, to)
			}
		}
		if err != nil {
			undo()
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%w: %s", ErrExists, to)
			}
			return fmt.Errorf("simulate: %w", err)
		}
		placed = append(placed, to)
	}
	return nil
}
