package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Environment is the provenance of the machine a run ran on, captured inside
// the job (on the compute node, under the job's GPU allocation) because
// that is the only place where nvidia-smi lists the GPUs the run used and
// where the job's Python is the one lm-eval ran under.
//
// Only the variables named here are read from the environment: the job's
// environment holds tokens (HF_TOKEN, registry credentials) and is never
// copied wholesale.
type Environment struct {
	Host string `json:"host"`
	// CUDAVisibleDevices is CUDA_VISIBLE_DEVICES. It may hold indices,
	// UUIDs or MIG ids. CUDAVisibleDevicesSet tells an empty value (CUDA
	// sees no GPU) from an unset one (CUDA sees them all).
	CUDAVisibleDevices    string `json:"cuda_visible_devices"`
	CUDAVisibleDevicesSet bool   `json:"cuda_visible_devices_set"`
	// CUDADeviceOrder is CUDA_DEVICE_ORDER: only under "PCI_BUS_ID" do
	// indices in CUDA_VISIBLE_DEVICES mean nvidia-smi's indices.
	CUDADeviceOrder string `json:"cuda_device_order,omitempty"`
	SlurmJobID      string `json:"slurm_job_id,omitempty"`
	SlurmJobGPUs    string `json:"slurm_job_gpus,omitempty"`

	// NvidiaSmi is the parsed `nvidia-smi -q -x` (saved as nvidia-smi.xml).
	NvidiaSmi *NvidiaSmi `json:"nvidia_smi,omitempty"`
	// GPUs merges -q -x with the --query-gpu CSV (see MergeGPUs).
	GPUs []GPU `json:"gpus,omitempty"`
	// DriverVersion and CUDAVersion come from `nvidia-smi --version`, or
	// from -q -x on drivers that lack --version.
	DriverVersion string `json:"driver_version,omitempty"`
	CUDAVersion   string `json:"cuda_version,omitempty"`

	// Python is the interpreter asked (CaptureOptions.Python).
	Python        string `json:"python"`
	PythonVersion string `json:"python_version,omitempty"`
	// LMEvalVersion is importlib.metadata.version("lm_eval"): the
	// installed distribution's version, the same call lm-eval uses for the
	// lm_eval_version key of its results file.
	LMEvalVersion string    `json:"lm_eval_version,omitempty"`
	Packages      []Package `json:"packages,omitempty"` // from pip freeze (saved as pip-freeze.txt)

	// Files names the files written into dir, relative to it.
	Files []string `json:"files,omitempty"`
	// Errors says what could not be captured and why ("nvidia-smi: not
	// found"). A missing tool leaves its fields empty; it does not fail
	// the capture, because a CPU-only run still needs its record.
	Errors []string `json:"errors,omitempty"`
}

// Package is one line of pip freeze.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"` // empty for direct references and most editable installs
	// Source is the URL or path of a direct reference ("name @ file://...")
	// or editable install ("-e git+https://...@<commit>#egg=name"), with any
	// password or token in it masked.
	Source   string `json:"source,omitempty"`
	Editable bool   `json:"editable,omitempty"`
}

// CommandRunner runs one command to completion and returns its standard output
// and standard error. It exists so tests can substitute canned outputs for
// nvidia-smi and Python. A command that is not installed must yield an
// error matching exec.ErrNotFound or fs.ErrNotExist (as os/exec's do).
type CommandRunner interface {
	Run(ctx context.Context, name string, args ...string) (stdout, stderr []byte, err error)
}

// CaptureOptions configures CaptureEnvironment. The zero value works.
type CaptureOptions struct {
	// Python is the interpreter lm-eval runs under; default "python3".
	Python string
	// Timeout bounds each command; default 30s. nvidia-smi can hang for
	// minutes on a GPU that fell off the bus, and a provenance step must
	// not hold up the run.
	Timeout time.Duration
	// Env, when not nil, is read instead of the process environment
	// ("KEY=value" entries, as exec.Cmd.Env) for the variables Environment
	// records. Commands always inherit the process environment.
	Env []string
	// Commands runs the commands; default os/exec.
	Commands CommandRunner
}

