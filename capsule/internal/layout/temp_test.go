package layout

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// The helper process of TestRemoveStaleAfterKill: it makes a locked
// temporary directory and file in $LAYOUT_TEMP_PARENT, says their paths
// and waits to be killed.
func TestMain(m *testing.M) {
	if parent := os.Getenv("LAYOUT_TEMP_PARENT"); parent != "" {
		dir, _, err := MkdirTemp(parent, ".out.tmp-")
		if err != nil {
			os.Exit(2)
		}
		os.WriteFile(filepath.Join(dir, "blob"), make([]byte, 1<<16), 0o644)
		f, err := CreateTemp(parent, ".out.tmp-")
		if err != nil {
			os.Exit(2)
		}
		f.Write(make([]byte, 1<<16))
		os.Stdout.WriteString(dir + "\n" + f.Name() + "\n")
		select {}
	}
	os.Exit(m.Run())
}

// TestRemoveStaleAfterKill: what a process holds is left alone while it
// lives, and removed once it is SIGKILLed, as a killed pack or unpack
// leaves it.
func TestRemoveStaleAfterKill(t *testing.T) {
	if !lockingWorks {
		t.Skip("no flock here")
	}
	parent := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LAYOUT_TEMP_PARENT="+parent)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	var held []string
	for len(held) < 2 && sc.Scan() {
		held = append(held, sc.Text())
	}
	if len(held) != 2 {
		t.Fatalf("the helper said %q (%v)", held, sc.Err())
	}
	other := filepath.Join(parent, ".out.tmp-x")
	os.WriteFile(other, nil, 0o644)

	if removed, err := RemoveStale(parent, ".out.tmp-"); err != nil || len(removed) != 0 {
		t.Fatalf("while their process lives: removed %v, %v", removed, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	removed, err := RemoveStale(parent, ".out.tmp-")
	slices.Sort(removed)
	slices.Sort(held)
	if err != nil || !slices.Equal(removed, held) {
		t.Fatalf("after the kill: removed %v (%v), expected %v", removed, err, held)
	}
	for _, p := range held {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another name was removed: %v", err)
	}
}

// TestTempLocks: in one process too, a temporary entry is held while in
// use (MkdirTemp until release, CreateTemp until Close), and the shared and
// exclusive locks of a directory exclude each other.
func TestTempLocks(t *testing.T) {
	if !lockingWorks {
		t.Skip("no flock here")
	}
	parent := t.TempDir()
	dir, release, err := MkdirTemp(parent, ".d.unpack-")
	if err != nil {
		t.Fatal(err)
	}
	f, err := CreateTemp(parent, ".d.unpack-")
	if err != nil {
		t.Fatal(err)
	}
	if !IsTempName(filepath.Base(dir), ".d.unpack-") || !IsTempName(filepath.Base(f.Name()), ".d.unpack-") {
		t.Errorf("names %s, %s", dir, f.Name())
	}
	if removed, _ := RemoveStale(parent, ".d.unpack-"); len(removed) != 0 {
		t.Errorf("removed %v in use", removed)
	}
	release()
	f.Close()
	if removed, _ := RemoveStale(parent, ".d.unpack-"); len(removed) != 2 {
		t.Errorf("removed %v once released, expected both", removed)
	}
	if removed, err := RemoveStale(filepath.Join(parent, "missing"), "x"); err != nil || removed != nil {
		t.Errorf("a missing parent: %v, %v", removed, err)
	}

	shared, err := SharedLock(parent)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := TryExclusive(parent); ok || err != nil {
		t.Errorf("exclusive while shared: %v, %v", ok, err)
	}
	shared()
	unlock, ok, err := TryExclusive(parent)
	if !ok || err != nil {
		t.Fatalf("exclusive once released: %v, %v", ok, err)
	}
	unlock()

	for name, want := range map[string]bool{".d.unpack-1": true, ".d.unpack-": false, ".d.unpack-1.old": false, ".d.unpack-a1": false, "d.unpack-1": false} {
		if IsTempName(name, ".d.unpack-") != want {
			t.Errorf("IsTempName(%q) = %v", name, !want)
		}
	}
}
