package capsule_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	ggcr "github.com/google/go-containerregistry/pkg/registry"
	"github.com/klauspost/compress/zstd"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/evalcapsule/evalcapsule/capsule"
)

// These tests check that other OCI tools handle a capsule as an ordinary
// artifact (issue 5): the ORAS CLI pulls its files, and skopeo copies it
// between registries keeping its digest, after which Verify passes on the
// copy. They need the tools and a CNCF distribution registry, so they run
// only when EVALCAPSULE_INTEGRATION is set; then a missing tool or registry
// is a failure, not a skip, since CI installs them (.ci/run).

// interopTimeout bounds one run of an external tool.
const interopTimeout = 2 * time.Minute

// needIntegration skips the test unless EVALCAPSULE_INTEGRATION is set.
func needIntegration(t *testing.T) {
	t.Helper()
	testenv.Integration(t, "the oras and skopeo programs and a registry")
}

// interopTool finds an external program: the path in env when set, else
// name on PATH. Missing, it fails the test saying how to install it.
func interopTool(t *testing.T, env, name, install string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s=%s: %v (install: %s)", env, p, err, install)
		}
		return p
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("EVALCAPSULE_INTEGRATION is set but %s is not on PATH and %s is not set: install it with %s", name, env, install)
	}
	return p
}

func orasTool(t *testing.T) string {
	t.Helper()
	return interopTool(t, "EVALCAPSULE_ORAS", "oras", "`GOBIN=DIR go install oras.land/oras/cmd/oras@v1.3.6` and put DIR on PATH or set EVALCAPSULE_ORAS=DIR/oras")
}

func skopeoTool(t *testing.T) string {
	t.Helper()
	return interopTool(t, "EVALCAPSULE_SKOPEO", "skopeo", "`apt-get install -y --no-install-recommends skopeo`")
}

// interopRegistry is the distribution registry named by
// EVALCAPSULE_REGISTRY (host:port on loopback).
func interopRegistry(t *testing.T) string {
	t.Helper()
	addr := os.Getenv("EVALCAPSULE_REGISTRY")
	if addr == "" {
		t.Fatal("EVALCAPSULE_INTEGRATION is set but EVALCAPSULE_REGISTRY is not: start a registry with .ci/registry-up.sh DIR PORT and set EVALCAPSULE_REGISTRY=127.0.0.1:PORT")
	}
	// The tools are told to use plain HTTP, which is only for loopback.
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		t.Fatalf("EVALCAPSULE_REGISTRY=%s is not host:port on loopback", addr)
	}
	return addr
}

// interopRepository is a repository of its own for each test and run,
// since the distribution registry keeps what earlier runs pushed.
func interopRepository(t *testing.T) string {
	name := strings.NewReplacer("/", "-", "_", "-").Replace(strings.ToLower(t.Name()))
	return "evalcapsule-interop/" + name + "-" + strings.ToLower(rand.Text()[:8])
}

// runTool runs an external program and returns its standard output; a
// failure fails the test with everything it printed.
func runTool(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), interopTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// packInterop packs the small test study (SIMULATED) into a layout and a
// tar of it, and returns the study, the layout and Pack's result.
func packInterop(t *testing.T) (studyDir, layout, tarball string, res capsule.PackResult) {
	t.Helper()
	studyDir, out := t.TempDir(), t.TempDir()
	writePackStudy(t, studyDir, 20)
	layout, tarball = filepath.Join(out, "c"), filepath.Join(out, "c.tar")
	res = mustPack(t, studyDir, layout, capsule.PackOptions{})
	if r := mustPack(t, studyDir, tarball, capsule.PackOptions{}); r.Manifest.Digest != res.Manifest.Digest {
		t.Fatalf("the tar is %s, the layout %s", r.Manifest.Digest, res.Manifest.Digest)
	}
	return studyDir, layout, tarball, res
}

