package symbols_test

import (
	"bufio"
	"bytes"
	"go/build"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain makes go/build, which yaegi's extract and the docs generator
// use, find packages in a GOPATH of links to the module directories this
// build uses, instead of running `go list` for each import and cgo for
// each package with C: minutes on a small machine, seconds that way. The
// result is the same: the same directories, the same exported API.
func TestMain(m *testing.M) {
	if dir, ok := linkGOPATH(); ok {
		defer os.RemoveAll(dir)
	}
	os.Exit(m.Run())
}

func linkGOPATH() (string, bool) {
	// The symbol tables import every package they describe.
	out, err := exec.Command("go", "list", "-e", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Dir}}{{end}}",
		"github.com/evalcapsule/evalcapsule/kernel/internal/symbols").Output()
	if err != nil {
		return "", false
	}
	dir, err := os.MkdirTemp("", "gopath-")
	if err != nil {
		return "", false
	}
	seen := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, mdir, ok := strings.Cut(sc.Text(), " ")
		if ok && mdir != "" {
			seen[path] = mdir
		}
	}
	for path, mdir := range seen {
		for other := range seen {
			if other != path && strings.HasPrefix(path, other+"/") {
				os.RemoveAll(dir)
				return "", false // nested modules: a link cannot hold both
			}
		}
		link := filepath.Join(dir, "src", filepath.FromSlash(path))
		if os.MkdirAll(filepath.Dir(link), 0o755) != nil || os.Symlink(mdir, link) != nil {
			os.RemoveAll(dir)
			return "", false
		}
	}
	build.Default.GOPATH = dir
	// Any file system hook keeps go/build from asking the go command, and
	// an OpenFile hook makes the source importer fake cgo's "C" instead of
	// running cgo (cgo files change no exported API).
	build.Default.IsDir = func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.IsDir()
	}
	build.Default.OpenFile = func(p string) (io.ReadCloser, error) { return os.Open(p) }
	return dir, true
}
