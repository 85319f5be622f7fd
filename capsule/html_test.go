package capsule_test

import (
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/internal/htmltest"
	"github.com/evalcapsule/evalcapsule/study"
)

// A failed verification lists each problem in a row; names from the
// untrusted capsule stay text.
func TestVerificationHTML(t *testing.T) {
	v := &capsule.Verification{Files: 2, Blobs: 3, Bytes: 10, Problems: []capsule.Problem{
		{Blob: "sha256:aa", Path: "runs/<b>x</b>/run.json", What: "digest mismatch", Expected: "sha256:aa", Found: "sha256:bb"},
		{Blob: "index.json", What: "unknown media type"},
	}}
	h := v.HTML()
	tables := htmltest.Parse(t, h)
	if len(tables) != 1 || len(tables[0].Rows) != 2 {
		t.Fatalf("tables %+v", tables)
	}
	r := tables[0].Rows[0]
	if r[htmltest.Column(t, tables[0], "file")] != "runs/<b>x</b>/run.json" || r[htmltest.Column(t, tables[0], "found")] != "sha256:bb" {
		t.Errorf("row %q", r)
	}
	if !strings.Contains(h, "2 problem(s)") {
		t.Errorf("no verdict in %s", h)
	}
	ok := (&capsule.Verification{OK: true, Files: 2}).HTML()
	if len(htmltest.Parse(t, ok)) != 0 || !strings.Contains(ok, "ok.") {
		t.Errorf("ok verification %s", ok)
	}
}

// A replay shows each differing number, and each rerun task.
func TestReplayReportHTML(t *testing.T) {
	r := &capsule.ReplayReport{Level: "rerun", Capsule: "sha256:cc", Compared: 40, Simulated: true,
		Diffs: []capsule.ReplayDiff{{Where: "attribution.claims[0].steps[1].delta", Packed: "0.01", Replayed: "0.02"}},
		Reruns: []study.RerunComparison{
			{Run: "baseline", Status: "done", OK: false, Tasks: []study.RerunTask{{Task: "gsm8k", Metric: "exact_match", Filter: "strict-match", N: 1319, Packed: 0.41, Rerun: 0.42, Delta: 0.01, CILow: -0.002, CIHigh: 0.022, GenerationsIdentical: 1318, GenerationsDiffer: 1}},
				Documents:   []study.RerunDocuments{{Task: "gsm8k", Documents: 1319, Identical: 1318, Differ: 1, Diffs: []study.DocDiff{{DocID: 17, Kind: study.DiffResponse, Field: "resps[0][0]", Packed: "<b>35</b>", Rerun: "36"}}}},
				Environment: []study.EnvDiff{{Field: "gpu", Packed: "NVIDIA H200 ×1", Rerun: "NVIDIA A100-SXM4-80GB ×1"}, {Field: "python", Rerun: "3.11.9", Unknown: "packed"}}},
			{Run: "step-1", Status: "failed", Error: "exit status 3"},
		}}
	h := r.HTML()
	tables := htmltest.Parse(t, h)
	if len(tables) != 4 || len(tables[0].Rows) != 1 || len(tables[1].Rows) != 2 || len(tables[2].Rows) != 1 || len(tables[3].Rows) != 2 {
		t.Fatalf("tables %+v", tables)
	}
	docs := tables[2]
	if got := docs.Rows[0]; got[htmltest.Column(t, docs, "doc")] != "17" || got[htmltest.Column(t, docs, "packed")] != "<b>35</b>" || got[htmltest.Column(t, docs, "tolerated")] != "false" {
		t.Errorf("document row %q", got)
	}
	env := tables[3]
	if got := env.Rows[0]; got[htmltest.Column(t, env, "rerun")] != "NVIDIA A100-SXM4-80GB ×1" {
		t.Errorf("environment row %q", got)
	}
	if got := env.Rows[1]; got[htmltest.Column(t, env, "packed")] != "unknown" || got[htmltest.Column(t, env, "rerun")] != "3.11.9" {
		t.Errorf("unknown environment row %q", got)
	}
	if got := tables[0].Rows[0]; got[0] != "attribution.claims[0].steps[1].delta" || got[2] != "0.02" {
		t.Errorf("diff row %q", got)
	}
	rr := tables[1]
	if got := rr.Rows[0]; got[htmltest.Column(t, rr, "Δ")] != "+1.00" || got[htmltest.Column(t, rr, "documents identical / differ")] != "1318 / 1" {
		t.Errorf("rerun row %q", got)
	}
	if got := rr.Rows[1]; got[htmltest.Column(t, rr, "status")] != "failed: exit status 3" {
		t.Errorf("failed rerun row %q", got)
	}
	if !strings.Contains(h, "SIMULATED") || !strings.Contains(h, "1 differ") || !strings.Contains(h, "Reruns: NOT reproduced") {
		t.Errorf("verdict %s", h)
	}
}
