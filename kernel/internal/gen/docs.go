package main

import (
	"flag"
	"os"

	"github.com/evalcapsule/evalcapsule/kernel/internal/docs"
	"github.com/evalcapsule/evalcapsule/kernel/internal/symbols"
)

// runDocs writes the documentation of every package in the kernel's symbol
// tables, the standard library's included.
func runDocs(args []string) error {
	fs := flag.NewFlagSet("docs", flag.ContinueOnError)
	out := fs.String("o", "docs.json.gz", "output file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := docs.Extract(symbols.Paths())
	if err != nil {
		return err
	}
	b, err := docs.Encode(t)
	if err != nil {
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}
