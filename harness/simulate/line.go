package simulate

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The planted model line (Line): every checkpoint improves on the one
// before on every task, except that checkpoint LineRegressionCheckpoint
// loses LineRegressionShift of its accuracy on LineRegressionTask alone.
const (
	DefaultLineCheckpoints    = 8
	DefaultLineModel          = "simulated/line-1b"
	DefaultLineGSM8KDocs      = 400
	DefaultLineMMLUPerSubject = 8

	// LineGSM8KStart and LineGSM8KStep are the planted GSM8K-family
	// accuracy of checkpoint 0 and its gain per checkpoint; LineMMLUStart
	// and LineMMLUStep the same of MMLU.
	LineGSM8KStart = 0.30
	LineGSM8KStep  = 0.01
	LineMMLUStart  = 0.38
	LineMMLUStep   = 0.005

	// The one planted regression: checkpoint 5's gsm8k_cot_llama accuracy
	// is 10 points below its line, 0.25 against checkpoint 0's 0.30: 5
	// points of reasoning lost, about 3.5 of them visible under
	// strict-match (the right answers neither truncated, 6 %, nor missing
	// the format, 25 %); the default line shows 3.25.
	LineRegressionCheckpoint = 5
	LineRegressionTask       = "gsm8k_cot_llama"
	LineRegressionShift      = -0.10
)

// LineTasks is the suite a model line is evaluated on: three prompts of
// GSM8K (lm-eval's, and Meta's chain-of-thought and instruct ones) and
// MMLU (a group over 57 subjects). The simulator writes one MMLU family
// per run, so mmlu_llama is not among them.
var LineTasks = []string{"gsm8k", "gsm8k_cot_llama", "gsm8k_llama", "mmlu"}

// LineOptions describes a simulated model line. The zero value is the
// default line: 8 checkpoints of DefaultLineModel on LineTasks.
type LineOptions struct {
	// Checkpoints in the line (default 8); checkpoint 0 is the baseline.
	Checkpoints int
	// Model names the line; checkpoint i is "<Model>-step-<(i+1)·1000>"
	// ("simulated/line-1b-step-06000").
	Model string
	// GSM8KDocs per GSM8K task (default 400), MMLUDocsPerSubject per MMLU
	// subject (default 8, 456 questions).
	GSM8KDocs, MMLUDocsPerSubject int
	// LMEvalVersion is the file format (default 0.4.9.1).
	LMEvalVersion string
}

// Checkpoint is one checkpoint of a model line.
type Checkpoint struct {
	Index int
	// Name is "step-01000", "step-02000", ...
	Name string
	// Options are the simulated run of this checkpoint on LineTasks.
	Options Options
	// Regression is set on the checkpoint with the planted regression.
	Regression bool
}

// Line returns the checkpoints of a simulated model line: one model seed
// (so that the checkpoints' answers pair up document by document, as one
// model's do), accuracies that rise by LineGSM8KStep and LineMMLUStep per
// checkpoint, and the one planted regression (LineRegressionTask at
// LineRegressionCheckpoint). The same options give the same line.
func Line(o LineOptions) []Checkpoint {
	if o.Checkpoints <= 0 {
		o.Checkpoints = DefaultLineCheckpoints
	}
	if o.Model == "" {
		o.Model = DefaultLineModel
	}
	if o.GSM8KDocs <= 0 {
		o.GSM8KDocs = DefaultLineGSM8KDocs
	}
	if o.MMLUDocsPerSubject <= 0 {
		o.MMLUDocsPerSubject = DefaultLineMMLUPerSubject
	}
	seed := ModelSeed(o.Model)
	out := make([]Checkpoint, o.Checkpoints)
	for i := range out {
		name := fmt.Sprintf("step-%05d", (i+1)*1000)
		c := Checkpoint{Index: i, Name: name, Options: Options{
			Seed: seed, Model: o.Model + "-" + name, Tasks: append([]string(nil), LineTasks...),
			GSM8KDocs: o.GSM8KDocs, MMLUDocsPerSubject: o.MMLUDocsPerSubject, LMEvalVersion: o.LMEvalVersion,
			GSM8KAccuracy: LineGSM8KStart + LineGSM8KStep*float64(i),
			MMLUAccuracy:  LineMMLUStart + LineMMLUStep*float64(i),
		}}
		if i == LineRegressionCheckpoint {
			c.Regression = true
			c.Options.TaskShift = map[string]float64{LineRegressionTask: LineRegressionShift}
		}
		out[i] = c
	}
	return out
}

// WriteLine writes each checkpoint's lm-eval output into dir/<name>
// (created; an existing one is refused) and returns the checkpoints with
// what Generate wrote for each.
func WriteLine(dir string, o LineOptions) ([]Checkpoint, []Output, error) {
	cps := Line(o)
	outs := make([]Output, len(cps))
	for i, c := range cps {
		d := filepath.Join(dir, c.Name)
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, nil, fmt.Errorf("simulate: model line: %w", err)
		}
		out, err := Generate(d, c.Options)
		if err != nil {
			return nil, nil, fmt.Errorf("simulate: model line: %s: %w", c.Name, err)
		}
		outs[i] = out
	}
	return cps, outs, nil
}

// LineCheckpoint recognises a checkpoint of the default line by its model
// id ("simulated/line-1b-step-06000"), so that the simulated runner can run
// a suite against it: it returns the checkpoint of a line long enough to
// hold it.
func LineCheckpoint(modelID string) (Checkpoint, bool) {
	rest, ok := strings.CutPrefix(modelID, DefaultLineModel+"-step-")
	if !ok || len(rest) != 5 {
		return Checkpoint{}, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1000 || n%1000 != 0 || n > 100_000 {
		return Checkpoint{}, false
	}
	i := n/1000 - 1
	return Line(LineOptions{Checkpoints: i + 1})[i], true
}

// onLine makes o, the options a run's settings give, a run of checkpoint
// c: its seed, planted accuracies and shift; the line's sizes unless the
// run sets a --limit.
func onLine(o Options, c Checkpoint) Options {
	o.Seed, o.Model = c.Options.Seed, c.Options.Model
	o.GSM8KAccuracy, o.MMLUAccuracy, o.TaskShift = c.Options.GSM8KAccuracy, c.Options.MMLUAccuracy, c.Options.TaskShift
	if o.GSM8KDocs == 0 {
		o.GSM8KDocs, o.MMLUDocsPerSubject = c.Options.GSM8KDocs, c.Options.MMLUDocsPerSubject
	}
	return o
}
