package kernel

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
