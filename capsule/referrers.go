package capsule

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
)

// ReportTitle is the file name a replay report's layer carries
// (org.opencontainers.image.title), which `oras pull` uses.
const ReportTitle = "replay-report.json"

// reportCreated is the created annotation of every replay report. It is
// fixed so that attaching the same report to the same capsule gives the
// same manifest digest: a report can be re-attached, or attached in two
// places, without piling up copies.
const reportCreated = "1970-01-01T00:00:00Z"

// maxReportBytes bounds what FetchReport reads into memory.
const maxReportBytes = 256 << 20

// Attach pushes report, a replay report (JSON), as an artifact of its own
// whose subject is the capsule manifest subject: artifactType
// ReplayArtifactType, the empty config, and one layer of MediaReplayReport
// titled ReportTitle. target is where the capsule is: its repository in a
// registry ("host[:port]/repository"; a tag in it is ignored, a digest
// must be the subject's) or an OCI layout directory, such as one Pull
// wrote. It returns the report's manifest descriptor.
//
// Registries that serve the referrers API list the report beside the
// capsule; on those that do not (distribution 2.8), oras-go maintains the
// sha256-<hex> tag of the referrers tag schema. In a layout the report is
// an untagged entry of index.json.
func Attach(ctx context.Context, target string, subject ocispec.Descriptor, report []byte, opts PushOptions) (ocispec.Descriptor, error) {
	if subject.MediaType != ocispec.MediaTypeImageManifest {
		return ocispec.Descriptor{}, fmt.Errorf("%w: the subject %s is a %q, not a capsule manifest", ErrReference, subject.Digest, subject.MediaType)
	}
	if err := subject.Digest.Validate(); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%w: the subject: %w", ErrReference, err)
	}
	if !json.Valid(report) {
		return ocispec.Descriptor{}, fmt.Errorf("%w: the replay report is not JSON", ErrFormat)
	}
	loc, err := openCapsuleLocation(ctx, target, "", opts.PlainHTTP, opts.timeouts(), true)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if loc.pinned != "" && loc.pinned != subject.Digest {
		return ocispec.Descriptor{}, fmt.Errorf("%w: %s names %s, but the subject is %s", ErrReference, target, loc.pinned, subject.Digest)
	}
	// Only the subject's identity goes into the report, so that the digest
	// does not depend on what else the caller's descriptor carries.
	subject = ocispec.Descriptor{MediaType: subject.MediaType, Digest: subject.Digest, Size: subject.Size}
	ok, err := loc.store.Exists(ctx, subject)
	if err != nil {
		return ocispec.Descriptor{}, loc.failure(err)
	}
	if !ok {
		return ocispec.Descriptor{}, fmt.Errorf("%w: %s has no capsule %s", ErrReference, target, subject.Digest)
	}

	dst := loc.store.(oras.Target) // openCapsuleLocation checked
	layer := content.NewDescriptorFromBytes(MediaReplayReport, report)
	layer.Annotations = map[string]string{ocispec.AnnotationTitle: ReportTitle}
	if ok, err := dst.Exists(ctx, layer); err != nil {
		return ocispec.Descriptor{}, loc.failure(err)
	} else if !ok {
		if err := dst.Push(ctx, layer, bytes.NewReader(report)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
			return ocispec.Descriptor{}, loc.failure(err)
		}
	}
	desc, err := oras.PackManifest(ctx, dst, oras.PackManifestVersion1_1, ReplayArtifactType, oras.PackManifestOptions{
		Subject:             &subject,
		Layers:              []ocispec.Descriptor{layer},
		ManifestAnnotations: map[string]string{ocispec.AnnotationCreated: reportCreated},
	})
	if err != nil {
		return ocispec.Descriptor{}, loc.failure(err)
	}
	return plainManifest(desc, ReplayArtifactType), nil
}

