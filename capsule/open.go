package capsule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule/internal/layout"
)

// Limits a reader applies to a capsule by default (OpenOptions), and a
// pull to what a manifest declares before it fetches a blob (PullOptions).
// They are tied to what lm-eval writes: its largest samples files are a
// few GB (docs/capsule-format.md, "Limits").
const (
	DefaultMaxBlobBytes         = 4 << 30
	DefaultMaxTotalBytes        = 32 << 30
	DefaultMaxDecompressedBytes = 4 << 30
	DefaultMaxConfigBytes       = 64 << 20
	// DefaultMaxCompressionRatio bounds a compressed layer's declared
	// decompressed size to this many times its stored size. Pack's zstd
	// compresses the samples of a full-size simulated GSM8K + MMLU run
	// 34 times overall and 61 times at most (an MMLU subject whose
	// five-shot prompts are long passages, repeated for each of four
	// choices): 200 leaves more than three times that.
	DefaultMaxCompressionRatio = 200
	// maxLayoutFileBytes is the manifest size registries commonly accept;
	// index.json and oci-layout are held to it too.
	maxLayoutFileBytes = 4 << 20
)

// OpenOptions configures Open. The zero value opens the capsule tagged
// "latest" (or the only one in the layout) with the default limits. A
// capsule is untrusted input: the limits bound what reading it can cost.
type OpenOptions struct {
	// Tag selects the manifest: a tag in the layout's index.json or a
	// manifest digest ("sha256:…"). Empty: "latest", or the only capsule.
	Tag string
	// MaxBlobBytes bounds each layer's stored size (default 4 GiB).
	MaxBlobBytes int64
	// MaxTotalBytes bounds the sum of the stored sizes, and the sum of the
	// files' sizes once decompressed: what Unpack writes (default 32 GiB).
	MaxTotalBytes int64
	// MaxDecompressedBytes bounds each compressed layer's decompressed
	// size, declared and checked while it streams (default 4 GiB).
	MaxDecompressedBytes int64
	// MaxCompressionRatio bounds each compressed layer's declared
	// decompressed size to this many times its stored size (default 200),
	// so that a capsule of a few MB cannot make Unpack write GBs.
	MaxCompressionRatio int64
	// MaxConfigBytes bounds the config blob, which is read into memory
	// (default 64 MiB).
	MaxConfigBytes int64
	// PlainHTTP speaks plain HTTP to a registry that is not on loopback
	// (OpenRef; registries on loopback always get plain HTTP).
	PlainHTTP bool
	// IdleTimeout and TransferTimeout bound OpenRef's pull from a
	// registry, as for PullOptions.
	IdleTimeout, TransferTimeout time.Duration
	// Progress, when set, is called as Unpack writes files and Verify
	// reads them, as PackOptions.Progress is.
	Progress func(Progress)
}

func (o OpenOptions) withDefaults() OpenOptions {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxBlobBytes, DefaultMaxBlobBytes)
	def(&o.MaxTotalBytes, DefaultMaxTotalBytes)
	def(&o.MaxDecompressedBytes, DefaultMaxDecompressedBytes)
	def(&o.MaxCompressionRatio, DefaultMaxCompressionRatio)
	def(&o.MaxConfigBytes, DefaultMaxConfigBytes)
	return o
}

