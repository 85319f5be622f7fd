package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/evalcapsule/evalcapsule/analysis/internal/pyre"
	"github.com/evalcapsule/evalcapsule/harness"
)

// exactMatch is lm-eval's exact_match for one prediction and reference (the
// vendored HF evaluate metric): the ignore-regexes in order, then case, then
// punctuation, then digits, then equality.
type exactMatch struct {
	ignore      []*pyre.Regexp
	ignoreCase  bool
	ignorePunct bool
	ignoreNums  bool
}

func newExactMatch(kw harness.Value, field string) (*exactMatch, error) {
	em := &exactMatch{}
	for i, k := range kw.Keys {
		v := kw.Vals[i]
		switch k {
		case "regexes_to_ignore":
			if v.Kind == harness.Null {
				continue
			}
			if v.Kind != harness.List {
				return nil, &UnsupportedError{field + ".regexes_to_ignore", "expected a list of regexes"}
			}
			for j, e := range v.List {
				if e.Kind != harness.String {
					return nil, &UnsupportedError{fmt.Sprintf("%s.regexes_to_ignore[%d]", field, j), "expected a string"}
				}
				re, err := pyre.Compile(e.Str)
				if err != nil {
					return nil, &UnsupportedError{fmt.Sprintf("%s.regexes_to_ignore[%d]", field, j), err.Error()}
				}
				em.ignore = append(em.ignore, re)
			}
		case "ignore_case":
			em.ignoreCase, _ = v.Truth()
		case "ignore_punctuation":
			em.ignorePunct, _ = v.Truth()
		case "ignore_numbers":
			em.ignoreNums, _ = v.Truth()
		}
	}
	return em, nil
}

func (em *exactMatch) normalize(s string) string {
	for _, re := range em.ignore {
		s = re.Sub(s)
	}
	if em.ignoreCase {
		s = pyre.Lower(s)
	}
	if em.ignorePunct {
		s = strings.Map(func(r rune) rune {
			if r < 128 && strings.ContainsRune(asciiPunctuation, r) {
				return -1
			}
			return r
		}, s)
	}
	if em.ignoreNums {
		s = strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return -1
			}
			return r
		}, s)
	}
	return numpyStr(s)
}

// score returns 1 if the prediction matches any of the references. memo,
// when not nil, caches the normalized references.
func (em *exactMatch) score(pred string, golds []string, memo map[string]string) float64 {
	p := em.normalize(pred)
	for _, g := range golds {
		n, ok := memo[g]
		if !ok {
			n = em.normalize(g)
			if memo != nil {
				memo[g] = n
			}
		}
		if n == p {
			return 1
		}
	}
	return 0
}

// asciiPunctuation is Python's string.punctuation.
const asciiPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// numpyStr mimics storing a str in a numpy unicode array, which the HF
// exact_match does (np.array / np.asarray): trailing NUL characters are lost.
func numpyStr(s string) string { return strings.TrimRight(s, "\x00") }

// removeUnicodePunct deletes every character whose Unicode category starts
// with P, as MultiChoiceRegexFilter's punctuation table does.
func removeUnicodePunct(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) {
			return -1
		}
		return r
	}, s)
}

// Scale is what analysis knows of a metric's values: the range they lie in
// and how they are shown. A metric bounded in [0, 1] (acc, exact_match) is
// shown in points (×100); any other is shown in its own unit, as lm-eval
// wrote it. Intervals are clipped to the range. The zero Scale is unset:
// the views take MetricScale of the metric's name instead.
type Scale struct {
	// Lo and Hi bound the values; -Inf or +Inf where the metric is
	// unbounded on that side.
	Lo, Hi float64
	// Factor is what a value is multiplied by when shown: 100 for points,
	// 1 otherwise.
	Factor float64
	// Unit names what is shown: "points", or the metric's own unit with its
	// range ("as logged, 0 to 100"), or "as logged" for a metric whose range
	// is not known, which is never clipped.
	Unit string
	// Known is false for a metric analysis does not know, or one whose
	// values fall outside the range its name implies (f1 on SQuAD's 0-100
	// scale): then nothing is scaled or clipped.
	Known bool
}

// scaleRanges are lm-eval's metrics whose range does not follow from
// the [0, 1] rule (lm_eval/api/metrics.py and the tasks' utils): sacrebleu
// and truthfulqa's BLEU and ROUGE are on 0-100 (HF evaluate's rouge on 0-1
// fits inside), the _diff metrics are signed, perplexities are at least 1.
var scaleRanges = map[string][2]float64{
	"mcc":             {-1, 1},
	"bleu":            {0, 100},
	"chrf":            {0, 100},
	"bleu_max":        {0, 100},
	"rouge1":          {0, 100},
	"rouge2":          {0, 100},
	"rougeL":          {0, 100},
	"rougeLsum":       {0, 100},
	"rouge1_max":      {0, 100},
	"rouge2_max":      {0, 100},
	"rougeL_max":      {0, 100},
	"rougeLsum_max":   {0, 100},
	"bleu_diff":       {-100, 100},
	"rouge1_diff":     {-100, 100},
	"rouge2_diff":     {-100, 100},
	"rougeL_diff":     {-100, 100},
	"rougeLsum_diff":  {-100, 100},
	"ter":             {0, math.Inf(1)},
	"brier_score":     {0, 2},
	"perplexity":      {1, math.Inf(1)},
	"word_perplexity": {1, math.Inf(1)},
	"byte_perplexity": {1, math.Inf(1)},
	"bits_per_byte":   {0, math.Inf(1)},
}

