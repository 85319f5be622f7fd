// Package sandbox runs one untrusted Python program at a time under
// Debian's bubblewrap: no network, no host files but a read-only /usr, a
// private size-limited tmpfs as the only writable place, a new session, a
// pid namespace that dies with the runner, no new privileges and no
// capabilities, and rlimits on CPU time, address space, processes and file
// size. The wall-clock timeout kills the whole sandbox.
package sandbox

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

//go:embed driver.py
var driver string

// ErrNoSandbox means bubblewrap is not installed or cannot start a
// sandbox here; nothing is ever run without one.
var ErrNoSandbox = errors.New("no sandbox")

// Install is how to get the sandbox on Debian.
const Install = "apt-get install bubblewrap"

// Options configures New. The zero value works.
type Options struct {
	// Bwrap is the bubblewrap program; "" means /usr/bin/bwrap, else bwrap
	// on PATH.
	Bwrap string
	// Python is the interpreter, which must lie under /usr; "" means
	// /usr/bin/python3.
	Python string
	// Timeout is the per-program timeout of the task; 0 means 3 s, the
	// default of HF evaluate's code_eval. The sandbox is killed one second
	// after it, as code_eval kills its worker.
	Timeout time.Duration
	// Memory is the address-space limit in bytes; 0 means 2 GiB.
	Memory int64
	// Procs is RLIMIT_NPROC; 0 means 64.
	Procs int
	// FileSize is the largest file the program may write, in bytes; 0
	// means 16 MiB. The tmpfs holds at most four times that.
	FileSize int64
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return 3 * time.Second
}

func orInt(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

// Sandbox runs programs. It is safe for concurrent use.
type Sandbox struct {
	bwrap, python string
	opts          Options
	cred          *syscall.Credential
	// PythonVersion is what the interpreter said inside the sandbox, e.g.
	// "Python 3.11.7".
	PythonVersion string
}

// Outcome is what became of one program.
type Outcome string

const (
	Passed   Outcome = "passed"
	TimedOut Outcome = "timed out"
	Failed   Outcome = "failed"
	// Killed means the sandbox ended without a verdict: a limit (CPU
	// time, a signal) or the wall clock killed it. code_eval counts this
	// as "timed out".
	Killed Outcome = "killed"
)

// Result is the verdict on one program.
type Result struct {
	Outcome Outcome
	// Type is the exception's class name when Outcome is Failed.
	Type string
	// Detail is str() of the exception, or how the sandbox ended.
	Detail string
}

// New finds bubblewrap and the interpreter and starts one sandbox to learn
// the Python version; a sandbox that cannot start is ErrNoSandbox.
func New(ctx context.Context, opts Options) (*Sandbox, error) {
	s := &Sandbox{opts: opts, bwrap: opts.Bwrap, python: opts.Python}
	if s.bwrap == "" {
		s.bwrap = "/usr/bin/bwrap"
		if _, err := os.Stat(s.bwrap); err != nil {
			p, err := exec.LookPath("bwrap")
			if err != nil {
				return nil, fmt.Errorf("%w: bubblewrap (bwrap) is not installed; install it with %q", ErrNoSandbox, Install)
			}
			s.bwrap = p
		}
	}
	if s.python == "" {
		s.python = "/usr/bin/python3"
	}
	if !strings.HasPrefix(filepath.Clean(s.python), "/usr/") {
		return nil, fmt.Errorf("%w: the interpreter %s is not under /usr, the only host folder the sandbox shows", ErrNoSandbox, s.python)
	}
	if os.Geteuid() == 0 {
		// Root is exempt from RLIMIT_NPROC: run the sandbox as nobody.
		s.cred = &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, s.bwrap, s.args(newMarker(), s.python, "-I", "-c", "import sys; print(sys.version.split()[0])")...)
	cmd.Stdout = &limited{buf: &out, max: 256}
	var stderr bytes.Buffer
	cmd.Stderr = &limited{buf: &stderr, max: 4096}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s cannot start a sandbox here (%v: %s); it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)", ErrNoSandbox, s.bwrap, err, strings.TrimSpace(stderr.String()))
	}
	s.PythonVersion = "Python " + strings.TrimSpace(out.String())
	return s, nil
}

// Python is the interpreter's path.
func (s *Sandbox) Python() string { return s.python }

