package study

import (
	"context"
	"fmt"
	"html"
	"html/template"
	"math"
	"path/filepath"
	"strings"
	texttemplate "text/template"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
)

// Report is everything the study report shows: the attribution of each
// claim with its waterfall, the comparison of the baseline with the final
// run, failure samples, and the provenance of every run.
type Report struct {
	Study       *Study
	Attribution *analysis.Attribution
	Simulated   bool
	Claims      []ReportClaim
	Runs        []RunProvenance
	// Warnings are the study's (Study.Warnings): what it leaves unpinned.
	Warnings []string
}

// ReportClaim is one claim's part of the report.
type ReportClaim struct {
	analysis.ClaimAttribution
	Waterfall  *analysis.Plot
	Comparison *analysis.Comparison // baseline → final, on the claim's documents
	Failures   *analysis.FailureReport
	FinalRun   string
}

// RunProvenance is what the report says about where a run's numbers come
// from: what lm-eval's results file says (LMEvalVersion, PythonVersion,
// GitHash, ModelArgs, Date) and what the run's record says about the
// machine, lm-eval and the model (the rest). A field nothing recorded is
// empty and shown as "not recorded".
type RunProvenance struct {
	Name, Role, Label string
	Settings          string
	ResultsPath       string
	LMEvalVersion     string
	PythonVersion     string
	GitHash           string
	ModelArgs         string
	Date              string
	Simulated         bool
	Exact, Checks     int // re-scoring: exact checks of all checks
	Differs           int
	// GPUs are the GPUs' models with their count ("NVIDIA H200 ×8"),
	// Driver and CUDA the driver's versions, as nvidia-smi reported them
	// inside the job.
	GPUs, Driver, CUDA string
	// HarnessVersion, HarnessCommit and HarnessDirty pin the lm-eval the
	// run used (HarnessDirty: its checkout had uncommitted changes;
	// meaningful only with a commit).
	HarnessVersion, HarnessCommit string
	HarnessDirty                  bool
	// Image is the container image's digest ("" when not in a container).
	Image string
	// ModelRevision is the model's resolved commit, RequestedRevision the
	// revision asked for.
	ModelRevision, RequestedRevision string
	Seeds                            string
}

// ReportOptions configures BuildReport. The zero value works.
type ReportOptions struct {
	Attribution analysis.AttributionOptions
	// FailureSamples per claim; 0 means 10.
	FailureSamples int
}

// BuildReport loads the study's runs and computes everything the report
// shows.
func BuildReport(ctx context.Context, s *Study, opts ReportOptions) (*Report, error) {
	runs, err := LoadRuns(ctx, s, analysis.RescoreOptions{})
	if err != nil {
		return nil, err
	}
	att, err := AttributeRuns(s, runs, opts.Attribution)
	if err != nil {
		return nil, err
	}
	rep := &Report{Study: s, Attribution: att, Simulated: att.Simulated, Warnings: s.Warnings()}
	plan := s.Plan()
	final := finalRun(plan)
	for i, ca := range att.Claims {
		rc := ReportClaim{ClaimAttribution: ca, Waterfall: ca.Waterfall(), FinalRun: final.Name}
		// The claim's own documents in both runs, under the claim's filter:
		// the task may be renamed by a step or be a group.
		claim := s.Card.Claims[i]
		pos := claimTask(final, claim)
		a, errA := claimSeries(runs, plan[0], pos, claim.Metric, claim.Filter)
		b, errB := claimSeries(runs, final, pos, claim.Metric, claim.Filter)
		if errA == nil && errB == nil {
			c, err := analysis.CompareSeries(a, b, analysis.CompareOptions{Seed: opts.Attribution.Seed, Intersect: opts.Attribution.Intersect, PromptDiffs: 1})
			if err == nil {
				rc.Comparison = &c
			}
		}
		n := opts.FailureSamples
		if n == 0 {
			n = 10
		}
		if fr, err := analysis.Failures(runs[final.Name], ca.Task, analysis.FailureOptions{Metric: ca.Metric, Filter: ca.Filter, N: n, Seed: 1}); err == nil {
			rc.Failures = fr
		}
		rep.Claims = append(rep.Claims, rc)
	}
	for _, pr := range plan {
		sc := runs[pr.Name]
		rp := RunProvenance{Name: pr.Name, Role: pr.Role, Label: pr.Label, Settings: specSummary(pr.Spec)}
		if r := sc.Run.Output.Results; r != nil {
			rp.ResultsPath, _ = filepath.Rel(s.Dir, r.Path)
			rp.LMEvalVersion = sc.Report.LMEvalVersion
			rp.PythonVersion = sc.Report.PythonVersion
			rp.GitHash = r.String("git_hash")
			rp.ModelArgs = r.ModelArgs()
			rp.Date = r.Timestamp
			rp.Simulated = r.Simulated()
		}
		if rec := sc.Run.Record; rec != nil {
			recordProvenance(&rp, rec)
		}
		for _, c := range sc.Report.Checks {
			rp.Checks++
			switch c.Status {
			case analysis.StatusExact:
				rp.Exact++
			case analysis.StatusDiffers:
				rp.Differs++
			}
		}
		rep.Runs = append(rep.Runs, rp)
	}
	return rep, nil
}

