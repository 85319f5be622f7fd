//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package layout

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

const lockingWorks = true

// tryLock takes a lock of f (exclusive or shared) without waiting, and
// reports whether it did; false means another open file holds a
// conflicting one.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		}
		return false, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
}

// lock takes a lock of f, waiting for conflicting ones to go.
func lock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
		return nil
	}
}

// openEntry opens an entry of a directory for locking: not through a
// link, and without waiting on a FIFO put in its place.
func openEntry(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// ownedByUs reports whether fi is owned by this process's user.
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && (fi.IsDir() || fi.Mode().IsRegular())
}
