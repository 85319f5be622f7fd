package analysis

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/evalcapsule/evalcapsule/harness"
)

// lm-eval's bleu, chrf and ter aggregations: sacrebleu.corpus_bleu(preds,
// refs), corpus_chrf and corpus_ter with sacrebleu's defaults (BLEU:
// tokenizer 13a, exp smoothing, no effective order; chrF: character order
// 6, no word n-grams, beta 2, no epsilon smoothing, whitespace dropped; TER:
// lowercased, see ter.go) over the (reference, prediction) items of the
// documents, one reference each.

var (
	re13aSymbols = regexp.MustCompile(`([\{-\~\[-\` + "`" + ` -\&\(-\+\:-\@\/])`)
	re13aPunct1  = regexp.MustCompile(`([^0-9])([\.,])`)
	re13aPunct2  = regexp.MustCompile(`([\.,])([^0-9])`)
	re13aDash    = regexp.MustCompile(`([0-9])(-)`)
)

// tokenize13a is sacrebleu's Tokenizer13a (mteval-v13a).
func tokenize13a(line string) string {
	line = strings.ReplaceAll(line, "<skipped>", "")
	line = strings.ReplaceAll(line, "-\n", "")
	line = strings.ReplaceAll(line, "\n", " ")
	if strings.Contains(line, "&") {
		line = strings.ReplaceAll(line, "&quot;", `"`)
		line = strings.ReplaceAll(line, "&amp;", "&")
		line = strings.ReplaceAll(line, "&lt;", "<")
		line = strings.ReplaceAll(line, "&gt;", ">")
	}
	line = " " + line + " "
	line = re13aSymbols.ReplaceAllString(line, " ${1} ")
	line = re13aPunct1.ReplaceAllString(line, "${1} ${2} ")
	line = re13aPunct2.ReplaceAllString(line, " ${1} ${2}")
	line = re13aDash.ReplaceAllString(line, "${1} ${2} ")
	return strings.Join(pyFields(line), " ")
}

// corpusScorer scores resamples of the items of one corpus metric from
// per-item statistics computed once.
type corpusScorer struct {
	agg  string
	bleu []bleuStats
	chrf [][chrfOrder][3]int
	ter  [][2]int // edits, reference length
	rule Summation
}

func newCorpusScorer(agg string, refs, preds []string, rule Summation) *corpusScorer {
	cs := &corpusScorer{agg: agg, rule: rule}
	for i := range preds {
		switch agg {
		case "bleu":
			cs.bleu = append(cs.bleu, segmentBLEUStats(tokenize13a(pyRstrip(preds[i])), []string{tokenize13a(pyRstrip(refs[i]))}))
		case "chrf":
			cs.chrf = append(cs.chrf, chrfStats(preds[i], refs[i]))
		default:
			e, l := translationEditRate(terTokenize(pyRstrip(preds[i])), terTokenize(pyRstrip(refs[i])))
			cs.ter = append(cs.ter, [2]int{e, l})
		}
	}
	return cs
}

// score is the corpus score of the items idx (all of them when nil).
func (cs *corpusScorer) score(idx []int) float64 {
	n := len(cs.bleu) + len(cs.chrf) + len(cs.ter)
	at := func(k int) int {
		if idx == nil {
			return k
		}
		return idx[k]
	}
	if idx != nil {
		n = len(idx)
	}
	if cs.agg == "ter" {
		// sum_of_lists: an int total of edits, a float one of lengths
		// (integers, so exact).
		edits, refLen := 0, 0.0
		for k := 0; k < n; k++ {
			edits += cs.ter[at(k)][0]
			refLen += float64(cs.ter[at(k)][1])
		}
		return terScore(edits, refLen)
	}
	if cs.agg == "bleu" {
		var st bleuStats
		for k := 0; k < n; k++ {
			st.add(cs.bleu[at(k)])
		}
		return bleuScore(st, cs.rule)
	}
	var st [chrfOrder][3]int
	for k := 0; k < n; k++ {
		s := cs.chrf[at(k)]
		for o := range st {
			for j := range st[o] {
				st[o][j] += s[o][j]
			}
		}
	}
	return chrfScore(st)
}

// chrfOrder is chrF's CHAR_ORDER (word_order 0).
const chrfOrder = 6

// charNgrams is extract_all_char_ngrams without whitespace: the counts of
// the character n-grams, n = 1..6, of the line with all whitespace removed.
func charNgrams(line string) [chrfOrder]map[string]int {
	r := []rune(strings.Join(pyFields(line), ""))
	var out [chrfOrder]map[string]int
	for n := 1; n <= chrfOrder; n++ {
		m := map[string]int{}
		for i := 0; i+n <= len(r); i++ {
			m[string(r[i:i+n])]++
		}
		out[n-1] = m
	}
	return out
}

// chrfStats is CHRF._compute_segment_statistics for one reference: per
// order, [hypothesis n-grams (0 when the reference has none), reference
// n-grams, matches].
func chrfStats(hyp, ref string) [chrfOrder][3]int {
	h, r := charNgrams(hyp), charNgrams(ref)
	var out [chrfOrder][3]int
	for o := 0; o < chrfOrder; o++ {
		match, hc := 0, 0
		for g, c := range h[o] {
			hc += c
			if rc, ok := r[o][g]; ok {
				match += min(c, rc)
			}
		}
		rc := 0
		for _, c := range r[o] {
			rc += c
		}
		if len(r[o]) == 0 {
			hc = 0
		}
		out[o] = [3]int{hc, rc, match}
	}
	return out
}

// chrfScore is CHRF._compute_f_score without epsilon smoothing: the
// F-beta (beta 2) of the precision and recall averaged over the orders
// where both sides have n-grams.
func chrfScore(st [chrfOrder][3]int) float64 {
	const factor = 4 // beta ** 2
	var avgPrec, avgRec float64
	eff := 0
	for _, s := range st {
		nHyp, nRef, nMatch := s[0], s[1], s[2]
		if nHyp > 0 && nRef > 0 {
			avgPrec += float64(nMatch) / float64(nHyp)
			avgRec += float64(nMatch) / float64(nRef)
			eff++
		}
	}
	if eff == 0 {
		avgPrec, avgRec = 0, 0
	} else {
		avgPrec /= float64(eff)
		avgRec /= float64(eff)
	}
	if avgPrec+avgRec != 0 {
		score := (1 + factor) * avgPrec * avgRec
		score /= float64(factor*avgPrec) + avgRec // no fused multiply-add: Python rounds the product
		return 100 * score
	}
	return 0
}

// textItem is the per-doc item of lm-eval's passthrough sacrebleu metrics
// (bleu, chrf, ter with their registry aggregation): [gold, prediction]. ok
// reports an item; why, when not ok and not "", why the metric is one of
// them but cannot be re-scored here.
func (ts *taskScorer) textItem(s *harness.Sample, dc *docContext, name, pred string) (perDoc, bool, string) {
	switch name {
	case "bleu", "chrf", "ter":
	default:
		return perDoc{}, false, ""
	}
	if agg, custom := ts.aggregation(name); custom || agg != name {
		return perDoc{}, false, ""
	}
	golds, multi, err := ts.golds(s, dc)
	if err != nil {
		return perDoc{}, false, err.Error()
	}
	if multi {
		return perDoc{}, false, fmt.Sprintf("per-doc %s with multiple targets is not re-implemented", name)
	}
	return perDoc{name: name, texts: []string{golds[0], pred}}, true, ""
}

// corpusCheck ends a check whose aggregation is sacrebleu's corpus BLEU,
// chrF or TER over (reference, prediction) items: the value of all items, and
// lm-eval's bootstrap stderr (min(bootstrap_iters, 100) resamples, each a
// corpus score).
func (st *runState) corpusCheck(c Check, notes []string, perDocDiffers, rescored bool, agg string, texts [][]string, ac aggContext) Check {
	refs := make([]string, len(texts))
	preds := make([]string, len(texts))
	for i, t := range texts {
		refs[i], preds[i] = t[0], t[1]
	}
	var tried []string
	for _, rule := range st.pyRules {
		cs := newCorpusScorer(agg, refs, preds, rule)
		val := Num(cs.score(nil))
		se := NA
		sr := StderrFor(ac.metric, agg, ac.iters, len(texts), ac.patch)
		why := "sacrebleu corpus_" + agg
		if sr.Method == StderrBootstrap {
			se = Num(BootstrapStderr(len(texts), cs.score, sr.Iters, PyFloat, rule))
			why += fmt.Sprintf(", bootstrap stderr (%d resamples, %s summation)", sr.Iters, rule)
		}
		tried = append(tried, why)
		if st.res == nil || (val.Equal(c.Reported) && se.Equal(c.ReportedStderr)) {
			c.Recomputed, c.RecomputedStderr = val, se
			c.Reason = strings.Join(append([]string{why}, notes...), "; ")
			c.Status = StatusExact
			if perDocDiffers {
				c.Status = StatusDiffers
			} else if st.res == nil && !rescored {
				c.Status = StatusNotRecomputable
			}
			return c
		}
		if c.Recomputed == (Number{}) {
			c.Recomputed, c.RecomputedStderr = val, se
		}
	}
	c.Status = StatusDiffers
	c.Reason = strings.Join(append([]string{"differs under " + strings.Join(tried, " and under ")}, notes...), "; ")
	return c
}
