// Package buildinfo says which version of evalcapsule this program was
// built from, computed once from the binary's build information.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// modulePath is evalcapsule's module.
const modulePath = "github.com/evalcapsule/evalcapsule"

// Version is the version of the evalcapsule module in this binary: its
// module version when the binary is evalcapsule's own (go install …@v1.2.3)
// or depends on it, "devel" for a build from a checkout.
var Version = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return version(bi)
})

func version(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if bi.Main.Path != modulePath {
		v = ""
		for _, d := range bi.Deps {
			if d.Path == modulePath {
				v = d.Version
				if d.Replace != nil {
					v = d.Replace.Version
				}
			}
		}
	}
	if v == "" || v == "(devel)" {
		return "devel"
	}
	return v
}