// The files CaptureEnvironment writes into its directory.
const (
	NvidiaSmiXMLFile = "nvidia-smi.xml"
	NvidiaSmiCSVFile = "nvidia-smi.csv"
	PipFreezeFile    = "pip-freeze.txt"
)

// lmEvalVersionScript asks importlib.metadata rather than importing
// lm_eval: older releases import torch and transformers at import time,
// which takes longer than the timeout on a cold node, and the metadata is
// what lm-eval itself records.
const lmEvalVersionScript = `import importlib.metadata as m, sys
try:
    print(m.version("lm_eval"))
except m.PackageNotFoundError:
    sys.exit("lm_eval is not installed")`

// CaptureEnvironment records the provenance of the machine it runs on into
// an Environment and into files inside dir (which must exist): the raw
// `nvidia-smi -q -x` (nvidia-smi.xml), the --query-gpu CSV of
// GPUQueryFields (nvidia-smi.csv) and `<python> -m pip freeze`
// (pip-freeze.txt). It also runs `nvidia-smi --version`,
// `<python> --version` and a one-line script printing
// importlib.metadata.version("lm_eval"), and reads hostname,
// CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, SLURM_JOB_ID and SLURM_JOB_GPUS.
//
// A tool that is missing, fails, times out or prints something unparsable
// is recorded in Errors and its fields are left empty. The error return is
// for what makes the record itself impossible: dir unusable, a file not
// written, or ctx cancelled. Files are written atomically (a temporary file
// in dir, then a rename), so a reader never sees half of one, and nothing
// is written outside dir. Credentials in URLs of the pip freeze output are
// masked before it is saved.
func CaptureEnvironment(ctx context.Context, dir string, opts CaptureOptions) (*Environment, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("capture environment: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("capture environment: %s is not a directory", dir)
	}
	c := &capture{ctx: ctx, dir: dir, opts: opts, env: &Environment{}, missing: map[string]bool{}}
	if c.opts.Python == "" {
		c.opts.Python = "python3"
	}
	if c.opts.Timeout <= 0 {
		c.opts.Timeout = 30 * time.Second
	}
	if c.opts.Commands == nil {
		c.opts.Commands = execRunner{}
	}
	c.env.Python = c.opts.Python
	c.variables()
	if err := c.nvidiaSmi(); err != nil {
		return nil, err
	}
	if err := c.python(); err != nil {
		return nil, err
	}
	return c.env, nil
}

type capture struct {
	ctx     context.Context
	dir     string
	opts    CaptureOptions
	env     *Environment
	missing map[string]bool // programs found missing, not run again
}

func (c *capture) errorf(format string, args ...any) {
	c.env.Errors = append(c.env.Errors, fmt.Sprintf(format, args...))
}

func (c *capture) variables() {
	lookup := os.LookupEnv
	if c.opts.Env != nil {
		lookup = func(key string) (string, bool) {
			// The last entry wins, as in exec.Cmd.Env.
			v, ok := "", false
			for _, kv := range c.opts.Env {
				if k, val, found := strings.Cut(kv, "="); found && k == key {
					v, ok = val, true
				}
			}
			return v, ok
		}
	}
	e := c.env
	e.CUDAVisibleDevices, e.CUDAVisibleDevicesSet = lookup("CUDA_VISIBLE_DEVICES")
	e.CUDADeviceOrder, _ = lookup("CUDA_DEVICE_ORDER")
	e.SlurmJobID, _ = lookup("SLURM_JOB_ID")
	e.SlurmJobGPUs, _ = lookup("SLURM_JOB_GPUS")
	host, err := os.Hostname()
	if err != nil {
		c.errorf("hostname: %v", err)
	}
	e.Host = host
}

