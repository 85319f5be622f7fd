package layout

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// testLayout is a layout written by a Writer: a few blobs, one of them
// twice, a config pushed and a manifest that names them.
type testLayout struct {
	dir      string
	blobs    map[digest.Digest][]byte
	manifest ocispec.Descriptor
	stored   int64
}

func writeLayout(t *testing.T, dir string) testLayout {
	t.Helper()
	ctx := context.Background()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	tl := testLayout{dir: dir, blobs: map[digest.Digest][]byte{}}
	var layers []ocispec.Descriptor
	for _, content := range []string{"hello\n", strings.Repeat("large ", 400_000), "", "hello\n"} {
		b, err := w.Create()
		if err != nil {
			t.Fatal(err)
		}
		// Written in pieces, as a compressor writes.
		for rest := []byte(content); len(rest) > 0; {
			n := min(len(rest), 7777)
			if _, err := b.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		d, err := b.Commit()
		b.Abort() // after a commit, nothing to do
		if err != nil {
			t.Fatal(err)
		}
		if want := digest.FromString(content); d.Digest != want || d.Size != int64(len(content)) {
			t.Errorf("committed %s (%d bytes), expected %s (%d)", d.Digest, d.Size, want, len(content))
		}
		d.MediaType = "text/plain"
		layers = append(layers, d)
		tl.blobs[d.Digest] = []byte(content)
	}
	// An aborted blob leaves nothing.
	b, err := w.Create()
	if err != nil {
		t.Fatal(err)
	}
	b.Write([]byte("aborted"))
	b.Abort()

	push := func(mediaType string, content []byte) ocispec.Descriptor {
		d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(content), Size: int64(len(content))}
		if err := w.Push(ctx, d, bytes.NewReader(content)); err != nil {
			t.Fatal(err)
		}
		tl.blobs[d.Digest] = content
		return d
	}
	cfg := push("application/vnd.test.config.v1+json", []byte(`{"test":true}`))
	// A push whose content is not the descriptor's is refused and leaves
	// nothing.
	wrong := ocispec.Descriptor{MediaType: "x", Digest: digest.FromString("other"), Size: 5}
	if err := w.Push(ctx, wrong, strings.NewReader("other!")); err == nil {
		t.Error("Push of mismatched content: no error")
	}
	m, _ := json.Marshal(ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Config: cfg, Layers: layers})
	tl.manifest = push(ocispec.MediaTypeImageManifest, m)
	tl.manifest.ArtifactType = "application/vnd.test.v1"
	tl.manifest.Annotations = map[string]string{ocispec.AnnotationCreated: "2025-01-01T00:00:00Z"}
	if err := w.Finish(tl.manifest, "v1"); err != nil {
		t.Fatal(err)
	}
	for _, b := range tl.blobs {
		tl.stored += int64(len(b))
	}
	if w.Stored() != tl.stored {
		t.Errorf("Stored %d, expected %d (distinct blobs)", w.Stored(), tl.stored)
	}
	return tl
}

// check reads the layout back through r: the layout files and every blob.
func (tl testLayout) check(t *testing.T, r *Reader) {
	t.Helper()
	ctx := context.Background()
	b, err := r.ReadFile(ocispec.ImageLayoutFile, 1<<10)
	if err != nil || string(b) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout %q, %v", b, err)
	}
	b, err = r.ReadFile(ocispec.ImageIndexFile, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	var index ocispec.Index
	if err := json.Unmarshal(b, &index); err != nil || index.SchemaVersion != 2 || index.MediaType != ocispec.MediaTypeImageIndex || len(index.Manifests) != 1 {
		t.Fatalf("index.json %s (%v)", b, err)
	}
	d := index.Manifests[0]
	if d.Digest != tl.manifest.Digest || d.ArtifactType != tl.manifest.ArtifactType ||
		d.Annotations[ocispec.AnnotationRefName] != "v1" || d.Annotations[ocispec.AnnotationCreated] != "2025-01-01T00:00:00Z" {
		t.Errorf("index.json names %+v", d)
	}
	if len(tl.blobs) != 5 {
		t.Fatalf("%d blobs", len(tl.blobs))
	}
	for dg, want := range tl.blobs {
		got, err := r.ReadBlob(ctx, ocispec.Descriptor{Digest: dg, Size: int64(len(want))}, "blob")
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("blob %s: %d bytes, %v; expected %d", dg, len(got), err, len(want))
		}
	}
	if _, err := r.Open("blobs/sha256/no-such-blob"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// wantError fails unless err is an *Error with these fields.
func wantError(t *testing.T, err error, want Error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v: expected a *layout.Error %+v", err, want)
	}
	if *e != want {
		t.Errorf("error %+v, expected %+v", *e, want)
	}
}