// Reports lists the replay reports attached to the capsule at ref: a
// registry reference ("host[:port]/repository[:tag|@digest]") or an OCI
// layout (directory or .tar; the capsule is the one tagged opts.Tag). On a
// registry oras-go uses the referrers API where there is one and the
// sha256-<hex> tag schema otherwise; a layout answers from its index.
// The descriptors are in digest order, each with ArtifactType
// ReplayArtifactType.
func Reports(ctx context.Context, ref string, opts PullOptions) ([]ocispec.Descriptor, error) {
	loc, err := openCapsuleLocation(ctx, ref, opts.Tag, opts.PlainHTTP, opts.timeouts(), false)
	if err != nil {
		return nil, err
	}
	subject, err := loc.resolve(ctx)
	if err != nil {
		return nil, err
	}
	// Unfiltered: a registry that misreports artifact types (below) would
	// filter the reports out.
	all, err := registry.Referrers(ctx, loc.store, subject, "")
	if err != nil {
		return nil, loc.failure(err)
	}
	var reports []ocispec.Descriptor
	for _, d := range all {
		if d.MediaType != ocispec.MediaTypeImageManifest {
			continue
		}
		switch d.ArtifactType {
		case ReplayArtifactType:
		case "", ocispec.MediaTypeEmptyJSON:
			// go-containerregistry's registry (v0.22.1, the in-process
			// test registry) fills a referrer's artifactType from its
			// config.mediaType, so every artifact packed with the empty
			// config, replay reports included, is listed as
			// application/vnd.oci.empty.v1+json. The spec forbids that
			// combination for a correct listing (an empty config needs an
			// artifactType), so such an entry, or one without a type, is
			// read from its manifest.
			b, err := fetchManifest(ctx, loc.store, d)
			if err != nil {
				return nil, loc.failure(err)
			}
			var m ocispec.Manifest
			if err := json.Unmarshal(b, &m); err != nil {
				return nil, fmt.Errorf("%w: referrer %s: %w", ErrFormat, d.Digest, err)
			}
			if m.ArtifactType != ReplayArtifactType {
				continue
			}
			d.ArtifactType, d.Annotations = m.ArtifactType, m.Annotations
		default:
			continue
		}
		reports = append(reports, d)
	}
	slices.SortFunc(reports, func(a, b ocispec.Descriptor) int { return cmp.Compare(a.Digest, b.Digest) })
	return reports, nil
}

// FetchReport returns the replay report desc (as Reports lists it)
// attached to the capsule at ref, a registry reference or an OCI layout as
// for Reports. The report's manifest and content are checked against
// their digests, and the report must be about that capsule: otherwise the
// error wraps ErrFormat.
func FetchReport(ctx context.Context, ref string, desc ocispec.Descriptor, opts PullOptions) ([]byte, error) {
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return nil, fmt.Errorf("%w: %s is a %q, not a replay report manifest", ErrFormat, desc.Digest, desc.MediaType)
	}
	loc, err := openCapsuleLocation(ctx, ref, opts.Tag, opts.PlainHTTP, opts.timeouts(), false)
	if err != nil {
		return nil, err
	}
	subject, err := loc.resolve(ctx)
	if err != nil {
		return nil, err
	}
	b, err := fetchManifest(ctx, loc.store, desc)
	if err != nil {
		return nil, loc.failure(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: report %s: %w", ErrFormat, desc.Digest, err)
	}
	if m.ArtifactType != ReplayArtifactType {
		return nil, fmt.Errorf("%w: %s is not a replay report: artifactType %q", ErrFormat, desc.Digest, m.ArtifactType)
	}
	if m.Subject == nil || m.Subject.Digest != subject.Digest {
		return nil, fmt.Errorf("%w: report %s is not about the capsule %s at %s", ErrFormat, desc.Digest, subject.Digest, ref)
	}
	i := slices.IndexFunc(m.Layers, func(l ocispec.Descriptor) bool { return l.MediaType == MediaReplayReport })
	if i < 0 {
		return nil, fmt.Errorf("%w: report %s has no %s layer", ErrFormat, desc.Digest, MediaReplayReport)
	}
	layer := m.Layers[i]
	if layer.Size > maxReportBytes {
		return nil, fmt.Errorf("%w: report %s is %d bytes, over the limit of %d", ErrFormat, layer.Digest, layer.Size, maxReportBytes)
	}
	rc, err := loc.store.Fetch(ctx, layer)
	if err != nil {
		return nil, loc.failure(err)
	}
	defer rc.Close()
	report, err := content.ReadAll(rc, layer)
	if err != nil {
		if isContentMismatch(err) {
			return nil, fmt.Errorf("%w: report %s: %w", ErrFormat, layer.Digest, err)
		}
		return nil, loc.failure(err)
	}
	return report, nil
}

// capsuleLocation is where Attach, Reports and FetchReport find a
// capsule: a repository in a registry, or an OCI layout on disk.
type capsuleLocation struct {
	store oras.ReadOnlyGraphTarget
	ref   string // the capsule's tag or digest in store
	host  string // the registry's host[:port]; empty for a layout
	name  string // as the caller gave it, for messages

	// pinned is the digest a registry reference names, if it names one.
	pinned digest.Digest
}

