package analysis

import (
	"math"
	"strings"
	"unicode"
)

// This file re-implements sacrebleu's TER (2.x, metrics/lib_ter.py) with
// lm-eval's settings (sacrebleu's defaults: lowercased, not normalized,
// punctuation kept): Tercom's greedy shifts, each the one that lowers the
// beam-searched edit distance the most, then the edit distance of the
// shifted hypothesis. sacrebleu's cache of edit-distance rows only saves
// time (every hypothesis it sees within one sentence has the same length,
// so the beam is the same), and is left out.

const (
	terMaxShiftSize       = 10
	terMaxShiftDist       = 50
	terBeamWidth          = 25
	terMaxShiftCandidates = 1000
	terInf                = int(1e16)
)

// terTokenize is TercomTokenizer with case_sensitive=False: Python's
// str.lower(), then whitespace runs collapsed.
func terTokenize(s string) []string {
	var b strings.Builder
	for _, r := range s {
		if r == 0x130 {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return pyFields(b.String())
}

type terCell struct {
	cost int
	op   byte
}

// terEditDistance is BeamEditDistance: the edit distance of hyp to ref
// over a beam around the length-scaled diagonal, and the trace of
// operations (' ' keep, 's' substitute, 'd' drop a hypothesis word, 'i'
// insert a reference word).
func terEditDistance(hyp, ref []string) (int, string) {
	nh, nr := len(hyp), len(ref)
	dist := make([][]terCell, nh+1)
	dist[0] = make([]terCell, nr+1)
	for j := range dist[0] {
		dist[0][j] = terCell{j, 'i'}
	}
	for i := 1; i <= nh; i++ {
		dist[i] = make([]terCell, nr+1)
		for j := range dist[i] {
			dist[i][j] = terCell{terInf, 'x'}
		}
	}
	ratio := 1.0
	if nh > 0 {
		ratio = float64(nr) / float64(nh)
	}
	beam := terBeamWidth
	if float64(terBeamWidth) < ratio/2 {
		beam = int(math.Ceil(ratio/2 + terBeamWidth))
	}
	for i := 1; i <= nh; i++ {
		diag := int(math.Floor(float64(i) * ratio))
		minJ := max(0, diag-beam)
		maxJ := min(nr+1, diag+beam)
		if i == nh {
			maxJ = nr + 1
		}
		for j := minJ; j < maxJ; j++ {
			if j == 0 {
				dist[i][j] = terCell{dist[i-1][j].cost + 1, 'd'}
				continue
			}
			sub, op := 1, byte('s')
			if hyp[i-1] == ref[j-1] {
				sub, op = 0, ' '
			}
			for _, c := range [3]terCell{{dist[i-1][j-1].cost + sub, op}, {dist[i-1][j].cost + 1, 'd'}, {dist[i][j-1].cost + 1, 'i'}} {
				if dist[i][j].cost > c.cost {
					dist[i][j] = c
				}
			}
		}
	}
	var trace []byte
	i, j := nh, nr
	for i > 0 || j > 0 {
		op := dist[i][j].op
		trace = append(trace, op)
		switch op {
		case 's', ' ':
			i--
			j--
		case 'i':
			j--
		case 'd':
			i--
		default:
			// sacrebleu raises here (a cell outside the beam); lm-eval
			// would have crashed, so no logged score has one.
			i, j = 0, 0
		}
	}
	for a, b := 0, len(trace)-1; a < b; a, b = a+1, b-1 {
		trace[a], trace[b] = trace[b], trace[a]
	}
	return dist[nh][nr].cost, string(trace)
}

// terShift is _shift: the best shift of a block of hyp onto a matching
// block of ref, by (gain, length, earliest start, earliest target, words).
func terShift(hyp, ref []string, checked int) (int, []string, int) {
	pre, inv := terEditDistance(hyp, ref)
	// _flip_trace, then trace_to_alignment.
	align := map[int]int{}
	var refErr, hypErr []int
	ph, pr := -1, -1
	for k := 0; k < len(inv); k++ {
		switch inv[k] {
		case ' ', 's':
			e := 0
			if inv[k] == 's' {
				e = 1
			}
			ph++
			pr++
			align[pr] = ph
			hypErr, refErr = append(hypErr, e), append(refErr, e)
		case 'd': // flipped to an insertion: a hypothesis word
			ph++
			hypErr = append(hypErr, 1)
		case 'i': // flipped to a deletion: a reference word
			pr++
			align[pr] = ph
			refErr = append(refErr, 1)
		}
	}
	sum := func(xs []int, from, n int) int {
		s := 0
		for k := from; k < from+n && k < len(xs); k++ {
			s += xs[k]
		}
		return s
	}
	type cand struct {
		gain, length, negStart, negIdx int
		words                          []string
	}
	better := func(a, b cand) bool { // a > b as Python compares the tuples
		switch {
		case a.gain != b.gain:
			return a.gain > b.gain
		case a.length != b.length:
			return a.length > b.length
		case a.negStart != b.negStart:
			return a.negStart > b.negStart
		case a.negIdx != b.negIdx:
			return a.negIdx > b.negIdx
		}
		for k := 0; k < len(a.words) && k < len(b.words); k++ {
			if a.words[k] != b.words[k] {
				return a.words[k] > b.words[k]
			}
		}
		return len(a.words) > len(b.words)
	}
	var best *cand
	nh, nr := len(hyp), len(ref)
outer:
	for sh := 0; sh < nh; sh++ {
		for sr := 0; sr < nr; sr++ {
			if d := sr - sh; d > terMaxShiftDist || -d > terMaxShiftDist {
				continue
			}
			for length := 0; hyp[sh+length] == ref[sr+length] && length < terMaxShiftSize; {
				length++
				if sum(hypErr, sh, length) != 0 && sum(refErr, sr, length) != 0 {
					if a, ok := align[sr]; !(ok && sh <= a && a < sh+length) {
						prev := -1
						for off := -1; off < length; off++ {
							var idx int
							if sr+off == -1 {
								idx = 0
							} else if a, ok := align[sr+off]; ok {
								idx = a + 1
							} else {
								break
							}
							if idx == prev {
								continue
							}
							prev = idx
							words := terPerformShift(hyp, sh, length, idx)
							d, _ := terEditDistance(words, ref)
							c := cand{pre - d, length, -sh, -idx, words}
							checked++
							if best == nil || better(c, *best) {
								best = &c
							}
						}
						// Only a pair that was tried stops the search
						// (sacrebleu's continue skips the test).
						if checked >= terMaxShiftCandidates {
							break outer
						}
					}
				}
				if nh == sh+length || nr == sr+length {
					break
				}
			}
		}
	}
	if best == nil {
		return 0, hyp, checked
	}
	return best.gain, best.words, checked
}

// terPerformShift is _perform_shift: the block words[start:start+length]
// moved to before position target.
func terPerformShift(w []string, start, length, target int) []string {
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	clip := func(a, b int) []string {
		a, b = min(max(a, 0), len(w)), min(max(b, 0), len(w))
		if a > b {
			return nil
		}
		return w[a:b]
	}
	switch {
	case target < start:
		return cat(clip(0, target), clip(start, start+length), clip(target, start), clip(start+length, len(w)))
	case target > start+length:
		return cat(clip(0, start), clip(start+length, target), clip(start, start+length), clip(target, len(w)))
	}
	return cat(clip(0, start), clip(start+length, length+target), clip(start, start+length), clip(length+target, len(w)))
}

// translationEditRate is translation_edit_rate: shifts plus the edit
// distance after them, and the reference length.
func translationEditRate(hyp, ref []string) (int, int) {
	if len(ref) == 0 {
		return len(hyp), 0
	}
	shifts, checked := 0, 0
	input := hyp
	for {
		delta, next, c := terShift(input, ref, checked)
		checked = c
		if checked >= terMaxShiftCandidates || delta <= 0 {
			break
		}
		shifts++
		input = next
	}
	d, _ := terEditDistance(input, ref)
	return shifts + d, len(ref)
}

// terScore is TER._compute_score_from_stats over summed (edits, reference
// length) statistics.
func terScore(edits int, refLen float64) float64 {
	switch {
	case refLen > 0:
		return 100 * (float64(edits) / refLen)
	case edits > 0:
		return 100
	}
	return 0
}
