package kernel

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

//go:generate go run ./internal/gen logos -o .

var (
	//go:embed logo-32x32.png
	logo32 []byte
	//go:embed logo-64x64.png
	logo64 []byte
)

// SpecName is the name Jupyter knows the kernel by: the directory of its
// kernelspec, and what `jupyter kernelspec uninstall` takes.
const SpecName = "evalcapsule-go"

// DisplayName is the kernel's name in the notebook's kernel menu.
const DisplayName = "Go (evalcapsule)"

// Spec is a kernelspec, the kernel.json Jupyter starts a kernel from.
type Spec struct {
	Argv          []string       `json:"argv"`
	DisplayName   string         `json:"display_name"`
	Language      string         `json:"language"`
	InterruptMode string         `json:"interrupt_mode"`
	Metadata      map[string]any `json:"metadata"`
}

// InstallOptions says what kernelspec Install writes.
type InstallOptions struct {
	// Command is how Jupyter starts the kernel: the absolute path of the
	// capsule binary, then its arguments before --connection-file
	// (default: this executable, "kernel").
	Command []string
	// Name is the kernelspec's name (default SpecName).
	Name string
	// InterruptMode is "message" (default: interrupt_request on the
	// control channel, which works on every platform) or "signal"
	// (SIGINT).
	InterruptMode string
}

// Install writes the kernelspec (kernel.json and the logos) into
// dataDir/kernels/<name>, replacing one that is there, and returns that
// directory. dataDir is a Jupyter data directory: see UserDataDir,
// SysPrefixDataDir and PrefixDataDir.
func Install(dataDir string, opts InstallOptions) (string, error) {
	if opts.Name == "" {
		opts.Name = SpecName
	}
	if opts.InterruptMode == "" {
		opts.InterruptMode = "message"
	}
	if opts.InterruptMode != "message" && opts.InterruptMode != "signal" {
		return "", fmt.Errorf("interrupt mode %q: message or signal", opts.InterruptMode)
	}
	if len(opts.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return "", err
		}
		opts.Command = []string{exe, "kernel"}
	}
	if !filepath.IsAbs(opts.Command[0]) {
		return "", fmt.Errorf("kernel command %q: the path must be absolute (Jupyter starts it from anywhere)", opts.Command[0])
	}
	if where := temporaryBuildDir(opts.Command[0], goCacheDirs()); where != "" {
		return "", fmt.Errorf("%w: %s lies in %s, which Go deletes (when go run ends, when the build cache is trimmed), and Jupyter could then not start the kernel; install the binary first, 'go install ./cmd/capsule' in the checkout, then run 'capsule kernel install'",
			ErrTemporaryBuild, opts.Command[0], where)
	}
	spec := Spec{
		Argv:          append(append([]string{}, opts.Command...), "--connection-file", "{connection_file}"),
		DisplayName:   DisplayName,
		Language:      "go",
		InterruptMode: opts.InterruptMode,
		Metadata:      map[string]any{"debugger": false},
	}
	if opts.Name != SpecName {
		spec.DisplayName += " " + opts.Name
	}
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(dataDir, "kernels", opts.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, data := range map[string][]byte{"kernel.json": append(b, '\n'), "logo-32x32.png": logo32, "logo-64x64.png": logo64} {
		if err := writeFileAtomic(filepath.Join(dir, name), data); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// goBuildTemp matches the name of the work directory the go command builds
// into (os.TempDir()/go-build123456789), where `go run` leaves its
// executable.
var goBuildTemp = regexp.MustCompile(`^go-build[0-9]+$`)

// temporaryBuildDir returns the directory Go deletes that exe lies in: one
// of caches (Go build caches) or a go-build work directory; "" when exe lies
// in neither.
func temporaryBuildDir(exe string, caches []string) string {
	exe = filepath.Clean(exe)
	for _, c := range caches {
		if c == "" || !filepath.IsAbs(c) {
			continue
		}
		for _, dir := range []string{filepath.Clean(c), resolved(c)} {
			if rel, err := filepath.Rel(dir, exe); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return dir
			}
		}
	}
	for dir := filepath.Dir(exe); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if goBuildTemp.MatchString(filepath.Base(dir)) {
			return dir
		}
	}
	return ""
}

// resolved is dir with its symbolic links resolved, or dir when they cannot
// be.
func resolved(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// goCacheDirs are the places the Go build cache may be: $GOCACHE, what
// `go env GOCACHE` says (it also reads `go env -w` settings) when go is on
// PATH, and the default, the user's cache directory's go-build.
func goCacheDirs() []string {
	dirs := []string{os.Getenv("GOCACHE")}
	if gobin, err := exec.LookPath("go"); err == nil {
		if out, err := exec.Command(gobin, "env", "GOCACHE").Output(); err == nil {
			dirs = append(dirs, strings.TrimSpace(string(out)))
		}
	}
	if d, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(d, "go-build"))
	}
	return dirs
}

// writeFileAtomic writes through a temporary file and a rename, so that
// Jupyter never reads half a kernel.json.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// UserDataDir is the user's Jupyter data directory, as jupyter_core finds
// it: $JUPYTER_DATA_DIR, else ~/.local/share/jupyter ($XDG_DATA_HOME/jupyter)
// on Linux, ~/Library/Jupyter on macOS, %APPDATA%\jupyter on Windows.
func UserDataDir() (string, error) {
	if d := os.Getenv("JUPYTER_DATA_DIR"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Jupyter"), nil
	case "windows":
		if d := os.Getenv("APPDATA"); d != "" {
			return filepath.Join(d, "jupyter"), nil
		}
		return filepath.Join(home, "AppData", "Roaming", "jupyter"), nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "jupyter"), nil
	}
	return filepath.Join(home, ".local", "share", "jupyter"), nil
}

// DebianPython is the Python whose Jupyter the kernel is installed for
// with --sys-prefix: Debian's, never another python3 on PATH.
const DebianPython = "/usr/bin/python3"

// SysPrefixDataDir is the data directory of python's installation
// (sys.prefix/share/jupyter): /usr/share/jupyter for Debian's Python.
func SysPrefixDataDir(python string) (string, error) {
	out, err := exec.Command(python, "-c", "import sys; print(sys.prefix)").Output()
	if err != nil {
		return "", fmt.Errorf("%s: sys.prefix: %w", python, err)
	}
	return PrefixDataDir(strings.TrimSpace(string(out))), nil
}

// PrefixDataDir is the data directory under an installation prefix:
// prefix/share/jupyter, as `jupyter kernelspec install --prefix` uses.
func PrefixDataDir(prefix string) string { return filepath.Join(prefix, "share", "jupyter") }
