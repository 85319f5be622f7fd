package capsule

import (
	"context"
	"errors"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/evalcapsule/evalcapsule/capsule/internal/layout"
)

// A capsule's layout, a directory or a tar, is read through package
// layout; what that package finds wrong with the layout (a *layout.Error)
// reaches callers as the Problem it describes.

// blobSource is the layout a capsule's blobs are read from.
type blobSource struct{ *layout.Reader }

func openDirSource(dir string) (blobSource, error) {
	r, err := layout.OpenDir(dir)
	return blobSource{r}, asProblem(err)
}

func openTarSource(name string) (blobSource, error) {
	r, err := layout.OpenTar(name)
	return blobSource{r}, asProblem(err)
}

// asProblem turns a *layout.Error into a *Problem with the same content;
// other errors, io.EOF and nil among them, are returned as they are.
func asProblem(err error) error {
	var le *layout.Error
	if err == nil || !errors.As(err, &le) {
		return err
	}
	return &Problem{Blob: le.Blob, Path: le.Path, What: le.What, Expected: le.Expected, Found: le.Found}
}

// readSmall reads a layout file (index.json, oci-layout).
func (c *Capsule) readSmall(name string, max int64) ([]byte, error) {
	b, err := c.src.ReadFile(name, max)
	return b, asProblem(err)
}

// readBlob reads a whole blob, checked against its descriptor.
func (c *Capsule) readBlob(ctx context.Context, d ocispec.Descriptor, title string) ([]byte, error) {
	b, err := c.src.ReadBlob(ctx, d, title)
	return b, asProblem(err)
}

// openBlob opens a blob for reading; the reader returns a *Problem instead
// of io.EOF when the content does not match the descriptor's digest and
// size, and stops as soon as it reads more than the size.
func (c *Capsule) openBlob(ctx context.Context, d ocispec.Descriptor, title string) (*blobReader, error) {
	br, err := c.src.OpenBlob(ctx, d, title)
	if err != nil {
		return nil, asProblem(err)
	}
	return &blobReader{br}, nil
}

// blobReader reads a blob, checking its size and digest.
type blobReader struct{ br *layout.BlobReader }

func (b *blobReader) Read(p []byte) (int, error) {
	n, err := b.br.Read(p)
	return n, asProblem(err)
}

func (b *blobReader) Close() error { return b.br.Close() }
