package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/evalcapsule/evalcapsule/kernel/internal/logo"
)

// runLogos writes logo-32x32.png and logo-64x64.png, the sizes Jupyter
// looks for in a kernelspec.
func runLogos(args []string) error {
	fs := flag.NewFlagSet("logos", flag.ContinueOnError)
	out := fs.String("o", ".", "output directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, size := range []int{32, 64} {
		b, err := logo.PNG(size)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, fmt.Sprintf("logo-%dx%d.png", size, size)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
