package capsule

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/evalcapsule/evalcapsule/capsule/internal/layout"
	"github.com/evalcapsule/evalcapsule/study"
)

// pullTempPrefix names the temporary layouts OpenRef pulls into, in the
// system's temporary directory.
const pullTempPrefix = "capsule-pull-"

// OpenRef opens the capsule that ref names: an OCI image layout directory
// or a tar of one (as Open does), or a registry reference
// (host[:port]/repository[:tag|@sha256:…]), which is pulled with its
// referrers into a new temporary layout that Close removes, to the limits
// and timeouts of opts (Pull checks every descriptor before it fetches a
// blob). opts.Tag selects the manifest inside a layout; a registry
// reference names its own. opts.PlainHTTP speaks plain HTTP to a registry
// that is not on loopback.
//
// The capsule records what was named (Ref) and whether it came from a
// registry (Registry), so that a replay report can be attached where the
// capsule came from.
func OpenRef(ctx context.Context, ref string, opts OpenOptions) (*Capsule, error) {
	if _, err := os.Lstat(ref); err == nil {
		if err := notAStudy(ref); err != nil {
			return nil, err
		}
		c, err := Open(ctx, ref, opts)
		if err != nil {
			return nil, err
		}
		c.Ref = ref
		return c, nil
	}
	if !looksLikeRegistryRef(ref) {
		return nil, fmt.Errorf("%w: %s: no such file or directory, and not a registry reference (host[:port]/repository[:tag])", ErrReference, ref)
	}
	// A temporary layout, locked until Close; those of a killed process
	// (no one holds them) go first.
	layout.RemoveStale(os.TempDir(), pullTempPrefix)
	tmp, release, err := layout.MkdirTemp(os.TempDir(), pullTempPrefix)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(tmp, "capsule")
	desc, err := Pull(ctx, ref, dir, opts.pullOptions())
	if err != nil {
		os.RemoveAll(tmp)
		release()
		return nil, err
	}
	opts.Tag = desc.Digest.String()
	c, err := Open(ctx, dir, opts)
	if err != nil {
		os.RemoveAll(tmp)
		release()
		return nil, err
	}
	c.Ref, c.Registry, c.tmp, c.releaseTmp = ref, true, tmp, release
	return c, nil
}

// IsRef reports whether s names a capsule rather than a study directory: a
// layout directory, a file (a .tar), or, when nothing of that name is here,
// a registry reference.
func IsRef(s string) bool {
	st, err := os.Stat(s)
	if err != nil {
		return looksLikeRegistryRef(s)
	}
	if !st.IsDir() {
		return true
	}
	_, err = os.Stat(filepath.Join(s, "oci-layout"))
	return err == nil
}

// notAStudy turns the common mistake of naming a study directory where a
// capsule is expected into an error that says what to do.
func notAStudy(path string) error {
	if _, err := os.Stat(filepath.Join(path, "oci-layout")); err == nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(path, study.FileName)); err == nil {
		return fmt.Errorf("%w: %s is a study directory, not a capsule: pack it first (capsule pack %s -o study.capsule)", ErrReference, path, path)
	}
	return nil
}

// looksLikeRegistryRef reports whether ref has the shape of
// host[:port]/repository: a first component with a dot or a port, or
// "localhost".
func looksLikeRegistryRef(ref string) bool {
	host, rest, ok := strings.Cut(ref, "/")
	if !ok || rest == "" || strings.HasPrefix(ref, ".") {
		return false
	}
	return strings.ContainsAny(host, ".:") || host == "localhost"
}
