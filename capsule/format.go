package capsule

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule/internal/layout"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/study"
)

// The capsule format (docs/capsule-format.md). A capsule is an OCI image
// manifest v1.1 with artifactType ArtifactType, a JSON config blob of
// ConfigMediaType, and one layer per file of the study directory, titled
// (org.opencontainers.image.title) with its path inside the study.
const (
	ArtifactType    = "application/vnd.evalcapsule.capsule.v1"
	ConfigMediaType = "application/vnd.evalcapsule.capsule.config.v1+json"

	// Layer media types, by kind of file.
	MediaSamples  = "application/vnd.evalcapsule.samples.v1+jsonl+zstd" // lm-eval samples, zstd-compressed
	MediaResults  = "application/vnd.evalcapsule.results.v1+json"       // lm-eval results
	MediaRun      = "application/vnd.evalcapsule.run.v1+json"           // run.json
	MediaStudy    = "application/vnd.evalcapsule.study.v1+yaml"         // study.yaml
	MediaNotebook = "application/x-ipynb+json"
	MediaHTML     = "text/html"
	MediaMarkdown = "text/markdown"
	MediaPNG      = "image/png"
	MediaSVG      = "image/svg+xml"
	MediaXML      = "application/xml"
	MediaText     = "text/plain"
	MediaJSON     = "application/json"
	MediaOther    = "application/octet-stream"

	// The replay report: an artifact of its own whose subject is the capsule.
	ReplayArtifactType = "application/vnd.evalcapsule.replay.v1"
	MediaReplayReport  = "application/vnd.evalcapsule.replay.report.v1+json"
)

// FormatVersion is the capsule format's version: readers accept the same
// major version and refuse others.
const FormatVersion = "1.0"

// ConfigSchema is the schema's name inside the config blob.
const ConfigSchema = "evalcapsule.capsule.config/v1"

// Config is the capsule's config blob: the study and every run record, the
// tables as computed when the capsule was packed, and who packed it.
type Config struct {
	Schema string `json:"schema"`
	// FormatVersion is the format's major.minor version.
	FormatVersion string `json:"format_version"`
	Packer        Packer `json:"packer"`
	Study         string `json:"study"`
	// StudyYAML is study.yaml as it was packed.
	StudyYAML string `json:"study_yaml"`
	// Simulated is set when any run comes from the simulated backend.
	Simulated bool `json:"simulated"`
	// Runs are the run.json records, by run name.
	Runs []ConfigRun `json:"runs"`
	// Attribution is `capsule attribute --json` at pack time.
	Attribution *analysis.Attribution `json:"attribution,omitempty"`
	// Rescore is `capsule rescore --json` of every run at pack time.
	Rescore *analysis.RescoreReport `json:"rescore,omitempty"`
	// TableOptions are the options the tables were computed with, so that
	// a replay computes them the same way.
	TableOptions *TableOptions `json:"table_options,omitempty"`
}

// TableOptions are the options of the attribution's bootstraps and tests.
type TableOptions struct {
	Seed      uint64  `json:"seed"`
	Resamples int     `json:"resamples"`
	Level     float64 `json:"level"`
	Intersect bool    `json:"intersect"`
}

// tableOptionsOf records attribution options, their defaults filled in.
func tableOptionsOf(o analysis.AttributionOptions) *TableOptions {
	t := &TableOptions{Seed: o.Seed, Resamples: o.Resamples, Level: o.Level, Intersect: o.Intersect}
	if t.Resamples == 0 {
		t.Resamples = analysis.DefaultResamples
	}
	if t.Level == 0 {
		t.Level = analysis.DefaultLevel
	}
	return t
}

// AttributionOptions are the options a replay computes the tables with:
// the recorded ones, or the defaults (seed 1) for a config without them.
func (t *TableOptions) AttributionOptions() analysis.AttributionOptions {
	if t == nil {
		return analysis.AttributionOptions{Seed: 1}
	}
	return analysis.AttributionOptions{Seed: t.Seed, Resamples: t.Resamples, Level: t.Level, Intersect: t.Intersect}
}

// ConfigRun is one run in the config.
type ConfigRun struct {
	Name   string             `json:"name"`
	Record *harness.RunRecord `json:"record"`
}

// Packer names the program that packed a capsule.
type Packer struct {
	Name    string `json:"name"`    // the program's name, "capsule"
	Version string `json:"version"` // the evalcapsule version it was built from (its module version, "devel" for a build from a checkout)
}

// MarshalConfig encodes a config as the capsule stores it (NaN as null).
func MarshalConfig(c *Config) ([]byte, error) {
	b, err := analysis.MarshalJSON(c)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	// Sorted keys and no insignificant whitespace: the same config gives
	// the same bytes, whatever produced it.
	return json.Marshal(v)
}

// Annotations on compressed layers (MediaSamples): the digest and size of
// the file as it is in the study directory, so that a reader can check the
// decompressed bytes as well as the stored ones, and refuse a layer that
// inflates past its declared size (a zstd bomb) while it streams.
const (
	AnnotationContentDigest = "io.github.evalcapsule.content.digest"
	AnnotationContentSize   = "io.github.evalcapsule.content.size"
)

// MaxZstdWindow is the largest zstd window (back-reference distance) a
// compressed layer may use. Packers write 8 MiB windows, the reference
// zstd's default up to level 19; readers refuse frames that ask for more,
// because the window is memory the decoder must allocate up front.
const MaxZstdWindow = 8 << 20

