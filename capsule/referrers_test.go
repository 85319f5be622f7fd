package capsule

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry"
)

// TestAttachAndReports attaches replay reports to a pushed capsule, lists
// and fetches them, carries them into a layout with a pull and out of one
// with a push, and attaches to a pulled layout. On distribution 2.8 the
// reports are found through the sha256-<hex> tag schema, on ggcr through
// the referrers API.
func TestAttachAndReports(t *testing.T) {
	forEachRegistry(t, func(t *testing.T, reg *testRegistry) {
		ctx := context.Background()
		src := filepath.Join(t.TempDir(), "packed")
		capsule := mustTestArtifact(t, src, ArtifactType)
		repo := reg.host + "/" + testRepository(t)
		if _, err := Push(ctx, src, repo+":v1", PushOptions{}); err != nil {
			t.Fatal(err)
		}
		if got, err := Reports(ctx, repo+":v1", PullOptions{}); err != nil || len(got) != 0 {
			t.Fatalf("Reports before any attach: %v, %v", got, err)
		}

		first := []byte(`{"status":"reproduced","runs":3}`)
		second := []byte(`{"status":"diverged","runs":3}`)
		r1, err := Attach(ctx, repo+":v1", capsule, first, PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r1.ArtifactType != ReplayArtifactType || r1.MediaType != ocispec.MediaTypeImageManifest {
			t.Errorf("Attach returned %+v", r1)
		}
		if again, err := Attach(ctx, repo, capsule, first, PushOptions{}); err != nil || again.Digest != r1.Digest {
			t.Errorf("attaching the same report again gave %s, %v; want the same digest %s", again.Digest, err, r1.Digest)
		}
		checkReportManifest(t, ctx, repo, r1, capsule)

		reg.reset()
		got := mustReports(t, repo+":v1", r1)
		checkReferrersPath(t, reg, capsule)
		if tags := repositoryTags(t, repo); !slices.Contains(tags, "sha256-"+capsule.Digest.Encoded()) {
			t.Errorf("no referrers tag sha256-%s in %v", capsule.Digest.Encoded(), tags)
		}
		if b, err := FetchReport(ctx, repo+"@"+capsule.Digest.String(), got[0], PullOptions{}); err != nil || string(b) != string(first) {
			t.Errorf("FetchReport: %q, %v", b, err)
		}

		r2, err := Attach(ctx, repo, capsule, second, PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mustReports(t, repo+":v1", r1, r2)

		// Pulled with the reports, they are in the layout and its tar.
		withReports := filepath.Join(t.TempDir(), "with")
		if _, err := Pull(ctx, repo+":v1", withReports, PullOptions{WithReferrers: true}); err != nil {
			t.Fatal(err)
		}
		mustReports(t, withReports, r1, r2)
		tarball := tarLayout(t, withReports, filepath.Join(t.TempDir(), "with.tar"))
		for _, r := range mustReports(t, tarball, r1, r2) {
			want := map[string][]byte{r1.Digest.String(): first, r2.Digest.String(): second}[r.Digest.String()]
			if b, err := FetchReport(ctx, tarball, r, PullOptions{}); err != nil || string(b) != string(want) {
				t.Errorf("FetchReport %s from the tar: %q, %v", r.Digest, b, err)
			}
		}

		// Pulled without them, they are not; a reviewer attaches one to
		// the pulled layout, with the same digest as in the registry, and
		// pushes it on with the capsule.
		without := filepath.Join(t.TempDir(), "without")
		if _, err := Pull(ctx, repo+":v1", without, PullOptions{}); err != nil {
			t.Fatal(err)
		}
		mustReports(t, without)
		if r, err := Attach(ctx, without, capsule, first, PushOptions{}); err != nil || r.Digest != r1.Digest {
			t.Fatalf("Attach to the layout: %s, %v; want %s", r.Digest, err, r1.Digest)
		}
		mustReports(t, without, r1)
		elsewhere := reg.host + "/" + testRepository(t)
		if _, err := Push(ctx, without, elsewhere+":v2", PushOptions{WithReferrers: true}); err != nil {
			t.Fatal(err)
		}
		mustReports(t, elsewhere+":v2", r1)
		if _, err := Push(ctx, without, elsewhere+":v3", PushOptions{}); err != nil {
			t.Fatal(err)
		}

		// A report is only fetched for its own capsule, and only a report.
		if _, err := FetchReport(ctx, repo+":v1", capsule, PullOptions{}); !errors.Is(err, ErrFormat) {
			t.Errorf("FetchReport of the capsule itself: %v, want ErrFormat", err)
		}
		other := filepath.Join(t.TempDir(), "other")
		mustTestArtifact(t, other, "application/vnd.example.other.v1")
		if _, err := FetchReport(ctx, other, r1, PullOptions{}); !errors.Is(err, ErrReference) {
			t.Errorf("FetchReport from a layout without the report: %v, want ErrReference", err)
		}
		if _, err := Attach(ctx, other, capsule, first, PushOptions{}); !errors.Is(err, ErrReference) {
			t.Errorf("Attach to a layout without the capsule: %v, want ErrReference", err)
		}
	})
}

// TestReportsArtifactTypeWorkaround: go-containerregistry's registry lists
// referrers with their config's media type as artifactType, so a replay
// report (empty config) shows as application/vnd.oci.empty.v1+json and
// oras-go's client-side artifactType filter drops it. Reports reads such
// entries from their manifests, and still tells a report from another
// artifact with the empty config.
func TestReportsArtifactTypeWorkaround(t *testing.T) {
	reg := startGGCR(t)
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "packed")
	capsule := mustTestArtifact(t, src, ArtifactType)
	ref := reg.host + "/" + testRepository(t) + ":v1"
	if _, err := Push(ctx, src, ref, PushOptions{}); err != nil {
		t.Fatal(err)
	}
	report, err := Attach(ctx, ref, capsule, []byte(`{"status":"reproduced"}`), PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := newRepository(mustParseReference(t, ref), false, PushOptions{}.timeouts())
	if err != nil {
		t.Fatal(err)
	}
	subject := ocispec.Descriptor{MediaType: capsule.MediaType, Digest: capsule.Digest, Size: capsule.Size}
	if _, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.example.signature.v1", oras.PackManifestOptions{
		Subject:             &subject,
		ManifestAnnotations: map[string]string{ocispec.AnnotationCreated: reportCreated},
	}); err != nil {
		t.Fatal(err)
	}

	// The registry's own listing, as it is on the wire.
	resp, err := http.Get("http://" + reg.host + "/v2/" + repo.Reference.Repository + "/referrers/" + capsule.Digest.String())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var index ocispec.Index
	if err := json.NewDecoder(resp.Body).Decode(&index); err != nil {
		t.Fatal(err)
	}
	if len(index.Manifests) != 2 {
		t.Fatalf("the referrers API lists %d manifests, want 2", len(index.Manifests))
	}
	for _, d := range index.Manifests {
		if d.ArtifactType != ocispec.MediaTypeEmptyJSON {
			t.Errorf("ggcr lists %s with artifactType %q: if it now reports artifact types correctly, Reports' workaround can go", d.Digest, d.ArtifactType)
		}
	}
	// A fresh client: the one that pushed saw no OCI-Subject header and
	// has switched to the tag schema, whose index oras-go wrote itself.
	fresh, err := newRepository(mustParseReference(t, ref), false, PushOptions{}.timeouts())
	if err != nil {
		t.Fatal(err)
	}
	if naive, err := registry.Referrers(ctx, fresh, capsule, ReplayArtifactType); err != nil || len(naive) != 0 {
		t.Errorf("oras-go's filter by artifactType found %v, %v: the bug is gone", naive, err)
	}

	got := mustReports(t, ref, report)
	if got[0].ArtifactType != ReplayArtifactType || got[0].Annotations[ocispec.AnnotationCreated] != reportCreated {
		t.Errorf("Reports returned %+v", got[0])
	}
}

