package kernel

import (
	"runtime"
	"strings"

	"github.com/evalcapsule/evalcapsule/internal/buildinfo"
)

// Version is the module version the kernel was built from, "devel" for a
// build from a checkout.
func Version() string { return buildinfo.Version() }

// goVersion is the Go version the cells' language is, "1.26.8".
func goVersion() string { return strings.TrimPrefix(runtime.Version(), "go") }
