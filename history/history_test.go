package history_test

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	ggcr "github.com/google/go-containerregistry/pkg/registry"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/gate"
	"github.com/evalcapsule/evalcapsule/harness/simulate"
	"github.com/evalcapsule/evalcapsule/history"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// line is simulate's model line: 8 checkpoints on a 4-task suite (gsm8k,
// gsm8k_cot_llama, gsm8k_llama, mmlu), each better than the last, but for
// the one planted regression (gsm8k_cot_llama at step-06000).
var line = simulate.Line(simulate.LineOptions{})

var regressed = line[simulate.LineRegressionCheckpoint].Name

// linePolicy gates each task of the line on its primary metric.
const linePolicy = `
test: no-significant-drop
alpha: 0.05
margin: 1
tasks:
  gsm8k: {metrics: ["exact_match,strict-match"]}
  gsm8k_cot_llama: {metrics: ["exact_match,strict-match"]}
  gsm8k_llama: {metrics: ["exact_match,strict_match"]}
  mmlu: {metrics: ["acc,none"]}
`

// packLine packs the line into layouts under a new folder, returned with
// the layouts in an order other than the line's, so that the history
// must order them.
func packLine(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	var refs []string
	for _, c := range line {
		refs = append(refs, packLineCheckpoint(t, dir, c))
	}
	slices.Reverse(refs)
	refs[0], refs[3] = refs[3], refs[0]
	return refs
}

