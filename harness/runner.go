package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Runner executes planned runs somewhere: on this machine, in a container,
// on a Slurm cluster, or in the simulated backend. Run returns when the run
// has ended; run.json then says how.
type Runner interface {
	Run(ctx context.Context, dir string, progress func(Progress)) error
}

// RecordRunner is a Runner that takes the planned record in memory (an
// in-process runner), so the driver need not write it to run.json first.
type RecordRunner interface {
	RunRecord(ctx context.Context, dir string, rec *RunRecord, progress func(Progress)) error
}

// poll follows progress.json until done is closed.
func poll(dir string, every time.Duration, progress func(Progress), done <-chan struct{}) {
	var last time.Time
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			if p, ok := ReadProgress(dir); ok && p.Updated.After(last) && progress != nil {
				progress(p)
			}
			return
		case <-t.C:
			if p, ok := ReadProgress(dir); ok && p.Updated.After(last) {
				last = p.Updated
				if progress != nil {
					progress(p)
				}
			}
		}
	}
}

// settle makes sure a run that ended without saying so (killed hard, node
// lost) is not left "running": interrupted when we stopped it, failed
// otherwise.
func settle(dir string, interrupted bool, why string) error {
	rec, err := ReadRecord(dir)
	if err != nil {
		return err
	}
	if rec.Terminal() {
		return nil
	}
	now := time.Now().UTC()
	rec.End = &now
	rec.Status = StatusFailed
	if interrupted {
		rec.Status = StatusInterrupted
	}
	if rec.Error == "" {
		rec.Error = why
	}
	return WriteRecord(dir, rec)
}

// LocalRunner runs each run as a child process on this machine: the job
// command (capsule's own "job" subcommand) with the run directory.
type LocalRunner struct {
	// Job is the command that runs one run: e.g. {"/usr/local/bin/capsule", "job"}.
	Job []string
	// Grace is how long a job gets after SIGINT before it is killed
	// (default 45 s: longer than the job gives lm-eval, so that the job,
	// not this kill, stops lm-eval, which runs in a group of its own and
	// would outlive the job's).
	Grace time.Duration
}

