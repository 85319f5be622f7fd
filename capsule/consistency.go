package capsule

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/study"
)

// What a capsule says must agree with what it holds: the runs its config
// records are the runs its study.yaml plans, each with the settings and
// the lm-eval command line the study gives it; the simulated mark is what
// the lm-eval outputs say; what lm-eval recorded of each run (seeds,
// few-shot counts, model, model_args, version) is what its record says;
// the packed numbers are what the samples give.
// A capsule that fails any of this is not what a reviewer should trust,
// whatever its digests say.

// planProblems compares the config's run records with the study's plan.
func (c *Capsule) planProblems() []Problem {
	blob := c.Manifest.Config.Digest.String()
	s, err := c.Config.ParseStudy()
	if err != nil {
		return []Problem{{Blob: blob, Path: study.FileName, What: "study", Expected: "a valid study file", Found: err.Error()}}
	}
	var out []Problem
	byName := map[string]*harness.RunRecord{}
	count := map[string]int{}
	for _, r := range c.Config.Runs {
		count[r.Name]++
		if r.Record != nil {
			byName[r.Name] = r.Record
		}
	}
	var dups []string
	for name, n := range count {
		if n > 1 {
			dups = append(dups, name)
		}
	}
	sort.Strings(dups)
	for _, name := range dups {
		out = append(out, Problem{Blob: blob, Path: "config", What: "run records", Expected: "one record per run", Found: fmt.Sprintf("%d records of run %q", count[name], name)})
	}
	planned := map[string]bool{}
	for _, pr := range s.Plan() {
		planned[pr.Name] = true
		where := "runs/" + pr.Name + "/" + harness.RecordFile
		rec := byName[pr.Name]
		if rec == nil {
			out = append(out, Problem{Blob: blob, Path: where, What: "planned run", Expected: fmt.Sprintf("a record of run %s (%s), which study.yaml plans", pr.Name, pr.Label), Found: "none"})
			continue
		}
		for _, d := range s.CheckRecord(pr, rec) {
			out = append(out, Problem{Blob: blob, Path: where, What: "run record", Expected: "what study.yaml plans for run " + pr.Name, Found: d})
		}
	}
	for _, r := range c.Config.Runs {
		if !planned[r.Name] && count[r.Name] == 1 {
			out = append(out, Problem{Blob: blob, Path: "config", What: "run", Expected: "a run study.yaml plans", Found: fmt.Sprintf("run %q, which it does not", r.Name)})
		}
	}
	return out
}

// maxResultsBytes bounds a results file read to see who wrote it. lm-eval's
// largest (a group of hundreds of tasks with their configs) are a few MiB.
const maxResultsBytes = 64 << 20

// resultsFile is one results file of the capsule, read.
type resultsFile struct {
	file File
	run  string // the run it belongs to, "" outside runs/
	res  *harness.Results
}

// readResults reads and parses every results file of the capsule.
func (c *Capsule) readResults(ctx context.Context) ([]resultsFile, []Problem) {
	var files []resultsFile
	var out []Problem
	for _, f := range c.files {
		if f.MediaType != MediaResults {
			continue
		}
		b, err := c.readLimited(ctx, f, maxResultsBytes)
		if err != nil {
			var p *Problem
			if errors.As(err, &p) {
				out = append(out, *p)
				continue
			}
			if ctx.Err() != nil {
				return files, out
			}
			out = append(out, Problem{Blob: f.Descriptor.Digest.String(), Path: f.Path, What: "results file", Expected: "readable", Found: err.Error()})
			continue
		}
		r, err := harness.ParseResults(f.Path, b)
		if err != nil {
			out = append(out, Problem{Blob: f.Descriptor.Digest.String(), Path: f.Path, What: "results file", Expected: "a results file lm-eval wrote", Found: err.Error()})
			continue
		}
		files = append(files, resultsFile{file: f, run: runOf(f.Path), res: r})
	}
	return files, out
}

// outputsSimulated reads every results file of the capsule and names the
// runs whose lm-eval output the simulated backend wrote.
func (c *Capsule) outputsSimulated(ctx context.Context) ([]string, []Problem) {
	files, out := c.readResults(ctx)
	return simulatedRuns(files), out
}

// simulatedRuns names the runs whose lm-eval output the simulated backend
// wrote.
func simulatedRuns(files []resultsFile) []string {
	var runs []string
	seen := map[string]bool{}
	for _, rf := range files {
		if rf.res.Simulated() && rf.run != "" && !seen[rf.run] {
			seen[rf.run] = true
			runs = append(runs, rf.run)
		}
	}
	return runs
}

