package study_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/study"
)

// The report's provenance table shows, for every run, what its record
// holds: GPU, driver, CUDA, lm-eval's version, commit and dirty flag, the
// image digest, Python, the resolved model revision and the seeds; a run
// whose record lacks them says "not recorded".
func TestReportProvenance(t *testing.T) {
	s := sweptStudy(t)
	plan := s.Plan()
	dir := s.RunDir(plan[0])
	rec, err := harness.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec.Env = &harness.Environment{PythonVersion: "3.11.9", DriverVersion: "590.48.01", CUDAVersion: "13.0",
		GPUs: []harness.GPU{{Name: "NVIDIA H200"}, {Name: "NVIDIA H200"}}}
	rec.Harness.Commit, rec.Harness.Dirty = "3b1f0c2d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c", true
	rec.Image = &harness.ImageInfo{Ref: "ghcr.io/x/lm-eval:0.4.9.1", PlatformDigest: "sha256:bbbb"}
	rec.Model.ResolvedRevision = "0123456789abcdef0123456789abcdef01234567"
	rec.Seeds = []int{0, 1234, 1234, 1234}
	if err := harness.WriteRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	rep, err := study.BuildReport(context.Background(), s, study.ReportOptions{Attribution: analysis.AttributionOptions{Seed: 1, Resamples: 200}})
	if err != nil {
		t.Fatal(err)
	}
	rp := rep.Runs[0]
	if rp.GPUs != "NVIDIA H200 ×2" || rp.Driver != "590.48.01" || rp.CUDA != "13.0" || rp.HarnessCommit != rec.Harness.Commit || !rp.HarnessDirty ||
		rp.Image != "sha256:bbbb" || rp.ModelRevision != rec.Model.ResolvedRevision || rp.Seeds != "0,1234,1234,1234" || rp.HarnessVersion != "0.4.9.1" {
		t.Errorf("provenance of %s: %+v", rp.Name, rp)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	md, err := rep.WriteFiles(out)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(out)
	cell := func(run, field string) string {
		re := regexp.MustCompile(`(?s)<tr data-run="` + regexp.QuoteMeta(run) + `">.*?<td data-field="` + field + `"[^>]*>(.*?)</td>`)
		m := re.FindSubmatch(page)
		if m == nil {
			t.Fatalf("no %s cell for %s in the report", field, run)
		}
		return regexp.MustCompile(`<[^>]+>`).ReplaceAllString(string(m[1]), "")
	}
	for field, want := range map[string]string{
		"commit":   "0.4.9.1 · 3b1f0c2d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c DIRTY (uncommitted changes)",
		"gpu":      "NVIDIA H200 ×2 · 590.48.01 · 13.0",
		"image":    "sha256:bbbb",
		"revision": "0123456789abcdef0123456789abcdef01234567",
		"seeds":    "0,1234,1234,1234",
	} {
		if got := cell(plan[0].Name, field); got != want {
			t.Errorf("%s: %q, want %q", field, got, want)
		}
	}
	// The step's simulated record holds no machine and no commit.
	if got := cell(plan[1].Name, "gpu"); got != "not recorded · not recorded · not recorded" {
		t.Errorf("gpu of a run that recorded none: %q", got)
	}
	if got := cell(plan[1].Name, "commit"); !strings.Contains(got, "commit not recorded") {
		t.Errorf("commit of a run that recorded none: %q", got)
	}
	mdText, _ := os.ReadFile(md)
	if !strings.Contains(string(mdText), "3b1f0c2d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c DIRTY (uncommitted changes) | NVIDIA H200 ×2 · 590.48.01 · 13.0 | sha256:bbbb |") {
		t.Errorf("the Markdown report's provenance:\n%s", mdText)
	}
}
