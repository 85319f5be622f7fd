package capsule

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/evalcapsule/evalcapsule/capsule/internal/layout"
)

// maxPulledManifests bounds the manifests a pull with referrers fetches:
// the referrers' and those below them.
const maxPulledManifests = 1000

// pullPlan is everything a pull may fetch, every descriptor checked against
// the limits before any blob is: the capsule's manifest, config and layers
// and, with referrers, the manifests that refer to it (transitively) and
// everything below them. A manifest's successors are fixed by its digest;
// the referrers a registry lists are not, so the copy is given the lists
// seen here (predecessors) and refuses any node not checked (guard).
type pullPlan struct {
	lim       OpenOptions
	checked   map[digest.Digest]bool
	referrers map[digest.Digest][]ocispec.Descriptor
	manifests int
	stored    int64
}

// planPull checks the capsule's manifest m (root) against lim and, with
// referrers, lists and checks the artifacts that refer to it. A descriptor
// over a limit is an error wrapping ErrFormat; a registry's failure is
// returned as it is.
func planPull(ctx context.Context, repo *remote.Repository, root ocispec.Descriptor, m ocispec.Manifest, lim OpenOptions, referrers bool) (*pullPlan, error) {
	p := &pullPlan{lim: lim, checked: map[digest.Digest]bool{}, referrers: map[digest.Digest][]ocispec.Descriptor{}}
	if err := p.count(root, "manifest"); err != nil {
		return nil, err
	}
	if err := p.config(m.Config, ""); err != nil {
		return nil, err
	}
	var files int64
	for _, l := range m.Layers {
		n, err := lim.layerSize(l)
		if err != nil {
			return nil, err
		}
		if files += n; files > lim.MaxTotalBytes {
			return nil, &Problem{Blob: l.Digest.String(), Path: l.Annotations[ocispec.AnnotationTitle], What: "total size",
				Expected: fmt.Sprintf("at most %d bytes (MaxTotalBytes)", lim.MaxTotalBytes), Found: fmt.Sprintf("more (%d decompressed so far)", files)}
		}
		if err := p.count(l, l.Annotations[ocispec.AnnotationTitle]); err != nil {
			return nil, err
		}
	}
	if !referrers {
		return p, nil
	}
	queue := []ocispec.Descriptor{root}
	for len(queue) > 0 {
		node := queue[0]
		queue = queue[1:]
		var listed []ocispec.Descriptor
		err := repo.Referrers(ctx, node, "", func(page []ocispec.Descriptor) error {
			listed = append(listed, page...)
			if len(listed) > maxPulledManifests {
				return fmt.Errorf("%w: %s has more than %d referrers", ErrFormat, node.Digest, maxPulledManifests)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, r := range listed {
			if !isManifestType(r) {
				continue
			}
			if p.checked[r.Digest] {
				p.referrers[node.Digest] = append(p.referrers[node.Digest], r)
				continue
			}
			ok, err := p.referrer(ctx, repo, node, r)
			if err != nil {
				return nil, err
			}
			if ok {
				p.referrers[node.Digest] = append(p.referrers[node.Digest], r)
				queue = append(queue, r)
			}
		}
	}
	return p, nil
}

// count adds the blob or manifest d to the plan, checking the sum of
// everything fetched against MaxTotalBytes. what names it in an error.
func (p *pullPlan) count(d ocispec.Descriptor, what string) error {
	if p.checked[d.Digest] {
		return nil
	}
	if err := d.Digest.Validate(); err != nil {
		return &Problem{Blob: quoteOrNone(d.Digest.String()), Path: what, What: "digest", Expected: "algorithm:hex", Found: err.Error()}
	}
	if d.Size < 0 {
		return &Problem{Blob: d.Digest.String(), Path: what, What: "size", Expected: "a size in bytes", Found: strconv.FormatInt(d.Size, 10)}
	}
	if p.stored += d.Size; p.stored > p.lim.MaxTotalBytes {
		return &Problem{Blob: d.Digest.String(), Path: what, What: "total size",
			Expected: fmt.Sprintf("at most %d bytes (MaxTotalBytes)", p.lim.MaxTotalBytes), Found: fmt.Sprintf("more (%d stored so far)", p.stored)}
	}
	p.checked[d.Digest] = true
	return nil
}

// config checks and adds a manifest's config; of is the referrer it
// belongs to, if any.
func (p *pullPlan) config(d ocispec.Descriptor, of string) error {
	what := "config" + of
	if d.Size > p.lim.MaxConfigBytes {
		return &Problem{Blob: d.Digest.String(), Path: what, What: "size", Expected: fmt.Sprintf("at most %d bytes (MaxConfigBytes)", p.lim.MaxConfigBytes), Found: strconv.FormatInt(d.Size, 10)}
	}
	return p.count(d, what)
}

// referrer fetches the manifest r that node's registry lists as referring
// to it and, if r's subject is node, checks it and everything below it
// and reports true. A manifest that is about something else is left out.
func (p *pullPlan) referrer(ctx context.Context, repo *remote.Repository, node, r ocispec.Descriptor) (bool, error) {
	b, err := p.fetchManifest(ctx, repo, r)
	if err != nil {
		return false, err
	}
	var head struct {
		Subject *ocispec.Descriptor `json:"subject"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return false, fmt.Errorf("%w: referrer %s: %w", ErrFormat, r.Digest, err)
	}
	if head.Subject == nil || head.Subject.Digest != node.Digest {
		return false, nil
	}
	return true, p.below(ctx, repo, r, b)
}

// fetchManifest fetches a manifest of the graph, within the limits.
func (p *pullPlan) fetchManifest(ctx context.Context, repo *remote.Repository, d ocispec.Descriptor) ([]byte, error) {
	if p.manifests++; p.manifests > maxPulledManifests {
		return nil, fmt.Errorf("%w: more than %d manifests refer to the capsule", ErrFormat, maxPulledManifests)
	}
	what := "referrer manifest"
	if d.Size > maxPulledManifestBytes {
		return nil, &Problem{Blob: d.Digest.String(), Path: what, What: "size", Expected: fmt.Sprintf("at most %d bytes", maxPulledManifestBytes), Found: strconv.FormatInt(d.Size, 10)}
	}
	if err := p.count(d, what); err != nil {
		return nil, err
	}
	b, err := fetchManifest(ctx, repo, d)
	if err != nil && isContentMismatch(err) {
		return nil, fmt.Errorf("%w: referrer %s: %w", ErrFormat, d.Digest, err)
	}
	return b, err
}

// below checks and adds what the manifest d (content b) references, and
// below any manifest among them.
func (p *pullPlan) below(ctx context.Context, repo *remote.Repository, d ocispec.Descriptor, b []byte) error {
	var head struct {
		Config *ocispec.Descriptor `json:"config"`
	}
	json.Unmarshal(b, &head) // content.Successors says what is wrong
	succ, err := content.Successors(ctx, bytesFetcher{d.Digest: b}, d)
	if err != nil {
		return fmt.Errorf("%w: referrer %s: %w", ErrFormat, d.Digest, err)
	}
	of := " of referrer " + d.Digest.String()
	for _, s := range succ {
		switch {
		case p.checked[s.Digest]:
			// The subject, or something seen before.
		case isManifestType(s):
			sb, err := p.fetchManifest(ctx, repo, s)
			if err != nil {
				return err
			}
			if err := p.below(ctx, repo, s, sb); err != nil {
				return err
			}
		case head.Config != nil && s.Digest == head.Config.Digest:
			if err := p.config(s, of); err != nil {
				return err
			}
		default:
			what := cmp.Or(s.Annotations[ocispec.AnnotationTitle], "layer") + of
			if s.Size > p.lim.MaxBlobBytes {
				return &Problem{Blob: s.Digest.String(), Path: what, What: "size", Expected: fmt.Sprintf("at most %d bytes (MaxBlobBytes)", p.lim.MaxBlobBytes), Found: strconv.FormatInt(s.Size, 10)}
			}
			if err := p.count(s, what); err != nil {
				return err
			}
		}
	}
	return nil
}

// predecessors is the copy's FindPredecessors: the referrers listed and
// checked when the plan was made, whatever the registry lists now.
func (p *pullPlan) predecessors(_ context.Context, _ content.ReadOnlyGraphStorage, d ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	return p.referrers[d.Digest], nil
}

// guard adds to the copy's hooks a refusal of any node the plan did not
// check, before it is fetched.
func (p *pullPlan) guard(opts oras.CopyGraphOptions) oras.CopyGraphOptions {
	pre := opts.PreCopy
	opts.PreCopy = func(ctx context.Context, d ocispec.Descriptor) error {
		if !p.checked[d.Digest] {
			return fmt.Errorf("%w: %s (%s) is not among the blobs checked before the pull", ErrFormat, d.Digest, d.MediaType)
		}
		if pre != nil {
			return pre(ctx, d)
		}
		return nil
	}
	return opts
}

// bytesFetcher serves manifests already fetched.
type bytesFetcher map[digest.Digest][]byte

func (f bytesFetcher) Fetch(_ context.Context, d ocispec.Descriptor) (io.ReadCloser, error) {
	b, ok := f[d.Digest]
	if !ok {
		return nil, fmt.Errorf("%s: not fetched", d.Digest)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// staleIngestAge is how long an ingest file of a layout no Pull is using
// must have gone unwritten to be taken for a killed pull's rather than for
// another program's live download.
const staleIngestAge = time.Minute

// holdIngest marks the layout at dir as in use by this pull until release
// (a shared lock of dir/ingest, where oras-go writes each blob before
// naming it by its digest). When no other pull holds it, the files a killed
// pull left there go first: those not written for staleIngestAge.
func holdIngest(dir string) (release func(), err error) {
	ingest := filepath.Join(dir, "ingest")
	if err := os.MkdirAll(ingest, 0o755); err != nil {
		return nil, err
	}
	if unlock, ok, err := layout.TryExclusive(ingest); err == nil && ok {
		removeStaleIngest(ingest, time.Now().Add(-staleIngestAge))
		unlock()
	}
	return layout.SharedLock(ingest)
}

// removeStaleIngest removes the regular files of dir last written before
// before.
func removeStaleIngest(dir string, before time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(before) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
