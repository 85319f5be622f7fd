package capsule

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// maxPulledManifestBytes bounds what is read into memory as a manifest,
// as oras-go does for registries.
const maxPulledManifestBytes = 4 << 20

// transferProgressStep is how many bytes of a blob pass between two
// progress calls.
const transferProgressStep = 4 << 20

// PushOptions configures Push and Attach (which uses PlainHTTP and the
// timeouts). The zero value pushes the capsule tagged "latest", over HTTPS
// except to loopback, with the credentials of the standard Docker config.
type PushOptions struct {
	// Tag names the capsule inside the source layout; default "latest",
	// the tag Pack gives it.
	Tag string

	// PlainHTTP talks plain HTTP to a registry that is not on loopback
	// (the CLI's --plain-http). A registry on 127.0.0.0/8, ::1 or
	// localhost always gets plain HTTP, so that a local test registry
	// needs no flag; anything else gets HTTPS unless this is set.
	PlainHTTP bool

	// WithReferrers also pushes the artifacts in the source layout that
	// refer to the capsule (replay reports, signatures), so that they
	// travel with it.
	WithReferrers bool

	// IdleTimeout fails a request to the registry when no byte of it or of
	// its answer has moved for this long: a registry that stops reading or
	// answering (default DefaultIdleTimeout, 60 s).
	IdleTimeout time.Duration
	// TransferTimeout is the longest one request may take, whatever moves
	// (a blob, a manifest, a token). Default: 10 minutes plus a second
	// for every 256 KiB the request declares (Content-Length; for an
	// answer at most the blob limit, 4 GiB): 23 minutes for a 200 MB
	// layer, 4 h 43 min for 4 GiB. A request past either timeout fails
	// with an error wrapping ErrRegistry.
	TransferTimeout time.Duration

	// Progress, when set, is called as blobs are sent: when each starts,
	// every few MiB, and when each ends (at once for a blob the registry
	// already has). Path is the blob's title, or its digest for the
	// config; Files and Bytes count the capsule's blobs. Manifests are not
	// reported. Calls come from several goroutines, one at a time.
	Progress func(Progress)
}

func (o PushOptions) timeouts() transferTimeouts {
	return newTransferTimeouts(o.IdleTimeout, o.TransferTimeout, DefaultMaxBlobBytes)
}

// PullOptions configures Pull, Reports and FetchReport (which use Tag,
// PlainHTTP and the timeouts). The zero value pulls over HTTPS except from
// loopback, with the credentials of the standard Docker config, to the
// default limits and timeouts, and tags the capsule "latest" in the
// layout.
type PullOptions struct {
	// Tag is the capsule's tag inside an OCI layout: the tag Pull gives
	// it, and the tag Reports and FetchReport look up when their ref is a
	// layout. Default "latest", the tag Pack gives it.
	Tag string

	// PlainHTTP talks plain HTTP to a registry that is not on loopback;
	// see PushOptions.PlainHTTP.
	PlainHTTP bool

	// WithReferrers also pulls the artifacts that refer to the capsule
	// (replay reports, signatures), at most 1,000 manifests.
	WithReferrers bool

	// MaxBlobBytes, MaxTotalBytes, MaxDecompressedBytes,
	// MaxCompressionRatio and MaxConfigBytes bound what the manifests may
	// declare, as OpenOptions' do and with the same defaults. Pull checks
	// every descriptor it would fetch before it fetches any blob: the
	// config and each layer (its size; for samples the declared
	// decompressed size and ratio), with WithReferrers every referrer's
	// manifest (at most 4 MiB), config and layers, and the sum of them all
	// (MaxTotalBytes). A descriptor over a limit is an error wrapping
	// ErrFormat that names it and the limit.
	MaxBlobBytes, MaxTotalBytes, MaxDecompressedBytes, MaxCompressionRatio, MaxConfigBytes int64

	// IdleTimeout and TransferTimeout bound each request to the registry,
	// as for PushOptions (defaults 60 s, and 10 minutes plus a second per
	// 256 KiB): a registry that stops sending, or trickles a byte now and
	// then, fails the pull with an error wrapping ErrRegistry.
	IdleTimeout, TransferTimeout time.Duration

	// Progress, when set, is called as blobs arrive, as for
	// PushOptions.Progress; a blob already in the layout ends at once.
	Progress func(Progress)
}

