package capsule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
)

// editLayer replaces old by new in the layer whose title holds part (an
// uncompressed one), keeping every digest right: a capsule forged by
// someone who can write its blobs.
func editLayer(t *testing.T, layout, part, old, new string) {
	t.Helper()
	editManifest(t, layout, func(m *ocispec.Manifest) {
		l := &m.Layers[layerIndex(t, m, part)]
		b, err := os.ReadFile(filepath.Join(layout, "blobs", "sha256", l.Digest.Encoded()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(old)) {
			t.Fatalf("layer %s has no %q", part, old)
		}
		d := putBlob(t, layout, l.MediaType, bytes.Replace(b, []byte(old), []byte(new), 1))
		l.Digest, l.Size = d.Digest, d.Size
	})
}

// A capsule whose results file was edited to other settings than its run
// records (digests recomputed, so that they still match) fails verify and
// replay, each mismatch a problem naming the run and the field; the
// re-scoring a replay makes says it too.
func TestVerifyRecordEdited(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ old, new, field string }{
		{`"fewshot_seed": 1234`, `"fewshot_seed": 4321`, "fewshot_seed"},
		{`"random_seed": 0`, `"random_seed": 1`, "random_seed"},
		{"\"n-shot\": {\n    \"gsm8k\": 5", "\"n-shot\": {\n    \"gsm8k\": 8", "n-shot[gsm8k]"},
		{`"num_fewshot": 5`, `"num_fewshot": 3`, "num_fewshot[gsm8k]"},
		// No longer the simulated backend's: every setting is compared.
		{`"model": "simulated"`, `"model": "hf"`, "model"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			_, layout := packedLayout(t)
			editLayer(t, layout, "results_", tc.old, tc.new)
			c := mustOpen(t, layout, capsule.OpenOptions{})
			v, err := capsule.Verify(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			what := "lm-eval's record of run baseline: " + tc.field
			var found *capsule.Problem
			for i, p := range v.Problems {
				if p.What == what {
					found = &v.Problems[i]
				}
			}
			if v.OK || found == nil || !strings.HasPrefix(found.Path, "runs/baseline/output/") || !strings.Contains(v.String(), what) {
				t.Fatalf("no problem %q:\n%s", what, v)
			}

			rep, err := capsule.Replay(ctx, c, capsule.ReplayOptions{})
			if err != nil {
				t.Fatal(err)
			}
			inProblems := false
			for _, p := range rep.Problems {
				inProblems = inProblems || p.What == what
			}
			inDiffers := false
			for _, d := range rep.Differs {
				inDiffers = inDiffers || strings.HasPrefix(d, "baseline: lm-eval recorded "+tc.field+" = ")
			}
			if rep.OK || !inProblems || !inDiffers {
				t.Errorf("replay: ok %v, problems %v, differs %v", rep.OK, rep.Problems, rep.Differs)
			}
			if s := rep.String(); !strings.Contains(s, "UNSUPPORTED") || !strings.Contains(s, "FAILED") {
				t.Errorf("replay report:\n%s", s)
			}
		})
	}
}

// A study whose results file disagrees with its run.json is not packed
// unless asked; packed anyway, the capsule says so and does not verify.
func TestPackRecordEdited(t *testing.T) {
	studyDir := t.TempDir()
	writePackStudy(t, studyDir, 20)
	files, err := filepath.Glob(filepath.Join(studyDir, "runs", "baseline", "output", "*", "results_*.json"))
	if err != nil || len(files) != 1 {
		t.Fatal(files, err)
	}
	b, _ := os.ReadFile(files[0])
	if err := os.WriteFile(files[0], bytes.Replace(b, []byte(`"fewshot_seed": 1234`), []byte(`"fewshot_seed": 7`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := packDir(context.Background(), studyDir, filepath.Join(t.TempDir(), "c"), capsule.PackOptions{}); err == nil ||
		!strings.Contains(err.Error(), "baseline: lm-eval recorded fewshot_seed = 7, expected 1234") {
		t.Fatalf("pack: %v", err)
	}
	layout := filepath.Join(t.TempDir(), "c")
	res := mustPack(t, studyDir, layout, capsule.PackOptions{AllowDiffers: true})
	if len(res.Unsupported) != 1 {
		t.Errorf("unsupported: %v", res.Unsupported)
	}
	c := mustOpen(t, layout, capsule.OpenOptions{})
	probs, err := capsule.ValidateConfig(c.RawConfig)
	if err != nil || len(probs) != 0 {
		t.Fatalf("the config with a record check: %v %+v", err, probs)
	}
	v, err := capsule.Verify(context.Background(), c)
	if err != nil || v.OK {
		t.Fatalf("verify: %v\n%s", err, v)
	}
}

// Two capsules whose runs asked other prompts (another few-shot count: the
// task hashes differ) say "prompt set changed" per run and task, in JSON
// and in the text; a capsule against itself says nothing.
func TestDiffCapsulesPromptSets(t *testing.T) {
	ctx := context.Background()
	_, layoutA := packedLayout(t)
	a := mustOpen(t, layoutA, capsule.OpenOptions{})
	same, err := capsule.DiffCapsules(ctx, a, a)
	if err != nil || !same.Same || len(same.Prompts) != 0 {
		t.Fatalf("a capsule against itself: %v %+v", err, same)
	}

	_, layoutB := packedLayout(t)
	editLayer(t, layoutB, "results_", `"task_hashes": {`+"\n"+`    "gsm8k": "`, `"task_hashes": {`+"\n"+`    "gsm8k": "00`)
	b := mustOpen(t, layoutB, capsule.OpenOptions{})
	d, err := capsule.DiffCapsules(ctx, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if d.Same || len(d.Prompts) != 1 {
		t.Fatalf("prompt sets: %+v", d.Prompts)
	}
	p := d.Prompts[0]
	if p.Run != "baseline" || p.Task != "gsm8k" || p.Field != "task_hashes" || p.B != "00"+p.A {
		t.Errorf("change %+v", p)
	}
	js, _ := json.Marshal(d)
	if !strings.Contains(string(js), `"prompt_set_changed":[{"run":"baseline","field":"task_hashes","task":"gsm8k","a":"`+p.A+`","b":"`+p.B+`"}]`) {
		t.Errorf("JSON %s", js)
	}
	s := d.String()
	if !strings.Contains(s, "\nPrompt set changed") || !strings.Contains(s, "baseline  gsm8k  task_hashes  "+p.A[:12]+"  "+p.B[:12]) {
		t.Errorf("text:\n%s", s)
	}
	if got := capsule.Diff(a.Config, b.Config); got.Prompts == nil || len(got.Prompts) != 0 {
		t.Errorf("Diff of configs reads no results: %+v", got.Prompts)
	}
}

// Record checks in a packed re-scoring are settings, not scores: Diff does
// not list them among the scores.
func TestDiffSkipsRecordChecks(t *testing.T) {
	a := diffConfig("study: s\n", "0.4.9.1", map[string]float64{"baseline": 0.25}, "baseline")
	b := diffConfig("study: s\n", "0.4.9.1", map[string]float64{"baseline": 0.25}, "baseline")
	b.Rescore.Runs[0].Checks = append(b.Rescore.Runs[0].Checks,
		analysis.RecordCheck(harness.Mismatch{Field: "fewshot_seed", Recorded: "1234", Results: "7"}))
	if d := capsule.Diff(a, b); !d.Same || len(d.Scores) != 0 {
		t.Errorf("%+v", d.Scores)
	}
}
