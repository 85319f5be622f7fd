package layout

import (
	"archive/tar"
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// epoch is the modification time of every tar entry.
var epoch = time.Unix(0, 0).UTC()

// WriteTar writes the layout directory dir as a tar at out, through a
// temporary file beside it; unless replace is set, an out that exists is
// an error (fs.ErrExist). The tar is a function of the layout's content
// alone: entries sorted by name, times 0, owner 0, modes 0644 and 0755,
// the way `tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner`
// writes it.
func WriteTar(ctx context.Context, dir, out string, replace bool) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel += "/"
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(names)

	// Named and locked as the caller's temporary directory (".OUT.tmp-N"):
	// if this process is killed, the next one removes it (RemoveStale).
	f, err := CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, bufSize)
	tw := tar.NewWriter(bw)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr := &tar.Header{Name: name, ModTime: epoch, Mode: 0o644, Typeflag: tar.TypeReg}
		if strings.HasSuffix(name, "/") {
			hdr.Mode, hdr.Typeflag = 0o755, tar.TypeDir
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			continue
		}
		src, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		st, err := src.Stat()
		if err == nil {
			hdr.Size = st.Size()
			err = tw.WriteHeader(hdr)
		}
		if err == nil {
			_, err = io.Copy(tw, src)
		}
		src.Close()
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if !replace {
		// Whatever the caller checked before, checked again so that a
		// file that appeared meanwhile is not replaced.
		if _, err := os.Lstat(out); err == nil {
			return fmt.Errorf("pack: %s: %w", out, fs.ErrExist)
		}
	}
	// Renamed while still open, and so locked: a RemoveStale of another
	// process cannot take it before it is in place.
	if err := os.Rename(f.Name(), out); err != nil {
		return err
	}
	err = f.Close()
	f = nil
	return err
}