// Run starts the job and waits for it; cancelling ctx interrupts it.
func (l LocalRunner) Run(ctx context.Context, dir string, progress func(Progress)) error {
	if len(l.Job) == 0 {
		return fmt.Errorf("%w: no job command", ErrRunner)
	}
	cmd := exec.Command(l.Job[0], append(l.Job[1:], dir)...)
	logf, err := os.OpenFile(filepath.Join(dir, "job.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	g, err := startGroup(cmd, nil)
	if err != nil {
		return fmt.Errorf("%w: starting %s: %v", ErrRunner, l.Job[0], err)
	}
	done := make(chan struct{})
	go poll(dir, 250*time.Millisecond, progress, done)
	grace := l.Grace
	if grace == 0 {
		grace = 45 * time.Second
	}
	// SIGINT passes the driver's Ctrl-C on: in a group of its own, the job
	// does not get the terminal's. capsule job takes it (as it would
	// SIGTERM) as a cancel and records the run interrupted.
	stopped, waitErr := g.wait(ctx, syscall.SIGINT, grace)
	close(done)
	if stopped {
		return settle(dir, true, "interrupted by the driver")
	}
	if waitErr != nil {
		if err := settle(dir, false, "job exited: "+waitErr.Error()); err != nil {
			return err
		}
	}
	return nil
}

// SlurmRunner submits each run as one Slurm job through sbatch and follows
// it with squeue and scontrol (explicit formats, never --json: its schema
// changes across Slurm releases and it ignores filters).
type SlurmRunner struct {
	Job       []string // the job command, as for LocalRunner
	Partition string
	GPUs      int    // --gres=gpu:N; 0 for none
	Time      string // --time
	Extra     []string
	// Poll is the squeue interval (default 1 s).
	Poll time.Duration
	// Env is the environment of the Slurm commands (SLURM_CONF, PATH); nil
	// means this process's.
	Env []string
}

func (s SlurmRunner) command(ctx context.Context, name string, args ...string) ([]byte, error) {
	return runnerCommand(ctx, s.Env, " (is Slurm's client installed?)", name, args...)
}

// Check verifies, before any run starts, that Slurm's client is installed.
func (s SlurmRunner) Check() error {
	for _, name := range []string{"sbatch", "squeue", "scontrol", "scancel"} {
		if _, err := exec.LookPath(name); err != nil {
			return fmt.Errorf("%w: %s not found on PATH (is Slurm's client installed?)", ErrRunner, name)
		}
	}
	return nil
}

// Submit queues the job and returns its id.
func (s SlurmRunner) Submit(ctx context.Context, dir string) (string, error) {
	if len(s.Job) == 0 {
		return "", fmt.Errorf("%w: no job command", ErrRunner)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	args := []string{"--parsable", "--job-name", "evalcapsule-" + filepath.Base(abs),
		"--output", filepath.Join(abs, "slurm-%j.out"), "--chdir", abs}
	if s.Partition != "" {
		args = append(args, "--partition", s.Partition)
	}
	if s.GPUs > 0 {
		args = append(args, fmt.Sprintf("--gres=gpu:%d", s.GPUs))
	}
	if s.Time != "" {
		args = append(args, "--time", s.Time)
	}
	args = append(args, s.Extra...)
	// exec replaces the batch shell, so scancel's SIGTERM reaches the job.
	args = append(args, "--wrap", "exec "+shellJoin(append(append([]string(nil), s.Job...), abs)))
	out, err := s.command(ctx, "sbatch", args...)
	if err != nil {
		return "", err
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	if id == "" {
		return "", fmt.Errorf("%w: sbatch printed no job id", ErrRunner)
	}
	return id, nil
}

// State returns a job's state from squeue (finished jobs stay listed for
// MinJobAge), falling back to scontrol.
func (s SlurmRunner) State(ctx context.Context, id string) (string, error) {
	out, err := s.command(ctx, "squeue", "-h", "-t", "all", "-j", id, "-o", "%T")
	if err == nil {
		if st := strings.TrimSpace(string(out)); st != "" {
			return strings.Fields(st)[0], nil
		}
	}
	out, err = s.command(ctx, "scontrol", "show", "job", "-o", id)
	if err != nil {
		return "", err
	}
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "JobState="); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("%w: no state for job %s", ErrRunner, id)
}

// Run submits the job, follows it to its end and cancels it (scancel) when
// ctx is cancelled.
func (s SlurmRunner) Run(ctx context.Context, dir string, progress func(Progress)) error {
	id, err := s.Submit(ctx, dir)
	if err != nil {
		return err
	}
	if rec, err := ReadRecord(dir); err == nil {
		rec.Runner.JobID = id
		WriteRecord(dir, rec)
	}
	every := s.Poll
	if every == 0 {
		every = time.Second
	}
	done := make(chan struct{})
	defer func() { <-done }()
	stop := make(chan struct{})
	go func() { poll(dir, every, progress, stop); close(done) }()
	defer close(stop)
	for {
		select {
		case <-ctx.Done():
			bg := context.Background()
			s.command(bg, "scancel", id)
			for i := 0; i < 120; i++ {
				st, err := s.State(bg, id)
				if err != nil || isFinished(st) {
					break
				}
				time.Sleep(500 * time.Millisecond)
			}
			return settle(dir, true, "cancelled (scancel "+id+")")
		case <-time.After(every):
		}
		st, err := s.State(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				continue
			}
			return err
		}
		if isFinished(st) {
			if st != "COMPLETED" {
				return settle(dir, strings.HasPrefix(st, "CANCELLED"), "Slurm job "+id+" ended "+st)
			}
			return settle(dir, false, "Slurm job "+id+" completed without marking the run done")
		}
	}
}

func isFinished(state string) bool {
	switch strings.Fields(state + " ")[0] {
	case "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT":
		return false
	}
	return true
}

// shellJoin quotes args for sh.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
