package capsule

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/sync/errgroup"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/study"
)

// ConfigJSONSchema is the JSON Schema (draft 2020-12) of the config blob,
// format 1.x. docs/capsule-config.schema.json is the same file, for people
// and other tools; a test keeps the two identical.
//
//go:embed schema/config.v1.json
var ConfigJSONSchema []byte

var configSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ConfigJSONSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	const url = "config.v1.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

// ValidateConfig checks a config blob against ConfigJSONSchema and returns
// one Problem per violation, located by its JSON pointer.
func ValidateConfig(b []byte) ([]Problem, error) {
	sch, err := configSchema()
	if err != nil {
		return nil, fmt.Errorf("config schema: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return []Problem{{Path: "config", What: "config", Expected: "JSON", Found: err.Error()}}, nil
	}
	err = sch.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil, nil
	}
	if !errors.As(err, &ve) {
		return nil, err
	}
	p := message.NewPrinter(language.English)
	var out []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			out = append(out, Problem{Path: "config", What: "config " + loc, Expected: e.ErrorKind.LocalizedString(p), Found: valueAt(inst, e.InstanceLocation)})
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	// The validator's order follows maps; a report should not.
	sort.SliceStable(out, func(i, j int) bool { return out[i].What < out[j].What })
	return out, nil
}

// valueAt renders the JSON value at a location, shortened for a message.
func valueAt(v any, loc []string) string {
	for _, k := range loc {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			var i int
			fmt.Sscan(k, &i)
			if i < 0 || i >= len(x) {
				return ""
			}
			v = x[i]
		}
	}
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

// Verification is what Verify found.
type Verification struct {
	// Capsule is the manifest's descriptor.
	Capsule ocispec.Descriptor `json:"capsule"`
	// OK is true when there are no problems.
	OK bool `json:"ok"`
	// Blobs and Bytes count the blobs read and their stored size.
	Blobs int   `json:"blobs"`
	Bytes int64 `json:"bytes"` // the blobs' stored size in bytes, as Blobs counts them
	// Files is the number of files of the study.
	Files    int       `json:"files"`
	Problems []Problem `json:"problems"` // everything found wrong, in the order checked; empty, never null, when OK
}

// String is the verification for people: one line, and one more per problem.
func (v *Verification) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "capsule %s: %d files, %d blobs, %d bytes read: ", v.Capsule.Digest, v.Files, v.Blobs, v.Bytes)
	if v.OK {
		b.WriteString("ok\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%d problem(s)\n", len(v.Problems))
	for _, p := range v.Problems {
		b.WriteString("  " + strings.TrimPrefix(p.Error(), ErrFormat.Error()+": ") + "\n")
	}
	return b.String()
}

