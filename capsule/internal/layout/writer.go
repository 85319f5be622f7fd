package layout

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// bufSize is the size of the write buffers: large enough that syscalls do
// not count.
const bufSize = 1 << 20

// Writer writes a new OCI image layout: blobs by digest, then index.json
// and oci-layout (Finish). Its methods may be called from several
// goroutines. It is the content.Pusher oras.PackManifest pushes a
// manifest to.
type Writer struct {
	dir   string
	mu    sync.Mutex
	sizes map[digest.Digest]int64
}

// NewWriter returns a Writer of a layout in the directory dir, creating
// dir's blobs/sha256 directory.
func NewWriter(dir string) (*Writer, error) {
	w := &Writer{dir: dir}
	if err := os.MkdirAll(w.blobDir(), 0o755); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Writer) blobDir() string { return filepath.Join(w.dir, "blobs", "sha256") }

// BlobWriter is a blob being written: a temporary file in the blob
// directory, hashed as it is written. Commit names it by its digest; Abort,
// which may follow a Commit (deferred), removes an uncommitted one.
type BlobWriter struct {
	lw *Writer
	f  *os.File
	w  *bufio.Writer
	h  digest.Digester
	n  int64
}

// Create starts a blob.
func (w *Writer) Create() (*BlobWriter, error) {
	f, err := os.CreateTemp(w.blobDir(), ".ingest-")
	if err != nil {
		return nil, err
	}
	bw, _ := blobBuffers.Get().(*bufio.Writer)
	if bw == nil {
		bw = bufio.NewWriterSize(f, bufSize)
	}
	bw.Reset(f)
	return &BlobWriter{lw: w, f: f, w: bw, h: digest.SHA256.Digester()}, nil
}

// blobBuffers holds the write buffers of blobs, which are many and
// short-lived.
var blobBuffers sync.Pool

func (b *BlobWriter) release() {
	if b.w != nil {
		b.w.Reset(nil)
		blobBuffers.Put(b.w)
		b.w = nil
	}
}

// Write appends p to the blob.
func (b *BlobWriter) Write(p []byte) (int, error) {
	b.h.Hash().Write(p)
	b.n += int64(len(p))
	return b.w.Write(p)
}

// Commit names the blob after its digest and returns its descriptor (the
// digest and size; no media type).
func (b *BlobWriter) Commit() (ocispec.Descriptor, error) {
	err := b.w.Flush()
	b.release()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if err := b.f.Chmod(0o644); err != nil {
		return ocispec.Descriptor{}, err
	}
	if err := b.f.Close(); err != nil {
		return ocispec.Descriptor{}, err
	}
	d := ocispec.Descriptor{Digest: b.h.Digest(), Size: b.n}
	// Two blobs with the same content give one: the rename of the second
	// replaces the first with the same bytes.
	if err := os.Rename(b.f.Name(), filepath.Join(b.lw.blobDir(), d.Digest.Encoded())); err != nil {
		return ocispec.Descriptor{}, err
	}
	b.f = nil
	b.lw.mu.Lock()
	if b.lw.sizes == nil {
		b.lw.sizes = map[digest.Digest]int64{}
	}
	b.lw.sizes[d.Digest] = d.Size
	b.lw.mu.Unlock()
	return d, nil
}

// Abort removes the temporary file of a blob that was not committed.
func (b *BlobWriter) Abort() {
	b.release()
	if b.f != nil {
		b.f.Close()
		os.Remove(b.f.Name())
	}
}

// Push writes a blob whose descriptor is known (a config, a manifest),
// checking that the content matches it.
func (w *Writer) Push(ctx context.Context, expected ocispec.Descriptor, r io.Reader) error {
	b, err := w.Create()
	if err != nil {
		return err
	}
	defer b.Abort()
	if _, err := io.Copy(b, r); err != nil {
		return err
	}
	if got := b.h.Digest(); got != expected.Digest || b.n != expected.Size {
		return fmt.Errorf("pack: %s: wrote %s (%d bytes), expected %s (%d bytes)", expected.MediaType, got, b.n, expected.Digest, expected.Size)
	}
	_, err = b.Commit()
	return err
}

// Stored is the size of the distinct blobs committed.
func (w *Writer) Stored() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var n int64
	for _, s := range w.sizes {
		n += s
	}
	return n
}

// Finish writes index.json, with the manifest tagged, and oci-layout, and
// sets the modes of the layout's files and directories. The manifest's
// descriptor in the index carries its artifactType and annotations, as
// oras-go's layout store writes it, plus the tag.
func (w *Writer) Finish(manifest ocispec.Descriptor, tag string) error {
	d := manifest
	d.Annotations = map[string]string{ocispec.AnnotationRefName: tag}
	for k, v := range manifest.Annotations {
		d.Annotations[k] = v
	}
	index, err := json.Marshal(ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex,
		Manifests: []ocispec.Descriptor{d},
	})
	if err != nil {
		return err
	}
	layout, err := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		b    []byte
	}{{ocispec.ImageIndexFile, index}, {ocispec.ImageLayoutFile, layout}} {
		p := filepath.Join(w.dir, f.name)
		if err := os.WriteFile(p, f.b, 0o644); err != nil {
			return err
		}
		if err := os.Chmod(p, 0o644); err != nil {
			return err
		}
	}
	for _, d := range []string{filepath.Join(w.dir, "blobs"), w.blobDir()} {
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// Rename moves the finished layout directory dir to out, replacing an
// empty directory, or any directory when replace is set. A replaced out is
// moved aside first, so that out is never half old, half new.
func Rename(dir, out string, replace bool) error {
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	st, err := os.Lstat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return os.Rename(dir, out)
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %w", out, fs.ErrExist)
	}
	empty, err := IsEmptyDir(out)
	if err != nil {
		return err
	}
	if empty {
		if err := os.Remove(out); err != nil {
			return err
		}
		return os.Rename(dir, out)
	}
	if !replace {
		return fmt.Errorf("%s: %w", out, fs.ErrExist)
	}
	// The old one goes once the new one is in place. Meanwhile it waits in
	// a locked temporary directory named as the caller's (".OUT.tmp-N"),
	// so that if this process is killed, the next one removes it.
	grave, release, err := MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return err
	}
	defer release()
	old := filepath.Join(grave, "old")
	if err := os.Rename(out, old); err != nil {
		os.Remove(grave)
		return err
	}
	if err := os.Rename(dir, out); err != nil {
		os.Rename(old, out)
		os.Remove(grave)
		return err
	}
	return os.RemoveAll(grave)
}

// IsEmptyDir reports whether dir is a directory with nothing in it.
func IsEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
}
