// Command capsule re-scores, compares, attributes, runs, packs and replays
// lm-evaluation-harness studies. See README.md and `capsule --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() { os.Exit(run()) }

// run is main with a context that SIGINT and SIGTERM cancel: long work
// (a sweep, a job) stops cleanly and records that it was interrupted.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}