func (c *capture) nvidiaSmi() error {
	const smi = "nvidia-smi"
	out, ok, err := c.run(srcXML, smi, "-q", "-x")
	if err != nil {
		return err
	}
	if ok {
		if err := c.save(NvidiaSmiXMLFile, out); err != nil {
			return err
		}
		if x, err := ParseNvidiaSmiXML(out); err != nil {
			c.errorf("%v", err)
		} else {
			c.env.NvidiaSmi = &x
		}
	}

	var csv []GPU
	out, ok, err = c.run(srcCSV, smi, "--query-gpu="+GPUQueryFields, "--format=csv,noheader,nounits")
	if err != nil {
		return err
	}
	if ok {
		if err := c.save(NvidiaSmiCSVFile, out); err != nil {
			return err
		}
		if csv, err = ParseGPUQueryCSV(out); err != nil {
			c.errorf("%v", err)
		}
	}

	out, ok, err = c.run(srcVersion, smi, "--version")
	if err != nil {
		return err
	}
	if ok {
		if v, err := ParseNvidiaSmiVersion(out); err != nil {
			c.errorf("%v", err)
		} else {
			c.env.DriverVersion, c.env.CUDAVersion = v.DriverVersion, v.CUDAVersion
		}
	}

	var x NvidiaSmi
	if c.env.NvidiaSmi != nil {
		x = *c.env.NvidiaSmi
	}
	if c.env.DriverVersion == "" {
		c.env.DriverVersion = x.DriverVersion
	}
	if c.env.CUDAVersion == "" {
		c.env.CUDAVersion = x.CUDAVersion
	}
	c.env.GPUs = MergeGPUs(x, csv)
	for i := range c.env.GPUs {
		g := &c.env.GPUs[i]
		if g.DriverVersion == "" {
			g.DriverVersion = c.env.DriverVersion
		}
		if g.CUDAVersion == "" {
			g.CUDAVersion = c.env.CUDAVersion
		}
	}
	if len(c.env.GPUs) == 0 {
		c.env.GPUs = nil
	}
	return nil
}

func (c *capture) python() error {
	py := c.opts.Python
	out, ok, err := c.run(py+" --version", py, "--version")
	if err != nil {
		return err
	}
	if ok {
		c.env.PythonVersion = strings.TrimPrefix(lastLine(out), "Python ")
	}

	out, ok, err = c.run(py+" -m pip freeze", py, "-m", "pip", "freeze")
	if err != nil {
		return err
	}
	if ok {
		out = redactURLCredentials(out)
		if err := c.save(PipFreezeFile, out); err != nil {
			return err
		}
		c.env.Packages = ParsePipFreeze(out)
	}

	out, ok, err = c.run("lm_eval version", py, "-c", lmEvalVersionScript)
	if err != nil {
		return err
	}
	if ok {
		c.env.LMEvalVersion = lastLine(out)
	}
	return nil
}

// run runs one command under the per-command timeout. It returns ok=false
// with the reason recorded in Errors when the command is missing, fails or
// times out; err is only for a cancelled ctx, which ends the capture.
// label names the command in Errors. A missing program is recorded once,
// not once for each command that would have run it.
func (c *capture) run(label, name string, args ...string) (out []byte, ok bool, err error) {
	if c.missing[name] {
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.Timeout)
	defer cancel()
	stdout, stderr, err := c.opts.Commands.Run(ctx, name, args...)
	if err := c.ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("capture environment: %w", err)
	}
	switch {
	case err == nil:
		return stdout, true, nil
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		c.missing[name] = true
		c.errorf("%s: not found", name)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		c.errorf("%s: timed out after %v", label, c.opts.Timeout)
	default:
		msg := err.Error()
		if why := lastLine(stderr); why != "" {
			msg += ": " + why
		} else if why := lastLine(stdout); why != "" {
			msg += ": " + why // nvidia-smi reports its failures on stdout
		}
		c.errorf("%s: %s", label, msg)
	}
	return nil, false, nil
}

// save writes b to dir/name atomically: readers of a run directory see
// the old file or the whole new one, never a torn one.
func (c *capture) save(name string, b []byte) error {
	path := filepath.Join(c.dir, name)
	if err := WriteFileAtomic(path, b); err != nil {
		return fmt.Errorf("capture environment: write %s: %w", path, err)
	}
	c.env.Files = append(c.env.Files, name)
	return nil
}

