package capsule

import (
	"context"
	"fmt"
	"os"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Where a capsule opened by OpenRef takes and lists its replay reports:
// the registry it was pulled from, or its layout directory. A capsule read
// from a .tar is not changed in place.

// Attachable reports whether AttachReport can attach to the capsule: it
// came from a registry or a layout directory, not a .tar.
func (c *Capsule) Attachable() bool {
	if c.Registry {
		return true
	}
	st, err := os.Stat(c.Path)
	return err == nil && st.IsDir()
}

// AttachReport attaches a replay report to the capsule where it came from
// (Attach): the registry it was pulled from (which needs push rights), or
// its layout directory. A capsule read from a .tar cannot take one
// (ErrReference): keep the report as a file instead.
func (c *Capsule) AttachReport(ctx context.Context, report []byte) (ocispec.Descriptor, error) {
	if !c.Attachable() {
		return ocispec.Descriptor{}, fmt.Errorf("%w: %s is a .tar, which is not changed in place: keep the report as a file", ErrReference, c.Ref)
	}
	return Attach(ctx, c.location(), c.Descriptor, report, PushOptions{PlainHTTP: c.opts.PlainHTTP})
}

// Reports lists the replay reports attached to the capsule where it came
// from (see Reports).
func (c *Capsule) Reports(ctx context.Context) ([]ocispec.Descriptor, error) {
	return Reports(ctx, c.location(), c.reportOptions())
}

// FetchReport returns a replay report that c.Reports listed, checked (see
// FetchReport).
func (c *Capsule) FetchReport(ctx context.Context, desc ocispec.Descriptor) ([]byte, error) {
	return FetchReport(ctx, c.location(), desc, c.reportOptions())
}

// location is the registry reference or the layout the capsule came from.
func (c *Capsule) location() string {
	if c.Registry {
		return c.Ref
	}
	return c.Path
}

func (c *Capsule) reportOptions() PullOptions {
	if c.Registry {
		return PullOptions{PlainHTTP: c.opts.PlainHTTP}
	}
	return PullOptions{Tag: c.Descriptor.Digest.String()}
}
