package harness

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOutput(t *testing.T) {
	ctx := context.Background()
	stdout, stderr, err := output(ctx, []string{"X=1"}, "sh", "-c", `echo "out $X"; echo err >&2; exit 3`)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || string(stdout) != "out 1\n" || string(stderr) != "err\n" {
		t.Fatalf("got %q %q %v", stdout, stderr, err)
	}
	if _, _, err := output(ctx, nil, "no-such-command-here"); !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("missing command: %v", err)
	}
	_, err = runnerCommand(ctx, nil, " (hint)", "no-such-command-here", "a")
	if !errors.Is(err, ErrRunner) || !strings.HasSuffix(err.Error(), "no-such-command-here not found (hint)") {
		t.Fatalf("missing runner command: %v", err)
	}
	_, err = runnerCommand(ctx, nil, "", "sh", "-c", "echo why >&2; exit 1")
	if !errors.Is(err, ErrRunner) || !strings.HasSuffix(err.Error(), "sh -c echo why >&2; exit 1: exit status 1: why") {
		t.Fatalf("failing runner command: %v", err)
	}
	// ctx ends the command, and a grandchild holding the pipes does not
	// keep it waiting.
	ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, _, err := output(ctx, nil, "sh", "-c", "sleep 5 & sleep 5"); err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("timed-out command: %v after %v", err, time.Since(start))
	}
}

func TestGroupEnds(t *testing.T) {
	cmd := exec.Command("sh", "-c", "echo one >&2; echo two >&2")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	g, err := startGroup(cmd, func() { io.Copy(&got, pipe) })
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := g.wait(context.Background(), syscall.SIGTERM, time.Second)
	if stopped || err != nil || got.String() != "one\ntwo\n" {
		t.Fatalf("stopped %v, err %v, read %q", stopped, err, got.String())
	}
	if _, err := startGroup(exec.Command("no-such-command-here"), nil); !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("missing command: %v", err)
	}
}

// The signal reaches the whole group; a command that ends on it is not
// killed.
func TestGroupSignal(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap 'exit 7' INT; sh -c 'trap "echo child >&2; exit 0" INT; while :; do sleep 0.05; done'`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	g, err := startGroup(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	stopped, err := g.wait(ctx, syscall.SIGINT, 20*time.Second)
	var ee *exec.ExitError
	if !stopped || !errors.As(err, &ee) || ee.ExitCode() != 7 || time.Since(start) > 10*time.Second {
		t.Fatalf("stopped %v, err %v after %v", stopped, err, time.Since(start))
	}
	if !strings.Contains(stderr.String(), "child") {
		t.Errorf("the signal did not reach the group: stderr %q", stderr.String())
	}
}

// A group that ignores the signal is killed after the grace period, all of
// it.
func TestGroupKill(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap '' TERM; sleep 30 & echo $!; wait`)
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	pids := make(chan string, 1)
	g, err := startGroup(cmd, func() {
		b, _ := io.ReadAll(pipe)
		pids <- strings.TrimSpace(string(b))
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	stopped, err := g.wait(ctx, syscall.SIGTERM, 300*time.Millisecond)
	var ee *exec.ExitError
	if !stopped || !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("stopped %v, err %v", stopped, err)
	}
	pid, err := strconv.Atoi(<-pids)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			break // gone, or a zombie its new parent has yet to reap
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group's sleep %d outlived the kill", pid)
		}
	}
}
