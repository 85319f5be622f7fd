package kernel

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is the module version the kernel was built from, "devel" for a
// build from a checkout.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// goVersion is the Go version the cells' language is, "1.26.8".
func goVersion() string { return strings.TrimPrefix(runtime.Version(), "go") }
