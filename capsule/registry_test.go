package capsule

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	ggcr "github.com/google/go-containerregistry/pkg/registry"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/registry"
)

// These tests run against real registries, never a mock of the protocol:
// go-containerregistry's in-process registry (with the referrers API) in
// every run, and CNCF distribution 2.8 (Debian's docker-registry, no
// referrers API) when EVALCAPSULE_REGISTRY names one that
// .ci/registry-up.sh started. Both sit behind a loopback proxy that records
// the requests they see.

// ExamplePush pushes a capsule to a registry (here an in-process one on
// loopback, so plain HTTP), pulls it into a fresh layout, and attaches a
// replay report to it.
func ExamplePush() {
	ctx := context.Background()
	srv := httptest.NewServer(ggcr.New(ggcr.WithReferrersSupport(true), ggcr.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	tmp, err := os.MkdirTemp("", "capsule-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	packed := filepath.Join(tmp, "packed")
	// Pack(ctx, studyDir, packed, …) in real use.
	if _, err := writeTestArtifact(ctx, packed, ArtifactType); err != nil {
		log.Fatal(err)
	}

	pushed, err := Push(ctx, packed, host+"/studies/demo:v1", PushOptions{})
	if err != nil {
		log.Fatal(err)
	}
	pulled, err := Pull(ctx, host+"/studies/demo:v1", filepath.Join(tmp, "pulled"), PullOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same manifest:", pulled.Digest == pushed.Digest)
	fmt.Println("artifact type:", pulled.ArtifactType)

	report, err := Attach(ctx, host+"/studies/demo", pulled, []byte(`{"status":"reproduced"}`), PushOptions{})
	if err != nil {
		log.Fatal(err)
	}
	reports, err := Reports(ctx, host+"/studies/demo:v1", PullOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("reports:", len(reports), reports[0].Digest == report.Digest)
	// Output:
	// same manifest: true
	// artifact type: application/vnd.evalcapsule.capsule.v1
	// reports: 1 true
}

func TestUsePlainHTTP(t *testing.T) {
	for _, c := range []struct {
		host  string
		force bool
		want  bool
	}{
		{"127.0.0.1:5000", false, true},
		{"127.0.0.1", false, true},
		{"127.8.9.10:443", false, true},
		{"localhost:5000", false, true},
		{"LocalHost", false, true},
		{"[::1]:5000", false, true},
		{"[::1]", false, true},
		{"::1", false, true},
		{"[::ffff:127.0.0.1]:5000", false, true},
		{"ghcr.io", false, false},
		{"registry.example.com:5000", false, false},
		{"10.1.2.3:5000", false, false},
		{"192.168.1.10", false, false},
		{"0.0.0.0:5000", false, false},
		{"localhost.example.com", false, false},
		{"127.0.0.1.nip.io:5000", false, false},
		{"[2001:db8::1]:5000", false, false},
		{"ghcr.io", true, true},
		{"registry.example.com:5000", true, true},
	} {
		if got := usePlainHTTP(c.host, c.force); got != c.want {
			t.Errorf("usePlainHTTP(%q, %v) = %v, want %v", c.host, c.force, got, c.want)
		}
	}
}

// TestPushPullRoundTrip pushes a capsule from a layout and from a .tar of
// it, pulls it by tag and by digest into fresh layouts, and compares the
// manifest digest and every blob.
func TestPushPullRoundTrip(t *testing.T) {
	forEachRegistry(t, func(t *testing.T, reg *testRegistry) {
		ctx := context.Background()
		src := filepath.Join(t.TempDir(), "packed")
		want := mustTestArtifact(t, src, ArtifactType)
		tarball := filepath.Join(t.TempDir(), "capsule.tar")
		tarLayout(t, src, tarball)
		repo := reg.host + "/" + testRepository(t)

		var calls []Progress
		got, err := Push(ctx, src, repo+":v1", PushOptions{Progress: func(p Progress) { calls = append(calls, p) }})
		if err != nil {
			t.Fatal(err)
		}
		if got.Digest != want.Digest || got.ArtifactType != ArtifactType {
			t.Fatalf("Push returned %+v, want the manifest %s", got, want.Digest)
		}
		checkProgress(t, calls, layoutBlobs(t, src, want)[1:])

		// From the .tar, and without a tag in the target: the layout's tag.
		if got, err := Push(ctx, tarball, repo, PushOptions{}); err != nil || got.Digest != want.Digest {
			t.Fatalf("Push from the tar: %v, %v", got.Digest, err)
		}

		for _, ref := range []string{repo + ":v1", repo + ":latest", repo + "@" + want.Digest.String()} {
			dst := filepath.Join(t.TempDir(), "pulled")
			calls = nil
			got, err := Pull(ctx, ref, dst, PullOptions{Progress: func(p Progress) { calls = append(calls, p) }})
			if err != nil {
				t.Fatalf("Pull %s: %v", ref, err)
			}
			if got.Digest != want.Digest || got.ArtifactType != ArtifactType {
				t.Fatalf("Pull %s returned %+v, want %s", ref, got, want.Digest)
			}
			sameLayoutBlobs(t, src, dst, want)
			checkProgress(t, calls, layoutBlobs(t, src, want)[1:])
			store, err := oci.NewFromFS(ctx, os.DirFS(dst))
			if err != nil {
				t.Fatal(err)
			}
			if d, err := store.Resolve(ctx, "latest"); err != nil || d.Digest != want.Digest {
				t.Errorf("the pulled layout's latest is %v, %v", d.Digest, err)
			}
		}
	})
}

// TestPullResumes deletes a layer from a pulled layout and pulls again:
// only that layer is fetched. A pull into a complete layout fetches no
// blob, and a damaged blob is fetched again.
func TestPullResumes(t *testing.T) {
	forEachRegistry(t, func(t *testing.T, reg *testRegistry) {
		ctx := context.Background()
		src := filepath.Join(t.TempDir(), "packed")
		want := mustTestArtifact(t, src, ArtifactType)
		repo := reg.host + "/" + testRepository(t)
		if _, err := Push(ctx, src, repo+":v1", PushOptions{}); err != nil {
			t.Fatal(err)
		}
		var m ocispec.Manifest
		readJSONFile(t, layoutBlobPath(src, want), &m)
		layer := m.Layers[1]

		dst := filepath.Join(t.TempDir(), "pulled")
		pull := func() []string {
			t.Helper()
			reg.reset()
			if _, err := Pull(ctx, repo+":v1", dst, PullOptions{}); err != nil {
				t.Fatal(err)
			}
			sameLayoutBlobs(t, src, dst, want)
			return reg.blobGets()
		}
		if got := pull(); len(got) != 1+len(m.Layers) {
			t.Fatalf("the first pull fetched blobs %v, want the config and %d layers", got, len(m.Layers))
		}
		if err := os.Remove(layoutBlobPath(dst, layer)); err != nil {
			t.Fatal(err)
		}
		if got := pull(); !slices.Equal(got, []string{layer.Digest.String()}) {
			t.Errorf("after deleting one layer, the pull fetched %v, want only %s", got, layer.Digest)
		}
		if got := pull(); len(got) != 0 {
			t.Errorf("a pull into a complete layout fetched %v", got)
		}

		// Same size, other bytes: skipped as present, caught by the check,
		// fetched again.
		p := layoutBlobPath(dst, layer)
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Repeat([]byte{'x'}, int(layer.Size)), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := pull(); !slices.Equal(got, []string{layer.Digest.String()}) {
			t.Errorf("after damaging one layer, the pull fetched %v, want only %s", got, layer.Digest)
		}
	})
}

// TestPullRefusesOtherArtifacts: an artifact of another type is refused
// before any blob is fetched and before the layout is created; Push
// refuses it before contacting the registry.
func TestPullRefusesOtherArtifacts(t *testing.T) {
	forEachRegistry(t, func(t *testing.T, reg *testRegistry) {
		ctx := context.Background()
		src := filepath.Join(t.TempDir(), "other")
		mustTestArtifact(t, src, "application/vnd.example.not-a-capsule.v1")
		ref := reg.host + "/" + testRepository(t) + ":v1"

		reg.reset()
		if _, err := Push(ctx, src, ref, PushOptions{}); !errors.Is(err, ErrFormat) {
			t.Fatalf("Push of another artifact type: %v, want ErrFormat", err)
		}
		if n := len(reg.all()); n != 0 {
			t.Errorf("Push of another artifact type sent %d requests", n)
		}

		// Put it there with oras itself.
		store, err := oci.NewFromFS(ctx, os.DirFS(src))
		if err != nil {
			t.Fatal(err)
		}
		repo, err := newRepository(mustParseReference(t, ref), false, PushOptions{}.timeouts())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := oras.Copy(ctx, store, "latest", repo, "v1", oras.CopyOptions{}); err != nil {
			t.Fatal(err)
		}

		reg.reset()
		dst := filepath.Join(t.TempDir(), "pulled")
		_, err = Pull(ctx, ref, dst, PullOptions{})
		if !errors.Is(err, ErrFormat) || errors.Is(err, ErrRegistry) {
			t.Fatalf("Pull of another artifact type: %v, want ErrFormat", err)
		}
		if !strings.Contains(err.Error(), "not-a-capsule") {
			t.Errorf("the error does not name the artifact type: %v", err)
		}
		if got := reg.blobGets(); len(got) != 0 {
			t.Errorf("Pull fetched blobs %v of an artifact it refused", got)
		}
		if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Pull created %s for an artifact it refused (%v)", dst, err)
		}
	})
}

// TestCredentials pushes to a registry that wants basic auth, with the
// credentials in a Docker config (inline, and through a credential
// helper) and without them.
func TestCredentials(t *testing.T) {
	const user, pass = "reviewer", "s3cret-Pa55w0rd"
	reg := startGGCR(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="evalcapsule-test"`)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "packed")
	want := mustTestArtifact(t, src, ArtifactType)
	ref := reg.host + "/" + testRepository(t) + ":v1"

	dockerConfig := func(t *testing.T, config string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("DOCKER_CONFIG", dir)
	}
	auths := func(u, p string) string {
		return fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.host, base64.StdEncoding.EncodeToString([]byte(u+":"+p)))
	}

	t.Run("auths", func(t *testing.T) {
		dockerConfig(t, auths(user, pass))
		got, err := Push(ctx, src, ref, PushOptions{})
		if err != nil || got.Digest != want.Digest {
			t.Fatalf("Push with credentials: %v, %v", got.Digest, err)
		}
		if _, err := Pull(ctx, ref, filepath.Join(t.TempDir(), "pulled"), PullOptions{}); err != nil {
			t.Fatalf("Pull with credentials: %v", err)
		}
	})

	t.Run("credential-helper", func(t *testing.T) {
		// A real helper program speaking the docker-credential protocol:
		// "get" reads the server address on stdin.
		bin := t.TempDir()
		script := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = get ] || exit 1\nread -r server\nprintf '{\"ServerURL\":\"%%s\",\"Username\":%q,\"Secret\":%q}' \"$server\"\n", user, pass)
		if err := os.WriteFile(filepath.Join(bin, "docker-credential-evalcapsuletest"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		dockerConfig(t, fmt.Sprintf(`{"credHelpers":{%q:"evalcapsuletest"}}`, reg.host))
		if _, err := Push(ctx, src, ref, PushOptions{}); err != nil {
			t.Fatalf("Push with a credential helper: %v", err)
		}
	})

	for name, config := range map[string]string{
		"none":  `{}`,
		"wrong": auths(user, "not-the-"+pass),
	} {
		t.Run(name, func(t *testing.T) {
			dockerConfig(t, config)
			_, err := Push(ctx, src, ref, PushOptions{})
			if !errors.Is(err, ErrRegistry) {
				t.Fatalf("Push: %v, want ErrRegistry", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, reg.host) || !strings.Contains(msg, "authentication failed") {
				t.Errorf("the error does not name the registry and say authentication failed: %s", msg)
			}
			for _, secret := range []string{pass, "not-the-" + pass, base64.StdEncoding.EncodeToString([]byte(user + ":not-the-" + pass))} {
				if strings.Contains(msg, secret) {
					t.Errorf("the error contains a secret: %s", msg)
				}
			}
			if _, err := Pull(ctx, ref, filepath.Join(t.TempDir(), "pulled"), PullOptions{}); !errors.Is(err, ErrRegistry) {
				t.Errorf("Pull: %v, want ErrRegistry", err)
			}
		})
	}
}

// TestRegistryErrors: bad references are usage errors, an unreachable or
// unknown registry or repository is a registry error.
func TestRegistryErrors(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "packed")
	want := mustTestArtifact(t, src, ArtifactType)
	other := "sha256:" + strings.Repeat("0", 64)

	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"push to a reference without a repository", errOf(Push(ctx, src, "127.0.0.1:1", PushOptions{})), ErrReference},
		{"push to an upper-case repository", errOf(Push(ctx, src, "127.0.0.1:1/Studies/x:v1", PushOptions{})), ErrReference},
		{"push to another digest", errOf(Push(ctx, src, "127.0.0.1:1/studies/x@"+other, PushOptions{})), ErrReference},
		{"push of a missing tag", errOf(Push(ctx, src, "127.0.0.1:1/studies/x:v1", PushOptions{Tag: "v9"})), ErrReference},
		{"push of a directory that is no layout", errOf(Push(ctx, t.TempDir(), "127.0.0.1:1/studies/x:v1", PushOptions{})), ErrFormat},
		{"pull of a bad reference", errOf(Pull(ctx, "not a reference", t.TempDir(), PullOptions{})), ErrReference},
		{"pull into a directory that is no layout", errOf(Pull(ctx, "127.0.0.1:1/studies/x:v1", filepath.Dir(src), PullOptions{})), ErrReference},
		{"push of a missing layout", errOf(Push(ctx, filepath.Join(src, "missing"), "127.0.0.1:1/studies/x:v1", PushOptions{})), ErrReference},
		{"push to a closed port", errOf(Push(ctx, src, closedPort(t)+"/studies/x:v1", PushOptions{})), ErrRegistry},
		{"pull from a closed port", errOf(Pull(ctx, closedPort(t)+"/studies/x:v1", t.TempDir(), PullOptions{})), ErrRegistry},
		{"reports of a bad reference", errOf(Reports(ctx, "no such layout", PullOptions{})), ErrReference},
		{"reports of a missing layout", errOf(Reports(ctx, "./no/such/layout:v1", PullOptions{})), ErrReference},
		{"push to a path", errOf(Push(ctx, src, "./out/x:v1", PushOptions{})), ErrReference},
		{"attach to a tar", errOf(Attach(ctx, tarLayout(t, src, filepath.Join(t.TempDir(), "c.tar")), want, []byte(`{}`), PushOptions{})), ErrReference},
		{"attach something else than JSON", errOf(Attach(ctx, src, want, []byte("not json"), PushOptions{})), ErrFormat},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}

	reg := startGGCR(t)
	if _, err := Pull(ctx, reg.host+"/no/such/capsule:v1", t.TempDir(), PullOptions{}); !errors.Is(err, ErrRegistry) {
		t.Errorf("pull of a missing capsule: %v, want ErrRegistry", err)
	}
}

// checkProgress checks the calls a push or pull made: each is about one
// of blobs (no manifest), each blob ends with all its bytes, and the
// totals add up.
func checkProgress(t *testing.T, calls []Progress, blobs []ocispec.Descriptor) {
	t.Helper()
	if len(calls) == 0 {
		t.Fatal("no progress reported")
	}
	var total int64
	paths := map[string]bool{}
	for _, b := range blobs {
		total += b.Size
		path := cmp.Or(b.Annotations[ocispec.AnnotationTitle], b.Digest.String())
		paths[path] = true
		i := slices.IndexFunc(calls, func(p Progress) bool { return p.Path == path && p.Done == b.Size && p.Size == b.Size })
		if i < 0 {
			t.Errorf("no progress call ends %s: %+v", path, calls)
		}
	}
	last := calls[len(calls)-1]
	if last.Files != len(blobs) || last.TotalFiles != len(blobs) || last.Bytes != total || last.TotalBytes != total {
		t.Errorf("the last progress call is %+v, want %d files and %d bytes done", last, len(blobs), total)
	}
	for _, p := range calls {
		if !paths[p.Path] || p.Done > p.Size || p.Bytes > p.TotalBytes {
			t.Errorf("progress call %+v", p)
		}
	}
}

// errOf keeps the error of a call that returns a value and an error.
func errOf[T any](_ T, err error) error { return err }

// closedPort is a loopback address that nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// testRegistry is a registry on loopback for one test, behind a proxy that
// records the requests it sees.
type testRegistry struct {
	host string // host:port, loopback

	mu       sync.Mutex
	requests []recorded
}

type recorded struct {
	method, path string
	status       int
}

func (r *testRegistry) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, req)
		r.mu.Lock()
		r.requests = append(r.requests, recorded{req.Method, req.URL.Path, sw.status})
		r.mu.Unlock()
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (r *testRegistry) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = nil
}

func (r *testRegistry) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// blobGets lists the digests of the blobs fetched (GET .../blobs/<digest>),
// sorted.
func (r *testRegistry) blobGets() []string {
	var got []string
	for _, q := range r.all() {
		if q.method == http.MethodGet && strings.Contains(q.path, "/blobs/sha256:") {
			got = append(got, q.path[strings.LastIndex(q.path, "/")+1:])
		}
	}
	slices.Sort(got)
	return got
}

// startGGCR starts go-containerregistry's in-process registry with the
// referrers API, on loopback, wrapped in wraps.
func startGGCR(t *testing.T, wraps ...func(http.Handler) http.Handler) *testRegistry {
	reg := &testRegistry{}
	h := ggcr.New(ggcr.WithReferrersSupport(true), ggcr.Logger(log.New(io.Discard, "", 0)))
	for _, w := range wraps {
		h = w(h)
	}
	srv := httptest.NewServer(reg.record(h))
	t.Cleanup(srv.Close)
	reg.host = strings.TrimPrefix(srv.URL, "http://")
	return reg
}

// startDistribution puts a recording proxy in front of the distribution
// registry named by EVALCAPSULE_REGISTRY. Without it the test is skipped,
// unless EVALCAPSULE_INTEGRATION says the registry must be there.
func startDistribution(t *testing.T) *testRegistry {
	addr := os.Getenv("EVALCAPSULE_REGISTRY")
	if addr == "" {
		if os.Getenv("EVALCAPSULE_INTEGRATION") != "" {
			t.Fatal("EVALCAPSULE_INTEGRATION is set but EVALCAPSULE_REGISTRY is not: start a registry with .ci/registry-up.sh DIR PORT and set EVALCAPSULE_REGISTRY=127.0.0.1:PORT")
		}
		testenv.Integration(t, "a distribution registry named by EVALCAPSULE_REGISTRY (.ci/registry-up.sh DIR PORT starts one)")
	}
	if !usePlainHTTP(addr, false) {
		t.Fatalf("EVALCAPSULE_REGISTRY=%s is not on loopback", addr)
	}
	reg := &testRegistry{}
	// The proxy keeps the Host header, so the registry's upload locations
	// point back at the proxy.
	srv := httptest.NewServer(reg.record(httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: addr})))
	t.Cleanup(srv.Close)
	reg.host = strings.TrimPrefix(srv.URL, "http://")
	return reg
}

// forEachRegistry runs f against each registry as a subtest.
func forEachRegistry(t *testing.T, f func(t *testing.T, reg *testRegistry)) {
	t.Run("ggcr", func(t *testing.T) { f(t, startGGCR(t)) })
	t.Run("distribution", func(t *testing.T) { f(t, startDistribution(t)) })
}

// testRepository is a repository name of its own for each test and run,
// since the distribution registry keeps what earlier runs pushed.
func testRepository(t *testing.T) string {
	name := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	return "evalcapsule-test/" + name + "-" + strings.ToLower(rand.Text()[:8])
}

// writeTestArtifact writes a small artifact into a new OCI layout at dir,
// tagged "latest": a config of ConfigMediaType and two layers, a capsule
// when artifactType is ArtifactType. It stands in for Pack, which these
// tests do not depend on; the second layer is large enough (1 MiB) for
// progress to be reported in several steps.
func writeTestArtifact(ctx context.Context, dir, artifactType string) (ocispec.Descriptor, error) {
	store, err := oci.NewWithContext(ctx, dir)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	var layers []ocispec.Descriptor
	for _, f := range []struct {
		mediaType, title string
		data             []byte
	}{
		{ConfigMediaType, "", []byte(`{"schema":"evalcapsule.capsule.config/v1","format_version":"1.0","study":"registry-test"}`)},
		{MediaResults, "runs/base/output/results.json", []byte(`{"results":{"gsm8k":{"exact_match,strict-match":0.5}}}`)},
		{MediaText, "runs/base/output/log.txt", bytes.Repeat([]byte("sample line of a log\n"), 1<<20/21)},
	} {
		d := content.NewDescriptorFromBytes(f.mediaType, f.data)
		if f.title != "" {
			d.Annotations = map[string]string{ocispec.AnnotationTitle: f.title}
		}
		if err := store.Push(ctx, d, bytes.NewReader(f.data)); err != nil {
			return ocispec.Descriptor{}, err
		}
		layers = append(layers, d)
	}
	desc, err := oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, artifactType, oras.PackManifestOptions{
		ConfigDescriptor:    &layers[0],
		Layers:              layers[1:],
		ManifestAnnotations: map[string]string{ocispec.AnnotationCreated: "2026-01-02T03:04:05Z"},
	})
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	return desc, store.Tag(ctx, desc, "latest")
}

func mustTestArtifact(t *testing.T, dir, artifactType string) ocispec.Descriptor {
	t.Helper()
	desc, err := writeTestArtifact(context.Background(), dir, artifactType)
	if err != nil {
		t.Fatal(err)
	}
	return desc
}

// tarLayout writes the layout at dir as a tar at path, and returns path.
func tarLayout(t *testing.T, dir, path string) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func layoutBlobPath(dir string, d ocispec.Descriptor) string {
	return filepath.Join(dir, "blobs", d.Digest.Algorithm().String(), d.Digest.Encoded())
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// blobsOf lists root and every blob below it in the layout at dir.
func layoutBlobs(t *testing.T, dir string, root ocispec.Descriptor) []ocispec.Descriptor {
	t.Helper()
	var m ocispec.Manifest
	readJSONFile(t, layoutBlobPath(dir, root), &m)
	return append([]ocispec.Descriptor{root, m.Config}, m.Layers...)
}

// sameBlobs checks that the layout at got holds every blob of root in the
// layout at want, byte for byte.
func sameLayoutBlobs(t *testing.T, want, got string, root ocispec.Descriptor) {
	t.Helper()
	for _, d := range layoutBlobs(t, want, root) {
		w, err := os.ReadFile(layoutBlobPath(want, d))
		if err != nil {
			t.Fatal(err)
		}
		g, err := os.ReadFile(layoutBlobPath(got, d))
		if err != nil {
			t.Errorf("blob %s (%s): %v", d.Digest, d.MediaType, err)
			continue
		}
		if !bytes.Equal(g, w) {
			t.Errorf("blob %s (%s) differs", d.Digest, d.MediaType)
		}
	}
}

func mustParseReference(t *testing.T, ref string) registry.Reference {
	t.Helper()
	r, err := registry.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