// recordProvenance fills in what a run's record says about the machine,
// lm-eval and the model.
func recordProvenance(rp *RunProvenance, rec *harness.RunRecord) {
	if rec.Env != nil {
		rp.GPUs, _ = gpuModels(rec.Env)
		rp.Driver, rp.CUDA = rec.Env.DriverVersion, rec.Env.CUDAVersion
		if rp.PythonVersion == "" {
			rp.PythonVersion = rec.Env.PythonVersion
		}
	}
	rp.HarnessVersion, rp.HarnessCommit, rp.HarnessDirty = lmEvalVersion(rec), rec.Harness.Commit, rec.Harness.Dirty
	if rec.Image != nil {
		rp.Image = imageDigest(rec.Image)
	}
	rp.ModelRevision, rp.RequestedRevision = rec.Model.ResolvedRevision, rec.Model.Revision
	if len(rec.Seeds) > 0 {
		rp.Seeds = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(rec.Seeds)), ","), "[]")
	}
}

// specSummary renders the settings of a run spec in one line.
func specSummary(sp harness.RunSpec) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("model", sp.Model)
	add("tasks", strings.Join(sp.Tasks, ","))
	if sp.NumFewshot != nil {
		add("num_fewshot", fmt.Sprint(*sp.NumFewshot))
	}
	for _, kv := range sp.ModelArgs {
		add("model_args."+kv.Key, kv.Value)
	}
	for _, kv := range sp.GenKwargs {
		add("gen_kwargs."+kv.Key, kv.Value)
	}
	add("apply_chat_template", sp.ApplyChatTemplate)
	if sp.FewshotAsMultiturn != nil {
		add("fewshot_as_multiturn", fmt.Sprint(*sp.FewshotAsMultiturn))
	}
	add("batch_size", sp.BatchSize)
	if sp.Limit != nil {
		add("limit", fmt.Sprint(*sp.Limit))
	}
	if len(sp.Seed) > 0 {
		add("seed", strings.Trim(fmt.Sprint(sp.Seed), "[]"))
	}
	return strings.Join(parts, " ")
}