// args is bwrap's command line for argv.
func (s *Sandbox) args(marker string, argv ...string) []string {
	fsize := orInt(s.opts.FileSize, 16<<20)
	a := []string{
		"--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
		"--die-with-parent", "--new-session", "--hostname", "sandbox",
		"--ro-bind", "/usr", "/usr",
	}
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if t, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", t, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(4*fsize, 10), "--tmpfs", "/tmp",
		"--chdir", "/tmp", "--clearenv",
		"--setenv", markerVar, marker,
		"--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8",
		"--")
	return append(a, argv...)
}

// Run executes one program and returns its verdict; the error is only for
// a sandbox that failed to start or a context that ended.
func (s *Sandbox) Run(ctx context.Context, program string) (Result, error) {
	timeout := s.opts.timeout()
	lim, _ := json.Marshal(map[string]any{
		"timeout":   timeout.Seconds(),
		"cpu":       int64(timeout/time.Second) + 2,
		"memory":    orInt(s.opts.Memory, 2<<30),
		"procs":     orInt(int64(s.opts.Procs), 64),
		"file_size": orInt(s.opts.FileSize, 16<<20),
	})
	marker := newMarker()
	defer reap(marker)
	cmd := exec.Command(s.bwrap, s.args(marker, s.python, "-I", "-c", driver, string(lim))...)
	cmd.Stdin = strings.NewReader(program)
	var out, stderr bytes.Buffer
	cmd.Stdout = &limited{buf: &out, max: 8192}
	cmd.Stderr = &limited{buf: &stderr, max: 4096}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrNoSandbox, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	wall := time.NewTimer(timeout + time.Second)
	defer wall.Stop()
	var err error
	killedByClock := false
	select {
	case err = <-done:
	case <-wall.C:
		killedByClock = true
		kill(cmd)
		err = <-done
	case <-ctx.Done():
		kill(cmd)
		<-done
		return Result{}, ctx.Err()
	}
	line, _, _ := bytes.Cut(out.Bytes(), []byte("\n"))
	var r struct{ Outcome, Type, Detail string }
	if json.Unmarshal(line, &r) == nil && r.Outcome != "" {
		switch Outcome(r.Outcome) {
		case Passed, TimedOut, Failed:
			return Result{Outcome: Outcome(r.Outcome), Type: r.Type, Detail: r.Detail}, nil
		}
	}
	if killedByClock {
		return Result{Outcome: Killed, Detail: fmt.Sprintf("still running %s after its %s timeout: the sandbox was killed", time.Second, timeout)}, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return Result{Outcome: Killed, Detail: "killed by signal " + ws.Signal().String()}, nil
		}
		if strings.HasPrefix(stderr.String(), "bwrap:") {
			return Result{}, fmt.Errorf("%w: %s", ErrNoSandbox, strings.TrimSpace(stderr.String()))
		}
		return Result{Outcome: Killed, Detail: fmt.Sprintf("ended with exit status %d and no verdict (a limit or the program's own exit)", ee.ExitCode())}, nil
	}
	if err != nil {
		return Result{}, err
	}
	return Result{Outcome: Killed, Detail: "ended with no verdict"}, nil
}

// kill ends the sandbox: bwrap's process group; the pid namespace dies
// with bwrap.
func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
}

// limited keeps the first max bytes written and drops the rest.
type limited struct {
	buf *bytes.Buffer
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		if len(p) > room {
			l.buf.Write(p[:room])
		} else {
			l.buf.Write(p)
		}
	}
	return len(p), nil
}

// markerVar is set in every sandbox's environment, which its processes
// inherit, so that what is left of a sandbox can be found and killed.
const markerVar = "EVALCAPSULE_SANDBOX"

var markers atomic.Int64

func newMarker() string {
	return fmt.Sprintf("%d-%d", os.Getpid(), markers.Add(1))
}

// Leftovers lists the processes still carrying a marker that starts with
// prefix ("" for any sandbox of this process).
func Leftovers(prefix string) []int {
	if prefix == "" {
		prefix = strconv.Itoa(os.Getpid()) + "-"
	}
	want := []byte(markerVar + "=" + prefix)
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.HasPrefix(kv, want) && (prefix[len(prefix)-1] == '-' || len(kv) == len(want)) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// reap waits for the processes of one sandbox to be gone: bwrap may
// return while the kernel still tears its pid namespace down. Any still
// there after a second are killed.
func reap(marker string) {
	deadline := time.Now().Add(time.Second)
	for killed := false; ; {
		pids := Leftovers(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			if killed {
				return // Leftovers shows them; the host test fails on them
			}
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			killed, deadline = true, time.Now().Add(time.Second)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