// openCapsuleLocation opens s: a path that exists is an OCI layout (a
// directory, or a .tar, which is read-only; the capsule is the one tagged
// tag), anything else a registry reference.
func openCapsuleLocation(ctx context.Context, s, tag string, plainHTTP bool, timeouts transferTimeouts, writable bool) (capsuleLocation, error) {
	if fi, err := os.Stat(s); err == nil {
		loc := capsuleLocation{ref: cmp.Or(tag, DefaultTag), name: s}
		switch {
		case fi.IsDir() && writable:
			// oci.New would turn any directory into a layout.
			if _, err := os.Stat(filepath.Join(s, ocispec.ImageLayoutFile)); err != nil {
				return loc, fmt.Errorf("%w: %s is not an OCI layout: %w", ErrFormat, s, err)
			}
			st, err := oci.NewWithContext(ctx, s)
			if err != nil {
				return loc, fmt.Errorf("%w: %s: %w", ErrFormat, s, err)
			}
			loc.store = st
		case writable:
			return loc, fmt.Errorf("%w: %s is a file; a report can only be attached to a layout directory (pull the capsule into one)", ErrReference, s)
		default:
			st, err := openLayoutReadOnly(ctx, s)
			if err != nil {
				return loc, err
			}
			loc.store = st
		}
		return loc, nil
	}
	if looksLikePath(s) {
		return capsuleLocation{}, fmt.Errorf("%w: no OCI layout at %s", ErrReference, s)
	}
	r, err := registry.ParseReference(s)
	if err != nil {
		return capsuleLocation{}, fmt.Errorf("%w: %q is neither an OCI layout on disk nor host[:port]/repository[:tag|@digest]: %w", ErrReference, s, err)
	}
	repo, err := newRepository(r, plainHTTP, timeouts)
	if err != nil {
		return capsuleLocation{}, err
	}
	loc := capsuleLocation{store: tolerantRepository{repo}, ref: cmp.Or(r.Reference, DefaultTag), host: r.Registry, name: s}
	if d, err := r.Digest(); err == nil {
		loc.pinned = d
	}
	return loc, nil
}

// resolve finds the capsule's manifest descriptor.
func (l capsuleLocation) resolve(ctx context.Context) (ocispec.Descriptor, error) {
	desc, err := l.store.Resolve(ctx, l.ref)
	if err != nil {
		if l.host == "" && errors.Is(err, errdef.ErrNotFound) {
			return ocispec.Descriptor{}, fmt.Errorf("%w: no capsule tagged %q in %s", ErrReference, l.ref, l.name)
		}
		return ocispec.Descriptor{}, l.failure(err)
	}
	if !isManifestType(desc) {
		return ocispec.Descriptor{}, fmt.Errorf("%w: %s in %s is a %q, not a manifest", ErrFormat, l.ref, l.name, desc.MediaType)
	}
	return desc, nil
}

// failure wraps an error from the location: ErrRegistry for a registry;
// for a layout, ErrFormat for damaged content and ErrReference for
// something it does not hold.
func (l capsuleLocation) failure(err error) error {
	switch {
	case l.host != "":
		return registryFailure(l.host, err)
	case isContentMismatch(err):
		return fmt.Errorf("%w: %s: %w", ErrFormat, l.name, err)
	case errors.Is(err, errdef.ErrNotFound):
		return fmt.Errorf("%w: %s: %w", ErrReference, l.name, err)
	}
	return fmt.Errorf("%s: %w", l.name, err)
}

// tolerantRepository is a repository whose manifest pushes succeed when
// all that failed was deleting a superseded sha256-<hex> referrers index.
// On a registry without the referrers API that refuses deletes, oras-go
// reports that as an error of the push, although the manifest and the new
// index are in place by then (the oras CLI only warns). Tolerating it per
// push, rather than after a whole copy, matters: oras.Copy stops at the
// first error, before tagging.
type tolerantRepository struct {
	*remote.Repository
}

// Push pushes a blob or manifest.
func (r tolerantRepository) Push(ctx context.Context, desc ocispec.Descriptor, rd io.Reader) error {
	err := r.Repository.Push(ctx, desc, rd)
	var re *remote.ReferrersError
	if errors.As(err, &re) && re.IsReferrersIndexDelete() {
		return nil
	}
	return err
}
