package capsule

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule/internal/layout"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/buildinfo"
	"github.com/evalcapsule/evalcapsule/study"
)

// DefaultTag names the capsule in its layout's index.json when
// PackOptions.Tag is empty.
const DefaultTag = "latest"

// epoch is the created time of a capsule whose runs record no end time.
var epoch = time.Unix(0, 0).UTC()

// PackOptions configures Pack. The zero value packs a complete study, with
// its tables computed with the default attribution options, and tags it
// "latest".
type PackOptions struct {
	// Tag names the manifest in the layout's index.json (default "latest").
	Tag string
	// PackerVersion is the packing program's version, recorded in the
	// config (default: the version of evalcapsule this program was built
	// from). It is part of the digest: another version of the packer gives
	// another capsule.
	PackerVersion string
	// AllowIncomplete packs a study whose planned runs are missing or not
	// done instead of refusing it; such a capsule holds no tables.
	AllowIncomplete bool
	// AllowDiffers packs a study some of whose numbers its samples do not
	// give (a re-scoring check that differs) instead of refusing it (an
	// error wrapping ErrDiffers). Such a capsule says so wherever it is
	// shown, never verifies and never replays.
	AllowDiffers bool
	// Attribution configures the attribution's bootstraps (seed, resamples,
	// level; the zero value: seed 0, 10,000 resamples, 95 %). The options
	// are recorded in the config, so that a replay computes the same
	// tables.
	Attribution analysis.AttributionOptions
	// Created overrides org.opencontainers.image.created. By default it is
	// the latest end time among the run records (the Unix epoch when none
	// has ended), so that the same study always gives the same digest.
	Created time.Time
	// Replace lets Pack replace an existing out; by default an existing
	// out (other than an empty directory) is an error.
	Replace bool
	// Progress, when set, is called as files are packed: when each starts,
	// every few MiB of large files, and when each ends. Calls come from
	// several goroutines, one at a time.
	Progress func(Progress)
}

// PackResult says what Pack wrote.
type PackResult struct {
	// Capsule is the path Pack wrote (its out) and Study the study's name.
	Capsule, Study string
	// Tag names the capsule in the layout.
	Tag string
	// Manifest is the capsule's manifest descriptor; its digest names the
	// capsule.
	Manifest ocispec.Descriptor
	// Files is the number of files packed (layers).
	Files int
	// Bytes is their total size in the study directory; Stored the size of
	// the blobs written (layers, config, manifest), samples compressed.
	Bytes  int64
	Stored int64
	// Tables are the tables the config holds: the re-scoring of every run
	// and the attribution of every claim, computed from the samples while
	// packing; nil for a study packed incomplete.
	Tables *study.Tables
	// Unsupported names the checks whose samples do not give the number
	// lm-eval reported (packed with AllowDiffers).
	Unsupported []string
}

// MarshalJSON writes what `capsule pack --json` prints: where the capsule
// is, its digest and tag, the counts, and whether it holds tables.
func (r PackResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Capsule string `json:"capsule"`
		Study   string `json:"study"`
		Digest  string `json:"digest"`
		Tag     string `json:"tag"`
		Files   int    `json:"files"`
		Bytes   int64  `json:"bytes"`
		Stored  int64  `json:"stored"`
		Tables  bool   `json:"tables"`
		// Unsupported is left out when empty, as in capsules before it.
		Unsupported []string `json:"unsupported,omitempty"`
	}{r.Capsule, r.Study, r.Manifest.Digest.String(), r.Tag, r.Files, r.Bytes, r.Stored, r.Tables != nil, r.Unsupported})
}

// String says what was packed, in a few lines.
func (r PackResult) String() string {
	s := fmt.Sprintf("packed %s into %s\n  digest  %s\n  files   %d (%s; %s stored)\n", r.Study, r.Capsule,
		r.Manifest.Digest, r.Files, FormatBytes(r.Bytes), FormatBytes(r.Stored))
	if r.Tables == nil {
		s += "  tables  none (incomplete study): a replay can verify files, not numbers\n"
	}
	if len(r.Unsupported) > 0 {
		s += fmt.Sprintf("  UNSUPPORTED: %s; the capsule will not verify or replay:\n", unsupported(r.Unsupported))
		for _, d := range r.Unsupported {
			s += "    " + d + "\n"
		}
	}
	return s
}