func TestWriteAndRead(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	tl := writeLayout(t, filepath.Join(base, "tmp"))

	// What is in the directory: the blobs by digest, the two layout files,
	// no temporary file.
	var names []string
	filepath.WalkDir(tl.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(tl.dir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return err
	})
	var want []string
	for dg := range tl.blobs {
		want = append(want, "blobs/sha256/"+dg.Encoded())
	}
	want = append(want, "index.json", "oci-layout")
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("layout files %v, expected %v", names, want)
	}

	out := filepath.Join(base, "layout")
	if err := Rename(tl.dir, out, false); err != nil {
		t.Fatal(err)
	}
	tl.dir = out
	r, err := OpenDir(out)
	if err != nil {
		t.Fatal(err)
	}
	tl.check(t, r)
	r.Close()

	tarPath := filepath.Join(base, "layout.tar")
	if err := WriteTar(ctx, out, tarPath, false); err != nil {
		t.Fatal(err)
	}
	r, err = OpenTar(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	tl.check(t, r)
	r.Close()

	if err := WriteTar(ctx, out, tarPath, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteTar over a tar: %v, expected fs.ErrExist", err)
	}
	first, _ := os.ReadFile(tarPath)
	if err := WriteTar(ctx, out, tarPath, true); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(tarPath)
	if !bytes.Equal(first, again) {
		t.Error("the same layout gave another tar")
	}
}

// TestTarReproducible writes one layout twice, in other places with other
// times and modes, and checks that the tars are the same bytes, in the
// form `tar --sort=name --mtime=@0 --owner=0 --group=0` writes.
func TestTarReproducible(t *testing.T) {
	ctx := context.Background()
	var tars [][]byte
	for i := range 2 {
		base := t.TempDir()
		tl := writeLayout(t, filepath.Join(base, "some", "where", strings.Repeat("x", i+1)))
		if i == 1 {
			past := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
			filepath.WalkDir(tl.dir, func(p string, d fs.DirEntry, err error) error {
				os.Chtimes(p, past, past)
				if !d.IsDir() {
					os.Chmod(p, 0o600)
				}
				return nil
			})
		}
		p := filepath.Join(base, "l.tar")
		if err := WriteTar(ctx, tl.dir, p, false); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tars = append(tars, b)
	}
	if !bytes.Equal(tars[0], tars[1]) {
		t.Fatalf("tars differ (%d and %d bytes)", len(tars[0]), len(tars[1]))
	}
	tr := tar.NewReader(bytes.NewReader(tars[0]))
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		mode, typ := int64(0o644), byte(tar.TypeReg)
		if strings.HasSuffix(h.Name, "/") {
			mode, typ = 0o755, tar.TypeDir
		}
		if h.Typeflag != typ || h.Mode != mode || !h.ModTime.Equal(time.Unix(0, 0)) || h.Uid != 0 || h.Gid != 0 ||
			h.Uname != "" || h.Gname != "" || h.Format&tar.FormatUSTAR == 0 || len(h.PAXRecords) > 0 {
			t.Errorf("%s: type %c mode %o mtime %v uid %d gid %d %q %q format %v PAX %v",
				h.Name, h.Typeflag, h.Mode, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname, h.Format, h.PAXRecords)
		}
	}
	if !slices.IsSorted(names) || len(names) != 2+5+2 || names[0] != "blobs/" || names[1] != "blobs/sha256/" || names[len(names)-1] != "oci-layout" {
		t.Errorf("tar entries %v", names)
	}
}