// lastLine is the last non-blank line of b, trimmed and cut to a length
// that keeps Errors readable. Tracebacks end with the line that says what
// went wrong; nvidia-smi's failures are one line.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	s := strings.TrimSpace(lines[len(lines)-1])
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

type execRunner struct{}

func (execRunner) Run(ctx context.Context, name string, args ...string) ([]byte, []byte, error) {
	return output(ctx, nil, name, args...)
}

// ParsePipFreeze reads pip freeze output (also uv pip freeze) into
// packages, in file order:
//
//	name==version                       Name, Version
//	name @ file:///wheels/x.whl         Name, Source
//	-e git+https://host/r.git@c#egg=n   Name from egg=, Source, Editable
//	# Editable install with no version control (name==1.0)
//	-e /src/name                        Name and Version from the comment
//
// Other comments and option lines (-i, --index-url, -f) are skipped, as is
// an editable line pip could not name.
func ParsePipFreeze(b []byte) []Package {
	var pkgs []Package
	var pending Package // name==version from pip's comment before an editable line
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "#"):
			pending = Package{}
			if m := reEditableComment.FindStringSubmatch(line); m != nil {
				pending = Package{Name: m[1], Version: m[2]}
			}
			continue
		case strings.HasPrefix(line, "-e ") || strings.HasPrefix(line, "--editable"):
			src := strings.TrimSpace(strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(line, "-e "), "--editable"), "= "))
			p := Package{Name: eggName(src), Source: string(redactURLCredentials([]byte(src))), Editable: true}
			if pending.Name != "" && (p.Name == "" || normPackageName(p.Name) == normPackageName(pending.Name)) {
				p.Name, p.Version = pending.Name, pending.Version
			}
			if p.Name != "" {
				pkgs = append(pkgs, p)
			}
		case strings.HasPrefix(line, "-"):
			// an option line
		default:
			if name, src, ok := strings.Cut(line, " @ "); ok {
				pkgs = append(pkgs, Package{Name: strings.TrimSpace(name), Source: string(redactURLCredentials([]byte(strings.TrimSpace(src))))})
			} else if name, ver, ok := strings.Cut(line, "=="); ok {
				pkgs = append(pkgs, Package{Name: strings.TrimSpace(name), Version: strings.TrimSpace(strings.TrimPrefix(ver, "="))})
			}
		}
		pending = Package{}
	}
	return pkgs
}

// reEditableComment matches the comments pip writes before an editable
// install it cannot describe by URL ("# Editable install with no version
// control (lm_eval==0.4.9)", "# Editable Git install with no remote (...)").
var reEditableComment = regexp.MustCompile(`^#\s*Editable\b.*\(([A-Za-z0-9._-]+)==([^)\s]+)\)\s*$`)

// eggName returns the project name in a "#egg=name[&subdirectory=...]"
// fragment, or "".
func eggName(src string) string {
	_, frag, ok := strings.Cut(src, "#")
	if !ok {
		return ""
	}
	for _, kv := range strings.Split(frag, "&") {
		if v, ok := strings.CutPrefix(kv, "egg="); ok {
			return v
		}
	}
	return ""
}

// normPackageName is the PEP 503 normal form, so "lm-eval" and "lm_eval"
// compare equal.
func normPackageName(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(s))
}

// reURLUserinfo matches the userinfo of a URL: scheme://user[:password]@.
var reURLUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)([^/@\s:]*)(:[^/@\s]*)?@`)

// redactURLCredentials masks passwords and tokens in URLs the way pip does
// in its own logs: "user:****@" for a password, "****@" for a user name
// alone, which is where tokens go (https://<token>@github.com). The "git"
// user of ssh URLs is kept; it is not a secret.
func redactURLCredentials(b []byte) []byte {
	return reURLUserinfo.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := reURLUserinfo.FindSubmatch(m)
		scheme, user, pass := sub[1], sub[2], sub[3]
		switch {
		case len(pass) > 0:
			return []byte(string(scheme) + string(user) + ":****@")
		case string(user) == "git" || len(user) == 0:
			return m
		default:
			return []byte(string(scheme) + "****@")
		}
	})
}