// Pack freezes the study s into a capsule at out: an OCI image layout
// directory, or, when out ends in ".tar", a tar of one. Every regular file
// of the study directory is a layer, except runs/*/output.partial/,
// runs/*/progress.json and hidden files; a symbolic link is an error.
//
// Pack refuses a study whose planned runs are missing or not done unless
// opts.AllowIncomplete. Of a complete study it computes the tables (every
// run re-scored from its samples, every claim attributed) and stores them
// in the config. Nothing appears at out unless everything succeeded: Pack
// builds the capsule beside it (".OUT.tmp-N", locked while Pack runs; those
// a killed pack left go first) and renames it into place.
//
// The same study directory gives the same manifest digest and, for a tar,
// the same bytes, wherever it lies and whatever its files' times and
// permissions (docs/capsule-format.md, "Reproducibility").
func Pack(ctx context.Context, s *study.Study, out string, opts PackOptions) (PackResult, error) {
	return pack(ctx, s, out, opts, nil)
}

// fixedTables are tables given to pack instead of computed (tests of the
// format, through export_test.go).
type fixedTables struct {
	attribution *analysis.Attribution
	rescore     *analysis.RescoreReport
}

func pack(ctx context.Context, s *study.Study, out string, opts PackOptions, fixed *fixedTables) (PackResult, error) {
	tag := opts.Tag
	if tag == "" {
		tag = DefaultTag
	}
	if !tagRE.MatchString(tag) {
		return PackResult{}, fmt.Errorf("pack: tag %q is not a valid OCI tag", tag)
	}
	root, err := filepath.Abs(s.Dir)
	if err != nil {
		return PackResult{}, err
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	outAbs, err := absResolved(out)
	if err != nil {
		return PackResult{}, err
	}
	asTar := strings.HasSuffix(out, ".tar")
	if err := checkOut(outAbs, asTar, opts.Replace); err != nil {
		return PackResult{}, err
	}
	files, err := studyFiles(root, outAbs)
	if err != nil {
		return PackResult{}, err
	}
	cfg, created, complete, err := studyConfig(s, root, files, opts)
	if err != nil {
		return PackResult{}, err
	}
	res := PackResult{Capsule: out, Study: s.Name, Tag: tag, Files: len(files)}
	switch {
	case fixed != nil:
		cfg.Attribution, cfg.Rescore = fixed.attribution, fixed.rescore
		if fixed.attribution != nil || fixed.rescore != nil {
			cfg.TableOptions = tableOptionsOf(opts.Attribution)
			res.Tables = &study.Tables{Rescore: fixed.rescore, Attribution: fixed.attribution}
		}
	case complete:
		t, err := study.ComputeTables(ctx, s, opts.Attribution)
		if err != nil {
			return PackResult{}, fmt.Errorf("pack: the tables: %w", err)
		}
		if d := differing(t.Rescore); len(d) > 0 && !opts.AllowDiffers {
			return PackResult{}, fmt.Errorf("pack %s: %w: %s (see capsule rescore; pack it anyway, marked as such, with --allow-differs)",
				root, ErrDiffers, strings.Join(d, "; "))
		}
		cfg.Attribution, cfg.Rescore, cfg.TableOptions = t.Attribution, t.Rescore, tableOptionsOf(opts.Attribution)
		res.Tables, res.Unsupported = t, differing(t.Rescore)
	}
	if !opts.Created.IsZero() {
		created = opts.Created.UTC()
	}

	// The capsule is built in ".OUT.tmp-N" beside out, locked while this
	// pack runs; those a killed pack left (no one holds them) go first.
	prefix := "." + filepath.Base(outAbs) + ".tmp-"
	layout.RemoveStale(filepath.Dir(outAbs), prefix)
	tmp, release, err := layout.MkdirTemp(filepath.Dir(outAbs), prefix)
	if err != nil {
		return PackResult{}, fmt.Errorf("pack: %w", err)
	}
	defer release()
	defer os.RemoveAll(tmp) // a no-op once it is renamed to out
	lw, err := layout.NewWriter(tmp)
	if err != nil {
		return PackResult{}, err
	}

	layers, err := packFiles(ctx, lw, files, withOp(opts.Progress, "pack"))
	if err != nil {
		return PackResult{}, err
	}
	cfgJSON, err := MarshalConfig(cfg)
	if err != nil {
		return PackResult{}, fmt.Errorf("pack: config: %w", err)
	}
	cfgDesc := ocispec.Descriptor{MediaType: ConfigMediaType, Digest: digest.FromBytes(cfgJSON), Size: int64(len(cfgJSON))}
	if err := lw.Push(ctx, cfgDesc, bytes.NewReader(cfgJSON)); err != nil {
		return PackResult{}, err
	}
	// No title on the manifest: oras-go's layout store copies manifest
	// annotations into index.json, and `oras pull` then writes the
	// manifest itself out as a file of that name.
	manifest, err := oras.PackManifest(ctx, lw, oras.PackManifestVersion1_1, ArtifactType, oras.PackManifestOptions{
		ConfigDescriptor:    &cfgDesc,
		Layers:              layers,
		ManifestAnnotations: map[string]string{ocispec.AnnotationCreated: created.Format(time.RFC3339)},
	})
	if err != nil {
		return PackResult{}, fmt.Errorf("pack: %w", err)
	}
	if err := lw.Finish(manifest, tag); err != nil {
		return PackResult{}, err
	}

	res.Manifest, res.Stored = manifest, lw.Stored()
	for _, l := range layers {
		res.Bytes += l.Size
		if n, ok := l.Annotations[AnnotationContentSize]; ok {
			size, _ := strconv.ParseInt(n, 10, 64)
			res.Bytes += size - l.Size
		}
	}
	if asTar {
		err = layout.WriteTar(ctx, tmp, outAbs, opts.Replace)
	} else {
		err = layout.Rename(tmp, outAbs, opts.Replace)
	}
	if err != nil {
		return PackResult{}, err
	}
	return res, nil
}

// tagRE is the OCI distribution spec's tag grammar.
var tagRE = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)