// layerSize checks a capsule layer's stored size and, for a compressed
// layer, its declared decompressed size and compression ratio against the
// limits of o (with defaults), and returns the file's size in the study.
// A layer over a limit is a *Problem that names the layer and the limit.
func (o OpenOptions) layerSize(l ocispec.Descriptor) (int64, error) {
	title := l.Annotations[ocispec.AnnotationTitle]
	p := func(what, expected, found string) error {
		return &Problem{Blob: l.Digest.String(), Path: title, What: what, Expected: expected, Found: found}
	}
	if l.Size < 0 || l.Size > o.MaxBlobBytes {
		return 0, p("size", fmt.Sprintf("at most %d bytes (MaxBlobBytes)", o.MaxBlobBytes), strconv.FormatInt(l.Size, 10))
	}
	if l.MediaType != MediaSamples {
		return l.Size, nil
	}
	n, err := strconv.ParseInt(l.Annotations[AnnotationContentSize], 10, 64)
	if err != nil || n < 0 {
		return 0, p("annotation "+AnnotationContentSize, "the decompressed size in bytes", quoteOrNone(l.Annotations[AnnotationContentSize]))
	}
	if n > o.MaxDecompressedBytes {
		return 0, p("decompressed size", fmt.Sprintf("at most %d bytes (MaxDecompressedBytes)", o.MaxDecompressedBytes), strconv.FormatInt(n, 10))
	}
	// n > ratio×size, without overflowing: a size of MaxInt64/ratio or
	// more allows any n.
	if r := o.MaxCompressionRatio; l.Size < math.MaxInt64/r && n > r*l.Size {
		return 0, p("compression ratio", fmt.Sprintf("a decompressed size at most %d times the stored %d bytes (MaxCompressionRatio)", r, l.Size),
			fmt.Sprintf("%d bytes declared (%.0f times)", n, float64(n)/float64(max(l.Size, 1))))
	}
	return n, nil
}

// Capsule is an opened capsule: its manifest and parsed config, checked
// for shape when it was opened; each file's content is checked as it is
// read.
type Capsule struct {
	// Path is the layout directory or tar the capsule was opened from.
	Path string
	// Descriptor is the manifest's descriptor in the layout's index.json.
	Descriptor ocispec.Descriptor
	Manifest   ocispec.Manifest
	// Config is the parsed config; RawConfig the blob as stored.
	Config    *Config
	RawConfig []byte
	// Ref is what OpenRef was given (Open: the path); Registry is true
	// when the capsule was pulled from a registry into a temporary layout.
	Ref      string
	Registry bool

	tmp        string // the temporary layout of a pulled capsule
	releaseTmp func() // unlocks tmp
	files      []File
	byPath     map[string]int
	src        blobSource
	opts       OpenOptions
}

// File is one file of the capsule's study.
type File struct {
	// Path is the file's slash-separated path in the study (its layer's
	// title).
	Path      string
	MediaType string
	// Descriptor is its layer.
	Descriptor ocispec.Descriptor
	// Size is the file's size in the study: the layer's size, or for a
	// compressed layer its declared decompressed size.
	Size int64
}

// Compressed reports whether the layer holds the file zstd-compressed.
func (f File) Compressed() bool { return f.MediaType == MediaSamples }