// limits are the pull's limits as OpenOptions, with their defaults.
func (o PullOptions) limits() OpenOptions {
	return OpenOptions{
		MaxBlobBytes: o.MaxBlobBytes, MaxTotalBytes: o.MaxTotalBytes, MaxDecompressedBytes: o.MaxDecompressedBytes,
		MaxCompressionRatio: o.MaxCompressionRatio, MaxConfigBytes: o.MaxConfigBytes,
	}.withDefaults()
}

func (o PullOptions) timeouts() transferTimeouts {
	return newTransferTimeouts(o.IdleTimeout, o.TransferTimeout, o.limits().MaxBlobBytes)
}

// pullOptions is how OpenRef pulls: with referrers, to the same limits.
func (o OpenOptions) pullOptions() PullOptions {
	return PullOptions{
		PlainHTTP: o.PlainHTTP, WithReferrers: true, Progress: o.Progress,
		MaxBlobBytes: o.MaxBlobBytes, MaxTotalBytes: o.MaxTotalBytes, MaxDecompressedBytes: o.MaxDecompressedBytes,
		MaxCompressionRatio: o.MaxCompressionRatio, MaxConfigBytes: o.MaxConfigBytes,
		IdleTimeout: o.IdleTimeout, TransferTimeout: o.TransferTimeout,
	}
}

// Push copies the capsule tagged opts.Tag in src, an OCI layout directory
// or a .tar of one, to target, "host[:port]/repository[:tag]" or
// "host[:port]/repository@sha256:…" (without tag or digest, the capsule's
// tag in src is used). Blobs the registry already has are not sent again,
// so an interrupted push resumes. It returns the capsule's manifest
// descriptor.
//
// Only capsules are pushed: a manifest of another artifact type is refused
// with an error wrapping ErrFormat, before anything is sent.
func Push(ctx context.Context, src, target string, opts PushOptions) (ocispec.Descriptor, error) {
	if err := notAStudy(src); err != nil {
		return ocispec.Descriptor{}, err
	}
	ref, err := parseRegistryReference(target)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	store, err := openLayoutReadOnly(ctx, src)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	tag := cmp.Or(opts.Tag, DefaultTag)
	root, err := store.Resolve(ctx, tag)
	if err != nil {
		if errors.Is(err, errdef.ErrNotFound) {
			return ocispec.Descriptor{}, fmt.Errorf("%w: no capsule tagged %q in %s", ErrReference, tag, src)
		}
		return ocispec.Descriptor{}, fmt.Errorf("%w: %s: %w", ErrFormat, src, err)
	}
	b, err := fetchManifest(ctx, store, root)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%w: %s: %w", ErrFormat, src, err)
	}
	m, err := decodeCapsuleManifest(root, b)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: %w", src, err)
	}
	root = plainManifest(root, ArtifactType)

	dstRef := cmp.Or(ref.Reference, tag)
	if d, err := ref.Digest(); err == nil && d != root.Digest {
		return ocispec.Descriptor{}, fmt.Errorf("%w: %s names digest %s, but the capsule is %s", ErrReference, target, d, root.Digest)
	}
	repo, err := newRepository(ref, opts.PlainHTTP, opts.timeouts())
	if err != nil {
		return ocispec.Descriptor{}, err
	}

	tp := newTransferProgress(withOp(opts.Progress, "push"), m)
	var source oras.ReadOnlyGraphTarget = store
	if tp != nil {
		source = progressSource{store, tp}
	}
	dst := tolerantRepository{repo}
	if opts.WithReferrers {
		_, err = oras.ExtendedCopy(ctx, source, root.Digest.String(), dst, dstRef, oras.ExtendedCopyOptions{
			ExtendedCopyGraphOptions: oras.ExtendedCopyGraphOptions{CopyGraphOptions: tp.hooks()},
		})
	} else {
		_, err = oras.Copy(ctx, source, root.Digest.String(), dst, dstRef, oras.CopyOptions{CopyGraphOptions: tp.hooks()})
	}
	if err := copyFailure(err, oras.CopyErrorOriginDestination, ref.Registry, src); err != nil {
		return ocispec.Descriptor{}, err
	}
	return root, nil
}

