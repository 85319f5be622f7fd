package sandbox

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// The process limit holds inside each sandbox: a program cannot start more
// than Procs threads, and a fork bomb in one sandbox does not stop programs
// in the others from running (each has its own user namespace, in which
// the kernel counts RLIMIT_NPROC).
func TestProcessLimitPerSandbox(t *testing.T) {
	s := newSandbox(t, Options{Timeout: 2 * time.Second, Procs: 16})
	threads := "import threading, time\nev = threading.Event()\nts = []\nfor i in range(40):\n    th = threading.Thread(target=ev.wait)\n    th.start()\n    ts.append(th)\nev.set()\n"
	r, err := s.Run(context.Background(), threads)
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != Failed || !strings.Contains(r.Type+r.Detail, "thread") {
		t.Errorf("40 threads under a limit of 16: %+v", r)
	}
	bomb := "import posix\nwhile True:\n    try:\n        posix.fork()\n    except OSError:\n        pass\n"
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if r, err := s.Run(context.Background(), bomb); err != nil || r.Outcome == Passed {
			t.Errorf("fork bomb: %+v, %v", r, err)
		}
	}()
	for i := 0; i < 5; i++ {
		r, err := s.Run(context.Background(), "import threading\nth = threading.Thread(target=lambda: None)\nth.start()\nth.join()\n")
		if err != nil || r.Outcome != Passed {
			t.Errorf("beside a fork bomb: %+v, %v", r, err)
		}
	}
	wg.Wait()
}
