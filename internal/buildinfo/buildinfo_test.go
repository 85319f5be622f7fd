package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, c := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"a checkout", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, "devel"},
		{"installed at a version", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v0.3.1"}}, "v0.3.1"},
		{"a dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/tool", Version: "v9.9.9"},
			Deps: []*debug.Module{{Path: "golang.org/x/text", Version: "v0.3.0"}, {Path: modulePath, Version: "v0.2.0"}}}, "v0.2.0"},
		{"a replaced dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/tool"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v0.2.0", Replace: &debug.Module{Path: "../evalcapsule"}}}}, "devel"},
		{"not a dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/tool", Version: "v9.9.9"}}, "devel"},
	} {
		if got := version(&c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if Version() != Version() || Version() == "" {
		t.Errorf("Version() = %q", Version())
	}
}