// recordProblems compares what lm-eval recorded in each run's results
// file (seeds, few-shot counts, model, model_args, lm-eval version, ...)
// with the config's record of that run: one problem per field that
// differs (see harness.CheckRecord).
func (c *Capsule) recordProblems(files []resultsFile) []Problem {
	records := map[string]*harness.RunRecord{}
	for _, r := range c.Config.Runs {
		if r.Record != nil {
			records[r.Name] = r.Record
		}
	}
	var out []Problem
	for _, rf := range files {
		rec := records[rf.run]
		if rec == nil {
			continue
		}
		for _, m := range harness.CheckRecord(rf.res, rec) {
			p := Problem{Blob: rf.file.Descriptor.Digest.String(), Path: rf.file.Path,
				What:     fmt.Sprintf("lm-eval's record of run %s: %s", rf.run, m.Name()),
				Expected: m.Recorded + " (its run.json)",
				Found:    m.Results}
			if m.Detail != "" {
				p.Expected = m.Recorded + " (" + m.Detail + ")"
			}
			out = append(out, p)
		}
	}
	return out
}

// simulatedProblems says where the simulated mark of the config or of a
// run record is missing although the run's lm-eval output is simulated.
func (c *Capsule) simulatedProblems(runs []string) []Problem {
	var out []Problem
	blob := c.Manifest.Config.Digest.String()
	if len(runs) > 0 && !c.Config.Simulated {
		out = append(out, Problem{Blob: blob, Path: "config", What: "simulated", Expected: "true: the lm-eval output of " + strings.Join(runs, ", ") + " was written by the simulated backend", Found: "false"})
	}
	for _, name := range runs {
		for _, r := range c.Config.Runs {
			if r.Name == name && r.Record != nil && !r.Record.Simulated {
				out = append(out, Problem{Blob: blob, Path: "runs/" + name + "/" + harness.RecordFile, What: "simulated", Expected: "true: its lm-eval output was written by the simulated backend", Found: "false"})
			}
		}
	}
	return out
}

// differsProblem reports the packed checks whose samples did not give the
// number lm-eval reported: a capsule packed with AllowDiffers.
func (c *Capsule) differsProblem() []Problem {
	d := differing(c.Config.Rescore)
	if len(d) == 0 {
		return nil
	}
	return []Problem{{Blob: c.Manifest.Config.Digest.String(), Path: "config", What: "re-scoring",
		Expected: "every number lm-eval reported re-derived identically from its samples",
		Found:    fmt.Sprintf("%d differ, so the capsule's numbers are not supported by its samples (packed with --allow-differs): %s", len(d), strings.Join(d, "; "))}}
}

// differing names the checks of a re-scoring whose status is differs.
func differing(r *analysis.RescoreReport) []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, run := range r.Runs {
		for _, ch := range run.Checks {
			switch {
			case ch.Status != analysis.StatusDiffers:
			case ch.Level == analysis.LevelRecord:
				out = append(out, fmt.Sprintf("%s: %s", runOf(run.Path+"/"), ch.Reason))
			default:
				out = append(out, fmt.Sprintf("%s: %s %s,%s reported %s, samples give %s", runOf(run.Path+"/"), ch.Task, ch.Metric, ch.Filter, ch.Reported, ch.Recomputed))
			}
		}
	}
	return out
}

// unsupported says what the differing checks (as differing names them)
// are: numbers lm-eval reported that the samples do not give, and settings
// lm-eval recorded otherwise than the run's record.
func unsupported(d []string) string {
	settings := 0
	for _, line := range d {
		if strings.Contains(line, ": lm-eval recorded ") {
			settings++
		}
	}
	var parts []string
	if n := len(d) - settings; n > 0 {
		parts = append(parts, fmt.Sprintf("%d number(s) lm-eval reported are not what their samples give", n))
	}
	if settings > 0 {
		parts = append(parts, fmt.Sprintf("%d setting(s) lm-eval recorded are not what the run's record gives", settings))
	}
	return strings.Join(parts, ", and ")
}

// runOf is the run a path inside the study belongs to: "runs/<name>/…".
func runOf(p string) string {
	parts := strings.SplitN(p, "/", 3)
	if len(parts) < 3 || parts[0] != "runs" {
		return ""
	}
	return parts[1]
}

// readLimited reads a file of the capsule, refusing one larger than max.
func (c *Capsule) readLimited(ctx context.Context, f File, max int64) ([]byte, error) {
	if f.Size > max {
		return nil, &Problem{Blob: f.Descriptor.Digest.String(), Path: f.Path, What: "size", Expected: fmt.Sprintf("at most %d bytes", max), Found: fmt.Sprint(f.Size)}
	}
	rc, err := c.OpenFile(ctx, f.Path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, max+1))
}
