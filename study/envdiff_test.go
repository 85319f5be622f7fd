package study_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/fixtures"
	"github.com/evalcapsule/evalcapsule/study"
)

// smiEnvironment is an environment whose GPUs, driver and CUDA are those of
// one of the real nvidia-smi -q -x captures shared with the project; the
// test skips without them (fails under CI).
func smiEnvironment(t *testing.T, name string) *harness.Environment {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Dir(t, "nvidia-smi"), name))
	if err != nil {
		t.Fatal(err)
	}
	x, err := harness.ParseNvidiaSmiXML(b)
	if err != nil {
		t.Fatal(err)
	}
	return &harness.Environment{NvidiaSmi: &x, GPUs: x.GPUs, DriverVersion: x.DriverVersion, CUDAVersion: x.CUDAVersion,
		PythonVersion: "3.11.9", LMEvalVersion: "0.4.9.1",
		Packages: harness.ParsePipFreeze([]byte("lm_eval==0.4.9.1\ntorch==2.4.0\nvllm==0.6.3\n"))}
}

// A rerun on another machine (an A100 capture against an RTX 4000 one,
// another torch, no vllm, another image) lists each difference; a field
// one side did not record is unknown, never equal; the same environment
// lists nothing.
func TestDiffEnvironments(t *testing.T) {
	a100 := smiEnvironment(t, "telegraf-a100-sxm4-v12.xml")
	rtx := smiEnvironment(t, "telegraf-rtx-4000-sff-ada-v13.xml")
	rtx.Packages = harness.ParsePipFreeze([]byte("lm-eval==0.4.9.1\ntorch==2.5.1\naccelerate==1.0.0\n"))
	packed := &harness.RunRecord{Env: a100, Harness: harness.HarnessInfo{Version: "0.4.9.1", Commit: "abc123", Dirty: false},
		Image: &harness.ImageInfo{Ref: "ghcr.io/x/lm-eval@sha256:aaaa", PlatformDigest: "sha256:aaaa"}}
	if d := study.DiffEnvironments(packed, packed); len(d) != 0 {
		t.Errorf("the same record: %v", d)
	}
	rerun := &harness.RunRecord{Env: rtx, Harness: harness.HarnessInfo{Version: "0.4.9.1", Commit: "abc123", Dirty: true},
		Image: &harness.ImageInfo{Ref: "ghcr.io/x/lm-eval@sha256:bbbb", PlatformDigest: "sha256:bbbb"}}
	got := map[string]study.EnvDiff{}
	for _, d := range study.DiffEnvironments(packed, rerun) {
		got[d.Field] = d
	}
	want := map[string]string{
		"gpu":                "gpu: packed NVIDIA A100-SXM4-80GB ×1, rerun NVIDIA RTX 4000 SFF Ada Generation ×1",
		"driver":             "driver: packed 535.54.03, rerun 595.84",
		"cuda":               "cuda: packed 12.2, rerun 13.2",
		"image":              "image: packed sha256:aaaa, rerun sha256:bbbb",
		"lm-eval dirty":      "lm-eval dirty: packed false, rerun true",
		"package torch":      "package torch: packed 2.4.0, rerun 2.5.1",
		"package vllm":       "package vllm: packed 0.6.3, rerun absent",
		"package accelerate": "package accelerate: packed absent, rerun 1.0.0",
	}
	for field, w := range want {
		if d, ok := got[field]; !ok || d.String() != w {
			t.Errorf("%s: %q, want %q", field, d.String(), w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d differences, want %d: %v", len(got), len(want), got)
	}

	// The rerun's machine had no nvidia-smi and no checkout of lm-eval.
	rtx.GPUs, rtx.DriverVersion, rtx.CUDAVersion, rtx.Packages = nil, "", "", nil
	rerun.Harness.Commit, rerun.Harness.Dirty = "", false
	got = map[string]study.EnvDiff{}
	for _, d := range study.DiffEnvironments(packed, rerun) {
		got[d.Field] = d
	}
	for _, field := range []string{"gpu", "gpu count", "driver", "cuda", "python packages", "lm-eval commit", "lm-eval dirty"} {
		if d := got[field]; d.Unknown != "rerun" || !strings.HasSuffix(d.String(), "rerun unknown") {
			t.Errorf("%s unknown on the rerun: %+v (%s)", field, d, d)
		}
	}
	if _, ok := got["python"]; ok {
		t.Errorf("the same Python is listed: %v", got["python"])
	}
}