var funcs = map[string]any{
	"pts": func(x float64) string {
		if math.IsNaN(x) {
			return "–"
		}
		return fmt.Sprintf("%.2f", 100*x)
	},
	"dpts": func(x float64) string {
		if math.IsNaN(x) {
			return "–"
		}
		return fmt.Sprintf("%+.2f", 100*x)
	},
	"p": func(x float64) string {
		if math.IsNaN(x) {
			return "–"
		}
		return fmt.Sprintf("%.3g", x)
	},
	"raw": func(x float64) string { return fmt.Sprint(x) },
	"dash": func(s string) string {
		if s == "" {
			return "–"
		}
		return s
	},
	// aggregate names the average a claim's scores are, "" for a plain task.
	"aggregate": func(ca analysis.ClaimAttribution) string {
		switch {
		case ca.Members <= 1:
			return ""
		case ca.Aggregate == analysis.Macro:
			return fmt.Sprintf("macro mean over %d members", ca.Members)
		case ca.AggregateStated:
			return "micro mean over the documents"
		}
		return "micro mean over the documents (the claim states no aggregate)"
	},
	"classes": func() []analysis.FailureClass { return analysis.FailureClasses },
	"count":   func(m map[analysis.FailureClass]int, c analysis.FailureClass) int { return m[c] },
	"deref":   func(x *float64) float64 { return *x },
	"img":     func(p *analysis.Plot) template.HTML { return template.HTML(p.HTML()) },
	// mdcell keeps a model's output one Markdown table cell of text: no
	// line breaks, no column bars, no markup.
	"mdcell": mdCell,
	"isURL":  func(s string) bool { return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") },
	// htmltable and mdtable render a table of package analysis, every
	// cell text.
	"htmltable": func(t analysis.HTMLTable) template.HTML { return template.HTML(t.HTML()) },
	"mdtable": func(t analysis.HTMLTable) string {
		var b strings.Builder
		cells := func(cs []string) {
			for _, c := range cs {
				b.WriteString("| " + mdCell(c) + " ")
			}
			b.WriteString("|\n")
		}
		cells(t.Head)
		for i := range t.Head {
			if t.Numeric[i] {
				b.WriteString("|---:")
			} else {
				b.WriteString("|---")
			}
		}
		b.WriteString("|\n")
		for _, r := range t.Rows {
			cells(r)
		}
		return b.String()
	},
	// rec shows a provenance field, or that nothing recorded it.
	"rec": func(s string) string {
		if s == "" {
			return "not recorded"
		}
		return s
	},
	// commit shows lm-eval's commit with its dirty flag.
	"commit": func(commit string, dirty bool) string {
		switch {
		case commit == "":
			return "commit not recorded"
		case dirty:
			return commit + " DIRTY (uncommitted changes)"
		}
		return commit + " (clean)"
	},
}

// mdCell keeps a model's output one Markdown table cell of text: no line
// breaks, no column bars, no markup.
func mdCell(s string) string {
	return strings.NewReplacer("\n", "⏎", "|", "\\|").Replace(html.EscapeString(s))
}

// WriteFiles writes the report as one self-contained HTML file (plots
// embedded, no network) and a Markdown file beside it (path with .md),
// each atomically.
func (r *Report) WriteFiles(htmlPath string) (mdPath string, err error) {
	var h strings.Builder
	if err := htmlTmpl.Execute(&h, r); err != nil {
		return "", err
	}
	var m strings.Builder
	if err := mdTmpl.Execute(&m, r); err != nil {
		return "", err
	}
	mdPath = strings.TrimSuffix(htmlPath, filepath.Ext(htmlPath)) + ".md"
	if err := harness.WriteFileAtomic(htmlPath, []byte(h.String())); err != nil {
		return "", err
	}
	return mdPath, harness.WriteFileAtomic(mdPath, []byte(m.String()))
}

var htmlTmpl = template.Must(template.New("report").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Study.Name}}: card → reproduction</title>
<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",sans-serif;color:#1b1f24;max-width:1100px;margin:2em auto;padding:0 1.2em}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}h3{margin-top:1.4em}
table{border-collapse:collapse;margin:.6em 0;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid #e3e6ea;padding:.25em .7em;text-align:left;vertical-align:top}
td.num,th.num{text-align:right}th{background:#f6f8fa}
.banner{background:#fff4e5;border:2px solid #e8a33d;padding:.7em 1em;border-radius:6px;font-weight:600}
.statement{background:#f6f8fa;border-left:4px solid #0969da;padding:.5em .9em}
.muted{color:#57606a}code,.tail{font-family:ui-monospace,"Liberation Mono",monospace;font-size:.86em}
.tail{white-space:pre-wrap;word-break:break-word;max-width:40em;display:block}
.differs{color:#cf222e;font-weight:600}
</style></head><body>
{{if .Simulated}}<p class="banner" id="simulated-banner">SIMULATED: some runs of this study come from the simulated backend. No model was run for them; their numbers illustrate the method and are not results of any model.</p>{{end}}
<h1>{{.Study.Name}}: model card → reproduction</h1>
<p class="muted">Model <code>{{.Study.Model.ID}}</code>{{if .Study.Model.Revision}} at <code>{{.Study.Model.Revision}}</code>{{end}} · lm-eval {{.Study.Harness.Version}}{{if .Study.Harness.Image}} · image <code>{{.Study.Harness.Image}}</code>{{end}}{{if .Study.Card.Source}} · card: {{if isURL .Study.Card.Source}}<a href="{{.Study.Card.Source}}">{{.Study.Card.Source}}</a>{{else}}{{.Study.Card.Source}}{{end}}{{end}}</p>
{{range $i, $c := .Claims}}
<h2 id="claim-{{$i}}">{{$c.Task}} · {{$c.Metric}} ({{$c.Filter}})</h2>
<p class="statement">{{$c.Statement}}</p>
<table class="attribution" data-claim="{{$i}}">
<thead><tr><th>step</th><th>kind</th><th class="num">score</th><th class="num">Δ</th><th class="num">95 % CI of Δ</th><th class="num">p (McNemar)</th><th class="num">p (Holm)</th></tr></thead>
<tbody>
<tr data-row="card"><td>model card</td><td></td><td class="num" data-field="value" data-value="{{raw $c.Card}}">{{pts $c.Card}}</td><td></td><td></td><td></td><td></td></tr>
<tr data-row="baseline"><td>baseline</td><td>run</td><td class="num" data-field="value" data-value="{{raw $c.Baseline}}">{{pts $c.Baseline}}</td><td></td><td></td><td></td><td></td></tr>
{{range $c.Steps}}<tr data-row="step"><td>{{.Name}}</td><td>{{.Kind}}</td><td class="num" data-field="value" data-value="{{raw .Value}}">{{pts .Value}}</td><td class="num" data-field="delta" data-value="{{raw .Delta}}">{{dpts .Delta}}</td><td class="num" data-field="ci" data-lo="{{raw .CILow}}" data-hi="{{raw .CIHigh}}">[{{pts .CILow}}, {{pts .CIHigh}}]</td><td class="num" data-field="p" data-value="{{raw .P}}">{{p .P}}</td><td class="num" data-field="p-holm" data-value="{{raw .PHolm}}">{{p .PHolm}}</td></tr>
{{end}}<tr data-row="final"><td><b>final</b></td><td></td><td class="num" data-field="value" data-value="{{raw $c.Final}}"><b>{{pts $c.Final}}</b></td><td></td><td></td><td></td><td></td></tr>
<tr data-row="unexplained"><td>unexplained (card − final)</td><td></td><td class="num" data-field="value" data-value="{{raw $c.Unexplained}}">{{pts $c.Unexplained}}</td><td></td><td class="num" data-field="ci" data-lo="{{raw $c.UnexplainedCILow}}" data-hi="{{raw $c.UnexplainedCIHigh}}">[{{pts $c.UnexplainedCILow}}, {{pts $c.UnexplainedCIHigh}}]</td><td></td><td></td></tr>
</tbody></table>
<p class="muted">Scores in points{{with aggregate $c.ClaimAttribution}}, {{.}}{{end}}. Each Δ is paired, question by question, against the step before; its CI is a paired bootstrap.{{if $c.HolmFamily}} p (Holm): {{$c.HolmFamily}}.{{end}}</p>{{range $c.Notes}}
<p class="note">Note: {{.}}.</p>{{end}}
{{if $c.Settings}}<h3>Settings: the card's against the runs'</h3>
<table class="settings" data-claim="{{$i}}"><thead><tr><th>setting</th><th>card</th><th>baseline</th><th>final run</th><th>match</th></tr></thead><tbody>
{{range $c.Settings}}<tr data-setting="{{.Setting}}"><td><code>{{.Setting}}</code></td><td data-field="card">{{dash .Card}}</td><td data-field="baseline">{{dash .Baseline}}</td><td data-field="final">{{dash .Final}}</td><td data-field="match"{{if not .Match}} class="differs"{{end}}>{{if .Match}}yes{{else}}NO{{end}}</td></tr>
{{end}}</tbody></table>{{end}}
<figure class="waterfall">{{img $c.Waterfall}}</figure>
{{if $c.Sensitivity}}<h3>Sensitivity (one change from the baseline)</h3>
<table class="sensitivity"><thead><tr><th>change</th><th class="num">score</th><th class="num">Δ</th><th class="num">95 % CI</th><th class="num">p</th><th class="num">p (Holm)</th></tr></thead><tbody>
{{range $c.Sensitivity}}<tr><td>{{.Change}}</td><td class="num" data-value="{{raw .Value}}">{{pts .Value}}</td><td class="num" data-value="{{raw .Delta}}">{{dpts .Delta}}</td><td class="num">[{{pts .CILow}}, {{pts .CIHigh}}]</td><td class="num">{{p .P}}</td><td class="num" data-field="p-holm" data-value="{{raw .PHolm}}">{{p .PHolm}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if $c.Shapley}}<h3>Shapley attribution (full factorial)</h3>
<table class="shapley"><thead><tr><th>setting</th><th class="num">share of the total effect</th><th class="num">95 % CI</th></tr></thead><tbody>{{range $c.Shapley}}<tr><td>{{.Setting}}</td><td class="num" data-value="{{raw .Value}}">{{dpts .Value}}</td><td class="num" data-lo="{{raw .CILow}}" data-hi="{{raw .CIHigh}}">[{{dpts .CILow}}, {{dpts .CIHigh}}]</td></tr>{{end}}
<tr><td>interaction (carried by no single setting)</td><td class="num">{{dpts (deref $c.Interaction)}}</td><td></td></tr></tbody></table>{{end}}
{{with $c.Comparison}}<h3>Baseline → last run ({{$c.FinalRun}}), question by question</h3>
<p class="muted">Both runs under the claim's filter ({{.Filter}}); the final score above also applies the re-scoring steps.{{if gt $c.Members 1}} Every document counts the same here (the micro mean), whatever the claim's aggregate.{{end}}</p>
<table class="comparison"><tbody>
<tr><td>documents</td><td class="num">{{.N}}</td></tr>
<tr><td>baseline → last run</td><td class="num">{{pts .A}} → {{pts .B}} (Δ {{dpts .Delta}})</td></tr>
<tr><td>paired 95 % CI · unpaired</td><td class="num">[{{pts .CILow}}, {{pts .CIHigh}}] · [{{pts .UnpairedCILow}}, {{pts .UnpairedCIHigh}}]</td></tr>
<tr><td>right only in baseline · only in the last run</td><td class="num">{{.AOnly}} · {{.BOnly}} (McNemar p {{p .McNemarP}})</td></tr>
<tr><td>minimum detectable effect (80 % power)</td><td class="num">{{pts .MDE}}</td></tr>
<tr><td>prompts changed</td><td class="num">{{.PromptsChanged}}</td></tr>
</tbody></table>{{end}}
{{with $c.Failures}}<h3>Misses of the last run ({{.Filter}})</h3>
<table class="failure-classes"><tbody>{{range .ClassOrder}}<tr><td>{{.}}</td><td class="num">{{count $c.Failures.Classes .}}</td></tr>{{end}}
<tr><td><b>all misses</b></td><td class="num"><b>{{.NMisses}}</b> of {{.N}}</td></tr></tbody></table>
<div class="failures">{{htmltable .SampleTable}}</div>{{end}}
{{end}}
<h2>Provenance of every run</h2>
{{range .Warnings}}<p class="banner warning">Warning: {{.}}</p>
{{end}}<table class="provenance"><thead><tr><th>run</th><th>settings</th><th>lm-eval · Python</th><th>lm-eval (record) · commit</th><th>GPU · driver · CUDA</th><th>image</th><th>model revision</th><th>seeds</th><th>results file</th><th class="num">re-scored exact</th></tr></thead><tbody>
{{range .Runs}}<tr data-run="{{.Name}}"><td><b>{{.Name}}</b><br><span class="muted">{{.Label}}</span>{{if .Simulated}}<br><b>simulated</b>{{end}}</td><td><code>{{.Settings}}</code></td><td data-field="lm-eval">{{rec .LMEvalVersion}} · {{rec .PythonVersion}}</td><td data-field="commit"{{if .HarnessDirty}} class="differs"{{end}}>{{rec .HarnessVersion}} · <code>{{commit .HarnessCommit .HarnessDirty}}</code></td><td data-field="gpu">{{rec .GPUs}} · {{rec .Driver}} · {{rec .CUDA}}</td><td data-field="image"><code>{{if .Image}}{{.Image}}{{else}}none{{end}}</code></td><td data-field="revision"><code>{{rec .ModelRevision}}</code>{{if .RequestedRevision}}<br><span class="muted">asked: {{.RequestedRevision}}</span>{{end}}</td><td data-field="seeds">{{rec .Seeds}}</td><td><code>{{.ResultsPath}}</code><br><span class="muted">{{.ModelArgs}}</span></td><td class="num{{if .Differs}} differs{{end}}">{{.Exact}} of {{.Checks}}</td></tr>
{{end}}</tbody></table>
<p class="muted">Every number above is re-derived from the runs' logged samples; "re-scored exact" counts the checks where the re-scoring equals what lm-eval reported, to the last bit.</p>
</body></html>
`))

var mdTmpl = texttemplate.Must(texttemplate.New("report.md").Funcs(funcs).Parse(`# {{.Study.Name}}: model card → reproduction
{{if .Simulated}}
> **SIMULATED**: some runs of this study come from the simulated backend. No model was run for them; their numbers illustrate the method and are not results of any model.
{{end}}
Model ` + "`{{.Study.Model.ID}}`" + `, lm-eval {{.Study.Harness.Version}}{{if .Study.Card.Source}}, card: {{.Study.Card.Source}}{{end}}.
{{range $c := .Claims}}
## {{$c.Task}} · {{$c.Metric}} ({{$c.Filter}})

{{$c.Statement}}

| step | kind | score | Δ | 95 % CI of Δ | p | p (Holm) |
|---|---|---:|---:|---:|---:|---:|
| model card | | {{pts $c.Card}} | | | | |
| baseline | run | {{pts $c.Baseline}} | | | | |
{{range $c.Steps}}| {{.Name}} | {{.Kind}} | {{pts .Value}} | {{dpts .Delta}} | [{{pts .CILow}}, {{pts .CIHigh}}] | {{p .P}} | {{p .PHolm}} |
{{end}}| **final** | | **{{pts $c.Final}}** | | | | |
| unexplained (card − final) | | {{pts $c.Unexplained}} | | [{{pts $c.UnexplainedCILow}}, {{pts $c.UnexplainedCIHigh}}] | | |

Scores in points{{with aggregate $c.ClaimAttribution}}, {{.}}{{end}}.{{if $c.HolmFamily}} p (Holm): {{$c.HolmFamily}}.{{end}}{{range $c.Notes}}
Note: {{.}}.{{end}}
{{if $c.Settings}}
Settings, the card's against the runs':

| setting | card | baseline | final run | match |
|---|---|---|---|---|
{{range $c.Settings}}| {{mdcell .Setting}} | {{mdcell (dash .Card)}} | {{mdcell (dash .Baseline)}} | {{mdcell (dash .Final)}} | {{if .Match}}yes{{else}}**NO**{{end}} |
{{end}}{{end}}{{if $c.Sensitivity}}
Sensitivity (one change from the baseline):

| change | score | Δ | 95 % CI | p | p (Holm) |
|---|---:|---:|---:|---:|---:|
{{range $c.Sensitivity}}| {{.Change}} | {{pts .Value}} | {{dpts .Delta}} | [{{pts .CILow}}, {{pts .CIHigh}}] | {{p .P}} | {{p .PHolm}} |
{{end}}{{end}}{{if $c.Shapley}}
Shapley attribution: {{range $c.Shapley}}{{.Setting}} {{dpts .Value}} [{{dpts .CILow}}, {{dpts .CIHigh}}]; {{end}}interaction {{dpts (deref $c.Interaction)}}.
{{end}}{{with $c.Comparison}}
Baseline → last run ({{$c.FinalRun}}), question by question, both under the claim's filter ({{.Filter}}){{if gt $c.Members 1}}, every document counting the same (the micro mean){{end}}:

| | |
|---|---:|
| documents | {{.N}} |
| baseline → last run | {{pts .A}} → {{pts .B}} (Δ {{dpts .Delta}}) |
| paired 95 % CI · unpaired | [{{pts .CILow}}, {{pts .CIHigh}}] · [{{pts .UnpairedCILow}}, {{pts .UnpairedCIHigh}}] |
| right only in baseline · only in the last run | {{.AOnly}} · {{.BOnly}} (McNemar p {{p .McNemarP}}) |
| minimum detectable effect (80 % power) | {{pts .MDE}} |
| prompts changed | {{.PromptsChanged}} |
{{end}}{{with $c.Failures}}
Misses of the last run ({{.Filter}}): {{.NMisses}} of {{.N}} documents; {{range $i, $k := .ClassOrder}}{{if $i}}, {{end}}{{$k}} {{count $c.Failures.Classes $k}}{{end}}.

{{mdtable .SampleTable}}{{end}}{{end}}
## Provenance of every run
{{range .Warnings}}
> **Warning**: {{.}}
{{end}}
| run | settings | lm-eval · Python | lm-eval (record) · commit | GPU · driver · CUDA | image | model revision | seeds | re-scored exact |
|---|---|---|---|---|---|---|---|---:|
{{range .Runs}}| {{.Name}}{{if .Simulated}} (simulated){{end}} | ` + "`{{.Settings}}`" + ` | {{rec .LMEvalVersion}} · {{rec .PythonVersion}} | {{rec .HarnessVersion}} · {{mdcell (commit .HarnessCommit .HarnessDirty)}} | {{mdcell (rec .GPUs)}} · {{rec .Driver}} · {{rec .CUDA}} | {{if .Image}}{{mdcell .Image}}{{else}}none{{end}} | {{mdcell (rec .ModelRevision)}} | {{rec .Seeds}} | {{.Exact}} of {{.Checks}} |
{{end}}`))
