package kernel

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/kernel/internal/logo"
)

func TestInstall(t *testing.T) {
	data := PrefixDataDir(t.TempDir())
	dir, err := Install(data, InstallOptions{Command: []string{"/opt/bin/capsule", "kernel"}})
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(data, "kernels", SpecName) {
		t.Errorf("installed in %s", dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, "kernel.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec Spec
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	want := []string{"/opt/bin/capsule", "kernel", "--connection-file", "{connection_file}"}
	if len(spec.Argv) != len(want) || spec.DisplayName != "Go (evalcapsule)" || spec.Language != "go" || spec.InterruptMode != "message" {
		t.Errorf("spec %+v", spec)
	}
	for i := range want {
		if spec.Argv[i] != want[i] {
			t.Errorf("argv %q, want %q", spec.Argv, want)
			break
		}
	}
	for _, f := range []string{"logo-32x32.png", "logo-64x64.png"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := Install(data, InstallOptions{Command: []string{"capsule"}}); err == nil {
		t.Error("a relative command was accepted")
	}
	if _, err := Install(data, InstallOptions{Command: []string{"/c"}, InterruptMode: "telepathy"}); err == nil {
		t.Error("a bad interrupt mode was accepted")
	}
}

// TestLogosCurrent checks the embedded logos against what the generator
// draws.
func TestLogosCurrent(t *testing.T) {
	for size, embedded := range map[int][]byte{32: logo32, 64: logo64} {
		b, err := logo.PNG(size)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, embedded) {
			t.Errorf("logo-%dx%d.png is out of date: run `go generate ./kernel/...`", size, size)
		}
	}
}

func TestConnection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(path, []byte(`{"shell_port": 1, "control_port": 2, "stdin_port": 3, "iopub_port": 4, "hb_port": 5, "key": "k", "signature_scheme": "hmac-sha256"}`), 0o600)
	c, err := ReadConnection(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.IP != "127.0.0.1" || c.endpoint(c.ShellPort) != "tcp://127.0.0.1:1" {
		t.Errorf("connection %+v", c)
	}
	os.WriteFile(path, []byte(`{"shell_port": 1, "control_port": 2, "stdin_port": 3, "iopub_port": 4, "hb_port": 5, "key": "k", "signature_scheme": "hmac-md5"}`), 0o600)
	if _, err := ReadConnection(path); err == nil {
		t.Error("hmac-md5 accepted")
	}
}

// TestInstallRefusesTemporaryBuild checks that a capsule in a Go build cache
// or in the go-build directory `go run` builds into is refused, with what to
// do instead, and that a capsule anywhere else is installed.
func TestInstallRefusesTemporaryBuild(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("GOCACHE", cache)
	data := PrefixDataDir(t.TempDir())
	for _, exe := range []string{
		filepath.Join(cache, "8f", "8f3a-d", "capsule"),                          // a cached `go run` executable
		filepath.Join(os.TempDir(), "go-build1234567", "b001", "exe", "capsule"), // a `go run` work directory
	} {
		_, err := Install(data, InstallOptions{Command: []string{exe, "kernel"}})
		if !errors.Is(err, ErrTemporaryBuild) {
			t.Errorf("%s: err %v, want ErrTemporaryBuild", exe, err)
			continue
		}
		if !strings.Contains(err.Error(), "go install ./cmd/capsule") {
			t.Errorf("%s: the error does not say what to do: %v", exe, err)
		}
		if _, serr := os.Stat(filepath.Join(data, "kernels", SpecName, "kernel.json")); serr == nil {
			t.Errorf("%s: refused, but kernel.json was written", exe)
		}
	}
	for _, exe := range []string{
		filepath.Join(filepath.Dir(cache), "capsule"),                             // beside the cache, not in it
		filepath.Join(cache+"-other", "capsule"),                                  // a sibling whose name starts with the cache's
		filepath.Join(os.TempDir(), "go-builds", "capsule"),                       // not a go-build work directory
		filepath.Join(os.TempDir(), "go-build1234567x", "b001", "exe", "capsule"), // nor this
	} {
		if _, err := Install(data, InstallOptions{Command: []string{exe, "kernel"}}); err != nil {
			t.Errorf("%s: %v", exe, err)
		}
	}
}
