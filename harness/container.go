package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ContainerRunner runs each run in a container from a pinned image. The
// image's entrypoint is capsule (images/ builds such an image around a
// pinned lm-eval), so that the provenance is captured inside the container,
// on the machine that runs it; the run directory is mounted at
// /evalcapsule/run.
type ContainerRunner struct {
	// Engine is "podman", "docker" or "apptainer".
	Engine string
	// Image is the image reference, name@sha256:... : the image of every
	// run whose record names none of its own (a study's step or variant
	// may pin another lm-eval, in its own image), and of every run when
	// Fixed.
	Image string
	// Fixed runs every run in Image, whatever image its record names.
	Fixed bool
	// AllowTag accepts an image given by tag (its digest is still recorded).
	AllowTag bool
	// GPUs passes the host's GPUs: podman --device nvidia.com/gpu=all (CDI),
	// docker --gpus all, apptainer --nv.
	GPUs bool
	// Cache is a host directory mounted as the Hugging Face cache.
	Cache string
	// PassEnv names environment variables (e.g. HF_TOKEN) passed from this
	// environment by name: their values are never written anywhere.
	PassEnv []string
	// Extra are engine arguments (podman's --runtime, --ulimit, ...).
	Extra []string
	// Env is the engine's environment (CONTAINERS_CONF, ...); nil means
	// this process's.
	Env []string
	// StopTimeout is how long the job gets after SIGTERM (default 30 s).
	StopTimeout time.Duration
}

// ContainerRunDir is where the run directory is mounted in the container.
const ContainerRunDir = "/evalcapsule/run"

// Check verifies, before any run starts, that the engine is known and
// installed and the image pinned.
func (c ContainerRunner) Check() error {
	switch c.Engine {
	case "podman", "docker", "apptainer":
	default:
		return fmt.Errorf("%w: unknown container engine %q (podman, docker or apptainer)", ErrInvalidRunner, c.Engine)
	}
	if err := c.CheckImage(); err != nil {
		return err
	}
	if _, err := exec.LookPath(c.Engine); err != nil {
		return fmt.Errorf("%w: %s not found on PATH", ErrRunner, c.Engine)
	}
	return nil
}

// CheckImage refuses an image given by tag unless AllowTag.
func (c ContainerRunner) CheckImage() error {
	if c.Image == "" {
		return fmt.Errorf("%w: no image given", ErrImageTag)
	}
	if !strings.Contains(c.Image, "@sha256:") && !c.AllowTag {
		return fmt.Errorf("%w: %q: give it as name@sha256:<digest> (or allow tags explicitly)", ErrImageTag, c.Image)
	}
	return nil
}

func (c ContainerRunner) engine(ctx context.Context, args ...string) ([]byte, error) {
	return runnerCommand(ctx, c.Env, "", c.Engine, args...)
}

// Args returns the engine command line that runs the job of dir.
func (c ContainerRunner) Args(dir, name string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	switch c.Engine {
	case "podman", "docker":
		args := []string{"run", "--rm", "--name", name, "-v", abs + ":" + ContainerRunDir}
		if c.Cache != "" {
			args = append(args, "-v", c.Cache+":/root/.cache/huggingface")
		}
		for _, e := range c.PassEnv {
			args = append(args, "-e", e) // by name: the engine takes the value from its environment
		}
		if c.GPUs {
			if c.Engine == "podman" {
				args = append(args, "--device", "nvidia.com/gpu=all")
			} else {
				args = append(args, "--gpus", "all")
			}
		}
		args = append(args, c.Extra...)
		return append(args, c.Image, "job", ContainerRunDir), nil
	case "apptainer":
		args := []string{"exec", "--bind", abs + ":" + ContainerRunDir}
		if c.Cache != "" {
			args = append(args, "--bind", c.Cache+":/root/.cache/huggingface")
		}
		if c.GPUs {
			args = append(args, "--nv")
		}
		args = append(args, c.Extra...)
		return append(args, "docker://"+c.Image, "capsule", "job", ContainerRunDir), nil
	}
	return nil, fmt.Errorf("%w: unknown container engine %q (podman, docker or apptainer)", ErrRunner, c.Engine)
}