// Open opens the capsule at path: an OCI image layout directory, or a tar
// of one (read in place, never extracted). It checks the layout, the
// manifest (digest, media types, artifactType, every layer's title, media
// type and size against the limits) and the config (digest, schema and
// format version: a major version other than this program's is refused).
// Files' contents are checked when they are read. Close releases it.
func Open(ctx context.Context, path string, opts OpenOptions) (*Capsule, error) {
	opts = opts.withDefaults()
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var src blobSource
	if st.IsDir() {
		src, err = openDirSource(path)
	} else {
		src, err = openTarSource(path)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	c := &Capsule{Path: path, Ref: path, src: src, opts: opts}
	if err := c.load(ctx); err != nil {
		src.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return c, nil
}

// Close releases the capsule's files, and removes the temporary layout of a
// capsule OpenRef pulled.
func (c *Capsule) Close() error {
	err := c.src.Close()
	if c.tmp != "" {
		os.RemoveAll(c.tmp)
		c.releaseTmp()
		c.tmp = ""
	}
	return err
}

// Files returns the capsule's files in manifest order (sorted by path for
// capsules Pack wrote).
func (c *Capsule) Files() []File { return slices.Clone(c.files) }

// size is the files' total size in the study.
func (c *Capsule) size() int64 {
	var n int64
	for _, f := range c.files {
		n += f.Size
	}
	return n
}

// File returns the file at path.
func (c *Capsule) File(path string) (File, bool) {
	i, ok := c.byPath[path]
	if !ok {
		return File{}, false
	}
	return c.files[i], true
}

func (c *Capsule) load(ctx context.Context) error {
	layout, err := c.readSmall(ocispec.ImageLayoutFile, maxLayoutFileBytes)
	if err != nil {
		return err
	}
	var il ocispec.ImageLayout
	if err := json.Unmarshal(layout, &il); err != nil || il.Version != ocispec.ImageLayoutVersion {
		return &Problem{Blob: ocispec.ImageLayoutFile, What: "image layout version", Expected: strconv.Quote(ocispec.ImageLayoutVersion), Found: foundJSON(err, il.Version)}
	}
	ib, err := c.readSmall(ocispec.ImageIndexFile, maxLayoutFileBytes)
	if err != nil {
		return err
	}
	var index ocispec.Index
	if err := json.Unmarshal(ib, &index); err != nil {
		return &Problem{Blob: ocispec.ImageIndexFile, What: "image index", Expected: "JSON", Found: err.Error()}
	}
	desc, err := resolveManifest(index, c.opts.Tag)
	if err != nil {
		return err
	}
	c.Descriptor = desc
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return &Problem{Blob: desc.Digest.String(), Path: "manifest", What: "media type", Expected: ocispec.MediaTypeImageManifest, Found: desc.MediaType}
	}
	if desc.Size > maxLayoutFileBytes {
		return &Problem{Blob: desc.Digest.String(), Path: "manifest", What: "size", Expected: fmt.Sprintf("at most %d bytes", maxLayoutFileBytes), Found: strconv.FormatInt(desc.Size, 10)}
	}
	mb, err := c.readBlob(ctx, desc, "manifest")
	if err != nil {
		return err
	}
	if err := c.checkManifest(mb); err != nil {
		return err
	}
	cd := c.Manifest.Config
	if cd.Size > c.opts.MaxConfigBytes {
		return &Problem{Blob: cd.Digest.String(), Path: "config", What: "size", Expected: fmt.Sprintf("at most %d bytes (MaxConfigBytes)", c.opts.MaxConfigBytes), Found: strconv.FormatInt(cd.Size, 10)}
	}
	c.RawConfig, err = c.readBlob(ctx, cd, "config")
	if err != nil {
		return err
	}
	c.Config, err = decodeConfig(c.RawConfig, cd.Digest.String())
	return err
}

// resolveManifest picks the manifest named by tag (a tag or a digest), or
// by default the one tagged "latest", or else the only capsule.
func resolveManifest(index ocispec.Index, tag string) (ocispec.Descriptor, error) {
	var tags []string
	for _, d := range index.Manifests {
		if t := d.Annotations[ocispec.AnnotationRefName]; t != "" {
			tags = append(tags, t)
		}
	}
	pick := func(match func(ocispec.Descriptor) bool) []ocispec.Descriptor {
		var out []ocispec.Descriptor
		for _, d := range index.Manifests {
			if match(d) {
				out = append(out, d)
			}
		}
		return out
	}
	var found []ocispec.Descriptor
	switch {
	case strings.Contains(tag, ":"):
		found = pick(func(d ocispec.Descriptor) bool { return d.Digest.String() == tag })
	case tag != "":
		found = pick(func(d ocispec.Descriptor) bool { return d.Annotations[ocispec.AnnotationRefName] == tag })
	default:
		found = pick(func(d ocispec.Descriptor) bool { return d.Annotations[ocispec.AnnotationRefName] == DefaultTag })
		if len(found) == 0 {
			// Replay reports and other referrers sit in the index too,
			// untagged; they are not the capsule.
			found = pick(func(d ocispec.Descriptor) bool {
				return d.MediaType == ocispec.MediaTypeImageManifest && (d.ArtifactType == ArtifactType || d.ArtifactType == "")
			})
		}
	}
	// One manifest under two names is still one.
	if len(found) > 1 && !slices.ContainsFunc(found, func(d ocispec.Descriptor) bool { return d.Digest != found[0].Digest }) {
		found = found[:1]
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case tag == "" && len(found) == 0:
		return ocispec.Descriptor{}, &Problem{Blob: ocispec.ImageIndexFile, What: "manifests", Expected: "a capsule manifest", Found: "none"}
	case tag == "":
		return ocispec.Descriptor{}, fmt.Errorf("the layout holds %d capsules; choose one by tag or digest (tags: %s)", len(found), strings.Join(tags, ", "))
	case len(found) == 0:
		return ocispec.Descriptor{}, fmt.Errorf("no manifest %q in the layout (tags: %s): %w", tag, strings.Join(tags, ", "), fs.ErrNotExist)
	}
	return ocispec.Descriptor{}, &Problem{Blob: ocispec.ImageIndexFile, What: "manifests", Expected: "one manifest named " + strconv.Quote(tag), Found: strconv.Itoa(len(found))}
}

// checkManifest parses the manifest and checks its shape and every layer.
func (c *Capsule) checkManifest(b []byte) error {
	blob := c.Descriptor.Digest.String()
	m := &c.Manifest
	if err := json.Unmarshal(b, m); err != nil {
		return &Problem{Blob: blob, Path: "manifest", What: "image manifest", Expected: "JSON", Found: err.Error()}
	}
	bad := func(what, expected, found string) error {
		return &Problem{Blob: blob, Path: "manifest", What: what, Expected: expected, Found: found}
	}
	switch {
	case m.SchemaVersion != 2:
		return bad("schemaVersion", "2", strconv.Itoa(m.SchemaVersion))
	case m.MediaType != ocispec.MediaTypeImageManifest:
		return bad("media type", ocispec.MediaTypeImageManifest, m.MediaType)
	case m.ArtifactType != ArtifactType:
		return bad("artifactType", ArtifactType+" (this program reads capsule format "+FormatVersion+")", quoteOrNone(m.ArtifactType))
	case m.Config.MediaType != ConfigMediaType:
		return &Problem{Blob: m.Config.Digest.String(), Path: "config", What: "media type", Expected: ConfigMediaType + " (this program reads capsule format " + FormatVersion + ")", Found: quoteOrNone(m.Config.MediaType)}
	}
	if err := checkDigest(m.Config, "config"); err != nil {
		return err
	}

	c.byPath = map[string]int{}
	var stored, content int64 = m.Config.Size, 0
	for _, l := range m.Layers {
		title := l.Annotations[ocispec.AnnotationTitle]
		p := func(what, expected, found string) error {
			return &Problem{Blob: l.Digest.String(), Path: title, What: what, Expected: expected, Found: found}
		}
		if err := CheckTitle(title); err != nil {
			var pr *Problem
			if errors.As(err, &pr) {
				pr.Blob = l.Digest.String()
			}
			return err
		}
		if _, dup := c.byPath[title]; dup {
			return p("title", "one layer per path", "a second layer with this title")
		}
		if !slices.Contains(LayerMediaTypes, l.MediaType) {
			return p("media type", "a layer type of capsule format "+FormatVersion, quoteOrNone(l.MediaType))
		}
		if err := checkDigest(l, title); err != nil {
			return err
		}
		size, err := c.opts.layerSize(l)
		if err != nil {
			return err
		}
		f := File{Path: title, MediaType: l.MediaType, Descriptor: l, Size: size}
		if f.Compressed() {
			if cd := digest.Digest(l.Annotations[AnnotationContentDigest]); cd.Validate() != nil {
				return p("annotation "+AnnotationContentDigest, "the decompressed content's digest", quoteOrNone(string(cd)))
			}
		}
		stored += l.Size
		content += f.Size
		if stored > c.opts.MaxTotalBytes || content > c.opts.MaxTotalBytes {
			return p("total size", fmt.Sprintf("at most %d bytes (MaxTotalBytes)", c.opts.MaxTotalBytes), fmt.Sprintf("more (%d stored, %d decompressed so far)", stored, content))
		}
		c.byPath[title] = len(c.files)
		c.files = append(c.files, f)
	}
	// A path that is both a file and a directory would make one of the
	// two writes fail half-way through an unpack.
	for _, f := range c.files {
		for dir := path.Dir(f.Path); dir != "."; dir = path.Dir(dir) {
			if i, ok := c.byPath[dir]; ok {
				d := c.files[i]
				return &Problem{Blob: d.Descriptor.Digest.String(), Path: d.Path, What: "title", Expected: "a file or a directory", Found: "both (" + f.Path + " is inside it)"}
			}
		}
	}
	return nil
}

func checkDigest(d ocispec.Descriptor, title string) error {
	if err := d.Digest.Validate(); err != nil {
		return &Problem{Blob: quoteOrNone(d.Digest.String()), Path: title, What: "digest", Expected: "algorithm:hex", Found: err.Error()}
	}
	return nil
}

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return strconv.Quote(s)
}

