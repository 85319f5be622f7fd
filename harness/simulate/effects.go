package simulate

import (
	"fmt"
	"strconv"

	"github.com/evalcapsule/evalcapsule/harness"
)

// Effects is the planted model of how run settings move the simulated
// model's behaviour. Runs of one study share Seed and DataSeed, so a setting
// that raises a rate turns exactly some documents from wrong to right:
// paired runs, as two runs of one real model on one dataset are. The
// statistics are tested on whether they recover these effects.
type Effects struct {
	// PerShot is the GSM8K and MMLU accuracy gained per few-shot example
	// above 5 (lost below).
	PerShot float64
	// ChatTemplateFormat is the change of the GSM8K format-miss rate (the
	// share of answers without "#### N") with --apply_chat_template;
	// ChatTemplateAccuracy the change of accuracy.
	ChatTemplateFormat, ChatTemplateAccuracy float64
	// ChatTemplateChurn is the share of GSM8K documents whose correctness a
	// chat template draws anew (Options.Churn): it turns some wrong
	// answers right and some right ones wrong, as a new prompt format does.
	ChatTemplateChurn float64
	// Multiturn is the accuracy change with --fewshot_as_multiturn (on top of
	// a chat template).
	Multiturn float64
	// Float16 is the accuracy change of dtype=float16 against bfloat16.
	Float16 float64
	// LongGeneration is the change of the truncation rate when
	// gen_kwargs.max_gen_toks is above 256.
	LongGeneration float64
	// HarnessBefore044 is the GSM8K accuracy change of a run that pins an
	// lm-eval older than v0.4.4. It is made up: lm-eval's GSM8K scoring did
	// not change there; the effect exists so that a study pinning an older
	// harness for a step has a row to attribute. Only the Executor (which
	// knows the run's lm-eval) applies it; OptionsFor does not.
	HarnessBefore044 float64
}

// DefaultEffects are the planted effects of the demo study: a chat template
// mostly fixes the answer format, 8-shot adds about a point, fp16 costs a
// little, a longer generation limit removes most truncations, and (made up,
// see HarnessBefore044) lm-eval before v0.4.4 costs a point on GSM8K.
func DefaultEffects() Effects {
	return Effects{
		PerShot:              0.0035,
		ChatTemplateFormat:   -0.15,
		ChatTemplateAccuracy: 0.02,
		ChatTemplateChurn:    0.08,
		Multiturn:            0.01,
		Float16:              -0.005,
		LongGeneration:       -0.05,
		HarnessBefore044:     -0.01,
	}
}

// OptionsFor returns the Options of a simulated run of spec: the tasks and
// limit it asks for, and the rates the effects give its settings. Settings
// the simulation has no effect for are accepted and change nothing.
func OptionsFor(spec harness.RunSpec, seed int64, e Effects) (Options, error) {
	return optionsFor(spec, "", seed, e)
}

// optionsForRecord is OptionsFor for a planned run: its settings, and the
// lm-eval release it pins, whose file format the output takes and whose
// effect (HarnessBefore044) applies.
func optionsForRecord(rec *harness.RunRecord, seed int64, e Effects) (Options, error) {
	return optionsFor(rec.Spec, rec.Harness.Version, seed, e)
}

func optionsFor(spec harness.RunSpec, lmEval string, seed int64, e Effects) (Options, error) {
	o := Options{Seed: seed, Tasks: spec.Tasks, NumFewshot: DefaultNumFewshot, LMEvalVersion: lmEval}
	if spec.NumFewshot != nil {
		o.NumFewshot = *spec.NumFewshot
		if o.NumFewshot == 0 {
			o.NumFewshot = -1
		}
	}
	if spec.Limit != nil {
		if *spec.Limit < 1 {
			return o, fmt.Errorf("simulate: fractional --limit %v is not simulated", *spec.Limit)
		}
		o.GSM8KDocs = int(*spec.Limit)
		o.MMLUDocsPerSubject = int(*spec.Limit)
	}
	shots := float64(max(o.NumFewshot, 0) - DefaultNumFewshot)
	acc, fmtMiss, trunc, mmlu := DefaultGSM8KAccuracy, DefaultGSM8KFormatMiss, DefaultGSM8KTruncated, DefaultMMLUAccuracy
	acc += shots * e.PerShot
	mmlu += shots * e.PerShot
	if spec.ApplyChatTemplate != "" {
		o.ChatTemplate = true
		o.FewshotAsMultiturn = spec.FewshotAsMultiturn != nil && *spec.FewshotAsMultiturn
		o.Churn = e.ChatTemplateChurn
		if o.Churn <= 0 {
			o.Churn = -1
		}
		fmtMiss += e.ChatTemplateFormat
		acc += e.ChatTemplateAccuracy
		mmlu += e.ChatTemplateAccuracy
		if spec.FewshotAsMultiturn != nil && *spec.FewshotAsMultiturn {
			acc += e.Multiturn
			mmlu += e.Multiturn
		}
	}
	if d, ok := spec.ModelArgs.Get("dtype"); ok && (d == "float16" || d == "half") {
		acc += e.Float16
		mmlu += e.Float16
	}
	if v, ok := spec.GenKwargs.Get("max_gen_toks"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 256 {
			trunc += e.LongGeneration
		}
	}
	if lmEval != "" {
		// A release Generate does not write is refused there, by name.
		if v, err := harness.ParseVersion(lmEval); err == nil && v.Less(harness.Version{0, 4, 4}) {
			acc += e.HarnessBefore044
		}
	}
	// A rate of 0 selects the default in Options; a negative one means 0.
	clamp := func(x float64) float64 {
		switch {
		case x <= 0:
			return -1
		case x > 1:
			return 1
		}
		return x
	}
	o.GSM8KAccuracy, o.GSM8KFormatMiss, o.GSM8KTruncated, o.MMLUAccuracy = clamp(acc), clamp(fmtMiss), clamp(trunc), clamp(mmlu)
	return o, nil
}
