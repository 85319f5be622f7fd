package layout

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Temporary files and directories beside a destination (an unpack's
// ".DEST.unpack-N", a pack's ".OUT.tmp-N") are named prefix followed by
// digits, and locked (flock, exclusive) by the process that made them for
// as long as it uses them. A process that is killed leaves them behind,
// but not locked: the kernel drops the locks of a dead process. The next
// run of the same command calls RemoveStale with the same prefix, which
// removes the entries no one holds, and leaves those of a run still going
// on, in this process or another, alone.
//
// Locks are advisory and local: two machines that share a directory over
// NFS may not see each other's. Where flock is not available, nothing is
// locked and RemoveStale removes nothing.

// MkdirTemp creates a new directory in parent named prefix followed by
// digits (os.MkdirTemp), locked until release is called. release closes
// the lock and leaves the directory where it is, or wherever it was
// renamed to; removing it is the caller's.
func MkdirTemp(parent, prefix string) (dir string, release func(), err error) {
	for range 100 {
		dir, err := os.MkdirTemp(parent, prefix)
		if err != nil {
			return "", nil, err
		}
		f, err := os.Open(dir)
		if err != nil {
			os.Remove(dir)
			return "", nil, err
		}
		if ok, err := lockOwn(f, dir); err != nil {
			f.Close()
			os.Remove(dir)
			return "", nil, err
		} else if !ok {
			// A RemoveStale took it between its creation and the lock.
			f.Close()
			continue
		}
		return dir, func() { f.Close() }, nil
	}
	return "", nil, errors.New("layout: no temporary directory could be locked in " + parent)
}

// CreateTemp creates a new file in parent named prefix followed by digits
// (os.CreateTemp), open for writing and locked until it is closed. A
// caller that renames it into place renames it before closing it, so that
// a RemoveStale does not take it in between.
func CreateTemp(parent, prefix string) (*os.File, error) {
	for range 100 {
		f, err := os.CreateTemp(parent, prefix)
		if err != nil {
			return nil, err
		}
		if ok, err := lockOwn(f, f.Name()); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, err
		} else if !ok {
			f.Close()
			continue
		}
		return f, nil
	}
	return nil, errors.New("layout: no temporary file could be locked in " + parent)
}

// lockOwn locks f, just created at path, and reports whether it is still
// what path names: a RemoveStale that locked it first has removed it.
func lockOwn(f *os.File, path string) (bool, error) {
	ok, err := tryLock(f, true)
	if err != nil || !ok {
		return false, err
	}
	return samePath(f, path), nil
}

// samePath reports whether path still names the open file f.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}

// IsTempName reports whether name is prefix followed by one or more digits,
// the names MkdirTemp and CreateTemp give.
func IsTempName(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return false
	}
	return strings.Trim(rest, "0123456789") == ""
}

// RemoveStale removes the entries of parent (files or directories) named
// prefix followed by digits that no process holds locked, and returns the
// paths it removed. Entries it cannot open or lock (another user's, one in
// use) are left alone, and so are those of another owner and links. A
// parent that does not exist has nothing stale.
func RemoveStale(parent, prefix string) ([]string, error) {
	if !lockingWorks {
		return nil, nil
	}
	entries, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var firstErr error
	for _, e := range entries {
		if !IsTempName(e.Name(), prefix) || !(e.IsDir() || e.Type().IsRegular()) {
			continue
		}
		p := filepath.Join(parent, e.Name())
		f, err := openEntry(p)
		if err != nil {
			continue
		}
		if fi, err := f.Stat(); err != nil || !ownedByUs(fi) {
			// In a shared parent (the system's temporary directory),
			// another user's entry is theirs to clean.
			f.Close()
			continue
		}
		// Locked, and still the entry that was listed: it is no one's.
		if ok, err := tryLock(f, true); err == nil && ok && samePath(f, p) {
			if err := os.RemoveAll(p); err != nil {
				if firstErr == nil {
					firstErr = err
				}
			} else {
				removed = append(removed, p)
			}
		}
		f.Close()
	}
	return removed, firstErr
}

// SharedLock takes a shared lock of the directory dir, blocking while an
// exclusive one is held, and returns its release. Processes that use dir
// hold it shared; one that wants to clean dir up takes it exclusively
// with TryExclusive.
func SharedLock(dir string) (release func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := lock(f, false); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// TryExclusive takes an exclusive lock of the directory dir if no one holds
// one of any kind, and reports whether it did. ok is false, and there is
// nothing to release, where another process holds it or locking is not
// available.
func TryExclusive(dir string) (release func(), ok bool, err error) {
	if !lockingWorks {
		return nil, false, nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	ok, err = tryLock(f, true)
	if err != nil || !ok {
		f.Close()
		return nil, false, err
	}
	return func() { f.Close() }, true, nil
}