func foundJSON(err error, v string) string {
	if err != nil {
		return err.Error()
	}
	return quoteOrNone(v)
}

// OpenFile returns the content of the file at path, decompressed if it is
// stored compressed. The reader checks as it goes: it fails with a
// *Problem (wrapping ErrFormat) in place of io.EOF when the stored or the
// decompressed bytes do not match their digests and sizes, and as soon as
// a layer grows past its size or decompresses past its declared size.
// Only a reader read to its end has checked the whole file.
func (c *Capsule) OpenFile(ctx context.Context, path string) (io.ReadCloser, error) {
	f, ok := c.File(path)
	if !ok {
		return nil, fmt.Errorf("%s: %w in capsule %s", path, fs.ErrNotExist, c.Descriptor.Digest)
	}
	br, err := c.openBlob(ctx, f.Descriptor, f.Path)
	if err != nil {
		return nil, err
	}
	if !f.Compressed() {
		return br, nil
	}
	dec, err := getDecoder(br)
	if err != nil {
		br.Close()
		return nil, err
	}
	want := digest.Digest(f.Descriptor.Annotations[AnnotationContentDigest])
	return &zstdReader{blob: br, dec: dec, f: f, want: want, h: want.Algorithm().Hash()}, nil
}

// zstdReader decompresses a layer, checking the decompressed bytes against
// the layer's content annotations and draining the blob at the end, so that
// the blob's own check runs too.
type zstdReader struct {
	blob *blobReader
	dec  *zstd.Decoder
	f    File
	want digest.Digest
	h    hash.Hash
	n    int64
	err  error
}

