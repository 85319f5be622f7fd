package study_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/study"
)

// editRunner runs the simulated backend, then rewrites every line of its
// samples files with edit.
type editRunner struct {
	simulate.Runner
	edit func(line string) string
}

func (r editRunner) Run(ctx context.Context, dir string, progress func(harness.Progress)) error {
	if err := r.Runner.Run(ctx, dir, progress); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dir, harness.OutputDir, "*", "samples_*.jsonl"))
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var out []string
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if l = r.edit(l); l != "" {
				out = append(out, l)
			}
		}
		if err := os.WriteFile(f, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// A rerun compares every document: one the rerun lacks, an extracted
// answer and a per-document value that differ are each named, and none of
// them passes; generations tolerated let the answer and value pass, never
// the missing document.
func TestRerunComparesEveryDocument(t *testing.T) {
	s := sweptStudy(t)
	sim := simulate.Runner{Effects: simulate.DefaultEffects()}
	drop := func(l string) string {
		if strings.HasPrefix(l, `{"doc_id": 4,`) {
			return ""
		}
		return l
	}
	// Doc 9's strict-match answer and its exact_match, as if the model had
	// answered otherwise: the response is left as it was.
	answer := func(l string) string {
		if !strings.HasPrefix(l, `{"doc_id": 9,`) || !strings.Contains(l, `"filter": "strict-match"`) {
			return l
		}
		i := strings.Index(l, `"filtered_resps": ["`)
		j := strings.Index(l, `"], "filter"`)
		l = l[:i] + `"filtered_resps": ["[invalid]` + l[j:]
		k := strings.LastIndex(l, `"exact_match": `)
		return l[:k] + `"exact_match": 0.5}`
	}
	for _, c := range []struct {
		name     string
		edit     func(string) string
		tolerate bool
		ok       bool
		kinds    map[string]int
	}{
		{"missing", drop, false, false, map[string]int{study.DiffMissing: 1}},
		{"missing, generations tolerated", drop, true, false, map[string]int{study.DiffMissing: 1}},
		{"answer", answer, false, false, map[string]int{study.DiffFiltered: 1, study.DiffValue: 1}},
		{"answer, generations tolerated", answer, true, true, map[string]int{study.DiffFiltered: 1, study.DiffValue: 1}},
	} {
		cmps, err := study.Rerun(context.Background(), s, t.TempDir(), study.RerunOptions{Runner: editRunner{sim, c.edit}, RunnerKind: "simulated", TolerateGenerations: c.tolerate})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rc := cmps[0]
		if rc.Error != "" || len(rc.Documents) != 1 {
			t.Fatalf("%s: %+v", c.name, rc)
		}
		d := rc.Documents[0]
		if rc.OK != c.ok || d.Differ != 1 || d.Documents != 20 {
			t.Errorf("%s: ok %v (want %v), %d of %d documents differ: %+v", c.name, rc.OK, c.ok, d.Differ, d.Documents, d.Diffs)
		}
		if len(d.Kinds) != len(c.kinds) {
			t.Errorf("%s: kinds %v, want %v", c.name, d.Kinds, c.kinds)
		}
		for k, n := range c.kinds {
			if d.Kinds[k] != n {
				t.Errorf("%s: kinds %v, want %v", c.name, d.Kinds, c.kinds)
			}
		}
		for _, x := range d.Diffs {
			if x.Tolerated != (c.tolerate && x.Kind != study.DiffMissing) {
				t.Errorf("%s: %+v tolerated %v", c.name, x, x.Tolerated)
			}
		}
	}
}

// Log-likelihoods are compared within the tolerance: a move in the last
// digits passes (and is measured), one past it names the document.
func TestRerunLoglikelihoodTolerance(t *testing.T) {
	dir := t.TempDir()
	const yaml = `study: mc
model: {id: simulated/model-1b}
card:
  claims:
    - {task: mmlu, metric: acc, filter: none, value: 0.4}
harness: {version: 0.4.9.1}
runner: {kind: simulated}
baseline: {model: hf, tasks: [mmlu], num_fewshot: 5, limit: 2, log_samples: true}
`
	if err := os.WriteFile(filepath.Join(dir, study.FileName), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	sim := simulate.Runner{Effects: simulate.DefaultEffects()}
	if _, err := study.Sweep(context.Background(), s, study.SweepOptions{Runner: sim, RunnerKind: "simulated", Simulated: true}); err != nil {
		t.Fatal(err)
	}
	// The first log-likelihood of doc 1 of every subject, moved in its last
	// digits: digits are appended to its repr.
	move := func(digits string) func(string) string {
		return func(l string) string {
			if !strings.HasPrefix(l, `{"doc_id": 1,`) {
				return l
			}
			i := strings.Index(l, `"resps": [[["-`)
			if i < 0 {
				return l
			}
			i += len(`"resps": [[["-`)
			j := i + strings.Index(l[i:], `"`)
			num := l[i:j]
			if !strings.Contains(num, ".") || strings.Contains(num, "e") {
				return l
			}
			return l[:j] + digits + l[j:]
		}
	}
	for _, c := range []struct {
		name   string
		digits string // appended to the repr
		ok     bool
	}{
		{"unchanged", "", true},
		{"last digits", "9", true},
	} {
		cmps, err := study.Rerun(context.Background(), s, t.TempDir(), study.RerunOptions{Runner: editRunner{sim, move(c.digits)}, RunnerKind: "simulated"})
		if err != nil {
			t.Fatal(err)
		}
		rc := cmps[0]
		differ, maxLL := 0, 0.0
		for _, d := range rc.Documents {
			differ += d.Differ
			maxLL = max(maxLL, d.MaxLLDiff)
		}
		if rc.OK != c.ok || differ != 0 || (c.digits != "") != (maxLL > 0) || maxLL > 1e-4 {
			t.Errorf("%s: ok %v, %d documents differ, max |ΔLL| %g: %s", c.name, rc.OK, differ, maxLL, rc.Error)
		}
	}
	// Past the tolerance.
	cmps, err := study.Rerun(context.Background(), s, t.TempDir(), study.RerunOptions{Runner: editRunner{sim, func(l string) string {
		if !strings.HasPrefix(l, `{"doc_id": 1,`) {
			return l
		}
		return strings.Replace(l, `"resps": [[["-`, `"resps": [[["-1`, 1)
	}}, RunnerKind: "simulated", TolerateGenerations: true})
	if err != nil {
		t.Fatal(err)
	}
	rc := cmps[0]
	ll := 0
	for _, d := range rc.Documents {
		ll += d.Kinds[study.DiffLoglikelihood]
		for _, x := range d.Diffs {
			if x.Kind == study.DiffLoglikelihood && (x.DocID != 1 || x.Tolerated || x.Field != "resps[0][0][0]") {
				t.Errorf("%s: %+v", d.Task, x)
			}
		}
	}
	if rc.OK || ll == 0 {
		t.Errorf("a log-likelihood past the tolerance: ok %v, %d documents", rc.OK, ll)
	}
}