// Pull copies the capsule at ref ("host[:port]/repository[:tag|@digest]",
// tag "latest" when none is given) into an OCI layout at dir, created if
// missing, and tags it opts.Tag there. It returns the capsule's manifest
// descriptor.
//
// The manifest is fetched and checked first: anything but an image manifest
// with artifactType ArtifactType, or one that declares a blob or a sum of
// blobs over the limits of opts (and, with referrers, a referrer that
// does), is refused with an error wrapping ErrFormat before any blob is
// fetched or dir is touched. Every request is held to opts.IdleTimeout and
// opts.TransferTimeout: a registry that stalls or trickles fails the pull
// with an error wrapping ErrRegistry. Blobs already in dir are not fetched
// again, so an interrupted pull resumes. oras-go checks every blob against
// its digest as it arrives; Pull then checks every blob of the capsule in
// dir once more, so a layout that was already there (and may have been
// damaged) is vouched for too: a damaged blob is fetched again, once. The
// files a killed pull left in dir's ingest folder go first
// (docs/capsule-format.md, "Temporary files").
func Pull(ctx context.Context, ref, dir string, opts PullOptions) (ocispec.Descriptor, error) {
	r, err := parseRegistryReference(ref)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if err := checkPullDir(dir); err != nil {
		return ocispec.Descriptor{}, err
	}
	repo, err := newRepository(r, opts.PlainHTTP, opts.timeouts())
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	root, rc, err := repo.FetchReference(ctx, cmp.Or(r.Reference, DefaultTag))
	if err != nil {
		if errors.Is(err, errdef.ErrNotFound) {
			err = fmt.Errorf("no capsule at %s: %w", ref, errdef.ErrNotFound)
		}
		return ocispec.Descriptor{}, registryFailure(r.Registry, err)
	}
	b, err := readManifest(rc, root)
	rc.Close()
	if err != nil {
		if isContentMismatch(err) {
			return ocispec.Descriptor{}, fmt.Errorf("%w: %s: %w", ErrFormat, ref, err)
		}
		return ocispec.Descriptor{}, registryFailure(r.Registry, err)
	}
	m, err := decodeCapsuleManifest(root, b)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: %w", ref, err)
	}
	root = plainManifest(root, ArtifactType)
	// Everything the copy will fetch, checked against the limits first.
	plan, err := planPull(ctx, repo, root, m, opts.limits(), opts.WithReferrers)
	if err != nil {
		if errors.Is(err, ErrFormat) {
			return ocispec.Descriptor{}, fmt.Errorf("%s: %w", ref, err)
		}
		return ocispec.Descriptor{}, registryFailure(r.Registry, err)
	}

	store, err := oci.NewWithContext(ctx, dir)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("opening layout %s: %w", dir, err)
	}
	// oras-go writes each blob into dir/ingest first; a killed pull leaves
	// its file there.
	release, err := holdIngest(dir)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("opening layout %s: %w", dir, err)
	}
	defer release()
	tag := cmp.Or(opts.Tag, DefaultTag)
	// Copy by digest, not by tag: the tag may move between the check above
	// and the copy.
	pull := func() error {
		tp := newTransferProgress(withOp(opts.Progress, "pull"), m)
		sink := &layoutSink{Store: store, progress: tp}
		graph := plan.guard(tp.hooks())
		var err error
		if opts.WithReferrers {
			_, err = oras.ExtendedCopy(ctx, repo, root.Digest.String(), sink, tag, oras.ExtendedCopyOptions{
				ExtendedCopyGraphOptions: oras.ExtendedCopyGraphOptions{CopyGraphOptions: graph, FindPredecessors: plan.predecessors},
			})
		} else {
			_, err = oras.Copy(ctx, repo, root.Digest.String(), sink, tag, oras.CopyOptions{CopyGraphOptions: graph})
		}
		return copyFailure(err, oras.CopyErrorOriginSource, r.Registry, dir)
	}
	if err := pull(); err != nil {
		return ocispec.Descriptor{}, err
	}
	bad, err := checkLayoutBlobs(ctx, dir, store, root, opts.WithReferrers)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if len(bad) > 0 {
		// Blobs damaged in dir before this pull were skipped as present;
		// remove them and fetch them once more.
		for _, p := range bad {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return ocispec.Descriptor{}, err
			}
		}
		if err := pull(); err != nil {
			return ocispec.Descriptor{}, err
		}
		if bad, err = checkLayoutBlobs(ctx, dir, store, root, opts.WithReferrers); err != nil {
			return ocispec.Descriptor{}, err
		}
		if len(bad) > 0 {
			return ocispec.Descriptor{}, fmt.Errorf("%w: %s does not match its digest after a second pull", ErrFormat, bad[0])
		}
	}
	return root, nil
}