// TestInteropORASPull pulls a capsule with the ORAS CLI, from the
// distribution registry and from the OCI layout (directory and tar), and
// compares what it wrote with the study: one file per layer under its
// title and nothing else, files stored as they are byte for byte the
// study's, and samples as the capsule stores them, zstd-compressed, which
// decompress to the study's file. `oras manifest fetch` gives the bytes
// whose digest Pack returned.
func TestInteropORASPull(t *testing.T) {
	needIntegration(t)
	oras := orasTool(t)
	reg := interopRegistry(t)
	ctx := context.Background()
	studyDir, layout, tarball, res := packInterop(t)
	c := mustOpen(t, layout, capsule.OpenOptions{})
	manifest, err := os.ReadFile(filepath.Join(layout, "blobs", "sha256", res.Manifest.Digest.Encoded()))
	if err != nil {
		t.Fatal(err)
	}

	ref := reg + "/" + interopRepository(t) + ":v1"
	if got, err := capsule.Push(ctx, layout, ref, capsule.PushOptions{}); err != nil || got.Digest != res.Manifest.Digest {
		t.Fatalf("Push: %v, %v", got.Digest, err)
	}
	// An empty registry config, so that nothing of this machine's login
	// state plays a part.
	regConfig := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(regConfig, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, src := range []struct {
		name string
		args []string // where oras reads the capsule
	}{
		{"registry", []string{"--plain-http", "--registry-config", regConfig, ref}},
		{"layout", []string{"--oci-layout", layout + ":" + capsule.DefaultTag}},
		{"tar", []string{"--oci-layout", tarball + ":" + capsule.DefaultTag}},
	} {
		t.Run(src.name, func(t *testing.T) {
			got := runTool(t, oras, append([]string{"manifest", "fetch"}, src.args...)...)
			if !bytes.Equal(got, manifest) {
				t.Errorf("oras manifest fetch gave other bytes than the packed manifest:\n%s\nwant\n%s", got, manifest)
			}
			if d := sha256.Sum256(got); "sha256:"+hex.EncodeToString(d[:]) != res.Manifest.Digest.String() {
				t.Errorf("oras manifest fetch: digest sha256:%x, Pack's is %s", d, res.Manifest.Digest)
			}
			desc := runTool(t, oras, append([]string{"manifest", "fetch", "--descriptor"}, src.args...)...)
			var d ocispec.Descriptor
			if err := json.Unmarshal(desc, &d); err != nil || d.Digest != res.Manifest.Digest || d.Size != res.Manifest.Size {
				t.Errorf("oras manifest fetch --descriptor: %s (%v), want %s", desc, err, res.Manifest.Digest)
			}

			out := filepath.Join(t.TempDir(), "pulled")
			runTool(t, oras, append([]string{"pull", "--no-tty", "-o", out}, src.args...)...)
			checkORASFiles(t, c, studyDir, out, res.Files)
		})
	}
}

// checkORASFiles compares the files oras pulled into dir with the capsule's
// layers and the study they came from.
func checkORASFiles(t *testing.T, c *capsule.Capsule, studyDir, dir string, files int) {
	t.Helper()
	pulled := fileTree(t, dir)
	var asIs, compressed int
	for _, f := range c.Files() {
		got, ok := pulled[f.Path]
		if !ok {
			t.Errorf("%s: oras wrote no such file", f.Path)
			continue
		}
		delete(pulled, f.Path)
		want, err := os.ReadFile(filepath.Join(studyDir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if !f.Compressed() {
			if !bytes.Equal(got, want) {
				t.Errorf("%s: oras wrote %d bytes that differ from the study's %d", f.Path, len(got), len(want))
			}
			asIs++
			continue
		}
		// oras writes a layer as it is stored: the samples come out
		// zstd-compressed under the .jsonl name.
		if d := sha256.Sum256(got); "sha256:"+hex.EncodeToString(d[:]) != f.Descriptor.Digest.String() {
			t.Errorf("%s: oras wrote sha256:%x, the layer is %s", f.Path, d, f.Descriptor.Digest)
		}
		dec, err := zstd.NewReader(bytes.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(dec)
		dec.Close()
		if err != nil {
			t.Errorf("%s: decompressing what oras wrote: %v", f.Path, err)
		} else if !bytes.Equal(plain, want) {
			t.Errorf("%s: decompressed, %d bytes that differ from the study's %d", f.Path, len(plain), len(want))
		}
		compressed++
	}
	for p := range pulled {
		t.Errorf("oras wrote %s, which is no layer of the capsule", p)
	}
	if asIs+compressed != files || asIs == 0 || compressed == 0 {
		t.Errorf("compared %d files stored as they are and %d compressed, want %d files, some of each", asIs, compressed, files)
	}
}

// TestInteropSkopeoCopy copies a capsule with skopeo from the distribution
// registry, and from the OCI layout, to a second registry (in-process),
// pulls it from there and verifies it: same manifest digest, Verify ok.
// A sample byte changed in the pulled copy makes Verify name the samples
// file and its blob, and a registry that serves a damaged blob makes Pull
// fail.
func TestInteropSkopeoCopy(t *testing.T) {
	needIntegration(t)
	skopeo := skopeoTool(t)
	regA := interopRegistry(t)
	ctx := context.Background()
	_, layout, _, res := packInterop(t)

	// Registry B serves every blob as it was pushed, except the one named
	// in damage, whose first byte it flips.
	var damage atomic.Value
	damage.Store("")
	regB := ggcr.New(ggcr.WithReferrersSupport(true), ggcr.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := damage.Load().(string)
		if d == "" || r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+d) {
			regB.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		regB.ServeHTTP(rec, r)
		b := rec.Body.Bytes()
		if len(b) > 0 {
			b[0] ^= 0xff
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	hostB := strings.TrimPrefix(srv.URL, "http://")

	// skopeo reads neither the signature policy nor the credentials of this
	// machine.
	dir := t.TempDir()
	policy, authfile := filepath.Join(dir, "policy.json"), filepath.Join(dir, "auth.json")
	if err := os.WriteFile(policy, []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(authfile, []byte(`{"auths":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	skopeoCopy := func(t *testing.T, src, dst string) {
		t.Helper()
		runTool(t, skopeo, "--policy", policy, "copy",
			"--authfile", authfile, "--src-tls-verify=false", "--dest-tls-verify=false",
			"--preserve-digests", "--quiet", src, dst)
	}
	// pullVerified pulls ref with Pull, checks the digest and verifies the
	// copy; it returns the pulled layout.
	pullVerified := func(t *testing.T, ref string) string {
		t.Helper()
		pulled := filepath.Join(t.TempDir(), "pulled")
		got, err := capsule.Pull(ctx, ref, pulled, capsule.PullOptions{})
		if err != nil {
			t.Fatalf("Pull %s: %v", ref, err)
		}
		if got.Digest != res.Manifest.Digest {
			t.Fatalf("Pull %s: manifest %s, the packed one is %s", ref, got.Digest, res.Manifest.Digest)
		}
		checkVerifies(t, pulled, res)
		return pulled
	}

	refA := regA + "/" + interopRepository(t) + ":v1"
	if got, err := capsule.Push(ctx, layout, refA, capsule.PushOptions{}); err != nil || got.Digest != res.Manifest.Digest {
		t.Fatalf("Push: %v, %v", got.Digest, err)
	}

	t.Run("registry-to-registry", func(t *testing.T) {
		refB := hostB + "/" + interopRepository(t) + ":v1"
		skopeoCopy(t, "docker://"+refA, "docker://"+refB)
		pulled := pullVerified(t, refB)

		// A changed sample byte in the copy: Verify names the file and
		// its blob.
		cp := mustOpen(t, pulled, capsule.OpenOptions{})
		var samples capsule.File
		for _, f := range cp.Files() {
			if f.Compressed() {
				samples = f
			}
		}
		if samples.Path == "" {
			t.Fatal("the capsule has no samples layer")
		}
		blob := filepath.Join(pulled, "blobs", "sha256", samples.Descriptor.Digest.Encoded())
		b, err := os.ReadFile(blob)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 1
		os.Chmod(blob, 0o644)
		if err := os.WriteFile(blob, b, 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := capsule.Verify(ctx, mustOpen(t, pulled, capsule.OpenOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(v.Problems, func(p capsule.Problem) bool {
			return p.Path == samples.Path && p.Blob == samples.Descriptor.Digest.String()
		})
		if v.OK || i < 0 {
			t.Errorf("Verify of a copy with a changed sample byte names no problem with %s (%s):\n%s", samples.Path, samples.Descriptor.Digest, v)
		}

		// A registry that serves a damaged blob: Pull refuses it.
		damage.Store(samples.Descriptor.Digest.String())
		defer damage.Store("")
		_, err = capsule.Pull(ctx, refB, filepath.Join(t.TempDir(), "pulled"), capsule.PullOptions{})
		if !errors.Is(err, capsule.ErrFormat) || !strings.Contains(err.Error(), samples.Descriptor.Digest.String()) || !strings.Contains(err.Error(), samples.Path) {
			t.Errorf("Pull of a damaged blob: %v, want ErrFormat naming %s (%s)", err, samples.Descriptor.Digest, samples.Path)
		}
	})

	t.Run("layout-to-registry", func(t *testing.T) {
		refB := hostB + "/" + interopRepository(t) + ":v1"
		skopeoCopy(t, "oci:"+layout+":"+capsule.DefaultTag, "docker://"+refB)
		pullVerified(t, refB)
	})

	t.Run("registry-to-layout", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "copied")
		skopeoCopy(t, "docker://"+refA, "oci:"+out+":v1")
		checkVerifies(t, out, res)
	})
}

// checkVerifies opens the capsule in the layout at dir and verifies it:
// the packed manifest, every file, no problem.
func checkVerifies(t *testing.T, dir string, res capsule.PackResult) {
	t.Helper()
	c := mustOpen(t, dir, capsule.OpenOptions{})
	if c.Descriptor.Digest != res.Manifest.Digest {
		t.Errorf("%s holds the capsule %s, the packed one is %s", dir, c.Descriptor.Digest, res.Manifest.Digest)
	}
	v, err := capsule.Verify(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK || v.Files != res.Files || v.Files == 0 || v.Blobs != v.Files+2 {
		t.Errorf("Verify of the copy in %s: %d files (want %d):\n%s", dir, v.Files, res.Files, v)
	}
}