// absResolved makes p absolute with its parent directory's symbolic links
// resolved, so that a study and an out inside it compare as paths.
func absResolved(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs))
	}
	return abs, nil
}

// studyFile is one file to pack.
type studyFile struct {
	title, abs string
	size       int64
	mediaType  string
}

// studyFiles lists the files of the study directory root that go into a
// capsule, sorted by title, leaving out out (a capsule packed into its own
// study) and what is never packed.
func studyFiles(root, out string) ([]studyFile, error) {
	var files []studyFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		skip := func() error {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		title := filepath.ToSlash(rel)
		parts := strings.Split(title, "/")
		switch {
		case strings.HasPrefix(d.Name(), "."), p == out:
			// Hidden files, editors' and our own temporary files.
			return skip()
		case d.IsDir() && len(parts) == 3 && parts[0] == "runs" && parts[2] == harness.Partial:
			// An interrupted lm-eval's output.
			return filepath.SkipDir
		case len(parts) == 3 && parts[0] == "runs" && parts[2] == harness.ProgressFile:
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("pack: %s: %w: a symbolic link (a capsule holds regular files only; put a copy of the file in its place)", p, ErrNotPackable)
		case d.IsDir() || !d.Type().IsRegular():
			return nil
		}
		if err := CheckTitle(title); err != nil {
			var pr *Problem
			if errors.As(err, &pr) {
				return fmt.Errorf("pack: %s: %w: a reader would refuse its name (%s)", p, ErrNotPackable, pr.Found)
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, studyFile{title: title, abs: p, size: info.Size(), mediaType: MediaTypeFor(title)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].title < files[j].title })
	return files, nil
}

// studyConfig builds the config from the study and its run records, checks
// that the planned runs are done, and returns the capsule's created time.
func studyConfig(st *study.Study, root string, files []studyFile, opts PackOptions) (cfg *Config, created time.Time, complete bool, err error) {
	yamlText, err := os.ReadFile(filepath.Join(root, study.FileName))
	if err != nil {
		return nil, time.Time{}, false, err
	}
	cfg = &Config{
		Schema:        ConfigSchema,
		FormatVersion: FormatVersion,
		Packer:        Packer{Name: "capsule", Version: cmp.Or(opts.PackerVersion, buildinfo.Version())},
		Study:         st.Name,
		StudyYAML:     string(yamlText),
		Runs:          []ConfigRun{},
	}
	created = epoch
	records := map[string]*harness.RunRecord{}
	results := map[string]bool{}
	for _, f := range files {
		parts := strings.Split(f.title, "/")
		if f.mediaType == MediaResults {
			results[parts[1]] = true
		}
		if f.mediaType != MediaRun {
			continue
		}
		rec, err := harness.ReadRecord(filepath.Dir(f.abs))
		if err != nil {
			return nil, time.Time{}, false, fmt.Errorf("pack: %w", err)
		}
		records[parts[1]] = rec
		cfg.Runs = append(cfg.Runs, ConfigRun{Name: parts[1], Record: rec})
		cfg.Simulated = cfg.Simulated || rec.Simulated
		if rec.End != nil && rec.End.After(created) {
			created = rec.End.UTC()
		}
	}
	var missing, mismatched []string
	for _, pr := range st.Plan() {
		rec := records[pr.Name]
		if rec != nil {
			if secrets := rec.Spec.Secrets(); len(secrets) > 0 {
				return nil, time.Time{}, false, fmt.Errorf("pack %s: %w: run %s records %s: remove it from study.yaml and run it again, passing it in the environment",
					root, ErrNotPackable, pr.Name, strings.Join(secrets, ", "))
			}
			for _, d := range st.CheckRecord(pr, rec) {
				mismatched = append(mismatched, fmt.Sprintf("run %s: %s", pr.Name, d))
			}
		}
		switch {
		case rec == nil:
			missing = append(missing, fmt.Sprintf("%s (%s) has not been run", pr.Name, pr.Label))
		case rec.Status != harness.StatusDone:
			missing = append(missing, fmt.Sprintf("%s (%s) is %s", pr.Name, pr.Label, rec.Status))
		case !results[pr.Name]:
			missing = append(missing, fmt.Sprintf("%s (%s) is done but runs/%s/output holds no results file", pr.Name, pr.Label, pr.Name))
		}
	}
	if len(mismatched) > 0 {
		return nil, time.Time{}, false, fmt.Errorf("pack %s: %w: %s; run it again (capsule run) or restore study.yaml",
			root, study.ErrMismatch, strings.Join(mismatched, "; "))
	}
	if len(missing) > 0 && !opts.AllowIncomplete {
		return nil, time.Time{}, false, fmt.Errorf("pack %s: %w: %s; finish the runs (capsule run %s) or pack it as it is, without tables (--allow-incomplete)",
			root, study.ErrIncomplete, strings.Join(missing, "; "), root)
	}
	return cfg, created.Truncate(time.Second), len(missing) == 0, nil
}

// checkOut refuses an out that exists, unless it may be replaced or is an
// empty directory to fill.
func checkOut(out string, asTar, replace bool) error {
	st, err := os.Lstat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("pack: %s is a symbolic link; give the path it points to", out)
	case asTar && st.IsDir():
		return fmt.Errorf("pack: %s exists and is a directory, not a tar file", out)
	case !asTar && !st.IsDir():
		return fmt.Errorf("pack: %s exists and is not a directory (name a .tar to write a tar)", out)
	case replace:
		return nil
	case st.IsDir():
		if empty, err := layout.IsEmptyDir(out); err != nil || empty {
			return err
		}
	}
	return fmt.Errorf("pack: %s: %w (set Replace to replace it)", out, fs.ErrExist)
}