func TestRename(t *testing.T) {
	base := t.TempDir()
	mk := func(name string) string {
		d := filepath.Join(base, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "new"), nil, 0o644)
		return d
	}
	out := filepath.Join(base, "out")
	os.Mkdir(out, 0o755) // empty: filled
	if err := Rename(mk("a"), out, false); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("out: %v %v", st, err)
	}
	os.WriteFile(filepath.Join(out, "old"), nil, 0o644)
	if err := Rename(mk("b"), out, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("over a full directory: %v, expected fs.ErrExist", err)
	}
	if err := Rename(filepath.Join(base, "b"), out, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "old")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the replaced directory's file is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "b.old")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the replaced directory is still there: %v", err)
	}
	if names, _ := filepath.Glob(filepath.Join(base, ".out.tmp-*")); len(names) != 0 {
		t.Errorf("the replaced directory's temporary place is still there: %v", names)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o644)
	if err := Rename(mk("c"), file, true); !errors.Is(err, fs.ErrExist) {
		t.Errorf("over a file: %v, expected fs.ErrExist", err)
	}
}

// TestBlobMismatch changes blobs of a layout and checks that reading them
// says what differs, for each way they can.
func TestBlobMismatch(t *testing.T) {
	ctx := context.Background()
	tl := writeLayout(t, filepath.Join(t.TempDir(), "l"))
	r, err := OpenDir(tl.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hello := digest.FromString("hello\n")
	p := filepath.Join(tl.dir, "blobs", "sha256", hello.Encoded())
	d := ocispec.Descriptor{Digest: hello, Size: 6}
	read := func() error {
		b, err := r.ReadBlob(ctx, d, "hello.txt")
		if err == nil {
			t.Errorf("read %q without an error", b)
		}
		return err
	}

	os.WriteFile(p, []byte("HELLO\n"), 0o644)
	wantError(t, read(), Error{Blob: hello.String(), Path: "hello.txt", What: "digest", Expected: hello.String(), Found: digest.FromString("HELLO\n").String()})
	os.WriteFile(p, []byte("hello"), 0o644)
	wantError(t, read(), Error{Blob: hello.String(), Path: "hello.txt", What: "size", Expected: "6", Found: "5"})
	os.WriteFile(p, []byte("hello\n\n"), 0o644)
	wantError(t, read(), Error{Blob: hello.String(), Path: "hello.txt", What: "size", Expected: "6", Found: "more bytes"})
	os.Remove(p)
	wantError(t, read(), Error{Blob: hello.String(), Path: "hello.txt", What: "blob", Expected: "present in the layout", Found: "missing"})

	// The reader stops at the first byte past the size, whatever the file
	// holds after it, and the error sticks.
	os.WriteFile(p, append([]byte("hello\n"), make([]byte, 1<<20)...), 0o644)
	br, err := r.OpenBlob(ctx, d, "hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, br)
	if n > 6 {
		t.Errorf("read %d bytes of a 6-byte blob", n)
	}
	wantError(t, err, Error{Blob: hello.String(), Path: "hello.txt", What: "size", Expected: "6", Found: "more bytes"})
	if _, err := br.Read(make([]byte, 10)); err == nil || err == io.EOF {
		t.Errorf("read after the error: %v", err)
	}
	br.Close()

	// A descriptor whose digest cannot be checked.
	_, err = r.OpenBlob(ctx, ocispec.Descriptor{Digest: "md5:abc", Size: 1}, "x")
	wantError(t, err, Error{Blob: `"md5:abc"`, Path: "x", What: "digest", Expected: "algorithm:hex", Found: digest.ErrDigestUnsupported.Error()})
	_, err = r.OpenBlob(ctx, ocispec.Descriptor{Size: 1}, "x")
	wantError(t, err, Error{Blob: "none", Path: "x", What: "digest", Expected: "algorithm:hex", Found: digest.ErrDigestInvalidFormat.Error()})

	// A cancelled read ends with the context's error.
	os.WriteFile(p, []byte("hello\n"), 0o644)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.ReadBlob(cctx, d, "hello.txt"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}

	// Layout files: missing, or larger than allowed.
	os.Remove(filepath.Join(tl.dir, "oci-layout"))
	_, err = r.ReadFile("oci-layout", 100)
	wantError(t, err, Error{Blob: "oci-layout", What: "OCI image layout file", Expected: "present", Found: "missing"})
	_, err = r.ReadFile("index.json", 10)
	wantError(t, err, Error{Blob: "index.json", What: "size", Expected: "at most 10 bytes", Found: "more"})
}

// TestDirFileTypes puts a symbolic link (out of the layout), a FIFO (which
// would block a reader that opened it) and a directory where a layout
// holds regular files.
func TestDirFileTypes(t *testing.T) {
	ctx := context.Background()
	tl := writeLayout(t, filepath.Join(t.TempDir(), "l"))
	outside := filepath.Join(t.TempDir(), "outside")
	os.WriteFile(outside, []byte("hello\n"), 0o644)
	hello := digest.FromString("hello\n")
	blob := filepath.Join(tl.dir, "blobs", "sha256", hello.Encoded())
	for _, tc := range []struct {
		name, file, found string
		make              func(p string) error
	}{
		// The link's target has the blob's content: only its type is wrong.
		{"link", "blobs/sha256/" + hello.Encoded(), "L---------", func(p string) error { return os.Symlink(outside, p) }},
		{"index link", "index.json", "L---------", func(p string) error { return os.Symlink(outside, p) }},
		{"fifo", "blobs/sha256/" + hello.Encoded(), "p---------", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"directory", "oci-layout", "d---------", func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(tl.dir, filepath.FromSlash(tc.file))
			saved, _ := os.ReadFile(p)
			os.Remove(p)
			if err := tc.make(p); err != nil {
				t.Skip(err)
			}
			defer func() {
				os.Remove(p)
				os.WriteFile(p, saved, 0o644)
			}()
			r, err := OpenDir(tl.dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			done := make(chan error, 1)
			go func() {
				if p == blob {
					_, err := r.ReadBlob(ctx, ocispec.Descriptor{Digest: hello, Size: 6}, "hello.txt")
					done <- err
				} else {
					_, err := r.ReadFile(tc.file, 1<<20)
					done <- err
				}
			}()
			select {
			case err := <-done:
				wantError(t, err, Error{Blob: tc.file, What: "file type", Expected: "a regular file", Found: tc.found})
			case <-time.After(10 * time.Second):
				t.Fatal("the read blocks")
			}
		})
	}
	// The layout is readable again with its files back.
	r, err := OpenDir(tl.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tl.check(t, r)
}

// sparsePrefix stands for "GNU.sparse." in PAX records: archive/tar does
// not write those records, so tarOf puts them in its output afterwards.
const sparsePrefix = "XXXXXXXXXXX"

// tarOf writes the regular files of the layout directory dir as a tar
// whose entry names begin "./", then what extra adds.
func tarOf(t *testing.T, dir string, extra func(tw *tar.Writer)) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, _ := os.ReadFile(p)
		tw.WriteHeader(&tar.Header{Name: "./" + filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
		tw.Write(b)
		return nil
	})
	extra(tw)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "l.tar")
	b := bytes.ReplaceAll(buf.Bytes(), []byte(sparsePrefix), []byte("GNU.sparse."))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTarSafety(t *testing.T) {
	tl := writeLayout(t, filepath.Join(t.TempDir(), "l"))
	hello := "blobs/sha256/" + digest.FromString("hello\n").Encoded()

	// Links, directories and sparse entries are not files of the layout;
	// a name that would escape is only a name.
	p := tarOf(t, tl.dir, func(tw *tar.Writer) {
		tw.WriteHeader(&tar.Header{Name: "blobs/sha256/link", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink})
		tw.WriteHeader(&tar.Header{Name: "blobs/sha256/hard", Linkname: hello, Typeflag: tar.TypeLink})
		tw.WriteHeader(&tar.Header{Name: "blobs/sha256/dir/", Mode: 0o755, Typeflag: tar.TypeDir})
		// A sparse entry (GNU 0.1): 4 bytes stored, 10 of content.
		tw.WriteHeader(&tar.Header{Name: "sparse", Mode: 0o644, Size: 4, Typeflag: tar.TypeReg, Format: tar.FormatPAX,
			PAXRecords: map[string]string{sparsePrefix + "major": "0", sparsePrefix + "minor": "1", sparsePrefix + "map": "0,4", sparsePrefix + "size": "10", sparsePrefix + "numblocks": "1"}})
		tw.Write([]byte("data"))
		tw.WriteHeader(&tar.Header{Name: "../../escape", Mode: 0o644, Size: 4, Typeflag: tar.TypeReg})
		tw.Write([]byte("evil"))
	})
	r, err := OpenTar(p)
	if err != nil {
		t.Fatal(err)
	}
	tl.check(t, r)
	for _, name := range []string{"blobs/sha256/link", "blobs/sha256/hard", "blobs/sha256/dir", "sparse"} {
		if _, err := r.Open(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, expected fs.ErrNotExist", name, err)
		}
	}
	r.Close()

	// Two entries of one name: which one is the layout's?
	p = tarOf(t, tl.dir, func(tw *tar.Writer) {
		b := []byte(`{"schemaVersion":2,"manifests":[]}`)
		tw.WriteHeader(&tar.Header{Name: "index.json", Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
		tw.Write(b)
	})
	_, err = OpenTar(p)
	wantError(t, err, Error{Blob: "index.json", What: "tar entry", Expected: "one entry per name", Found: "two"})

	// More entries than the limit.
	defer func(n int) { maxTarEntries = n }(maxTarEntries)
	maxTarEntries = 7 // the layout has 7 files
	if r, err := OpenTar(tarOf(t, tl.dir, func(*tar.Writer) {})); err != nil {
		t.Errorf("at the limit: %v", err)
	} else {
		r.Close()
	}
	p = tarOf(t, tl.dir, func(tw *tar.Writer) {
		tw.WriteHeader(&tar.Header{Name: "extra", Mode: 0o644, Typeflag: tar.TypeReg})
	})
	_, err = OpenTar(p)
	wantError(t, err, Error{Blob: "l.tar", What: "tar entries", Expected: "at most 7", Found: "more"})

	// Not a tar, and a tar cut short.
	junk := filepath.Join(t.TempDir(), "junk.tar")
	os.WriteFile(junk, bytes.Repeat([]byte("junk"), 300), 0o644)
	_, err = OpenTar(junk)
	wantError(t, err, Error{Blob: "junk.tar", What: "tar", Expected: "a tar of an OCI image layout", Found: tar.ErrHeader.Error()})
	b, _ := os.ReadFile(p)
	cut := filepath.Join(t.TempDir(), "cut.tar")
	os.WriteFile(cut, b[:len(b)/2+100], 0o644)
	_, err = OpenTar(cut)
	wantError(t, err, Error{Blob: "cut.tar", What: "tar", Expected: "a tar of an OCI image layout", Found: io.ErrUnexpectedEOF.Error()})
}

func TestErrorString(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{Blob: "sha256:ab", Path: "f", What: "size", Expected: "6", Found: "5"}, "invalid OCI image layout: f (sha256:ab): size: expected 6, found 5"},
		{Error{Blob: "index.json", What: "size", Found: "more"}, "invalid OCI image layout: index.json: size: found more"},
		{Error{What: "x"}, "invalid OCI image layout: x"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%q, expected %q", got, tc.want)
		}
	}
}
