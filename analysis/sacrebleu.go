package analysis

import (
	"math"
	"regexp"
	"strings"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// This file re-implements the parts of sacrebleu (2.x) that lm-eval calls:
// BLEU's sufficient statistics (n-gram matches clipped by the references,
// closest reference length), its score with the "exp" smoothing (NIST's
// method 3) and the "intl" tokenizer (mteval-v14's international
// tokenization). Every float operation is the one sacrebleu performs, in
// its order, so that the bits agree: math.exp and math.log are the C
// library's (pynum), the sum of the log precisions is CPython's sum() of
// floats under the run's summation rule.

// bleuMaxOrder is sacrebleu's MAX_NGRAM_ORDER.
const bleuMaxOrder = 4

// pyIsSpace and pyFields (str.isspace, str.split()) are in ifeval.go.

// pyRstrip is Python's str.rstrip() without arguments.
func pyRstrip(s string) string { return strings.TrimRightFunc(s, pyIsSpace) }

var (
	intlPunctAfterNonDigit  = regexp.MustCompile(`(\PN)(\pP)`)
	intlPunctBeforeNonDigit = regexp.MustCompile(`(\pP)(\PN)`)
	intlSymbol              = regexp.MustCompile(`(\pS)`)
)

// tokenizeIntl is sacrebleu's TokenizerV14International: punctuation not
// between digits and every symbol become tokens of their own. The Unicode
// categories are Go's tables; the regex module's may be of another Unicode
// version, which only matters for characters assigned in between.
func tokenizeIntl(line string) string {
	line = intlPunctAfterNonDigit.ReplaceAllString(line, "${1} ${2} ")
	line = intlPunctBeforeNonDigit.ReplaceAllString(line, " ${1} ${2}")
	line = intlSymbol.ReplaceAllString(line, " ${1} ")
	return strings.Join(pyFields(line), " ")
}

// bleuStats are sacrebleu's segment statistics: hypothesis length, closest
// reference length, matches and totals per n-gram order.
type bleuStats struct {
	sysLen, refLen int
	correct        [bleuMaxOrder]int
	total          [bleuMaxOrder]int
}

func (s *bleuStats) add(o bleuStats) {
	s.sysLen += o.sysLen
	s.refLen += o.refLen
	for i := range s.correct {
		s.correct[i] += o.correct[i]
		s.total[i] += o.total[i]
	}
}

// wordNgrams is extract_all_word_ngrams: the counts of the 1..4-grams of
// the whitespace-separated tokens, keyed by the tokens joined with \x00.
func wordNgrams(line string) (map[string]int, int) {
	toks := pyFields(line)
	out := map[string]int{}
	for n := 1; n <= bleuMaxOrder; n++ {
		for i := 0; i+n <= len(toks); i++ {
			out[strings.Join(toks[i:i+n], "\x00")]++
		}
	}
	return out, len(toks)
}

// segmentBLEUStats computes the statistics of one hypothesis against its
// references, both already tokenized: reference n-gram counts are the
// maximum over the references; the reference length is the closest to the
// hypothesis length, the shorter on a tie.
func segmentBLEUStats(hyp string, refs []string) bleuStats {
	hypNgrams, hypLen := wordNgrams(hyp)
	return segmentBLEUStatsOf(hypNgrams, hypLen, refs)
}

// segmentBLEUStatsOf is segmentBLEUStats of a hypothesis whose n-grams are
// counted already (one hypothesis scored against many references).
func segmentBLEUStatsOf(hypNgrams map[string]int, hypLen int, refs []string) bleuStats {
	var refNgrams map[string]int
	var refLens []int
	for _, r := range refs {
		ng, l := wordNgrams(r)
		refLens = append(refLens, l)
		if refNgrams == nil {
			refNgrams = ng
			continue
		}
		for k, c := range ng {
			if c > refNgrams[k] {
				refNgrams[k] = c
			}
		}
	}
	st := bleuStats{sysLen: hypLen}
	closestDiff, closestLen := -1, -1
	for _, l := range refLens {
		d := hypLen - l
		if d < 0 {
			d = -d
		}
		if closestDiff == -1 || d < closestDiff {
			closestDiff, closestLen = d, l
		} else if d == closestDiff && l < closestLen {
			closestLen = l
		}
	}
	st.refLen = closestLen
	for k, c := range hypNgrams {
		n := strings.Count(k, "\x00")
		st.total[n] += c
		if rc, ok := refNgrams[k]; ok {
			st.correct[n] += min(c, rc)
		}
	}
	return st
}

// bleuLog is sacrebleu's my_log: log floored at -9999999999 for 0.
func bleuLog(x float64) float64 {
	if x == 0 {
		return -9999999999
	}
	return pynum.Log(x)
}

// bleuScore is sacrebleu's BLEU.compute_bleu with smooth_method "exp" and
// no effective order (lm-eval's settings): brevity penalty times the
// geometric mean of the precisions, a precision without matches replaced
// by 100 / (2^k · total) for the k-th such order.
func bleuScore(st bleuStats, rule Summation) float64 {
	bp := 1.0
	if st.sysLen < st.refLen {
		bp = 0
		if st.sysLen > 0 {
			bp = pynum.Exp(1 - float64(st.refLen)/float64(st.sysLen))
		}
	}
	any := false
	for _, c := range st.correct {
		if c != 0 {
			any = true
		}
	}
	if !any {
		return 0
	}
	var prec [bleuMaxOrder]float64
	smooth := 1.0
	for n := 0; n < bleuMaxOrder; n++ {
		if st.total[n] == 0 {
			break
		}
		if st.correct[n] == 0 {
			smooth *= 2
			prec[n] = 100 / (smooth * float64(st.total[n]))
		} else {
			prec[n] = 100 * float64(st.correct[n]) / float64(st.total[n])
		}
	}
	logs := make([]float64, bleuMaxOrder)
	for i, p := range prec {
		logs[i] = bleuLog(p)
	}
	return bp * pynum.Exp(pynum.Sum(logs, PyFloat, rule)/bleuMaxOrder)
}

// sentenceBLEUIntl is sacrebleu.corpus_bleu([hyp], [[ref]...]) with
// tokenize="intl", smooth_method="exp", no lowercasing and no effective
// order: what lm-eval's truthfulqa bleu() computes for one pair.
func sentenceBLEUIntl(hyp string, refs []string, rule Summation) float64 {
	return newIntlHyp(hyp).bleu(refs, rule)
}

// intlHyp is a hypothesis tokenized and counted once, to be scored
// against several references.
type intlHyp struct {
	ngrams map[string]int
	n      int
}

func newIntlHyp(hyp string) intlHyp {
	ng, n := wordNgrams(tokenizeIntl(pyRstrip(hyp)))
	return intlHyp{ng, n}
}

func (h intlHyp) bleu(refs []string, rule Summation) float64 {
	toks := make([]string, len(refs))
	for i, r := range refs {
		toks[i] = tokenizeIntl(pyRstrip(r))
	}
	return bleuScore(segmentBLEUStatsOf(h.ngrams, h.n, toks), rule)
}

// isNaN is a shorthand used by the nanmax helpers.
func isNaN(x float64) bool { return math.IsNaN(x) }