func (z *zstdReader) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	n, err := z.dec.Read(p)
	z.h.Write(p[:n])
	z.n += int64(n)
	problem := func(what, expected, found string) error {
		return &Problem{Blob: z.f.Descriptor.Digest.String(), Path: z.f.Path, What: what, Expected: expected, Found: found}
	}
	var pr *Problem
	switch {
	case z.n > z.f.Size:
		// A zstd bomb, or a wrong annotation: either way, stop now. If the
		// blob does not match its digest, that is the more useful thing
		// to say (reading the rest of the blob is cheap: it is not
		// decompressed).
		if _, derr := io.Copy(io.Discard, z.blob); errors.As(derr, &pr) {
			z.err = pr
		} else {
			z.err = problem("decompressed size", strconv.FormatInt(z.f.Size, 10), "more bytes")
		}
		return 0, z.err
	case err == io.EOF:
		// The frame ended; the rest of the blob must be there, and match.
		if _, derr := io.Copy(io.Discard, z.blob); derr != nil {
			z.err = derr
		} else if z.n != z.f.Size {
			z.err = problem("decompressed size", strconv.FormatInt(z.f.Size, 10), strconv.FormatInt(z.n, 10))
		} else if got := digest.NewDigest(z.want.Algorithm(), z.h); got != z.want {
			z.err = problem("decompressed digest", z.want.String(), got.String())
		} else {
			z.err = io.EOF
		}
		return n, z.err
	case err != nil:
		if errors.As(err, &pr) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			z.err = err
			return n, err
		}
		// Corrupt or hostile compressed data. If the blob does not match
		// its digest, that is the more useful thing to say.
		if _, derr := io.Copy(io.Discard, z.blob); errors.As(derr, &pr) {
			z.err = pr
		} else if errors.Is(err, zstd.ErrWindowSizeExceeded) {
			z.err = problem("zstd window", fmt.Sprintf("at most %d bytes", MaxZstdWindow), err.Error())
		} else if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			z.err = problem("decompressed size", strconv.FormatInt(z.f.Size, 10), "a frame declaring more")
		} else {
			z.err = problem("zstd stream", "valid zstd frames", err.Error())
		}
		return n, z.err
	}
	return n, nil
}

