package harness

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is an lm-eval release number, e.g. {0,4,9,1} for 0.4.9.1.
type Version [4]int

// ParseVersion reads "0.4.9.1", "v0.4.3", "0.4.13.dev0" (dev suffixes are
// dropped: a dev build behaves like the release it follows).
func ParseVersion(s string) (Version, error) {
	var v Version
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.Split(s, ".")
	n := 0
	for _, p := range parts {
		if n == 4 {
			break
		}
		i, err := strconv.Atoi(p)
		if err != nil {
			break
		}
		v[n] = i
		n++
	}
	if n < 2 {
		return v, fmt.Errorf("%w: invalid lm-eval version %q", ErrInvalidSetting, s)
	}
	return v, nil
}

// MustVersion is ParseVersion for constants.
func MustVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

func (v Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2])
	if v[3] != 0 {
		s += fmt.Sprintf(".%d", v[3])
	}
	return s
}

// Less orders versions.
func (v Version) Less(w Version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

// AtLeast reports v >= w.
func (v Version) AtLeast(w Version) bool { return !v.Less(w) }

// Releases lists the lm-eval releases whose output the readers know, in order.
var Releases = []Version{
	{0, 4, 0}, {0, 4, 1}, {0, 4, 2}, {0, 4, 3}, {0, 4, 4}, {0, 4, 5}, {0, 4, 6},
	{0, 4, 7}, {0, 4, 8}, {0, 4, 9}, {0, 4, 9, 1}, {0, 4, 9, 2}, {0, 4, 10},
	{0, 4, 11}, {0, 4, 12}, {0, 4, 13},
}

// VersionRange is what a results file tells about the lm-eval that wrote it:
// the oldest and newest release whose behaviour it can have. A file that
// names its version has Lo == Hi (a development build behaves like the
// release it follows).
type VersionRange struct {
	Lo, Hi Version
	// Evidence says, in words, what decided the range.
	Evidence []string
}

// Exact reports whether the range is one release.
func (r VersionRange) Exact() bool { return r.Lo == r.Hi }

func (r VersionRange) String() string {
	if r.Exact() {
		return r.Lo.String()
	}
	return r.Lo.String() + "–" + r.Hi.String()
}

// Within reports whether every version in the range is in [lo, hi].
func (r VersionRange) Within(lo, hi Version) bool { return r.Lo.AtLeast(lo) && !hi.Less(r.Hi) }

// Overlaps reports whether some version in the range is in [lo, hi].
func (r VersionRange) Overlaps(lo, hi Version) bool { return !r.Hi.Less(lo) && !hi.Less(r.Lo) }

// DetectVersion decides which lm-eval releases could have written the file,
// in the order lm-eval-semantics prescribes: the lm_eval_version key, then the
// keys each release added. samplesHaveFilter tells whether its samples lines
// carry "filter" (added in v0.4.7); legacyArray whether its samples are JSON
// arrays (v0.4.0-v0.4.2). (git_hash is not used: it is the working directory's
// commit, the harness's only when lm-eval ran from a checkout.)
func DetectVersion(r *Results, samplesHaveFilter, legacyArray bool) VersionRange {
	first, last := Releases[0], Releases[len(Releases)-1]
	vr := VersionRange{Lo: first, Hi: last}
	if s := r.String("lm_eval_version"); s != "" {
		if v, err := ParseVersion(s); err == nil {
			vr.Lo, vr.Hi = v, v
			vr.Evidence = append(vr.Evidence, fmt.Sprintf("lm_eval_version %q", s))
			return vr
		}
	}
	atLeast := func(v Version, why string) {
		if vr.Lo.Less(v) {
			vr.Lo = v
			vr.Evidence = append(vr.Evidence, why)
		}
	}
	atMost := func(v Version, why string) {
		if v.Less(vr.Hi) {
			vr.Hi = v
			vr.Evidence = append(vr.Evidence, why)
		}
	}
	d := r.Doc
	atMost(Version{0, 4, 8}, "no lm_eval_version key (added after v0.4.8)")
	for _, t := range r.Tasks {
		if t.Placeholder {
			atLeast(Version{0, 4, 4}, `a group entry {" ": " "} (v0.4.4+)`)
		}
	}
	if res, ok := d.Get("results"); ok {
		for _, v := range res.Vals {
			if v.Has("sample_len") {
				atLeast(Version{0, 4, 12}, `"sample_len" in results (v0.4.12+)`)
				break
			}
		}
	}
	if samplesHaveFilter {
		atLeast(Version{0, 4, 7}, `"filter" in samples (v0.4.7+)`)
	}
	if d.Has("tokenizer_pad_token") {
		atLeast(Version{0, 4, 3}, "tokenizer_pad_token key (v0.4.3+)")
	}
	if d.Has("group_subtasks") {
		atLeast(Version{0, 4, 2}, "group_subtasks key (v0.4.2+)")
	} else {
		atMost(Version{0, 4, 1}, "no group_subtasks key (before v0.4.2)")
	}
	if !d.Has("n-samples") {
		atMost(Version{0, 4, 2}, "no n-samples key (v0.4.2 or older)")
	}
	if legacyArray {
		atMost(Version{0, 4, 2}, "samples as JSON arrays (v0.4.0-v0.4.2)")
	}
	if vr.Hi.Less(vr.Lo) {
		// Contradictory keys (a patched or hand-edited file): trust the
		// newest evidence of a feature.
		vr.Hi = vr.Lo
	}
	return vr
}
