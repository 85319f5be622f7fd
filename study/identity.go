package study

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/evalcapsule/evalcapsule/harness"
)

// identity is what a run's outputs can depend on, as the study pins it.
type identity struct {
	Spec      harness.RunSpec `json:"spec"`
	Harness   string          `json:"harness"`
	Commit    string          `json:"commit,omitempty"`
	Image     string          `json:"image,omitempty"`
	Model     string          `json:"model,omitempty"`
	Revision  string          `json:"revision,omitempty"`
	Digest    string          `json:"digest,omitempty"` // a suite checkpoint's files
	Simulated bool            `json:"simulated,omitempty"`
	// Includes hashes the custom task files, which the spec only names.
	Includes map[string]string `json:"includes,omitempty"`
}

// Identity is the hash of everything the study pins that can change a
// run's outputs: its settings, its lm-eval (version, commit, image), the
// model and its revision, and whether the simulated backend writes it.
// Sweep records it in run.json; a done run whose identity is not the
// planned one is stale.
func (s *Study) Identity(pr PlannedRun, simulated bool) string {
	id := identity{Spec: pr.Spec, Harness: pr.Harness.Version, Commit: pr.Harness.Commit, Image: pr.Harness.Image,
		Model: s.Model.ID, Revision: s.Model.Revision, Digest: s.Model.Digest, Simulated: simulated}
	if pr.Spec.IncludePath != "" {
		files, err := s.Includes(pr)
		if err != nil {
			files = map[string]string{"": err.Error()} // an identity no run has
		}
		id.Includes = files
	}
	b, _ := json.Marshal(id)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// staleness says why a done run's record is not what the study plans now:
// "" when it is. A record from before identities were recorded is judged
// by the fields it has.
func (s *Study) staleness(pr PlannedRun, old *harness.RunRecord, simulated bool) string {
	if old.Identity != "" && old.Identity == s.Identity(pr, simulated) {
		return ""
	}
	var why []string
	if !reflect.DeepEqual(old.Spec, pr.Spec) {
		why = append(why, "settings: "+specDiff(old.Spec, pr.Spec))
	}
	change := func(what, was, now string) {
		if was != now {
			why = append(why, fmt.Sprintf("%s %s → %s", what, orDash(was), orDash(now)))
		}
	}
	change("lm-eval", old.Harness.Version, pr.Harness.Version)
	if pr.Harness.Commit != "" {
		change("lm-eval commit", old.Harness.Commit, pr.Harness.Commit)
	}
	if pr.Harness.Image != "" && old.Image != nil {
		change("image", old.Image.Ref, pr.Harness.Image)
	}
	change("model", old.Model.ID, s.Model.ID)
	change("model revision", old.Model.Revision, s.Model.Revision)
	if old.Simulated != simulated {
		change("simulated", fmt.Sprint(old.Simulated), fmt.Sprint(simulated))
	}
	if pr.Spec.IncludePath != "" {
		now, _ := s.Includes(pr)
		for _, f := range changedFiles(old.Includes, now) {
			why = append(why, "include_path file "+f+" changed")
		}
	}
	if len(why) == 0 && old.Identity != "" {
		why = append(why, "its identity changed")
	}
	return strings.Join(why, "; ")
}

func orDash(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// changedFiles names the files added, removed or changed between two sets.
func changedFiles(a, b map[string]string) []string {
	var out []string
	for f, h := range a {
		if b[f] != h {
			out = append(out, f)
		}
	}
	for f := range b {
		if _, ok := a[f]; !ok {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}