// TestAttachWhereDeletesAreRefused: on a registry without the referrers
// API that refuses deletes, oras-go cannot delete the superseded
// sha256-<hex> index when a second report is attached. The reports are
// attached all the same, and pushing them along with a capsule works.
func TestAttachWhereDeletesAreRefused(t *testing.T) {
	reg := startGGCR(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodDelete:
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusMethodNotAllowed)
				io.WriteString(w, `{"errors":[{"code":"UNSUPPORTED","message":"deletes are disabled"}]}`)
			case strings.Contains(r.URL.Path, "/referrers/"):
				http.NotFound(w, r) // no referrers API, as on distribution 2.8
			default:
				h.ServeHTTP(w, r)
			}
		})
	})
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "packed")
	capsule := mustTestArtifact(t, src, ArtifactType)
	for _, r := range []string{`{"n":1}`, `{"n":2}`} {
		if _, err := Attach(ctx, src, capsule, []byte(r), PushOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want, err := Reports(ctx, src, PullOptions{})
	if err != nil || len(want) != 2 {
		t.Fatalf("Reports of the layout: %v, %v", want, err)
	}

	repo := reg.host + "/" + testRepository(t)
	if _, err := Push(ctx, src, repo+":v1", PushOptions{WithReferrers: true}); err != nil {
		t.Fatal(err)
	}
	mustReports(t, repo+":v1", want...)
	third, err := Attach(ctx, repo, capsule, []byte(`{"n":3}`), PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if third.Digest == "" || third.ArtifactType != ReplayArtifactType {
		t.Fatalf("Attach returned %+v", third)
	}
	mustReports(t, repo+":v1", append(want, third)...)
	if slices.IndexFunc(reg.all(), func(q recorded) bool { return q.method == http.MethodDelete }) < 0 {
		t.Error("no delete was refused: the test does not test what it says")
	}
}

// mustReports lists the reports of the capsule at ref and checks that they
// are want, in digest order.
func mustReports(t *testing.T, ref string, want ...ocispec.Descriptor) []ocispec.Descriptor {
	t.Helper()
	got, err := Reports(context.Background(), ref, PullOptions{})
	if err != nil {
		t.Fatalf("Reports %s: %v", ref, err)
	}
	wantDigests := make([]string, len(want))
	for i, d := range want {
		wantDigests[i] = d.Digest.String()
	}
	slices.Sort(wantDigests)
	var gotDigests []string
	for _, d := range got {
		gotDigests = append(gotDigests, d.Digest.String())
		if d.ArtifactType != ReplayArtifactType {
			t.Errorf("Reports %s: %s has artifactType %q", ref, d.Digest, d.ArtifactType)
		}
	}
	if !slices.Equal(gotDigests, wantDigests) {
		t.Fatalf("Reports %s = %v, want %v", ref, gotDigests, wantDigests)
	}
	return got
}

// checkReportManifest checks the replay report's manifest as the registry
// holds it.
func checkReportManifest(t *testing.T, ctx context.Context, repoRef string, report, capsule ocispec.Descriptor) {
	t.Helper()
	repo, err := newRepository(mustParseReference(t, repoRef), false, PushOptions{}.timeouts())
	if err != nil {
		t.Fatal(err)
	}
	b, err := fetchManifest(ctx, repo, report)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	switch {
	case m.ArtifactType != ReplayArtifactType:
		t.Errorf("artifactType %q", m.ArtifactType)
	case m.Config.Digest != ocispec.DescriptorEmptyJSON.Digest || m.Config.MediaType != ocispec.MediaTypeEmptyJSON:
		t.Errorf("config %+v, want the empty descriptor", m.Config)
	case len(m.Layers) != 1 || m.Layers[0].MediaType != MediaReplayReport || m.Layers[0].Annotations[ocispec.AnnotationTitle] != ReportTitle:
		t.Errorf("layers %+v", m.Layers)
	case m.Subject == nil || m.Subject.Digest != capsule.Digest || m.Subject.MediaType != ocispec.MediaTypeImageManifest:
		t.Errorf("subject %+v, want %s", m.Subject, capsule.Digest)
	case m.Annotations[ocispec.AnnotationCreated] != reportCreated:
		t.Errorf("annotations %v", m.Annotations)
	}
}

// checkReferrersPath checks how the listing just done found the reports:
// the referrers API where the registry has it (ggcr), the tag schema
// after a 404 where it does not (distribution 2.8).
func checkReferrersPath(t *testing.T, reg *testRegistry, capsule ocispec.Descriptor) {
	t.Helper()
	var api []int
	var tagSchema bool
	for _, q := range reg.all() {
		switch {
		case strings.HasSuffix(q.path, "/referrers/"+capsule.Digest.String()):
			api = append(api, q.status)
		case strings.HasSuffix(q.path, "/manifests/sha256-"+capsule.Digest.Encoded()):
			tagSchema = true
		}
	}
	switch t.Name()[strings.LastIndex(t.Name(), "/")+1:] {
	case "ggcr":
		if !slices.Equal(api, []int{http.StatusOK}) || tagSchema {
			t.Errorf("on ggcr the referrers API answered %v and the tag schema was used: %v", api, tagSchema)
		}
	case "distribution":
		if !slices.Equal(api, []int{http.StatusNotFound}) || !tagSchema {
			t.Errorf("on distribution the referrers API answered %v and the tag schema was used: %v", api, tagSchema)
		}
	}
}

// repositoryTags lists the tags of the repository ref names (tags/list).
func repositoryTags(t *testing.T, ref string) []string {
	t.Helper()
	repo, err := newRepository(mustParseReference(t, ref), false, PushOptions{}.timeouts())
	if err != nil {
		t.Fatal(err)
	}
	tags, err := registry.Tags(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	return tags
}
