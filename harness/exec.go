package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// output runs a command to completion and returns what it wrote to standard
// output and standard error. env, when not nil, is its environment; ctx
// kills it. A command that is not installed yields an *exec.Error (matching
// exec.ErrNotFound or fs.ErrNotExist).
func output(ctx context.Context, env []string, name string, args ...string) (stdout, stderr []byte, err error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	if env != nil {
		cmd.Env = env
	}
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// A child that left a grandchild holding the pipes would otherwise keep
	// Wait blocked after ctx killed it.
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	return out.Bytes(), errOut.Bytes(), err
}

// runnerCommand runs one of a runner's client commands (sbatch, podman
// image inspect, ...) with output and returns its standard output. Its
// errors wrap ErrRunner: "<name> not found<hint>" when the command is not
// installed, otherwise the command line, how it failed and its standard
// error.
func runnerCommand(ctx context.Context, env []string, hint, name string, args ...string) ([]byte, error) {
	stdout, stderr, err := output(ctx, env, name, args...)
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%w: %s not found%s", ErrRunner, name, hint)
		}
		return nil, fmt.Errorf("%w: %s %s: %v: %s", ErrRunner, name, strings.Join(args, " "), err, strings.TrimSpace(string(stderr)))
	}
	return stdout, nil
}

// group is a command started in a process group of its own, so that
// stopping it reaches everything it started.
type group struct {
	cmd    *exec.Cmd
	waited chan error
}

// startGroup starts cmd in a process group of its own. drain, when not nil,
// runs once cmd has started and before cmd.Wait is called: it reads a pipe
// of cmd's (cmd.StderrPipe) to its end, as Wait must come after that.
func startGroup(cmd *exec.Cmd, drain func()) (*group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &group{cmd: cmd, waited: make(chan error, 1)}
	go func() {
		if drain != nil {
			drain()
		}
		g.waited <- cmd.Wait()
	}()
	return g, nil
}

// wait waits for the command to end and returns cmd.Wait's error. When ctx
// is cancelled first, it sends sig to the whole group, gives it grace to
// end, then kills the group (SIGKILL) and waits for the command; stopped
// then reports that it was stopped.
func (g *group) wait(ctx context.Context, sig syscall.Signal, grace time.Duration) (stopped bool, err error) {
	select {
	case err := <-g.waited:
		return false, err
	case <-ctx.Done():
	}
	pid := g.cmd.Process.Pid
	syscall.Kill(-pid, sig)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err = <-g.waited:
	case <-t.C:
		syscall.Kill(-pid, syscall.SIGKILL)
		err = <-g.waited
	}
	return true, err
}
