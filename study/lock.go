package study

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// lockFile is the lock a sweep holds in the study directory while it runs;
// hidden, it would never be packed, and it is removed at the end.
const lockFile = ".capsule-run.lock"

// lock is a held study lock.
type lock struct {
	f    *os.File
	path string
}

// lockStudy takes the study's lock, or says who holds it: two sweeps of
// one study would run the same runs at once and fail both.
func lockStudy(dir string) (*lock, error) {
	path := filepath.Join(dir, lockFile)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder, _ := os.ReadFile(path)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				who := strings.TrimSpace(string(holder))
				if who == "" {
					who = "another process"
				}
				return nil, fmt.Errorf("%w: %s is being run by %s: wait for it to end, or stop it", ErrBusy, dir, who)
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		// The holder before us may have removed the file between our open
		// and our lock: the lock is then on a file nobody else will see.
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || !os.SameFile(held, now) {
			f.Close()
			continue
		}
		f.Truncate(0)
		fmt.Fprintf(f, "capsule run (pid %d, since %s)\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
		return &lock{f, path}, nil
	}
}

// unlock removes the lock file, then releases it.
func (l *lock) unlock() {
	os.Remove(l.path)
	l.f.Close()
}