func (z *zstdReader) Close() error {
	if z.err == io.EOF {
		// A decoder that ended cleanly is reused: its history buffers are
		// most of what decompressing a small file allocates.
		decoders.Put(z.dec)
	} else {
		z.dec.Close()
	}
	z.dec = nil
	return z.blob.Close()
}

// decoders holds idle zstd decoders, each limited to MaxZstdWindow and to
// one goroutine (asynchronous decoding would only add goroutines: Unpack
// and Verify already decode files in parallel).
var decoders sync.Pool

func getDecoder(r io.Reader) (*zstd.Decoder, error) {
	if d, ok := decoders.Get().(*zstd.Decoder); ok {
		if err := d.Reset(r); err == nil {
			return d, nil
		}
		d.Close()
	}
	return zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(MaxZstdWindow))
}

// chunks holds read buffers of chunk bytes.
var chunks = sync.Pool{New: func() any { b := make([]byte, chunk); return &b }}

// ReadFile returns the content of the file at path, decompressed and
// checked (OpenFile).
func (c *Capsule) ReadFile(ctx context.Context, path string) ([]byte, error) {
	rc, err := c.OpenFile(ctx, path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	f, _ := c.File(path)
	// The declared size is a hint only: it is untrusted until read.
	buf := bytes.NewBuffer(make([]byte, 0, min(f.Size, 64<<20)+bytes.MinRead))
	if _, err := buf.ReadFrom(rc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Unpack writes the capsule's study directory to dest, every file checked
// and the samples decompressed, byte for byte the files that were packed.
// dest must not exist or be an empty directory. Unpack writes into a new
// directory beside dest and renames it into place when every file is
// written and checked, so that an error leaves no partial study; it writes
// through an os.Root, so no path can lead outside it. That directory
// (".DEST.unpack-N") is locked while Unpack runs: those a killed unpack
// left beside dest go first. Unpack writes at most the sizes the manifest
// declares, within the limits Open checked.
func (c *Capsule) Unpack(ctx context.Context, dest string) error {
	dest, err := filepath.Abs(dest)
	if err != nil {
		return err
	}
	st, err := os.Lstat(dest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("unpack: %s is a symbolic link; give a new directory", dest)
	case !st.IsDir():
		return fmt.Errorf("unpack: %s: %w and is not a directory", dest, fs.ErrExist)
	default:
		empty, err := layout.IsEmptyDir(dest)
		if err != nil {
			return err
		}
		if !empty {
			return fmt.Errorf("unpack: %s: %w and is not empty; give a new directory", dest, fs.ErrExist)
		}
	}
	// The study is written into ".DEST.unpack-N" beside dest, locked while
	// this unpack runs; those a killed unpack left (no one holds them) go
	// first. A concurrent unpack of the same dest holds its own.
	prefix := "." + filepath.Base(dest) + ".unpack-"
	layout.RemoveStale(filepath.Dir(dest), prefix)
	tmp, release, err := layout.MkdirTemp(filepath.Dir(dest), prefix)
	if err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	defer release()
	defer os.RemoveAll(tmp) // a no-op once it is renamed to dest
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return err
	}
	defer root.Close()

	// Directories first, one at a time; then the files in parallel.
	for _, f := range c.files {
		if dir := path.Dir(f.Path); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("unpack: %w", err)
			}
		}
	}
	pt := newProgressTracker(withOp(c.opts.Progress, "unpack"), len(c.files), c.size())
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, f := range c.files {
		g.Go(func() error { return c.unpackFile(gctx, root, f, pt) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if st != nil {
		// An empty directory was there; it makes way for the study.
		if err := os.Remove(dest); err != nil {
			return err
		}
	}
	return os.Rename(tmp, dest)
}

func (c *Capsule) unpackFile(ctx context.Context, root *os.Root, f File, pt *progressTracker) error {
	rc, err := c.OpenFile(ctx, f.Path)
	if err != nil {
		return err
	}
	defer rc.Close()
	// O_EXCL: a file is written once, never through something already
	// there (on a case-insensitive file system, "A" and "a" collide here).
	w, err := root.OpenFile(f.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	pt.start(f.Path, f.Size)
	bp := chunks.Get().(*[]byte)
	defer chunks.Put(bp)
	buf := *bp
	var n int64
	for {
		// Fill the buffer before writing: decoders return a block at a
		// time, and a write per block costs more syscalls than it needs.
		k, rerr := io.ReadFull(rc, buf)
		if rerr == io.ErrUnexpectedEOF {
			rerr = io.EOF
		}
		if k > 0 {
			if _, err := w.Write(buf[:k]); err != nil {
				w.Close()
				return err
			}
			n += int64(k)
			pt.add(f.Path, n, f.Size, int64(k))
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			w.Close()
			return rerr
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	pt.end(f.Path, n)
	return nil
}

// decodeConfig parses the config blob: first the format version and schema,
// so that a capsule of another major version is refused with that reason
// rather than with whatever its fields fail on, then the rest.
func decodeConfig(b []byte, blob string) (*Config, error) {
	var head struct {
		Schema        string `json:"schema"`
		FormatVersion string `json:"format_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, &Problem{Blob: blob, Path: "config", What: "config", Expected: "a JSON object", Found: err.Error()}
	}
	ours, _, _ := strings.Cut(FormatVersion, ".")
	major, minor, ok := strings.Cut(head.FormatVersion, ".")
	if _, err := strconv.Atoi(minor); !ok || err != nil || major != ours {
		return nil, &Problem{Blob: blob, Path: "config", What: "format version",
			Expected: fmt.Sprintf("%s.x (this program reads capsule format %s)", ours, FormatVersion), Found: quoteOrNone(head.FormatVersion)}
	}
	if head.Schema != ConfigSchema {
		return nil, &Problem{Blob: blob, Path: "config", What: "config schema", Expected: ConfigSchema, Found: quoteOrNone(head.Schema)}
	}

	// The tables decode themselves: analysis restores what JSON cannot
	// hold (NaN written as null, lm-eval's "N/A").
	type plain Config
	var aux struct {
		plain
		Attribution json.RawMessage `json:"attribution"`
		Rescore     json.RawMessage `json:"rescore"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return nil, &Problem{Blob: blob, Path: "config", What: "config", Expected: "the fields of format " + FormatVersion, Found: err.Error()}
	}
	cfg := Config(aux.plain)
	if len(aux.Attribution) > 0 && string(aux.Attribution) != "null" {
		var att analysis.Attribution
		if err := json.Unmarshal(aux.Attribution, &att); err != nil {
			return nil, &Problem{Blob: blob, Path: "config", What: "attribution", Expected: "the attribution table", Found: err.Error()}
		}
		att.Study, att.Simulated = cfg.Study, cfg.Simulated
		cfg.Attribution = &att
	}
	if len(aux.Rescore) > 0 && string(aux.Rescore) != "null" {
		var rep analysis.RescoreReport
		if err := json.Unmarshal(aux.Rescore, &rep); err != nil {
			return nil, &Problem{Blob: blob, Path: "config", What: "rescore", Expected: "the rescore report", Found: err.Error()}
		}
		cfg.Rescore = &rep
	}
	return &cfg, nil
}