// parseRegistryReference parses "host[:port]/repository[:tag|@digest]".
func parseRegistryReference(s string) (registry.Reference, error) {
	if looksLikePath(s) {
		// "./x/y:v1" parses as host "." and would be looked up on the network.
		return registry.Reference{}, fmt.Errorf("%w: %q is a path, not host[:port]/repository[:tag|@digest]", ErrReference, s)
	}
	r, err := registry.ParseReference(s)
	if err != nil {
		return registry.Reference{}, fmt.Errorf("%w: %q is not host[:port]/repository[:tag|@digest]: %w", ErrReference, s, err)
	}
	return r, nil
}

// looksLikePath reports whether s is written as a file system path.
func looksLikePath(s string) bool {
	if s == "." || s == ".." || filepath.IsAbs(s) {
		return true
	}
	for _, prefix := range []string{"/", "~", "./", "../", "." + string(filepath.Separator), ".." + string(filepath.Separator)} {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// checkPullDir refuses a directory that is neither missing, empty nor an
// OCI layout: a pull would litter it with blobs.
func checkPullDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrReference, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ocispec.ImageLayoutFile)); err != nil {
		return fmt.Errorf("%w: %s is neither empty nor an OCI layout", ErrReference, dir)
	}
	return nil
}

// newRepository connects to the repository ref names, with the credentials
// of the standard Docker config (DOCKER_CONFIG or ~/.docker/config.json,
// including credential helpers and credsStore), read when a registry asks
// for them. Secrets stay inside oras-go's auth client: nothing here prints
// or records them. Every request is held to timeouts.
func newRepository(ref registry.Reference, plainHTTP bool, timeouts transferTimeouts) (*remote.Repository, error) {
	store, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: reading the Docker credentials config: %w", ErrRegistry, err)
	}
	client := &auth.Client{
		Client:     newHTTPClient(timeouts),
		Cache:      auth.NewCache(),
		Credential: credentials.Credential(store),
	}
	client.SetUserAgent("evalcapsule")
	return &remote.Repository{
		Client:    client,
		Reference: ref,
		PlainHTTP: usePlainHTTP(ref.Registry, plainHTTP),
	}, nil
}