// Verify checks a capsule through: the manifest, the config and every
// layer against their digests and sizes (compressed layers decompressed
// and checked too), the config against ConfigJSONSchema, and that every
// file the run records imply is there: each run's run.json (the same record
// as the config's), the results file of each done run's output and, when
// it logged samples, its samples files; and study.yaml, as the config
// holds it. The error is for what kept the check from finishing (a
// cancelled ctx); what is wrong with the capsule is in the problems.
func Verify(ctx context.Context, c *Capsule) (*Verification, error) {
	v := &Verification{Capsule: c.Descriptor, Files: len(c.files), Problems: []Problem{}}
	var mu sync.Mutex
	add := func(err error) error {
		var p *Problem
		if !errors.As(err, &p) {
			return err
		}
		mu.Lock()
		v.Problems = append(v.Problems, *p)
		mu.Unlock()
		return nil
	}
	count := func(size int64) {
		mu.Lock()
		v.Blobs++
		v.Bytes += size
		mu.Unlock()
	}

	// The manifest and config were checked by Open; they are read again,
	// so that a verification says what is on disk now.
	for _, b := range []struct {
		d     ocispec.Descriptor
		title string
	}{{c.Descriptor, "manifest"}, {c.Manifest.Config, "config"}} {
		raw, err := c.readBlob(ctx, b.d, b.title)
		if err != nil {
			if err := add(err); err != nil {
				return nil, err
			}
			continue
		}
		count(b.d.Size)
		if b.title == "config" {
			probs, err := ValidateConfig(raw)
			if err != nil {
				return nil, err
			}
			for _, p := range probs {
				p.Blob = b.d.Digest.String()
				v.Problems = append(v.Problems, p)
			}
		}
	}

	pt := newProgressTracker(withOp(c.opts.Progress, "verify"), len(c.files), c.size())
	layerProblems := make([][]Problem, len(c.files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, f := range c.files {
		g.Go(func() error {
			err := c.verifyFile(gctx, f, pt)
			var p *Problem
			if errors.As(err, &p) {
				layerProblems[i] = append(layerProblems[i], *p)
				return nil
			}
			if err == nil {
				count(f.Descriptor.Size)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, ps := range layerProblems {
		v.Problems = append(v.Problems, ps...)
	}
	v.Problems = append(v.Problems, c.completeness(ctx)...)
	v.Problems = append(v.Problems, c.consistency(ctx)...)
	v.OK = len(v.Problems) == 0
	return v, nil
}

// verifyFile reads one file through, which checks it.
func (c *Capsule) verifyFile(ctx context.Context, f File, pt *progressTracker) error {
	rc, err := c.OpenFile(ctx, f.Path)
	if err != nil {
		return err
	}
	defer rc.Close()
	pt.start(f.Path, f.Size)
	bp := chunks.Get().(*[]byte)
	defer chunks.Put(bp)
	buf := *bp
	var n int64
	for {
		k, err := rc.Read(buf)
		n += int64(k)
		pt.add(f.Path, n, f.Size, int64(k))
		if err == io.EOF {
			pt.end(f.Path, n)
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// completeness lists the files the config's run records imply that the
// capsule lacks or holds otherwise.
func (c *Capsule) completeness(ctx context.Context) []Problem {
	var out []Problem
	blob := c.Manifest.Config.Digest.String()
	missing := func(p, why string) {
		out = append(out, Problem{Blob: blob, Path: p, What: "missing file", Expected: why, Found: "absent"})
	}
	cfg := c.Config
	// The records as the config holds them, fields this program does not
	// know included, to compare with the run.json files.
	var raw struct {
		Runs []struct {
			Record json.RawMessage `json:"record"`
		} `json:"runs"`
	}
	json.Unmarshal(c.RawConfig, &raw)

	if f, ok := c.File(study.FileName); !ok {
		missing(study.FileName, "the study definition")
	} else if b, err := c.ReadFile(ctx, study.FileName); err == nil && string(b) != cfg.StudyYAML {
		out = append(out, Problem{Blob: f.Descriptor.Digest.String(), Path: study.FileName, What: "content", Expected: "the config's study_yaml", Found: "different text"})
	}

	inConfig := map[string]bool{}
	simulated := false
	for i, r := range cfg.Runs {
		inConfig[r.Name] = true
		if r.Record == nil {
			continue // the schema check reports it
		}
		simulated = simulated || r.Record.Simulated
		if CheckTitle(r.Name) != nil || strings.Contains(r.Name, "/") {
			out = append(out, Problem{Blob: blob, Path: "config", What: "run name", Expected: "a directory name", Found: fmt.Sprintf("%q", r.Name)})
			continue
		}
		prefix := "runs/" + r.Name + "/"
		rec := prefix + harness.RecordFile
		if f, ok := c.File(rec); !ok {
			missing(rec, "the run's record, which the config lists")
		} else if b, err := c.ReadFile(ctx, rec); err == nil && i < len(raw.Runs) && !sameJSON(b, raw.Runs[i].Record) {
			out = append(out, Problem{Blob: f.Descriptor.Digest.String(), Path: rec, What: "content", Expected: "the record the config holds for run " + r.Name, Found: "a different record"})
		}
		if r.Record.Status != harness.StatusDone {
			continue
		}
		var results, samples int
		for _, f := range c.files {
			if strings.HasPrefix(f.Path, prefix+harness.OutputDir+"/") {
				switch f.MediaType {
				case MediaResults:
					results++
				case MediaSamples:
					samples++
				}
			}
		}
		if results == 0 {
			missing(prefix+harness.OutputDir+"/", "the results file of done run "+r.Name)
		}
		if samples == 0 && r.Record.Spec.LogSamples {
			missing(prefix+harness.OutputDir+"/", "the samples files of done run "+r.Name+", which logged samples")
		}
	}
	// A record in the capsule that the config does not know would not be
	// replayed or shown.
	var extra []string
	for _, f := range c.files {
		if f.MediaType == MediaRun {
			if name := path.Base(path.Dir(f.Path)); !inConfig[name] {
				extra = append(extra, f.Path)
			}
		}
	}
	sort.Strings(extra)
	for _, p := range extra {
		f, _ := c.File(p)
		out = append(out, Problem{Blob: f.Descriptor.Digest.String(), Path: p, What: "run record", Expected: "a run the config lists", Found: "not in the config"})
	}
	if simulated && !cfg.Simulated {
		out = append(out, Problem{Blob: blob, Path: "config", What: "simulated", Expected: "true (a run record says simulated)", Found: "false"})
	}
	return out
}

// consistency lists where what the capsule says disagrees with what it
// holds: its runs against its study's plan, its simulated mark against its
// lm-eval outputs, its run records against what lm-eval recorded of the
// runs, its packed numbers against its samples.
func (c *Capsule) consistency(ctx context.Context) []Problem {
	out := c.planProblems()
	files, probs := c.readResults(ctx)
	out = append(out, probs...)
	out = append(out, c.simulatedProblems(simulatedRuns(files))...)
	out = append(out, c.recordProblems(files)...)
	return append(out, c.differsProblem()...)
}

// sameJSON compares two JSON texts as values, so that formatting and key
// order do not count.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