// Run runs the job in a container and records the image's digests.
func (c ContainerRunner) Run(ctx context.Context, dir string, progress func(Progress)) error {
	if rec, err := ReadRecord(dir); err == nil && !c.Fixed && rec.Image != nil && rec.Image.Ref != "" {
		c.Image = rec.Image.Ref
	}
	if err := c.CheckImage(); err != nil {
		return err
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	name := "evalcapsule-" + filepath.Base(dir) + "-" + hex.EncodeToString(rnd[:])
	args, err := c.Args(dir, name)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.Engine, args...)
	if c.Env != nil {
		cmd.Env = c.Env
	}
	logf, err := os.OpenFile(filepath.Join(dir, "job.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: starting %s: %v", ErrRunner, c.Engine, err)
	}
	done := make(chan struct{})
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait(); close(done) }()
	go poll(dir, 250*time.Millisecond, progress, done)
	interrupted := false
	var waitErr error
	select {
	case waitErr = <-waited:
	case <-ctx.Done():
		interrupted = true
		timeout := c.StopTimeout
		if timeout == 0 {
			timeout = 30 * time.Second
		}
		if c.Engine != "apptainer" {
			// The engine stops the container: its stop signal (SIGTERM
			// unless the image says otherwise), SIGKILL after timeout.
			c.engine(context.Background(), "stop", "-t", fmt.Sprint(int(timeout.Seconds())), name)
		} else {
			// SIGINT, as Ctrl-C sends it (the engine is in the driver's
			// group); apptainer passes it on to capsule job, which records
			// the run interrupted. No kill follows: it would not reach
			// lm-eval, which the job runs in a group of its own.
			cmd.Process.Signal(os.Interrupt)
		}
		waitErr = <-waited
	}
	<-done
	if err := c.recordImage(dir); err != nil && !interrupted {
		return err
	}
	if interrupted {
		return settle(dir, true, "interrupted by the driver")
	}
	if waitErr != nil {
		return settle(dir, false, c.Engine+" exited: "+waitErr.Error())
	}
	return settle(dir, false, "the container ended without marking the run done")
}

// recordImage writes the image's digests into run.json: the index digest
// the reference names and the platform manifest the engine ran.
func (c ContainerRunner) recordImage(dir string) error {
	rec, err := ReadRecord(dir)
	if err != nil {
		return err
	}
	info := &ImageInfo{Ref: c.Image, Engine: c.Engine}
	if _, d, ok := strings.Cut(c.Image, "@"); ok {
		info.IndexDigest = d
	}
	if c.Engine != "apptainer" {
		// podman's .Digest is the platform manifest it ran; docker has
		// none, and its RepoDigests name the manifest it pulled.
		format := "{{.Os}}/{{.Architecture}}|{{json .RepoDigests}}"
		if c.Engine == "podman" {
			format += "|{{.Digest}}"
		}
		if out, err := c.engine(context.Background(), "image", "inspect", "--format", format, c.Image); err == nil {
			parts := strings.Split(strings.TrimSpace(string(out)), "|")
			info.Platform = parts[0]
			if len(parts) == 3 {
				info.PlatformDigest = parts[2]
			} else if len(parts) == 2 {
				var repo []string
				if json.Unmarshal([]byte(parts[1]), &repo) == nil && len(repo) > 0 {
					if _, d, ok := strings.Cut(repo[0], "@"); ok {
						info.PlatformDigest = d
					}
				}
			}
		}
	}
	rec.Image = info
	if rec.Harness.Source == "" {
		rec.Harness.Source = "image"
	}
	return WriteRecord(dir, rec)
}
