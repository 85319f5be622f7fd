package capsule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/evalcapsule/evalcapsule/capsule/internal/layout"
)

// pushTestManifest pushes m to ref (host/repository:tag) as it is, its
// blobs not uploaded: the in-process registry accepts a manifest whose
// blobs it does not have, as a hostile registry would serve one.
func pushTestManifest(t *testing.T, ref string, m ocispec.Manifest) ocispec.Descriptor {
	t.Helper()
	m.SchemaVersion, m.MediaType = 2, ocispec.MediaTypeImageManifest
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	r := mustParseReference(t, ref)
	repo, err := newRepository(r, false, PushOptions{}.timeouts())
	if err != nil {
		t.Fatal(err)
	}
	desc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, b)
	if err := repo.PushReference(context.Background(), desc, bytes.NewReader(b), r.Reference); err != nil {
		t.Fatal(err)
	}
	return desc
}

// TestPullChecksSizesFirst: a manifest that declares a blob over a limit,
// or blobs whose sum is, is refused with an ErrFormat naming the blob and
// the limit before any blob is fetched or the layout is created: by Pull,
// and by OpenRef (capsule verify REF), which pulls the capsule with its
// referrers. A referrer's blobs are held to the limits too.
func TestPullChecksSizesFirst(t *testing.T) {
	ctx := context.Background()
	reg := startGGCR(t)
	repo := reg.host + "/" + testRepository(t)
	cfg := content.NewDescriptorFromBytes(ConfigMediaType, []byte(`{}`))
	layer := func(mediaType, title string, size int64, annotations ...string) ocispec.Descriptor {
		d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromString(title), Size: size,
			Annotations: map[string]string{ocispec.AnnotationTitle: title}}
		for i := 0; i+1 < len(annotations); i += 2 {
			d.Annotations[annotations[i]] = annotations[i+1]
		}
		return d
	}
	samples := func(stored, declared int64) ocispec.Descriptor {
		return layer(MediaSamples, "runs/base/output/m/samples_gsm8k.jsonl", stored,
			AnnotationContentSize, strconv.FormatInt(declared, 10), AnnotationContentDigest, digest.FromString("content").String())
	}
	for i, tc := range []struct {
		name   string
		config ocispec.Descriptor
		layers []ocispec.Descriptor
		opts   PullOptions
		want   []string // in the error
	}{
		{"a 5 GiB layer", cfg, []ocispec.Descriptor{layer(MediaText, "runs/base/output/huge.log", 5<<30)}, PullOptions{},
			[]string{"runs/base/output/huge.log", "MaxBlobBytes", "5368709120"}},
		{"samples declaring 5 GiB", cfg, []ocispec.Descriptor{samples(1<<20, 5<<30)}, PullOptions{},
			[]string{"samples_gsm8k.jsonl", "MaxDecompressedBytes"}},
		{"samples 201 times their size", cfg, []ocispec.Descriptor{samples(1<<20, 201<<20)}, PullOptions{},
			[]string{"samples_gsm8k.jsonl", "compression ratio", "MaxCompressionRatio"}},
		{"a 100 MiB config", layer(ConfigMediaType, "config", 100<<20), nil, PullOptions{},
			[]string{"config", "MaxConfigBytes"}},
		{"layers over the total", cfg, []ocispec.Descriptor{layer(MediaText, "a.txt", 2<<20), layer(MediaText, "b.txt", 2<<20)},
			PullOptions{MaxTotalBytes: 3 << 20}, []string{"b.txt", "MaxTotalBytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := fmt.Sprintf("%s:case%d", repo, i)
			pushTestManifest(t, ref, ocispec.Manifest{ArtifactType: ArtifactType, Config: tc.config, Layers: tc.layers})
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrFormat) || errors.Is(err, ErrRegistry) {
					t.Fatalf("%s: %v, want ErrFormat", what, err)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: the error does not say %q: %v", what, w, err)
					}
				}
				if got := reg.blobGets(); len(got) != 0 {
					t.Errorf("%s fetched blobs %v before refusing", what, got)
				}
				t.Logf("%s: %v", what, err)
			}
			reg.reset()
			dst := filepath.Join(t.TempDir(), "pulled")
			_, err := Pull(ctx, ref, dst, tc.opts)
			check("Pull", err)
			if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Pull created %s (%v)", dst, err)
			}
			reg.reset()
			_, err = OpenRef(ctx, ref, OpenOptions{MaxTotalBytes: tc.opts.MaxTotalBytes})
			check("OpenRef", err)
		})
	}

	t.Run("a referrer's 5 GiB layer", func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "packed")
		mustTestArtifact(t, src, ArtifactType)
		ref := repo + ":with-referrer"
		subject, err := Push(ctx, src, ref, PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		empty := ocispec.DescriptorEmptyJSON
		referrer := pushTestManifest(t, repo+":signature", ocispec.Manifest{
			ArtifactType: "application/vnd.example.signature.v1", Config: empty, Subject: &subject,
			Layers: []ocispec.Descriptor{layer("application/octet-stream", "signature.bin", 5<<30)},
		})
		reg.reset()
		_, err = Pull(ctx, ref, filepath.Join(t.TempDir(), "pulled"), PullOptions{WithReferrers: true})
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), referrer.Digest.String()) || !strings.Contains(err.Error(), "MaxBlobBytes") {
			t.Fatalf("Pull with referrers: %v, want an ErrFormat naming the referrer %s and the limit", err, referrer.Digest)
		}
		if got := reg.blobGets(); len(got) != 0 {
			t.Errorf("Pull fetched blobs %v before refusing", got)
		}
		t.Logf("Pull: %v", err)
		if _, err := OpenRef(ctx, ref, OpenOptions{}); !errors.Is(err, ErrFormat) {
			t.Errorf("OpenRef: %v, want ErrFormat", err)
		}
		// Without its referrers the capsule pulls.
		if _, err := Pull(ctx, ref, filepath.Join(t.TempDir(), "pulled"), PullOptions{}); err != nil {
			t.Errorf("Pull without referrers: %v", err)
		}
	})
}

