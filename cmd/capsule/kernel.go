package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/kernel"
)

type kernelOptions struct {
	json           bool
	connectionFile string
	history        string
}

func newKernelCmd(io streams) *cobra.Command {
	var opts kernelOptions
	cmd := &cobra.Command{
		Use:   "kernel --connection-file FILE",
		Short: "The Jupyter kernel for Go, with capsule's packages built in",
		Long: `Run the Jupyter kernel: Jupyter starts it with a connection file, from the
kernelspec that 'capsule kernel install' writes. Cells are Go, interpreted;
they import the project's packages (harness, analysis, capsule,
kernel/display) and gonum.org/v1/plot, which run compiled.

A cell's last line is shown when it is an expression with one value; calls
with no value or several (fmt.Println) show nothing, and a non-nil error
they return fails the cell. Values with HTML, Markdown, PNG or SVG methods
show richly. See 'go doc github.com/evalcapsule/evalcapsule/kernel/display'.

SIGINT interrupts the running cell (interrupt_mode "signal"); SIGTERM
stops the kernel. A cell that fails does not end the kernel: the exit
code says only how the kernel itself ended (0: a shutdown request or
SIGTERM).

` + exitCodes(code{exitUsage, "usage error, or a connection file the kernel cannot use (unreadable, or its ports taken)"}),
		Example: `  capsule kernel install --user
  jupyter notebook        # then New → Go (evalcapsule)
  capsule kernel --connection-file /run/user/1000/jupyter/kernel-1.json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.connectionFile == "" {
				return &usageError{errors.New("--connection-file is required (Jupyter passes it; to install the kernel, run 'capsule kernel install')")}
			}
			if !cmd.Flags().Changed("history") {
				opts.history = defaultHistoryFile()
			}
			// The kernel outlives SIGINT, which interrupts a cell: only
			// SIGTERM (or a shutdown request) ends it.
			ctx, stop := signal.NotifyContext(context.WithoutCancel(cmd.Context()), syscall.SIGTERM)
			defer stop()
			return runKernel(ctx, opts, io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print errors as JSON")
	f.StringVar(&opts.connectionFile, "connection-file", "", "the connection file Jupyter wrote")
	f.StringVar(&opts.history, "history", "", "file keeping the cells of every session (default $XDG_DATA_HOME/evalcapsule/kernel-history.jsonl; empty: this session only)")
	cmd.AddCommand(newKernelInstallCmd(io))
	cmd.AddCommand(newKernelExecuteCmd(io))
	return cmd
}

// runKernel serves one notebook until it shuts the kernel down.
func runKernel(ctx context.Context, opts kernelOptions, io streams) error {
	conn, err := kernel.ReadConnection(opts.connectionFile)
	if err != nil {
		return err
	}
	k, err := kernel.New(ctx, kernel.Options{Connection: conn, Log: io.err, HistoryFile: opts.history})
	var oe *net.OpError
	if errors.As(err, &oe) {
		return fmt.Errorf("%w: %s: %v", kernel.ErrConnection, opts.connectionFile, err) // a port taken
	}
	if err != nil {
		return err
	}
	// yaegi logs its compiler's failures with the standard logger; they
	// belong in the kernel's log, marked as its.
	log.SetOutput(io.err)
	log.SetPrefix("capsule kernel: yaegi: ")
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	defer signal.Stop(sigint)
	go func() {
		for range sigint {
			k.Interrupt()
		}
	}()
	if err := k.Run(ctx); ctx.Err() == nil {
		return err
	}
	return nil // SIGTERM: a normal end
}

// defaultHistoryFile is where cells are kept across sessions, under the
// user's data directory.
func defaultHistoryFile() string {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "evalcapsule", "kernel-history.jsonl")
}

type kernelInstallOptions struct {
	json          bool
	user          bool
	sysPrefix     bool
	prefix        string
	name          string
	interruptMode string
}

func newKernelInstallCmd(io streams) *cobra.Command {
	var opts kernelInstallOptions
	cmd := &cobra.Command{
		Use:   "install [--user | --sys-prefix | --prefix DIR]",
		Short: "Install the kernelspec, so that Jupyter lists \"" + kernel.DisplayName + "\"",
		Long: `Write the kernelspec (kernel.json and logos) into a Jupyter data directory:

  --user        ~/.local/share/jupyter/kernels/` + kernel.SpecName + ` (the default;
                $JUPYTER_DATA_DIR if set)
  --sys-prefix  sys.prefix of ` + kernel.DebianPython + `: /usr/share/jupyter/kernels/` + kernel.SpecName + `
  --prefix DIR  DIR/share/jupyter/kernels/` + kernel.SpecName + ` (then JUPYTER_PATH=DIR/share/jupyter)

The spec starts this capsule binary by its absolute path: install again
after moving it. Installing again replaces the spec.

To uninstall:
  jupyter kernelspec uninstall ` + kernel.SpecName + `
or delete the directory this command printed.

` + exitCodes(code{exitUsage, "usage error, or a kernel directory that cannot be written"}),
		Example: `  capsule kernel install --user
  capsule kernel install --prefix /tmp/jp && JUPYTER_PATH=/tmp/jp/share/jupyter jupyter kernelspec list
  jupyter kernelspec uninstall ` + kernel.SpecName,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			for _, set := range []bool{opts.user, opts.sysPrefix, opts.prefix != ""} {
				if set {
					n++
				}
			}
			if n > 1 {
				return &usageError{errors.New("--user, --sys-prefix and --prefix exclude each other")}
			}
			return runKernelInstall(opts, io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the installed spec as JSON")
	f.BoolVar(&opts.user, "user", false, "install for this user (the default)")
	f.BoolVar(&opts.sysPrefix, "sys-prefix", false, "install into the data directory of "+kernel.DebianPython)
	f.StringVar(&opts.prefix, "prefix", "", "install under this prefix: DIR/share/jupyter/kernels")
	f.StringVar(&opts.name, "name", kernel.SpecName, "the kernelspec's name")
	f.StringVar(&opts.interruptMode, "interrupt-mode", "message", "how Jupyter interrupts a cell: message (interrupt_request) or signal (SIGINT)")
	return cmd
}

func runKernelInstall(opts kernelInstallOptions, io streams) error {
	var dataDir string
	var err error
	switch {
	case opts.prefix != "":
		abs, err := filepath.Abs(opts.prefix)
		if err != nil {
			return &usageError{err}
		}
		dataDir = kernel.PrefixDataDir(abs)
	case opts.sysPrefix:
		dataDir, err = kernel.SysPrefixDataDir(kernel.DebianPython)
	default:
		dataDir, err = kernel.UserDataDir()
	}
	if err != nil {
		return err
	}
	if opts.interruptMode != "message" && opts.interruptMode != "signal" {
		return &usageError{fmt.Errorf("--interrupt-mode %q: message or signal", opts.interruptMode)}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	dir, err := kernel.Install(dataDir, kernel.InstallOptions{
		Command:       []string{self, "kernel"},
		Name:          opts.name,
		InterruptMode: opts.interruptMode,
	})
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(io.out, map[string]any{"name": opts.name, "dir": dir, "argv": []string{self, "kernel", "--connection-file", "{connection_file}"}})
	}
	fmt.Fprintf(io.out, "Installed kernelspec %s in %s\n", opts.name, dir)
	fmt.Fprintf(io.out, "Uninstall with: jupyter kernelspec uninstall %s (or delete that directory)\n", opts.name)
	return nil
}

type kernelExecuteOptions struct {
	json        bool
	out         string
	timeout     time.Duration
	allowErrors bool
	cwd         string
	env         []string
}

func newKernelExecuteCmd(io streams) *cobra.Command {
	var opts kernelExecuteOptions
	cmd := &cobra.Command{
		Use:   "execute NOTEBOOK.ipynb -o OUT.ipynb",
		Short: "Run a notebook with the Go kernel in this process, no Jupyter needed; like jupyter nbconvert --to notebook --execute",
		Long: `Run the code cells of NOTEBOOK in order with the Go kernel, in this process
and without Jupyter, and write the notebook with their outputs to OUT, as
'jupyter nbconvert --to notebook --execute' writes it: printed text,
results, displays (updated in place), errors with their tracebacks,
execution counts. Nothing that changes from run to run, such as a
timestamp, is written: cells that print the same give the same file.

Cells run in NOTEBOOK's directory (--cwd changes it), with this command's
environment and --env. Execution stops at the first cell that fails, and
its error is printed; OUT is written all the same, with the outputs so far.
With --allow-errors every cell runs. A cell tagged raises-exception may
fail without stopping execution; cells tagged skip-execution, and cells
other than code, are written back as they are.

-o is required and may name NOTEBOOK itself, to execute it in place. OUT is
written atomically: a reader never sees half a notebook.

` + exitCodes(code{exitFailed, "a cell failed, or ran longer than --timeout: OUT has the outputs so far"},
			code{exitUsage, "usage or input error (bad flag, unreadable or malformed notebook, missing --cwd, OUT not writable)"},
			code{exitInterrupted, "interrupted: OUT has the outputs so far"}),
		Example: `  capsule kernel execute notebooks/kernel-tour.ipynb -o /tmp/tour.ipynb
  capsule kernel execute study.ipynb -o study.ipynb --timeout 10m
  capsule kernel execute --json --allow-errors draft.ipynb -o draft.out.ipynb`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.out == "" {
				return &usageError{errors.New("-o is required: the notebook to write (it may be NOTEBOOK itself)")}
			}
			if opts.timeout < 0 {
				return &usageError{fmt.Errorf("--timeout %v: must not be negative", opts.timeout)}
			}
			for _, kv := range opts.env {
				if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
					return &usageError{fmt.Errorf("--env %q: want KEY=VALUE", kv)}
				}
			}
			return runKernelExecute(cmd.Context(), opts, args[0], io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print a summary as JSON")
	f.StringVarP(&opts.out, "output", "o", "", "the executed notebook to write (required; may be NOTEBOOK)")
	f.DurationVar(&opts.timeout, "timeout", 0, "longest a cell may run, e.g. 10m; 0: no limit")
	f.BoolVar(&opts.allowErrors, "allow-errors", false, "run every cell, also after a cell that fails, and exit 0")
	f.StringVar(&opts.cwd, "cwd", "", "working directory of the cells (default: NOTEBOOK's directory)")
	f.StringArrayVar(&opts.env, "env", nil, "KEY=VALUE added to the cells' environment (repeatable)")
	return cmd
}

// runKernelExecute executes one notebook and writes it, also when a cell
// failed: the outputs up to the failure are what one needs to see.
func runKernelExecute(ctx context.Context, opts kernelExecuteOptions, path string, io streams) error {
	in, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dir := opts.cwd
	if dir == "" {
		dir = filepath.Dir(path)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	out, err := filepath.Abs(opts.out)
	if err != nil {
		return err
	}
	// yaegi logs its compiler's failures with the standard logger.
	log.SetOutput(io.err)
	log.SetPrefix("capsule kernel execute: yaegi: ")
	res, err := kernel.ExecuteNotebook(ctx, in, kernel.NotebookOptions{
		Dir:         dir,
		Env:         opts.env,
		Timeout:     opts.timeout,
		AllowErrors: opts.allowErrors,
	})
	switch {
	case errors.Is(err, kernel.ErrNotebook):
		return &harness.FileError{Path: path, Err: err}
	case res.Notebook == nil:
		return err
	}
	if werr := harness.WriteFileAtomic(out, res.Notebook); werr != nil {
		return fmt.Errorf("writing %s: %w", opts.out, errors.Join(werr, err))
	}
	var cellErr *kernel.CellError
	if err != nil && !errors.As(err, &cellErr) {
		return err // interrupted
	}

	if opts.json {
		errs := []map[string]any{}
		for _, e := range res.Errors {
			errs = append(errs, map[string]any{"cell": e.Cell, "execution_count": e.ExecutionCount,
				"ename": e.Name, "evalue": e.Value, "traceback": plainLines(e.Traceback)})
		}
		if jerr := writeJSON(io.out, map[string]any{"notebook": path, "output": opts.out, "ran": res.Ran,
			"errors": errs, "ok": err == nil}); jerr != nil {
			return jerr
		}
	} else {
		fmt.Fprintf(io.out, "wrote %s: %d code cells run", opts.out, res.Ran)
		switch {
		case cellErr != nil:
			fmt.Fprintf(io.out, ", stopped at the failing cell %d\n", cellErr.Cell)
		case len(res.Errors) > 0:
			fmt.Fprintf(io.out, ", %d failed (allowed)\n", len(res.Errors))
		default:
			fmt.Fprintln(io.out)
		}
		if cellErr != nil {
			fmt.Fprintf(io.err, "capsule: %v\n", cellErr)
			tb := plainLines(cellErr.Traceback)
			// The traceback starts with the error, printed just above.
			for len(tb) > 0 && (tb[0] == "" || tb[0] == cellErr.Name || tb[0] == cellErr.Name+": "+cellErr.Value) {
				tb = tb[1:]
			}
			for _, l := range tb {
				fmt.Fprintln(io.err, strings.TrimRight("  "+l, " "))
			}
		}
	}
	if cellErr != nil {
		return errChecksFailed
	}
	return nil
}

var ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

// plainLines is a traceback without its colours, one line each.
func plainLines(tb []string) []string {
	out := []string{}
	for _, l := range tb {
		out = append(out, strings.Split(ansiRE.ReplaceAllString(l, ""), "\n")...)
	}
	return out
}