// usePlainHTTP decides the scheme for a registry host ("host[:port]"):
// plain HTTP when asked for, or when the host is loopback (127.0.0.0/8,
// ::1, localhost), where a test registry lives and no one can listen in;
// HTTPS everywhere else, so that credentials and capsules never cross a
// network in the clear by accident.
func usePlainHTTP(hostport string, force bool) bool {
	if force {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// registryFailure wraps an error that came from talking to host with
// ErrRegistry. Authentication failures say so in words, since oras-go's
// own messages ("basic credential not found", a bare 401) do not point at
// the Docker config; they never include the credentials.
func registryFailure(host string, err error) error {
	if err == nil {
		return nil
	}
	var te *timeoutError
	if errors.Is(err, ErrRegistry) && !errors.As(err, &te) {
		return err
	}
	var resp *errcode.ErrorResponse
	switch {
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		return fmt.Errorf("%w: %s: authentication failed: no credentials for %s in the Docker config (docker login or oras login): %w", ErrRegistry, host, host, err)
	case errors.As(err, &resp) && resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%w: %s: authentication failed: the registry refused the credentials in the Docker config: %w", ErrRegistry, host, err)
	case errors.As(err, &resp) && resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: %s: access denied: %w", ErrRegistry, host, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrRegistry, host, err)
}

// copyFailure classifies an error from oras.Copy or ExtendedCopy by the
// side it came from: the registry side (remoteSide) wraps ErrRegistry, content
// that does not match its digest wraps ErrFormat, and the local side
// (local names the layout) is reported as it is.
func copyFailure(err error, remoteSide oras.CopyErrorOrigin, host, local string) error {
	if err == nil {
		return nil
	}
	if isContentMismatch(err) {
		return fmt.Errorf("%w: %w", ErrFormat, err)
	}
	// A blob that stopped coming fails while the layout reads it, on the
	// local side; it is the registry's failure all the same.
	var ce *oras.CopyError
	var te *timeoutError
	if errors.As(err, &ce) && ce.Origin != remoteSide && !errors.As(err, &te) {
		return fmt.Errorf("%s: %w", local, err)
	}
	return registryFailure(host, err)
}

// isContentMismatch reports whether err says that content did not match
// its descriptor.
func isContentMismatch(err error) bool {
	return errors.Is(err, content.ErrMismatchedDigest) ||
		errors.Is(err, content.ErrTrailingData) ||
		errors.Is(err, content.ErrInvalidDescriptorSize) ||
		errors.Is(err, errdef.ErrInvalidDigest)
}

// openLayoutReadOnly opens an OCI layout directory, or a .tar of one,
// without writing to it (oci.New would add an ingest folder to a
// directory).
func openLayoutReadOnly(ctx context.Context, path string) (*oci.ReadOnlyStore, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no capsule at %s", ErrReference, path)
	}
	if err != nil {
		return nil, err
	}
	var store *oci.ReadOnlyStore
	if fi.IsDir() {
		store, err = oci.NewFromFS(ctx, os.DirFS(path))
	} else {
		store, err = oci.NewFromTar(ctx, path)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not an OCI layout: %w", ErrFormat, path, err)
	}
	return store, nil
}

// fetchManifest reads the manifest desc from f, checking its size and
// digest.
func fetchManifest(ctx context.Context, f content.Fetcher, desc ocispec.Descriptor) ([]byte, error) {
	rc, err := f.Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return readManifest(rc, desc)
}

// readManifest reads the manifest desc from r, checking its size and
// digest.
func readManifest(r io.Reader, desc ocispec.Descriptor) ([]byte, error) {
	if desc.Size > maxPulledManifestBytes {
		return nil, fmt.Errorf("manifest %s is %d bytes, over the limit of %d: %w", desc.Digest, desc.Size, maxPulledManifestBytes, errdef.ErrSizeExceedsLimit)
	}
	return content.ReadAll(r, desc)
}

// decodeCapsuleManifest decodes the manifest desc and checks that it is a
// capsule: an image manifest whose artifactType is ArtifactType.
func decodeCapsuleManifest(desc ocispec.Descriptor, b []byte) (ocispec.Manifest, error) {
	var m ocispec.Manifest
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return m, fmt.Errorf("%w: %s is a %s, not a capsule manifest (%s)", ErrFormat, desc.Digest, desc.MediaType, ocispec.MediaTypeImageManifest)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%w: manifest %s: %w", ErrFormat, desc.Digest, err)
	}
	if m.ArtifactType != ArtifactType {
		what := m.ArtifactType
		if what == "" {
			what = "artifact without artifactType, config " + m.Config.MediaType
		}
		return m, fmt.Errorf("%w: %s is not a capsule: artifactType %q, want %q", ErrFormat, desc.Digest, what, ArtifactType)
	}
	return m, nil
}

// plainManifest is the descriptor of a manifest as the capsule API returns
// it: media type, digest, size and artifact type, without the annotations
// that layouts and registries add to their index entries.
func plainManifest(desc ocispec.Descriptor, artifactType string) ocispec.Descriptor {
	return ocispec.Descriptor{
		MediaType:    desc.MediaType,
		Digest:       desc.Digest,
		Size:         desc.Size,
		ArtifactType: artifactType,
	}
}

// isManifestType reports whether desc is a manifest or index, which oras-go
// walks into, rather than a blob.
func isManifestType(desc ocispec.Descriptor) bool {
	switch desc.MediaType {
	case ocispec.MediaTypeImageManifest, ocispec.MediaTypeImageIndex,
		"application/vnd.docker.distribution.manifest.v2+json",
		"application/vnd.docker.distribution.manifest.list.v2+json":
		return true
	}
	return false
}

// layoutSink is the layout a pull writes to. oras-go skips the whole graph
// below a node the destination already has, so a layout whose manifest is
// there but one of whose layers was deleted (or never arrived) would stay
// incomplete; here a manifest counts as present only when everything it
// references is present too. That is what lets a pull resume and fetch
// only what is missing. Blob writes report progress.
type layoutSink struct {
	*oci.Store
	progress *transferProgress
}

// Exists reports whether desc, and for a manifest everything below it, is
// in the layout.
func (s *layoutSink) Exists(ctx context.Context, desc ocispec.Descriptor) (bool, error) {
	ok, err := s.Store.Exists(ctx, desc)
	if err != nil || !ok || !isManifestType(desc) {
		return ok, err
	}
	children, err := content.Successors(ctx, s.Store, desc)
	if err != nil {
		// An unreadable manifest is copied again (and checked after).
		return false, nil
	}
	for _, c := range children {
		if ok, err := s.Exists(ctx, c); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// Push stores a blob, reporting its progress. A blob that does not match
// its descriptor is named, with its title when it has one.
func (s *layoutSink) Push(ctx context.Context, desc ocispec.Descriptor, r io.Reader) error {
	err := s.Store.Push(ctx, desc, s.progress.reader(desc, r))
	if err != nil && isContentMismatch(err) {
		if t := desc.Annotations[ocispec.AnnotationTitle]; t != "" {
			return fmt.Errorf("blob %s (%s): %w", desc.Digest, t, err)
		}
		return fmt.Errorf("blob %s: %w", desc.Digest, err)
	}
	return err
}

// progressSource is a push's source layout whose blob reads report
// progress: the registry client sends blobs as it reads them.
type progressSource struct {
	oras.ReadOnlyGraphTarget
	progress *transferProgress
}

// Fetch opens a blob, reporting the progress of its reading.
func (s progressSource) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	rc, err := s.ReadOnlyGraphTarget.Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{s.progress.reader(desc, rc), rc}, nil
}

// transferProgress turns the blobs of a push or pull into Progress calls,
// one at a time, like Pack's. A nil *transferProgress reports nothing.
type transferProgress struct {
	fn    func(Progress)
	mu    sync.Mutex
	p     Progress
	known map[digest.Digest]bool // blobs counted in the totals
	ended map[digest.Digest]bool
}

// newTransferProgress counts the capsule's config and layers in the
// totals; nil when fn is.
func newTransferProgress(fn func(Progress), m ocispec.Manifest) *transferProgress {
	if fn == nil {
		return nil
	}
	tp := &transferProgress{fn: fn, known: map[digest.Digest]bool{}, ended: map[digest.Digest]bool{}}
	for _, d := range append([]ocispec.Descriptor{m.Config}, m.Layers...) {
		tp.count(d)
	}
	return tp
}

// count adds desc to the totals once (referrers' blobs join as they come).
func (tp *transferProgress) count(desc ocispec.Descriptor) {
	if !tp.known[desc.Digest] {
		tp.known[desc.Digest] = true
		tp.p.TotalFiles++
		tp.p.TotalBytes += desc.Size
	}
}

// report calls fn with desc at done bytes; added bytes are new.
func (tp *transferProgress) report(desc ocispec.Descriptor, done, added int64, end bool) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.ended[desc.Digest] {
		return
	}
	tp.count(desc)
	if end {
		tp.ended[desc.Digest] = true
		tp.p.Files++
	}
	tp.p.Bytes += added
	tp.p.Path = cmp.Or(desc.Annotations[ocispec.AnnotationTitle], desc.Digest.String())
	tp.p.Done, tp.p.Size = done, desc.Size
	tp.fn(tp.p)
}

// hooks are the copy options that report a blob's start, and its end
// whether it was copied or already there.
func (tp *transferProgress) hooks() oras.CopyGraphOptions {
	if tp == nil {
		return oras.CopyGraphOptions{}
	}
	return oras.CopyGraphOptions{
		PreCopy: func(_ context.Context, desc ocispec.Descriptor) error {
			if !isManifestType(desc) {
				tp.report(desc, 0, 0, false)
			}
			return nil
		},
		PostCopy: func(_ context.Context, desc ocispec.Descriptor) error {
			if !isManifestType(desc) {
				tp.report(desc, desc.Size, 0, true)
			}
			return nil
		},
		OnCopySkipped: func(_ context.Context, desc ocispec.Descriptor) error {
			if !isManifestType(desc) {
				tp.report(desc, desc.Size, desc.Size, true)
			}
			return nil
		},
	}
}

// reader counts the bytes of blob desc read from r, reporting every
// transferProgressStep of them.
func (tp *transferProgress) reader(desc ocispec.Descriptor, r io.Reader) io.Reader {
	if tp == nil || isManifestType(desc) {
		return r
	}
	return &progressReader{r: r, desc: desc, tp: tp}
}

type progressReader struct {
	r              io.Reader
	desc           ocispec.Descriptor
	tp             *transferProgress
	done, reported int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.done-p.reported >= transferProgressStep || (n > 0 && p.done == p.desc.Size) {
		p.tp.report(p.desc, p.done, p.done-p.reported, false)
		p.reported = p.done
	}
	return n, err
}

// checkLayoutBlobs hashes every blob of the graph below root in the layout
// at dir (and, with referrers, of every artifact that refers to root,
// transitively), and returns the paths of those whose content does not
// match their name and size. A blob that is missing is an error wrapping
// ErrFormat.
func checkLayoutBlobs(ctx context.Context, dir string, store *oci.Store, root ocispec.Descriptor, referrers bool) ([]string, error) {
	var bad []string
	seen := map[digest.Digest]bool{}
	queue := []ocispec.Descriptor{root}
	for len(queue) > 0 {
		desc := queue[0]
		queue = queue[1:]
		if seen[desc.Digest] {
			continue
		}
		seen[desc.Digest] = true
		if err := desc.Digest.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrFormat, err)
		}
		p := filepath.Join(dir, ocispec.ImageBlobsDir, desc.Digest.Algorithm().String(), desc.Digest.Encoded())
		ok, err := blobMatches(p, desc)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w: %s is missing", ErrFormat, p)
			}
			return nil, err
		}
		if !ok {
			bad = append(bad, p)
			continue
		}
		if !isManifestType(desc) {
			continue
		}
		children, err := content.Successors(ctx, store, desc)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrFormat, p, err)
		}
		queue = append(queue, children...)
		if referrers {
			up, err := store.Predecessors(ctx, desc)
			if err != nil {
				return nil, err
			}
			queue = append(queue, up...)
		}
	}
	return bad, nil
}

// blobMatches reports whether the file at p has desc's size and digest.
func blobMatches(p string, desc ocispec.Descriptor) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	v := desc.Digest.Verifier()
	n, err := io.Copy(v, f)
	if err != nil {
		return false, err
	}
	return n == desc.Size && v.Verified(), nil
}