// unitMetrics are lm-eval's metrics bounded in [0, 1]: a mean of 0/1
// per-document scores, or a rate.
var unitMetrics = map[string]bool{
	"acc": true, "acc_norm": true, "acc_mutual_info": true, "acc_all": true,
	"exact_match": true, "em": true, "f1": true, "contains": true,
	"mc1": true, "mc2": true,
	"bleu_acc": true, "rouge1_acc": true, "rouge2_acc": true, "rougeL_acc": true, "rougeLsum_acc": true,
	"prompt_level_strict_acc": true, "inst_level_strict_acc": true,
	"prompt_level_loose_acc": true, "inst_level_loose_acc": true,
}

// MetricScale returns the scale lm-eval's metric of that name is on; an
// unknown metric gets an unknown scale (shown as logged, never clipped).
func MetricScale(metric string) Scale {
	if unitMetrics[metric] || strings.HasPrefix(metric, "pass@") || strings.HasPrefix(metric, "pass_at_") {
		return Scale{Lo: 0, Hi: 1, Factor: 100, Unit: "points", Known: true}
	}
	if r, ok := scaleRanges[metric]; ok {
		return Scale{Lo: r[0], Hi: r[1], Factor: 1, Unit: "as logged, " + rangeText(r[0], r[1]), Known: true}
	}
	return unknownScale
}

var unknownScale = Scale{Lo: math.Inf(-1), Hi: math.Inf(1), Factor: 1, Unit: "as logged", Known: false}

// ScaleOf is MetricScale checked against the values seen: when one of them
// lies outside the range the name implies, the scale is unknown (nothing
// scaled or clipped) rather than a range the data contradicts.
func ScaleOf(metric string, values ...float64) Scale {
	s := MetricScale(metric)
	if !s.Known {
		return s
	}
	for _, v := range values {
		if v < s.Lo || v > s.Hi {
			return unknownScale
		}
	}
	return s
}

// rangeText writes a range as the unit column shows it.
func rangeText(lo, hi float64) string {
	switch {
	case math.IsInf(lo, -1) && math.IsInf(hi, 1):
		return "unbounded"
	case math.IsInf(hi, 1):
		return fmt.Sprintf("%g or more", lo)
	}
	return fmt.Sprintf("%g to %g", lo, hi)
}

// set reports whether s was filled in (the zero Scale is unset).
func (s Scale) set() bool { return s.Factor != 0 }

// Points reports whether values are shown in points (×100).
func (s Scale) Points() bool { return s.Known && s.Factor == 100 }

// Diff is the scale of a difference of two values on s: the same unit,
// the range of hi − lo either way ([-1, 1] for two [0, 1] metrics).
func (s Scale) Diff() Scale {
	d := s
	if s.Known {
		d.Lo, d.Hi = s.Lo-s.Hi, s.Hi-s.Lo
		if s.Factor == 1 {
			d.Unit = "as logged, " + rangeText(d.Lo, d.Hi)
		}
	}
	return d
}

// Clip bounds an interval to the scale's range; an unknown scale leaves it
// as it is. NaN bounds stay NaN.
func (s Scale) Clip(lo, hi float64) (float64, float64) {
	if !s.Known {
		return lo, hi
	}
	return clamp(lo, s.Lo, s.Hi), clamp(hi, s.Lo, s.Hi)
}

func clamp(x, lo, hi float64) float64 {
	switch {
	case x < lo:
		return lo
	case x > hi:
		return hi
	}
	return x
}

// Format shows a value in the scale's unit: points with two decimals,
// anything else with four significant digits. A
// value that cannot be shown (NaN) is "n/a"; callers that know why say so.
func (s Scale) Format(x float64) string { return s.format(x, "") }

// FormatDelta shows a difference, signed.
func (s Scale) FormatDelta(x float64) string { return s.format(x, "+") }

// FormatCI shows an interval of differences (signed) or of values.
func (s Scale) FormatCI(lo, hi float64, signed bool) string {
	flag := ""
	if signed {
		flag = "+"
	}
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "n/a"
	}
	return "[" + s.format(lo, flag) + ", " + s.format(hi, flag) + "]"
}

func (s Scale) format(x float64, flag string) string {
	if !s.set() {
		s = unknownScale
	}
	switch {
	case math.IsNaN(x):
		return "n/a"
	case math.IsInf(x, 0):
		return fmt.Sprintf("%"+flag+"v", x)
	}
	if s.Points() {
		return fmt.Sprintf("%"+flag+".2f", 100*x)
	}
	// A metric in its own unit may be 13.83 (BLEU on 0-100) or 0.27 (HF
	// evaluate's BLEU on 0-1) under one name: significant digits show both.
	return fmt.Sprintf("%"+flag+".4g", x)
}

// MarshalJSON writes the scale as {"unit", "factor", "lo", "hi", "known"},
// an unbounded side as null.
func (s Scale) MarshalJSON() ([]byte, error) {
	bound := func(x float64) *float64 {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil
		}
		return &x
	}
	return json.Marshal(scaleJSON{Unit: s.Unit, Factor: s.Factor, Lo: bound(s.Lo), Hi: bound(s.Hi), Known: s.Known})
}

// UnmarshalJSON inverts MarshalJSON: a null bound is unbounded.
func (s *Scale) UnmarshalJSON(b []byte) error {
	var j scaleJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Scale{Lo: math.Inf(-1), Hi: math.Inf(1), Factor: j.Factor, Unit: j.Unit, Known: j.Known}
	if j.Lo != nil {
		s.Lo = *j.Lo
	}
	if j.Hi != nil {
		s.Hi = *j.Hi
	}
	return nil
}

type scaleJSON struct {
	Unit   string   `json:"unit"`
	Factor float64  `json:"factor"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
	Known  bool     `json:"known"`
}
