package layout

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Reader reads an OCI image layout: a directory or a tar of one. What is
// wrong with the layout is an *Error.
type Reader struct{ src source }

// source is where a layout's files are: a directory or a tar.
type source interface {
	// open returns a layout file by its slash-separated name; a missing
	// one is fs.ErrNotExist.
	open(name string) (io.ReadCloser, error)
	Close() error
}

// OpenDir opens the layout directory dir. Its files are read through an
// os.Root, so that a symbolic link in a hostile layout cannot lead reads
// outside it, and only regular files are opened.
func OpenDir(dir string) (*Reader, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Reader{src: &dirSource{root: root}}, nil
}

// OpenTar opens the tar of a layout at name. The tar is read in place: an
// index of its regular files' offsets, read through io.SectionReaders.
// Nothing is extracted, so the entries' names cannot lead anywhere. A tar
// with two entries of one name, or with more than 1,048,576 entries, is
// refused; sparse entries, links and directories are left out.
func OpenTar(name string) (*Reader, error) {
	s, err := openTarSource(name)
	if err != nil {
		return nil, err
	}
	return &Reader{src: s}, nil
}

// Close releases the layout's files.
func (r *Reader) Close() error { return r.src.Close() }

// Open returns the layout file of the slash-separated name (such as
// "index.json" or "blobs/sha256/…"), unchecked; a missing one is
// fs.ErrNotExist, one that is not a regular file an *Error.
func (r *Reader) Open(name string) (io.ReadCloser, error) { return r.src.open(name) }

// ReadFile reads a small layout file (index.json, oci-layout) of at most
// max bytes.
func (r *Reader) ReadFile(name string, max int64) ([]byte, error) {
	rc, err := r.src.open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{Blob: name, What: "OCI image layout file", Expected: "present", Found: "missing"}
		}
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &Error{Blob: name, What: "size", Expected: fmt.Sprintf("at most %d bytes", max), Found: "more"}
	}
	return b, nil
}

// ReadBlob reads a whole blob, checked against its descriptor (OpenBlob).
// The descriptor's size is not trusted for more than 1 MiB of buffer
// before the bytes are there.
func (r *Reader) ReadBlob(ctx context.Context, d ocispec.Descriptor, title string) ([]byte, error) {
	br, err := r.OpenBlob(ctx, d, title)
	if err != nil {
		return nil, err
	}
	defer br.Close()
	buf := bytes.NewBuffer(make([]byte, 0, max(0, min(d.Size, 1<<20))))
	if _, err := buf.ReadFrom(br); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// OpenBlob opens the blob of descriptor d for reading. title is what the
// caller calls the blob (a file's path, "manifest"); it is the Path of the
// errors about it. The reader returns an *Error instead of io.EOF when the
// content does not match d's digest and size, and stops as soon as it
// reads more than the size; it returns ctx's error once ctx is done.
func (r *Reader) OpenBlob(ctx context.Context, d ocispec.Descriptor, title string) (*BlobReader, error) {
	if err := d.Digest.Validate(); err != nil {
		return nil, &Error{Blob: quoteOrNone(d.Digest.String()), Path: title, What: "digest", Expected: "algorithm:hex", Found: err.Error()}
	}
	name := "blobs/" + d.Digest.Algorithm().String() + "/" + d.Digest.Encoded()
	rc, err := r.src.open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{Blob: d.Digest.String(), Path: title, What: "blob", Expected: "present in the layout", Found: "missing"}
		}
		return nil, err
	}
	return &BlobReader{ctx: ctx, rc: rc, r: io.LimitReader(rc, d.Size+1), h: d.Digest.Algorithm().Hash(), d: d, title: title}, nil
}

// BlobReader reads a blob, checking its size and digest.
type BlobReader struct {
	ctx   context.Context
	rc    io.ReadCloser
	r     io.Reader
	h     hash.Hash
	n     int64
	d     ocispec.Descriptor
	title string
	err   error
}

// Read reads the blob; at its end it returns io.EOF only if the blob
// matched its descriptor, and an *Error otherwise. Errors stick.
func (b *BlobReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := b.r.Read(p)
	b.h.Write(p[:n])
	b.n += int64(n)
	if b.n > b.d.Size {
		b.err = &Error{Blob: b.d.Digest.String(), Path: b.title, What: "size", Expected: strconv.FormatInt(b.d.Size, 10), Found: "more bytes"}
		return 0, b.err
	}
	if err == io.EOF {
		got := digest.NewDigest(b.d.Digest.Algorithm(), b.h)
		switch {
		case b.n != b.d.Size:
			b.err = &Error{Blob: b.d.Digest.String(), Path: b.title, What: "size", Expected: strconv.FormatInt(b.d.Size, 10), Found: strconv.FormatInt(b.n, 10)}
		case got != b.d.Digest:
			b.err = &Error{Blob: b.d.Digest.String(), Path: b.title, What: "digest", Expected: b.d.Digest.String(), Found: got.String()}
		default:
			b.err = io.EOF
		}
		return n, b.err
	}
	return n, err
}

// Close releases the blob's file.
func (b *BlobReader) Close() error { return b.rc.Close() }

// dirSource reads a layout directory through an os.Root.
type dirSource struct{ root *os.Root }

func (s *dirSource) open(name string) (io.ReadCloser, error) {
	// Lstat before opening: opening a FIFO would block, and a link, even
	// one that stays inside the layout, is not what a layout holds.
	st, err := s.root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{Blob: name, What: "file type", Expected: "a regular file", Found: st.Mode().Type().String()}
	}
	f, err := s.root.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, &Error{Blob: name, What: "file type", Expected: "a regular file", Found: "something else when opened"}
	}
	return f, nil
}

func (s *dirSource) Close() error { return s.root.Close() }

// tarSource reads a tarred layout in place; only the layout's own names
// are ever looked up.
type tarSource struct {
	f       *os.File
	entries map[string]tarEntry
}

type tarEntry struct{ off, size int64 }

// maxTarEntries bounds the index of a tar (a layout has a few files per
// layer; a manifest of at most 4 MiB has fewer than 30,000 layers). A
// variable, so that a test can lower it.
var maxTarEntries = 1 << 20

func openTarSource(name string) (*tarSource, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	s := &tarSource{f: f, entries: map[string]tarEntry{}}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, &Error{Blob: filepath.Base(name), What: "tar", Expected: "a tar of an OCI image layout", Found: err.Error()}
		}
		if hdr.Typeflag != tar.TypeReg || isSparse(hdr) {
			continue
		}
		// archive/tar reads headers in whole blocks and no further, so
		// the file offset is where the entry's content starts.
		off, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			f.Close()
			return nil, err
		}
		clean := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		if _, dup := s.entries[clean]; dup {
			f.Close()
			return nil, &Error{Blob: clean, What: "tar entry", Expected: "one entry per name", Found: "two"}
		}
		if len(s.entries) >= maxTarEntries {
			f.Close()
			return nil, &Error{Blob: filepath.Base(name), What: "tar entries", Expected: fmt.Sprintf("at most %d", maxTarEntries), Found: "more"}
		}
		s.entries[clean] = tarEntry{off: off, size: hdr.Size}
	}
	return s, nil
}

// isSparse reports a sparse entry, whose stored bytes are not its content.
func isSparse(hdr *tar.Header) bool {
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

func (s *tarSource) open(name string) (io.ReadCloser, error) {
	e, ok := s.entries[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return io.NopCloser(io.NewSectionReader(s.f, e.off, e.size)), nil
}

func (s *tarSource) Close() error { return s.f.Close() }
