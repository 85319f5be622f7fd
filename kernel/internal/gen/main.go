// Command gen writes the kernel's generated files that yaegi's extract
// command does not: the documentation table that inspect_request answers
// from, and the kernelspec's logos. `go generate ./kernel/...` runs it;
// the kernel's tests regenerate into a temporary directory and compare.
//
//	gen docs -o FILE [-stdlib] PACKAGE...
//	gen logos -o DIR
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: gen docs|logos ...")
	}
	switch args[0] {
	case "docs":
		return runDocs(args[1:])
	case "logos":
		return runLogos(args[1:])
	}
	return fmt.Errorf("unknown command %q (docs or logos)", args[0])
}
