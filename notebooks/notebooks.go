// Package notebooks holds the example notebooks, with their outputs cleared,
// so that the capsule binary can ship them: `capsule demo` writes the
// quickstart, executed on the study it has just run. They run on the Go
// kernel (`capsule kernel install`); the kernel's tests execute every one.
package notebooks

import "embed"

// FS holds every notebook of this directory (*.ipynb) at its root.
//
//go:embed *.ipynb
var FS embed.FS
