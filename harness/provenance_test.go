package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// reply is a fake command's result. hang makes it block until its
// deadline, as a wedged nvidia-smi does.
type reply struct {
	stdout, stderr string
	err            error
	hang           bool
}

// fakeRunner answers commands from canned replies, keyed by the start of
// the command line; a command with no reply is not installed.
type fakeRunner struct {
	replies map[string]reply
	mu      sync.Mutex
	calls   []string
}

func (f *fakeRunner) Run(ctx context.Context, name string, args ...string) ([]byte, []byte, error) {
	line := strings.Join(append([]string{name}, args...), " ")
	f.mu.Lock()
	f.calls = append(f.calls, line)
	f.mu.Unlock()
	var keys []string
	for k := range f.replies {
		if strings.HasPrefix(line, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, nil, &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
	slices.Sort(keys) // the longest matching prefix wins
	r := f.replies[keys[len(keys)-1]]
	if r.hang {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	}
	return []byte(r.stdout), []byte(r.stderr), r.err
}

const (
	smiXML     = "nvidia-smi -q -x"
	smiCSV     = "nvidia-smi --query-gpu=" + harness.GPUQueryFields + " --format=csv,noheader,nounits"
	smiVersion = "nvidia-smi --version"
	pyVersion  = "python3 --version"
	pipFreeze  = "python3 -m pip freeze"
	lmEval     = "python3 -c"
)

const t4CSV = "0, Tesla T4, GPU-d37e67a5-91dd-3774-a5cb-99096249601a, 515.105.01, 15360, 00000000:00:1E.0, 90.04.84.00.06, 0000000000000, 7.5\n"

const freeze = `accelerate==1.10.1
datasets==4.0.0
lm_eval==0.4.9.1
torch==2.8.0
private-tools @ git+https://alice:s3cr3t-pass@git.example.com/tools.git@0123abc
vllm==0.10.1.1
`

// allGood answers like a T4 machine with lm-eval installed.
func allGood(t *testing.T) map[string]reply {
	return map[string]reply{
		smiXML:     {stdout: string(smiFixture(t, "telegraf-tesla-t4.xml"))},
		smiCSV:     {stdout: t4CSV},
		smiVersion: {stdout: "NVIDIA-SMI version  : 515.105.01\nNVML version        : 515.105\nDRIVER version      : 515.105.01\nCUDA Version        : 11.7\n"},
		pyVersion:  {stdout: "Python 3.10.12\n"},
		pipFreeze:  {stdout: freeze},
		lmEval:     {stdout: "0.4.9.1\n"},
	}
}

// secretEnv is a job environment with credentials in it, none of which
// may reach the record.
var secretEnv = []string{
	"HF_TOKEN=hf_SECRETxxxxxxxxxxxxxxxx",
	"AWS_SECRET_ACCESS_KEY=SECRETaws",
	"CUDA_VISIBLE_DEVICES=GPU-d37e67a5-91dd-3774-a5cb-99096249601a",
	"CUDA_DEVICE_ORDER=PCI_BUS_ID",
	"SLURM_JOB_ID=4242",
	"SLURM_JOB_GPUS=0",
	"REGISTRY_PASSWORD=SECRETreg",
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

func TestCaptureEnvironmentFake(t *testing.T) {
	dir := t.TempDir()
	replies := allGood(t)
	env, err := harness.CaptureEnvironment(context.Background(), dir, harness.CaptureOptions{
		Env: secretEnv, Commands: &fakeRunner{replies: replies},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Errors) != 0 {
		t.Errorf("Errors = %q, want none", env.Errors)
	}
	host, _ := os.Hostname()
	if env.Host != host {
		t.Errorf("Host = %q, want %q", env.Host, host)
	}
	if env.CUDAVisibleDevices != "GPU-d37e67a5-91dd-3774-a5cb-99096249601a" || !env.CUDAVisibleDevicesSet ||
		env.CUDADeviceOrder != "PCI_BUS_ID" || env.SlurmJobID != "4242" || env.SlurmJobGPUs != "0" {
		t.Errorf("variables: %+v", env)
	}
	if env.DriverVersion != "515.105.01" || env.CUDAVersion != "11.7" {
		t.Errorf("versions: driver %q CUDA %q", env.DriverVersion, env.CUDAVersion)
	}
	wantGPU := harness.GPU{Index: 0, Name: "Tesla T4", UUID: "GPU-d37e67a5-91dd-3774-a5cb-99096249601a",
		Serial: "0000000000000", PCIBusID: "00000000:00:1E.0", VBIOS: "90.04.84.00.06", DriverVersion: "515.105.01",
		CUDAVersion: "11.7", MemoryTotalMiB: 15360, ComputeCap: "7.5", Architecture: "Turing"}
	if !reflect.DeepEqual(env.GPUs, []harness.GPU{wantGPU}) {
		t.Errorf("GPUs = %+v\nwant [%+v]", env.GPUs, wantGPU)
	}
	if env.NvidiaSmi == nil || env.NvidiaSmi.AttachedGPUs != 1 {
		t.Errorf("NvidiaSmi = %+v", env.NvidiaSmi)
	}
	if env.Python != "python3" || env.PythonVersion != "3.10.12" || env.LMEvalVersion != "0.4.9.1" {
		t.Errorf("python: %q %q lm_eval %q", env.Python, env.PythonVersion, env.LMEvalVersion)
	}
	if len(env.Packages) != 6 || env.Packages[2] != (harness.Package{Name: "lm_eval", Version: "0.4.9.1"}) {
		t.Errorf("Packages = %+v", env.Packages)
	}

	files := readDir(t, dir)
	wantFiles := []string{"nvidia-smi.csv", "nvidia-smi.xml", "pip-freeze.txt"}
	if got := slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	}); !slices.Equal(got, wantFiles) {
		t.Errorf("dir holds %q, want %q (no temporary files left)", got, wantFiles)
	}
	if !slices.Equal(slices.Sorted(slices.Values(env.Files)), wantFiles) {
		t.Errorf("Files = %q", env.Files)
	}
	if files["nvidia-smi.xml"] != replies[smiXML].stdout || files["nvidia-smi.csv"] != t4CSV {
		t.Errorf("nvidia-smi outputs not saved byte for byte")
	}
	if want := strings.Replace(freeze, "alice:s3cr3t-pass@", "alice:****@", 1); files["pip-freeze.txt"] != want {
		t.Errorf("pip-freeze.txt = %q, want %q", files["pip-freeze.txt"], want)
	}
	if st, err := os.Stat(filepath.Join(dir, "pip-freeze.txt")); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("pip-freeze.txt: %v, mode %v; want 0644 like any other file", err, st.Mode())
	}

	// No secret reaches the record or the files.
	record, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"record": string(record), "pip-freeze.txt": files["pip-freeze.txt"]} {
		for _, secret := range []string{"SECRET", "s3cr3t", "HF_TOKEN", "AWS_", "REGISTRY_"} {
			if strings.Contains(content, secret) {
				t.Errorf("%s contains %q", name, secret)
			}
		}
	}
}

func TestCaptureEnvironmentFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		change    map[string]*reply // nil deletes the reply: the command is not installed
		python    string
		wantErrs  []string
		wantFiles []string
		check     func(t *testing.T, env *harness.Environment)
	}{
		{
			name:      "no nvidia-smi",
			change:    map[string]*reply{smiXML: nil, smiCSV: nil, smiVersion: nil},
			wantErrs:  []string{"nvidia-smi: not found"}, // once, not once per command
			wantFiles: []string{"pip-freeze.txt"},
			check: func(t *testing.T, env *harness.Environment) {
				if env.GPUs != nil || env.NvidiaSmi != nil || env.DriverVersion != "" {
					t.Errorf("GPU fields set without nvidia-smi: %+v", env)
				}
				if env.PythonVersion != "3.10.12" {
					t.Errorf("Python not captured")
				}
			},
		},
		{
			name: "driver not loaded",
			change: map[string]*reply{
				smiXML:     {stdout: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n", err: errors.New("exit status 9")},
				smiCSV:     {stdout: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n", err: errors.New("exit status 9")},
				smiVersion: {stdout: "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", err: errors.New("exit status 2")},
			},
			wantErrs: []string{
				"nvidia-smi -q -x: exit status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
				"nvidia-smi --query-gpu: exit status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
				"nvidia-smi --version: exit status 2: Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.",
			},
			wantFiles: []string{"pip-freeze.txt"},
		},
		{
			name:     "nvidia-smi hangs",
			change:   map[string]*reply{smiXML: {hang: true}},
			wantErrs: []string{"nvidia-smi -q -x: timed out after 50ms"},
			// The CSV and --version still give the GPU; the CUDA version
			// comes from --version.
			wantFiles: []string{"nvidia-smi.csv", "pip-freeze.txt"},
			check: func(t *testing.T, env *harness.Environment) {
				if len(env.GPUs) != 1 || env.GPUs[0].CUDAVersion != "11.7" || env.GPUs[0].ComputeCap != "7.5" {
					t.Errorf("GPUs = %+v", env.GPUs)
				}
			},
		},
		{
			name: "old driver without --version, garbage CSV",
			change: map[string]*reply{
				smiCSV:     {stdout: t4CSV + "1, Tesla T4\n"},
				smiVersion: {stderr: "nvidia-smi: unrecognized option '--version'\n", err: errors.New("exit status 2")},
			},
			wantErrs: []string{
				"nvidia-smi --query-gpu:2: unrecognised nvidia-smi output: 2 fields, want 9 (" + harness.GPUQueryFields + ")",
				"nvidia-smi --version: exit status 2: nvidia-smi: unrecognized option '--version'",
			},
			wantFiles: []string{"nvidia-smi.csv", "nvidia-smi.xml", "pip-freeze.txt"},
			check: func(t *testing.T, env *harness.Environment) {
				// The XML alone still gives the GPU, driver and CUDA.
				if env.DriverVersion != "515.105.01" || env.CUDAVersion != "11.7" || len(env.GPUs) != 1 || env.GPUs[0].UUID == "" {
					t.Errorf("env = %+v", env)
				}
			},
		},
		{
			name:      "no python",
			python:    "/opt/venv/bin/python",
			wantErrs:  []string{"/opt/venv/bin/python: not found"},
			wantFiles: []string{"nvidia-smi.csv", "nvidia-smi.xml"},
			check: func(t *testing.T, env *harness.Environment) {
				if env.Python != "/opt/venv/bin/python" || env.PythonVersion != "" || env.Packages != nil {
					t.Errorf("env = %+v", env)
				}
			},
		},
		{
			name: "venv without pip, lm_eval missing",
			change: map[string]*reply{
				pipFreeze: {stderr: "/work/.venv/bin/python3: No module named pip\n", err: errors.New("exit status 1")},
				lmEval:    {stderr: "lm_eval is not installed\n", err: errors.New("exit status 1")},
			},
			wantErrs: []string{
				"python3 -m pip freeze: exit status 1: /work/.venv/bin/python3: No module named pip",
				"lm_eval version: exit status 1: lm_eval is not installed",
			},
			wantFiles: []string{"nvidia-smi.csv", "nvidia-smi.xml"},
		},
		{
			name:      "pip freeze hangs",
			change:    map[string]*reply{pipFreeze: {hang: true}},
			wantErrs:  []string{"python3 -m pip freeze: timed out after 50ms"},
			wantFiles: []string{"nvidia-smi.csv", "nvidia-smi.xml"},
			check: func(t *testing.T, env *harness.Environment) {
				if env.LMEvalVersion != "0.4.9.1" {
					t.Errorf("a hung pip stopped the capture: %+v", env)
				}
			},
		},
		{
			name: "unparsable XML",
			change: map[string]*reply{
				smiXML: {stdout: "<nvidia_smi_log>\n<gpu id=\"00000000:00:1E.0\">\n"},
			},
			wantErrs:  []string{"nvidia-smi -q -x:3: unrecognised nvidia-smi output: unexpected EOF"},
			wantFiles: []string{"nvidia-smi.csv", "nvidia-smi.xml", "pip-freeze.txt"}, // raw output kept for a person to read
			check: func(t *testing.T, env *harness.Environment) {
				if env.NvidiaSmi != nil || len(env.GPUs) != 1 || env.GPUs[0].ComputeCap != "7.5" {
					t.Errorf("env = %+v", env)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replies := allGood(t)
			for k, r := range tc.change {
				if r == nil {
					delete(replies, k)
				} else {
					replies[k] = *r
				}
			}
			dir := t.TempDir()
			env, err := harness.CaptureEnvironment(context.Background(), dir, harness.CaptureOptions{
				Python: tc.python, Timeout: 50 * time.Millisecond, Env: []string{}, Commands: &fakeRunner{replies: replies},
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(env.Errors, tc.wantErrs) {
				t.Errorf("Errors:\n got  %q\n want %q", env.Errors, tc.wantErrs)
			}
			var got []string
			for name := range readDir(t, dir) {
				got = append(got, name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.wantFiles) || !slices.Equal(slices.Sorted(slices.Values(env.Files)), tc.wantFiles) {
				t.Errorf("files %q, Files %q; want %q", got, env.Files, tc.wantFiles)
			}
			if env.CUDAVisibleDevicesSet || env.SlurmJobID != "" {
				t.Errorf("an empty Env must read as no variables set: %+v", env)
			}
			if tc.check != nil {
				tc.check(t, env)
			}
		})
	}
}

// An empty CUDA_VISIBLE_DEVICES hides every GPU from CUDA; unset shows
// them all. The record keeps the difference.
func TestCaptureEnvironmentVisibleDevicesEmpty(t *testing.T) {
	env, err := harness.CaptureEnvironment(context.Background(), t.TempDir(), harness.CaptureOptions{
		Env: []string{"CUDA_VISIBLE_DEVICES=0,1", "CUDA_VISIBLE_DEVICES="}, Commands: &fakeRunner{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if env.CUDAVisibleDevices != "" || !env.CUDAVisibleDevicesSet {
		t.Errorf("got %q set=%v, want \"\" set (the last entry wins)", env.CUDAVisibleDevices, env.CUDAVisibleDevicesSet)
	}
}

func TestCaptureEnvironmentCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := harness.CaptureEnvironment(ctx, t.TempDir(), harness.CaptureOptions{Commands: &fakeRunner{replies: allGood(t)}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestCaptureEnvironmentBadDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-run")
	_, err := harness.CaptureEnvironment(context.Background(), missing, harness.CaptureOptions{Commands: &fakeRunner{}})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the capture created %s", missing)
	}
	file := filepath.Join(t.TempDir(), "run.json")
	os.WriteFile(file, []byte("{}"), 0o644)
	if _, err := harness.CaptureEnvironment(context.Background(), file, harness.CaptureOptions{Commands: &fakeRunner{}}); err == nil {
		t.Errorf("a file was accepted as the directory")
	}
}

// TestCaptureEnvironmentWritesOnlyInsideDir watches the run directory's
// parent, a sibling and TMPDIR: only the three files may appear, all in
// the run directory, and files already there are left alone.
func TestCaptureEnvironmentWritesOnlyInsideDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "runs", "r1")
	tmp := filepath.Join(root, "tmp")
	for _, d := range []string{dir, tmp, filepath.Join(root, "runs", "r2")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"status":"running"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	if _, err := harness.CaptureEnvironment(context.Background(), dir, harness.CaptureOptions{
		Env: secretEnv, Commands: &fakeRunner{replies: allGood(t)},
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"runs/r1/nvidia-smi.csv", "runs/r1/nvidia-smi.xml", "runs/r1/pip-freeze.txt", "runs/r1/run.json"}
	if !slices.Equal(got, want) {
		t.Errorf("files under the root: %q, want %q", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "run.json")); string(b) != `{"status":"running"}` {
		t.Errorf("run.json was changed: %s", b)
	}
}

// TestCaptureEnvironmentReal runs the real commands on this machine. Where
// nvidia-smi is absent (CI, the build machine) the record must say so; on a
// GPU machine it must list the GPUs and save the raw outputs.
func TestCaptureEnvironmentReal(t *testing.T) {
	testenv.Python(t) // CaptureEnvironment runs the python3 on PATH: Debian's, where it is installed
	dir := t.TempDir()
	env, err := harness.CaptureEnvironment(context.Background(), dir, harness.CaptureOptions{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("errors: %q", env.Errors)
	files := readDir(t, dir)
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		if !slices.Contains(env.Errors, "nvidia-smi: not found") {
			t.Errorf("Errors = %q, want it to say nvidia-smi was not found", env.Errors)
		}
		if env.GPUs != nil || env.NvidiaSmi != nil || files["nvidia-smi.xml"] != "" {
			t.Errorf("GPU data without nvidia-smi: %+v", env)
		}
	} else {
		if len(env.GPUs) == 0 || env.DriverVersion == "" || env.CUDAVersion == "" || env.NvidiaSmi == nil {
			t.Errorf("nvidia-smi is installed but the record has no GPUs: %+v", env)
		}
		for _, g := range env.GPUs {
			if g.UUID == "" || g.Name == "" || g.MemoryTotalMiB == 0 || g.ComputeCap == "" || g.CUDAVersion == "" {
				t.Errorf("incomplete GPU %+v", g)
			}
		}
		if !strings.Contains(files["nvidia-smi.xml"], "<nvidia_smi_log>") || files["nvidia-smi.csv"] == "" {
			t.Errorf("raw nvidia-smi outputs not saved: %q", env.Files)
		}
		b, _ := json.MarshalIndent(env.GPUs, "", "  ")
		t.Logf("GPUs: %s", b)
	}
	if !regexp.MustCompile(`^3\.\d+\.\d+`).MatchString(env.PythonVersion) {
		t.Errorf("PythonVersion = %q", env.PythonVersion)
	}
	// pip may be missing from a minimal Python; then the record says so.
	if len(env.Packages) == 0 && !slices.ContainsFunc(env.Errors, func(e string) bool { return strings.Contains(e, "pip") }) {
		t.Errorf("no packages and no pip error: %q", env.Errors)
	}
	if len(env.Packages) > 0 && files["pip-freeze.txt"] == "" {
		t.Errorf("packages parsed but pip-freeze.txt not saved")
	}
	if env.LMEvalVersion == "" && !slices.Contains(env.Errors, "lm_eval version: exit status 1: lm_eval is not installed") {
		t.Errorf("no lm_eval version and no reason: %q", env.Errors)
	}
}

func TestParsePipFreeze(t *testing.T) {
	in := `# comment at the top
accelerate==1.10.1
Jinja2==3.1.6
-e git+https://github.com/EleutherAI/lm-evaluation-harness.git@a1b2c3d4e5f60718293a4b5c6d7e8f9012345678#egg=lm_eval
mypkg @ file:///home/u/wheels/mypkg-0.1-py3-none-any.whl
torch @ https://download.pytorch.org/whl/cu128/torch-2.8.0%2Bcu128-cp311-cp311-linux_x86_64.whl
legacy===1.0-custom
# Editable install with no version control (evalkit==0.2.0)
-e /home/u/src/evalkit
## The following requirements were added by pip freeze:
-i https://__token__:pypi-SECRET@pypi.example.com/simple
# Editable Git install with no remote (notes==0.0.1)
-e /home/u/src/notes
-e git+ssh://git@github.com/org/private.git@deadbeef#egg=private_pkg&subdirectory=python
--editable=git+https://ghp_SECRETtoken@github.com/org/other.git@cafe#egg=other
-e /home/u/src/anonymous
numpy==2.2.6    
`
	got := harness.ParsePipFreeze([]byte(strings.ReplaceAll(in, "\n", "\r\n")))
	want := []harness.Package{
		{Name: "accelerate", Version: "1.10.1"},
		{Name: "Jinja2", Version: "3.1.6"},
		{Name: "lm_eval", Source: "git+https://github.com/EleutherAI/lm-evaluation-harness.git@a1b2c3d4e5f60718293a4b5c6d7e8f9012345678#egg=lm_eval", Editable: true},
		{Name: "mypkg", Source: "file:///home/u/wheels/mypkg-0.1-py3-none-any.whl"},
		{Name: "torch", Source: "https://download.pytorch.org/whl/cu128/torch-2.8.0%2Bcu128-cp311-cp311-linux_x86_64.whl"},
		{Name: "legacy", Version: "1.0-custom"},
		{Name: "evalkit", Version: "0.2.0", Source: "/home/u/src/evalkit", Editable: true},
		{Name: "notes", Version: "0.0.1", Source: "/home/u/src/notes", Editable: true},
		{Name: "private_pkg", Source: "git+ssh://git@github.com/org/private.git@deadbeef#egg=private_pkg&subdirectory=python", Editable: true},
		{Name: "other", Source: "git+https://****@github.com/org/other.git@cafe#egg=other", Editable: true},
		{Name: "numpy", Version: "2.2.6"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got:")
		for _, p := range got {
			t.Errorf("  %+v", p)
		}
	}
	if harness.ParsePipFreeze(nil) != nil {
		t.Errorf("empty input gave packages")
	}
}

// ParsePipFreeze reads what pip freeze prints, including direct references
// and editable installs, which have a source instead of a version.
func ExampleParsePipFreeze() {
	out := []byte(`lm_eval==0.4.9.1
torch==2.8.0
-e git+https://github.com/huggingface/transformers.git@0a1b2c3#egg=transformers
`)
	for _, p := range harness.ParsePipFreeze(out) {
		fmt.Printf("%s %q %s editable=%v\n", p.Name, p.Version, p.Source, p.Editable)
	}
	// Output:
	// lm_eval "0.4.9.1"  editable=false
	// torch "2.8.0"  editable=false
	// transformers "" git+https://github.com/huggingface/transformers.git@0a1b2c3#egg=transformers editable=true
}