// Problem is one way a capsule is invalid: which blob (and, for a layer,
// which file), what was checked, what was expected and what was found. As
// an error it wraps ErrFormat. Verify lists them; Open, ReadFile and Unpack
// return the first they meet.
type Problem struct {
	// Blob is the blob's digest, or the layout file ("index.json",
	// "oci-layout") the problem is in.
	Blob string `json:"blob"`
	// Path is the layer's title (the file's path in the study), or
	// "manifest" or "config".
	Path     string `json:"path,omitempty"`
	What     string `json:"what"`               // what was checked ("digest", "size", "media type", "run record", ...)
	Expected string `json:"expected,omitempty"` // what the check expected (a digest, a size, a media type); left out when the problem names nothing
	Found    string `json:"found,omitempty"`    // what was found instead (or the error met); left out when the problem names nothing
}

func (p *Problem) Error() string {
	// The same fields as a layout's error, said the same way.
	e := layout.Error(*p)
	return ErrFormat.Error() + ": " + e.Detail()
}

// Unwrap makes every Problem an ErrFormat.
func (p *Problem) Unwrap() error { return ErrFormat }

// LayerMediaTypes are the layer media types of format 1.x. A reader refuses
// any other: skipping a file it does not know would replay a study with a
// piece missing and no one told.
var LayerMediaTypes = []string{
	MediaSamples, MediaResults, MediaRun, MediaStudy, MediaNotebook, MediaHTML,
	MediaMarkdown, MediaPNG, MediaSVG, MediaXML, MediaText, MediaJSON, MediaOther,
}

// MediaTypeFor returns the layer media type of the file at title, the
// slash-separated path inside the study directory. The kind comes from the
// path alone, so that packing never depends on what a file holds.
func MediaTypeFor(title string) string {
	base := path.Base(title)
	parts := strings.Split(title, "/")
	inOutput := len(parts) >= 4 && parts[0] == "runs" && parts[2] == "output"
	ext := strings.ToLower(path.Ext(base))
	switch {
	case title == study.FileName:
		return MediaStudy
	case len(parts) == 3 && parts[0] == "runs" && parts[2] == "run.json":
		return MediaRun
	case strings.HasPrefix(base, "samples_") && ext == ".jsonl":
		return MediaSamples
	case inOutput && ext == ".json":
		// lm-eval writes only its results (results_<date>.json, or a name
		// taken from --output_path) as .json into its output directory.
		return MediaResults
	}
	switch ext {
	case ".ipynb":
		return MediaNotebook
	case ".html", ".htm":
		return MediaHTML
	case ".md", ".markdown":
		return MediaMarkdown
	case ".png":
		return MediaPNG
	case ".svg":
		return MediaSVG
	case ".xml":
		return MediaXML
	case ".txt", ".log", ".out", ".csv":
		return MediaText
	case ".json":
		return MediaJSON
	}
	return MediaOther
}

// CheckTitle reports whether title may name a file in a capsule: a
// relative, slash-separated path of at most 4096 bytes, in valid UTF-8
// without control characters or backslashes, whose components are
// non-empty, at most 255 bytes, and neither "." nor ".." nor hidden (a
// leading "."; hidden files are never packed). These are the rules a
// reader applies before writing anything, so the packer applies them too
// and never writes a capsule that cannot be read.
func CheckTitle(title string) error {
	bad := func(why string) error {
		return &Problem{Path: title, What: "title", Expected: "a relative slash-separated path", Found: why}
	}
	switch {
	case title == "":
		return &Problem{What: "title", Expected: "a relative slash-separated path", Found: "an empty title"}
	case len(title) > 4096:
		return bad("a path longer than 4096 bytes")
	case !utf8.ValidString(title):
		return bad("invalid UTF-8")
	case strings.HasPrefix(title, "/"):
		return bad("an absolute path")
	case strings.Contains(title, `\`):
		return bad("a backslash")
	}
	for _, r := range title {
		if r < 0x20 || r == 0x7f {
			return bad("a control character")
		}
	}
	for _, c := range strings.Split(title, "/") {
		switch {
		case c == "":
			return bad("an empty path component")
		case c == "." || c == "..":
			return bad(fmt.Sprintf("a %q component", c))
		case strings.HasPrefix(c, "."):
			return bad("a hidden component " + strconv.Quote(c))
		case len(c) > 255:
			return bad("a component longer than 255 bytes")
		}
	}
	// What is left is local on Unix; filepath.IsLocal adds the rules of
	// the platform the file is written on (drive letters, reserved names).
	if !filepath.IsLocal(filepath.FromSlash(title)) {
		return bad("a path that is not local on " + runtime.GOOS)
	}
	return nil
}

// Image is the image every packed run used, by digest
// (name@sha256:<index digest>); "" when they used none or different ones.
func (c *Config) Image() string {
	image := ""
	for _, r := range c.Runs {
		if r.Record == nil || r.Record.Image == nil || r.Record.Image.IndexDigest == "" {
			return ""
		}
		name, _, _ := strings.Cut(r.Record.Image.Ref, "@")
		ref := name + "@" + r.Record.Image.IndexDigest
		if image != "" && ref != image {
			return ""
		}
		image = ref
	}
	return image
}

// ParseStudy parses the study file the config holds, without unpacking the
// capsule: what a rerun's runner is built from. Its Dir is empty.
func (c *Config) ParseStudy() (*study.Study, error) {
	return study.Parse(study.FileName+" (packed)", []byte(c.StudyYAML))
}
