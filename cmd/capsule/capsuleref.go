package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/internal/quote"
)

// refHelp explains, in every command that takes one, what REF may be.
const refHelp = `REF is a capsule: an OCI image layout directory or a .tar of one (what
'capsule pack' and 'capsule pull' write), or a registry reference
(host[:port]/repository[:tag|@sha256:…]), which is pulled into a temporary
folder first. Registries on loopback are spoken to over plain HTTP, others
over HTTPS unless --plain-http; credentials come from the Docker config
(~/.docker/config.json, $DOCKER_CONFIG) and its credential helpers.`

// refOptions are the flags of commands that take a REF.
type refOptions struct {
	tag       string
	plainHTTP bool
}

func addRefFlags(f interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
}, o *refOptions) {
	f.StringVar(&o.tag, "tag", "", "the capsule's tag inside a layout (default: \"latest\", or the only capsule)")
	f.BoolVar(&o.plainHTTP, "plain-http", false, "plain HTTP to a registry that is not on loopback")
}

// openOptions are the options OpenRef takes for these flags, with the
// progress of what follows (pull, unpack, verify) drawn on bar.
func (o refOptions) openOptions(bar *transferBar) capsule.OpenOptions {
	return capsule.OpenOptions{Tag: o.tag, PlainHTTP: o.plainHTTP, Progress: bar.update}
}

// transferBar draws the progress of a pack, push, pull, unpack or verify
// on one line of a terminal, a line per operation; elsewhere it says
// nothing, so that logs stay short.
type transferBar struct {
	io    streams
	on    bool
	mu    sync.Mutex
	last  capsule.Progress
	drawn time.Time
	shown bool
}

func newTransferBar(io streams, quiet bool) *transferBar {
	return &transferBar{io: io, on: !quiet && isTerminal(io.err)}
}

// verbs name the operations on the bar.
var verbs = map[string]string{"pack": "packing", "pull": "pulling", "push": "pushing", "unpack": "unpacking", "verify": "verifying"}

func (b *transferBar) update(p capsule.Progress) {
	if b == nil || !b.on {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown && p.Op != b.last.Op {
		b.draw()
		fmt.Fprintln(b.io.err)
		b.shown = false
	}
	b.last = p
	if time.Since(b.drawn) < 100*time.Millisecond && p.Files < p.TotalFiles {
		return
	}
	b.drawn = time.Now()
	b.draw()
}

func (b *transferBar) draw() {
	p := b.last
	const w = 24
	fill := min(w, int(p.Fraction()*w))
	bar := strings.Repeat("█", fill) + strings.Repeat("░", w-fill)
	fmt.Fprintf(b.io.err, "\r\033[K%-9s %s %3.0f%%  %s  %s", verbs[p.Op], bar, 100*p.Fraction(), p, truncateName(quote.Text(p.Path), 40))
	b.shown = true
}

// stop ends the bar's line.
func (b *transferBar) stop() {
	if b == nil || !b.on {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown {
		b.draw()
		fmt.Fprintln(b.io.err)
		b.shown = false
	}
}

// existsError says that an output path is taken, and what to do about it
// (how, "use --force to replace it").
func existsError(path, how string) error {
	return &usageError{fmt.Errorf("%s already exists (%s): %w", path, how, fs.ErrExist)}
}

// checkOutputDir checks, before any work, that the folder an output file
// (-o) is to be written into exists and is a folder: finding out after a
// long replay or report would lose the work.
func checkOutputDir(flag, path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil && os.IsNotExist(err):
		return fmt.Errorf("%s %s: the folder %s does not exist (create it first): %w", flag, path, dir, fs.ErrNotExist)
	case err != nil:
		return fmt.Errorf("%s %s: %w", flag, path, err)
	case !fi.IsDir():
		return fmt.Errorf("%s %s: %s is not a folder: %w", flag, path, dir, fs.ErrNotExist)
	}
	return nil
}
