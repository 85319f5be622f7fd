package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

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
stops the kernel.

` + exitCodesHelp,
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
	return cmd
}

// runKernel serves one notebook until it shuts the kernel down.
func runKernel(ctx context.Context, opts kernelOptions, io streams) error {
	conn, err := kernel.ReadConnection(opts.connectionFile)
	if err != nil {
		return &usageError{err}
	}
	k, err := kernel.New(ctx, kernel.Options{Connection: conn, Log: io.err, HistoryFile: opts.history})
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

` + exitCodesHelp,
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