// buildLine indexes the sources and gates every checkpoint against the
// first with the default policy.
func buildLine(t *testing.T, x *history.Index, sources []string) (*history.History, *history.Updated) {
	t.Helper()
	ctx := context.Background()
	u, err := history.Update(ctx, x, sources, history.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cps, err := x.Load(ctx, u.Refs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := gate.ParsePolicy([]byte(linePolicy))
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.Build(cps, history.Options{Gate: history.GateWith(p, nil), Policy: history.DescribePolicy(p, "the line's policy")})
	if err != nil {
		t.Fatal(err)
	}
	return h, u
}

// checkLine checks a history of the line: in step order, every checkpoint
// in every trend, the gate failing exactly the planted regression, and the
// flips into and out of it.
func checkLine(t *testing.T, h *history.History) {
	t.Helper()
	if h.Order != history.OrderStep || len(h.Checkpoints) != len(line) {
		t.Fatalf("ordered by %s, %d checkpoints; want by step, %d", h.Order, len(h.Checkpoints), len(line))
	}
	for i, c := range h.Checkpoints {
		if c.Name != line[i].Name || c.Step != int64(i+1)*1000 {
			t.Fatalf("checkpoint %d is %s (step %d), want %s", i, c.Name, c.Step, line[i].Name)
		}
	}
	if h.Baseline != line[0].Name {
		t.Errorf("baseline %s, want %s", h.Baseline, line[0].Name)
	}
	for i, v := range h.Verdicts {
		name := h.Checkpoints[i].Name
		want := gate.Pass
		switch name {
		case line[0].Name:
			want = "baseline"
		case regressed:
			want = gate.Regression
		}
		if v.Verdict != want {
			t.Errorf("%s: verdict %s %v %v, want %s", name, v.Verdict, v.Failed, v.Reasons, want)
		}
		if want == gate.Regression && !slices.Equal(v.Failed, []string{history.FailedKey(simulate.LineRegressionTask, "exact_match", "strict-match")}) {
			t.Errorf("%s: failed %v, want %s exact_match,strict-match alone", name, v.Failed, simulate.LineRegressionTask)
		}
	}
	var gsm *history.Trend
	for _, tr := range h.Trends {
		if len(tr.Points) != len(line) {
			t.Errorf("%s %s,%s: %d points, want %d", tr.Task, tr.Metric, tr.Filter, len(tr.Points), len(line))
		}
		for _, p := range tr.Points {
			if p.Missing {
				t.Errorf("%s %s,%s: %s missing", tr.Task, tr.Metric, tr.Filter, p.Checkpoint)
			}
		}
		if tr.Task == simulate.LineRegressionTask && tr.Metric == "exact_match" && tr.Filter == "strict-match" {
			gsm = tr
		}
	}
	if gsm == nil {
		t.Fatalf("no %s exact_match,strict-match trend", simulate.LineRegressionTask)
	}
	if gsm.Baseline != gsm.Points[0].Value {
		t.Errorf("baseline line %v, want the first checkpoint's %v", gsm.Baseline, gsm.Points[0].Value)
	}
	if len(gsm.Flips) != len(line)-1 {
		t.Fatalf("%d flips, want %d", len(gsm.Flips), len(line)-1)
	}
	k := simulate.LineRegressionCheckpoint
	into, out := gsm.Flips[k-1], gsm.Flips[k]
	if into.To != regressed || into.RightToWrong <= into.WrongToRight || len(into.FirstRightToWrong) == 0 ||
		out.From != regressed || out.WrongToRight <= out.RightToWrong {
		t.Errorf("flips into the regression %+v, out of it %+v: want more right→wrong into it, more wrong→right out of it", into, out)
	}
	// Flips agree with the scores: the change in right answers is the
	// difference of the flips on the documents both scored.
	for i, f := range gsm.Flips {
		a, b := gsm.Points[i], gsm.Points[i+1]
		got := float64(f.WrongToRight-f.RightToWrong) / float64(f.Common)
		if f.Common != a.N || f.Common != b.N || abs(got-(b.Value-a.Value)) > 1e-9 {
			t.Errorf("flip %s→%s: (%d−%d)/%d = %v, scores differ by %v", f.From, f.To, f.WrongToRight, f.RightToWrong, f.Common, got, b.Value-a.Value)
		}
	}
}

func abs(x float64) float64 { return max(x, -x) }

// The history of local capsule folders: ordered by step, the planted
// regression the only failure, and its JSON in snake_case.
func TestHistory_LocalLine(t *testing.T) {
	x := openIndex(t, filepath.Join(t.TempDir(), "history.db"))
	h, u := buildLine(t, x, packLine(t))
	if u.Read != len(line) {
		t.Errorf("read %d, want %d", u.Read, len(line))
	}
	checkLine(t, h)
	b, err := analysis.MarshalJSON(h)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Verdicts []struct{ Verdict string } `json:"verdicts"`
		Trends   []struct {
			Points []struct {
				Value *float64 `json:"value"`
				Low   *float64 `json:"ci_low"`
			} `json:"points"`
		} `json:"trends"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Verdicts) != len(line) || back.Verdicts[simulate.LineRegressionCheckpoint].Verdict != gate.Regression || len(back.Trends) != len(h.Trends) ||
		back.Trends[0].Points[0].Value == nil || back.Trends[0].Points[0].Low == nil {
		t.Errorf("JSON does not hold the verdicts and points: %.300s", b)
	}
}

// The history of a registry repository: every tag, each capsule pulled
// once; the second run reads none. Against go-containerregistry's
// in-process registry always, and the distribution registry .ci/run
// starts (EVALCAPSULE_REGISTRY) in the integration suite.
func TestHistory_RegistryLine(t *testing.T) {
	refs := packLine(t)
	run := func(t *testing.T, host string) {
		ctx := context.Background()
		repo := host + "/evalcapsule-history/" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
		for _, ref := range refs {
			if _, err := capsule.Push(ctx, ref, repo+":"+filepath.Base(ref), capsule.PushOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		x := openIndex(t, filepath.Join(t.TempDir(), "history.db"))
		h, u := buildLine(t, x, []string{repo})
		if u.Read != len(line) || len(u.Refs) != len(line) {
			t.Fatalf("first update: %+v", u)
		}
		checkLine(t, h)
		for _, c := range h.Checkpoints {
			if c.Repo != repo || c.Ref != repo+":"+c.Name {
				t.Errorf("checkpoint %s: repo %s ref %s", c.Name, c.Repo, c.Ref)
			}
		}
		_, u = buildLine(t, x, []string{repo})
		if u.Read != 0 || u.Skipped != len(line) {
			t.Errorf("second update read %d, skipped %d; want 0 and %d", u.Read, u.Skipped, len(line))
		}
	}
	t.Run("in-process", func(t *testing.T) {
		srv := httptest.NewServer(ggcr.New(ggcr.WithReferrersSupport(true), ggcr.Logger(log.New(io.Discard, "", 0))))
		defer srv.Close()
		run(t, strings.TrimPrefix(srv.URL, "http://"))
	})
	t.Run("distribution", func(t *testing.T) {
		testenv.Integration(t, "the distribution registry")
		addr := os.Getenv("EVALCAPSULE_REGISTRY")
		if addr == "" {
			t.Fatal("EVALCAPSULE_INTEGRATION is set but EVALCAPSULE_REGISTRY is not: start a registry with .ci/registry-up.sh DIR PORT and set EVALCAPSULE_REGISTRY=127.0.0.1:PORT")
		}
		run(t, addr)
	})
}

// The page, read in headless Chromium: every checkpoint in the table and
// in every trend, the regression shown where it was planted, one plot per
// trend; a capsule's name cannot inject markup.
func TestHistoryInChromium(t *testing.T) {
	chrome := testenv.Command(t, "chromium")
	x := openIndex(t, filepath.Join(t.TempDir(), "history.db"))
	h, _ := buildLine(t, x, packLine(t))
	h.Checkpoints[1].Name = `step-02000<script>document.title="owned"</script>`
	page := filepath.Join(t.TempDir(), "history.html")
	if err := os.WriteFile(page, []byte(h.HTML()), 0o644); err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("EVALCAPSULE_KEEP_HISTORY"); keep != "" {
		if err := os.WriteFile(keep, []byte(h.HTML()), 0o644); err != nil {
			t.Error(err)
		}
	}
	cmd := exec.Command(chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+page)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dom := string(out)
	if strings.Contains(dom, "owned") && !strings.Contains(dom, "&lt;script&gt;") {
		t.Fatal("a checkpoint's name ran as markup")
	}
	if regexp.MustCompile(`<script>`).MatchString(dom) {
		t.Error("the page holds a <script> element")
	}
	rows := regexp.MustCompile(`<tr class="checkpoint" data-name="([^"]*)">.*?</tr>`).FindAllStringSubmatch(dom, -1)
	if len(rows) != len(line) {
		t.Fatalf("%d checkpoint rows, want %d", len(rows), len(line))
	}
	for i, r := range rows {
		wantVerdict := "pass"
		switch i {
		case 0:
			wantVerdict = "baseline"
		case simulate.LineRegressionCheckpoint:
			wantVerdict = "regression"
		}
		if !strings.Contains(r[0], `class="`+wantVerdict+`"`) {
			t.Errorf("row %d (%s): no %s verdict: %s", i, r[1], wantVerdict, r[0])
		}
	}
	sections := regexp.MustCompile(`(?s)<section class="trend[^"]*".*?</section>`).FindAllString(dom, -1)
	if len(sections) != len(h.Trends) {
		t.Fatalf("%d trend sections, want %d", len(sections), len(h.Trends))
	}
	if n := strings.Count(dom, `<section class="trend member"`); n < 57 {
		t.Errorf("%d member trends folded away, want mmlu's 57 subjects at least", n)
	}
	regressionShown := false
	for i, s := range sections {
		want := 1
		if strings.HasPrefix(s, `<section class="trend member"`) && !strings.Contains(s, `class="regression"`) {
			want = 0 // a group's member, folded away
		}
		if n := strings.Count(s, `<img src="data:image/png;base64,`); n != want {
			t.Errorf("trend %d: %d plots, want %d", i, n, want)
		}
		body := regexp.MustCompile(`(?s)<tbody>.*?</tbody>`).FindString(s)
		if n := strings.Count(body, "<tr>"); n != len(line) {
			t.Errorf("trend %d: %d rows, want %d", i, n, len(line))
		}
		if strings.Contains(s, `data-task="`+simulate.LineRegressionTask+`"`) && strings.Contains(body, `class="regression">regression<`) &&
			strings.Contains(s, "(regression)") {
			regressionShown = true
		}
	}
	if !regressionShown {
		t.Errorf("no %s trend shows the regression in its table and its plot's description", simulate.LineRegressionTask)
	}
}