// zstdEncoderOptions make compression a function of the input alone: a
// fixed level and window, one goroutine (the parallel encoder's blocks
// would depend on GOMAXPROCS), and no content checksum (the layer's sha256
// and the content digest annotation already cover the bytes).
var zstdEncoderOptions = []zstd.EOption{
	zstd.WithEncoderLevel(zstd.SpeedDefault),
	zstd.WithWindowSize(MaxZstdWindow),
	zstd.WithEncoderConcurrency(1),
	zstd.WithEncoderCRC(false),
	zstd.WithZeroFrames(true),
}

// chunk is the read size for files: large enough that syscalls do not
// count, small enough that progress moves.
const chunk = 1 << 20

// packFiles writes a blob for each file, in parallel (the largest first, so
// that one big samples file does not start last), and returns the layers in
// the files' order.
func packFiles(ctx context.Context, lw *layout.Writer, files []studyFile, progress func(Progress)) ([]ocispec.Descriptor, error) {
	var total int64
	for _, f := range files {
		total += f.size
	}
	pt := newProgressTracker(progress, len(files), total)
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return files[order[a]].size > files[order[b]].size })

	layers := make([]ocispec.Descriptor, len(files))
	g, gctx := errgroup.WithContext(ctx)
	workers := min(runtime.GOMAXPROCS(0), max(len(files), 1))
	next := make(chan int)
	g.Go(func() error {
		defer close(next)
		for _, i := range order {
			select {
			case next <- i:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	for range workers {
		g.Go(func() error {
			var enc *zstd.Encoder
			buf := make([]byte, chunk)
			for i := range next {
				f := files[i]
				if f.mediaType == MediaSamples && enc == nil {
					var err error
					if enc, err = zstd.NewWriter(nil, zstdEncoderOptions...); err != nil {
						return err
					}
				}
				d, err := packFile(gctx, lw, f, enc, buf, pt)
				if err != nil {
					return err
				}
				layers[i] = d
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return layers, nil
}

// packFile writes one file's blob: as it is, or zstd-compressed for
// samples, hashing what it reads and what it writes in the same pass.
func packFile(ctx context.Context, lw *layout.Writer, f studyFile, enc *zstd.Encoder, buf []byte, pt *progressTracker) (ocispec.Descriptor, error) {
	src, err := os.Open(f.abs)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("pack: %w", err)
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if !st.Mode().IsRegular() {
		return ocispec.Descriptor{}, fmt.Errorf("pack: %s: %w: not a regular file", f.abs, ErrNotPackable)
	}
	blob, err := lw.Create()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	defer blob.Abort()

	compress := f.mediaType == MediaSamples
	var dst io.Writer = blob
	raw := sha256.New()
	if compress {
		enc.Reset(blob)
		dst = enc
	}
	pt.start(f.title, st.Size())
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return ocispec.Descriptor{}, err
		}
		k, rerr := src.Read(buf)
		if k > 0 {
			raw.Write(buf[:k])
			if _, err := dst.Write(buf[:k]); err != nil {
				return ocispec.Descriptor{}, err
			}
			n += int64(k)
			pt.add(f.title, n, st.Size(), int64(k))
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return ocispec.Descriptor{}, fmt.Errorf("pack: %w", rerr)
		}
	}
	if n != st.Size() {
		return ocispec.Descriptor{}, fmt.Errorf("pack: %s changed while it was packed (%d bytes, then %d)", f.abs, st.Size(), n)
	}
	if compress {
		if err := enc.Close(); err != nil {
			return ocispec.Descriptor{}, err
		}
	}
	d, err := blob.Commit()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	d.MediaType = f.mediaType
	d.Annotations = map[string]string{ocispec.AnnotationTitle: f.title}
	if compress {
		d.Annotations[AnnotationContentDigest] = digest.NewDigest(digest.SHA256, raw).String()
		d.Annotations[AnnotationContentSize] = strconv.FormatInt(n, 10)
	}
	pt.end(f.title, n)
	return d, nil
}