// trickle wraps a registry: a GET of the blob it holds gets its headers,
// then one byte every interval, until the client goes; a request for which
// hang says so gets no answer at all.
type trickle struct {
	mu       sync.Mutex
	blob     ocispec.Descriptor
	interval time.Duration
	hang     func(r *http.Request) bool
}

// set changes what the registry does (with the zero blob and a nil hang,
// nothing but serve).
func (tr *trickle) set(blob ocispec.Descriptor, interval time.Duration, hang func(r *http.Request) bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.blob, tr.interval, tr.hang = blob, interval, hang
}

func (tr *trickle) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.mu.Lock()
		d, interval, hang := tr.blob, tr.interval, tr.hang
		tr.mu.Unlock()
		if hang != nil && hang(r) {
			<-r.Context().Done()
			return
		}
		if d.Digest == "" || r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+d.Digest.String()) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.FormatInt(d.Size, 10))
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := w.Write([]byte{'x'}); err != nil {
				return
			}
			http.NewResponseController(w).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(interval):
			}
		}
	})
}

// TestTransferTimeouts: a registry that trickles a blob (a byte every 2 s,
// under a short IdleTimeout; a byte every 10 ms, under a short
// TransferTimeout) or does not answer at all fails the pull, OpenRef or
// push at once with an ErrRegistry that names the timeout, instead of
// holding it forever.
func TestTransferTimeouts(t *testing.T) {
	ctx := context.Background()
	tr := &trickle{}
	reg := startGGCR(t, tr.wrap)
	repo := reg.host + "/" + testRepository(t)
	src := filepath.Join(t.TempDir(), "packed")
	want := mustTestArtifact(t, src, ArtifactType)
	ref := repo + ":v1"
	if _, err := Push(ctx, src, ref, PushOptions{}); err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	readJSONFile(t, layoutBlobPath(src, want), &m)
	log := m.Layers[1] // 1 MiB

	check := func(t *testing.T, err error, start time.Time, timeout string) {
		t.Helper()
		if !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), timeout) || !strings.Contains(err.Error(), "127.0.0.1:") {
			t.Fatalf("%v, want an ErrRegistry naming %s and the registry", err, timeout)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("failed after %s", d)
		}
		t.Logf("after %s: %v", time.Since(start).Round(time.Millisecond), err)
	}
	t.Run("idle", func(t *testing.T) {
		tr.set(log, 2*time.Second, nil)
		start := time.Now()
		_, err := Pull(ctx, ref, filepath.Join(t.TempDir(), "pulled"), PullOptions{IdleTimeout: 300 * time.Millisecond})
		check(t, err, start, "IdleTimeout")
		start = time.Now()
		_, err = OpenRef(ctx, ref, OpenOptions{IdleTimeout: 300 * time.Millisecond})
		check(t, err, start, "IdleTimeout")
	})
	t.Run("total", func(t *testing.T) {
		tr.set(log, 10*time.Millisecond, nil)
		start := time.Now()
		_, err := Pull(ctx, ref, filepath.Join(t.TempDir(), "pulled"), PullOptions{IdleTimeout: 5 * time.Second, TransferTimeout: 500 * time.Millisecond})
		check(t, err, start, "TransferTimeout")
	})
	t.Run("no answer", func(t *testing.T) {
		tr.set(ocispec.Descriptor{}, 0, func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/manifests/") })
		start := time.Now()
		_, err := OpenRef(ctx, ref, OpenOptions{IdleTimeout: 300 * time.Millisecond})
		check(t, err, start, "IdleTimeout")
	})
	t.Run("push", func(t *testing.T) {
		// A registry of its own: the in-process registry's blobs are
		// shared by its repositories, and these are there already.
		up := &trickle{}
		up.set(ocispec.Descriptor{}, 0, func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/blobs/uploads/") })
		hung := startGGCR(t, up.wrap)
		start := time.Now()
		_, err := Push(ctx, src, hung.host+"/"+testRepository(t)+":v1", PushOptions{IdleTimeout: 300 * time.Millisecond})
		check(t, err, start, "IdleTimeout")
		if !strings.Contains(err.Error(), hung.host) {
			t.Errorf("the error does not name the registry: %v", err)
		}
	})
	// The same registry, answering: the defaults let a pull through.
	tr.set(ocispec.Descriptor{}, 0, nil)
	if _, err := Pull(ctx, ref, filepath.Join(t.TempDir(), "pulled"), PullOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestTransferTimeoutDefaults: the default total is 10 minutes plus a
// second per 256 KiB, counting an answer's Content-Length at most up to
// the blob limit.
func TestTransferTimeoutDefaults(t *testing.T) {
	tt := PullOptions{}.timeouts()
	if tt.idle != DefaultIdleTimeout {
		t.Errorf("idle %s", tt.idle)
	}
	for n, want := range map[int64]time.Duration{
		-1:      10 * time.Minute,
		0:       10 * time.Minute,
		1 << 20: 10*time.Minute + 4*time.Second,
		4 << 30: 10*time.Minute + 16384*time.Second,
		1 << 50: 10*time.Minute + 16384*time.Second,
	} {
		if got := tt.forSize(n); got != want {
			t.Errorf("forSize(%d) = %s, want %s", n, got, want)
		}
	}
	if got := (PullOptions{TransferTimeout: time.Hour}).timeouts().forSize(4 << 30); got != time.Hour {
		t.Errorf("a TransferTimeout of 1h gives %s", got)
	}
}

// TestPullRemovesStaleIngest: the ingest file a killed pull left in the
// layout (not written for a while, no other pull using the layout) is
// removed by the next pull into it; a fresh one, or any while another pull
// holds the layout, is left alone.
func TestPullRemovesStaleIngest(t *testing.T) {
	ctx := context.Background()
	reg := startGGCR(t)
	src := filepath.Join(t.TempDir(), "packed")
	mustTestArtifact(t, src, ArtifactType)
	ref := reg.host + "/" + testRepository(t) + ":v1"
	if _, err := Push(ctx, src, ref, PushOptions{}); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "pulled")
	if _, err := Pull(ctx, ref, dst, PullOptions{}); err != nil {
		t.Fatal(err)
	}
	ingest := filepath.Join(dst, "ingest")
	stale := filepath.Join(ingest, strings.Repeat("a", 64)+"_3141592653")
	fresh := filepath.Join(ingest, strings.Repeat("b", 64)+"_2718281828")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, make([]byte, 1<<20), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stale, old, old)

	// Another pull into the layout is under way: nothing goes.
	release, err := layout.SharedLock(ingest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Pull(ctx, ref, dst, PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("removed while another pull holds the layout: %v", err)
	}
	release()

	if _, err := Pull(ctx, ref, dst, PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed pull's ingest file is still there (%v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh ingest file was removed: %v", err)
	}
}

// TestOpenRefRemovesStaleTemp: the temporary layout a killed OpenRef left
// in the temporary directory ("capsule-pull-N", no one holding it) is
// removed by the next OpenRef; one in use is left alone, and OpenRef's own
// goes with Close.
func TestOpenRefRemovesStaleTemp(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	reg := startGGCR(t)
	src := filepath.Join(t.TempDir(), "packed")
	mustTestArtifact(t, src, ArtifactType)
	ref := reg.host + "/" + testRepository(t) + ":v1"
	if _, err := Push(ctx, src, ref, PushOptions{}); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(tmp, pullTempPrefix+"1618033988")
	if err := os.MkdirAll(filepath.Join(stale, "capsule", "blobs"), 0o700); err != nil {
		t.Fatal(err)
	}
	live, release, err := layout.MkdirTemp(tmp, pullTempPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	// The test artifact is no full capsule (Open may refuse its config);
	// what matters is what is left in the temporary directory.
	if c, err := OpenRef(ctx, ref, OpenOptions{}); err == nil {
		c.Close()
	}
	entries, _ := os.ReadDir(tmp)
	if len(entries) != 1 || entries[0].Name() != filepath.Base(live) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the temporary directory holds %v, expected only %s", names, filepath.Base(live))
	}
}
