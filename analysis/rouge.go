package analysis

import (
	"strings"
	"unicode"
)

// This file re-implements Google's rouge-score (0.1.2, the rouge_score
// package lm-eval installs) as lm-eval's truthfulqa rouge() calls it:
// RougeScorer(["rouge1", "rouge2", "rougeLsum"]) with the default tokenizer
// and no stemmer. Scores are F-measures 2·p·r/(p+r) of precision and recall
// computed as Python does (int / int, then the float operations in order).

// rougeTokenize is rouge-score's DefaultTokenizer without stemming:
// lowercase, every run of characters other than [a-z0-9] becomes a space,
// the non-empty pieces are the tokens.
func rougeTokenize(text string) []string {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		// Python's str.lower(): one character's lowercase may be ASCII
		// (U+212A KELVIN SIGN -> k); U+0130 lowercases to "i\u0307".
		if r == 0x130 {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	lower := b.String()
	var toks []string
	start := -1
	for i := 0; i <= len(lower); i++ {
		alnum := i < len(lower) && (lower[i] >= 'a' && lower[i] <= 'z' || lower[i] >= '0' && lower[i] <= '9')
		switch {
		case alnum && start < 0:
			start = i
		case !alnum && start >= 0:
			toks = append(toks, lower[start:i])
			start = -1
		}
	}
	return toks
}

// rougeF is scoring.fmeasure.
func rougeF(p, r float64) float64 {
	if p+r > 0 {
		return 2 * p * r / (p + r)
	}
	return 0
}

// rougeN is rouge-score's _score_ngrams F-measure of the n-grams of target
// and prediction.
func rougeN(target, pred []string, n int) float64 {
	count := func(toks []string) (map[string]int, int) {
		m := map[string]int{}
		total := 0
		for i := 0; i+n <= len(toks); i++ {
			m[strings.Join(toks[i:i+n], " ")]++
			total++
		}
		return m, total
	}
	tg, tn := count(target)
	pg, pn := count(pred)
	inter := 0
	for k, c := range tg {
		inter += min(c, pg[k])
	}
	p := float64(inter) / float64(max(pn, 1))
	r := float64(inter) / float64(max(tn, 1))
	return rougeF(p, r)
}

// lcsTable is rouge-score's _lcs_table.
func lcsTable(ref, can []string) [][]int {
	t := make([][]int, len(ref)+1)
	for i := range t {
		t[i] = make([]int, len(can)+1)
	}
	for i := 1; i <= len(ref); i++ {
		for j := 1; j <= len(can); j++ {
			if ref[i-1] == can[j-1] {
				t[i][j] = t[i-1][j-1] + 1
			} else {
				t[i][j] = max(t[i-1][j], t[i][j-1])
			}
		}
	}
	return t
}

// rougeL is _score_lcs: the LCS F-measure of the whole token lists
// (rouge-score's "rougeL"; truthfulqa's rougeL_* use rougeLsum).
func rougeL(target, pred []string) float64 {
	if len(target) == 0 || len(pred) == 0 {
		return 0
	}
	t := lcsTable(target, pred)
	l := t[len(target)][len(pred)]
	return rougeF(float64(l)/float64(len(pred)), float64(l)/float64(len(target)))
}

// lcsIndices is lcs_ind: the indices into ref of one longest common
// subsequence, read back as _backtrack_norec does.
func lcsIndices(ref, can []string) []int {
	t := lcsTable(ref, can)
	var out []int
	i, j := len(ref), len(can)
	for i > 0 && j > 0 {
		switch {
		case ref[i-1] == can[j-1]:
			out = append(out, i-1)
			i--
			j--
		case t[i][j-1] > t[i-1][j]:
			j--
		default:
			i--
		}
	}
	for a, b := 0, len(out)-1; a < b; a, b = a+1, b-1 {
		out[a], out[b] = out[b], out[a]
	}
	return out
}

// rougeSentences splits a text on "\n" and tokenizes the non-empty lines,
// as rougeLsum's get_sents does (split_summaries=False).
func rougeSentences(text string) [][]string {
	var out [][]string
	for _, s := range strings.Split(text, "\n") {
		if s != "" {
			out = append(out, rougeTokenize(s))
		}
	}
	return out
}

// rougeLsum is _summary_level_lcs: the union LCS of each reference line
// against every candidate line, each token counted at most as often as it
// occurs on both sides.
func rougeLsum(target, pred string) float64 {
	refs, cans := rougeSentences(target), rougeSentences(pred)
	if len(refs) == 0 || len(cans) == 0 {
		return 0
	}
	m, n := 0, 0
	cntR, cntC := map[string]int{}, map[string]int{}
	for _, s := range refs {
		m += len(s)
		for _, t := range s {
			cntR[t]++
		}
	}
	for _, s := range cans {
		n += len(s)
		for _, t := range s {
			cntC[t]++
		}
	}
	if m == 0 || n == 0 {
		return 0
	}
	hits := 0
	for _, r := range refs {
		union := map[int]bool{}
		for _, c := range cans {
			for _, i := range lcsIndices(r, c) {
				union[i] = true
			}
		}
		for i := range r { // sorted(set().union(...)): ascending indices
			if !union[i] {
				continue
			}
			t := r[i]
			if cntC[t] > 0 && cntR[t] > 0 {
				hits++
				cntC[t]--
				cntR[t]--
			}
		}
	}
	return rougeF(float64(hits)/float64(n), float64(hits)/float64(m))
}

// truthfulQARouge is lm-eval's truthfulqa rouge([ref], [pred]): " . " is
// replaced by ".\n" in both texts (so that rougeLsum sees sentences), and
// each F-measure is scaled by 100. The BootstrapAggregator over a single
// score returns that score: the mean of one value, then percentiles of 1000
// equal means.
func truthfulQARouge(ref, pred string) (r1, r2, rLsum float64) {
	ref = strings.ReplaceAll(ref, " . ", ".\n")
	pred = strings.ReplaceAll(pred, " . ", ".\n")
	rt, pt := rougeTokenize(ref), rougeTokenize(pred)
	return rougeN(rt, pt, 1) * 100, rougeN(rt, pt, 2) * 100, rougeLsum(ref, pred) * 100
}
