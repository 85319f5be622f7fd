package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/evalcapsule/evalcapsule/capsule"
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

// openedRef is a capsule opened from a REF.
type openedRef struct {
	*capsule.Capsule
	// Ref is what the user named; Registry is true when it was pulled.
	Ref      string
	Registry bool
	// Bar draws the progress of what is read from the capsule: set its
	// verb before Unpack or Verify.
	Bar *transferBar
	tmp string
}

// Close closes the capsule and removes what was pulled for it.
func (o *openedRef) Close() error {
	err := o.Capsule.Close()
	if o.tmp != "" {
		os.RemoveAll(o.tmp)
	}
	return err
}

// isLocalRef reports whether ref names a file or directory here.
func isLocalRef(ref string) bool {
	_, err := os.Lstat(ref)
	return err == nil
}

// openRef opens the capsule that ref names; a registry reference is pulled
// into a temporary layout first, with progress on stderr.
func openRef(ctx context.Context, ref string, o refOptions, quiet bool, io streams) (*openedRef, error) {
	if isLocalRef(ref) {
		if err := notAStudy(ref); err != nil {
			return nil, err
		}
		bar := newTransferBar(io, "reading", quiet)
		c, err := capsule.Open(ctx, ref, capsule.OpenOptions{Tag: o.tag, Progress: bar.update})
		if err != nil {
			return nil, err
		}
		return &openedRef{Capsule: c, Ref: ref, Bar: bar}, nil
	}
	if !looksLikeRegistryRef(ref) {
		return nil, &usageError{fmt.Errorf("%s: no such file or directory, and not a registry reference (host[:port]/repository[:tag])", ref)}
	}
	tmp, err := os.MkdirTemp("", "capsule-pull-")
	if err != nil {
		return nil, err
	}
	layout := filepath.Join(tmp, "capsule")
	bar := newTransferBar(io, "pulling", quiet)
	desc, err := capsule.Pull(ctx, ref, layout, capsule.PullOptions{PlainHTTP: o.plainHTTP, WithReferrers: true, Progress: bar.update})
	bar.stop()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	bar = newTransferBar(io, "reading", quiet)
	c, err := capsule.Open(ctx, layout, capsule.OpenOptions{Tag: desc.Digest.String(), Progress: bar.update})
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &openedRef{Capsule: c, Ref: ref, Registry: true, Bar: bar, tmp: tmp}, nil
}

// isCapsuleRef reports whether ref names a capsule rather than a study
// directory: a layout directory, a file (a .tar), or a registry reference.
func isCapsuleRef(ref string) bool {
	st, err := os.Stat(ref)
	if err != nil {
		return looksLikeRegistryRef(ref)
	}
	if !st.IsDir() {
		return true
	}
	_, err = os.Stat(filepath.Join(ref, "oci-layout"))
	return err == nil
}

// notAStudy turns the common mistake of naming a study directory where a
// capsule is expected into an error that says what to do.
func notAStudy(path string) error {
	if _, err := os.Stat(filepath.Join(path, "oci-layout")); err == nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(path, "study.yaml")); err == nil {
		return &usageError{fmt.Errorf("%s is a study directory, not a capsule: pack it first (capsule pack %s -o study.capsule)", path, path)}
	}
	return nil
}

// looksLikeRegistryRef reports whether ref has the shape of
// host[:port]/repository: a first component with a dot or a port, or
// "localhost".
func looksLikeRegistryRef(ref string) bool {
	host, rest, ok := strings.Cut(ref, "/")
	if !ok || rest == "" || strings.HasPrefix(ref, ".") {
		return false
	}
	return strings.ContainsAny(host, ".:") || host == "localhost"
}

// unpackRef writes the capsule's study into a new temporary folder, or
// into dir when it is given (it must not exist or be empty).
func unpackRef(ctx context.Context, c *openedRef, dir string) (string, func(), error) {
	cleanup := func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "capsule-replay-")
		if err != nil {
			return "", nil, err
		}
		dir = filepath.Join(tmp, "study")
		cleanup = func() { os.RemoveAll(tmp) }
	}
	c.Bar.start("unpacking")
	err := c.Unpack(ctx, dir)
	c.Bar.stop()
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// transferBar draws the progress of a pack, push, pull, unpack or verify
// on one line of a terminal; elsewhere it says nothing, so that logs stay
// short.
type transferBar struct {
	io    streams
	verb  string
	on    bool
	mu    sync.Mutex
	last  capsule.Progress
	drawn time.Time
	shown bool
}

func newTransferBar(io streams, verb string, quiet bool) *transferBar {
	return &transferBar{io: io, verb: verb, on: !quiet && isTerminal(io.err)}
}

// start begins a new transfer on the same bar.
func (b *transferBar) start(verb string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.verb, b.last, b.shown = verb, capsule.Progress{}, false
}

func (b *transferBar) update(p capsule.Progress) {
	if b == nil || !b.on {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.last = p
	if time.Since(b.drawn) < 100*time.Millisecond && p.Files < p.TotalFiles {
		return
	}
	b.drawn = time.Now()
	b.draw()
}

func (b *transferBar) draw() {
	p := b.last
	frac := 0.0
	if p.TotalBytes > 0 {
		frac = float64(p.Bytes) / float64(p.TotalBytes)
	}
	const w = 24
	fill := min(w, int(frac*w))
	bar := strings.Repeat("█", fill) + strings.Repeat("░", w-fill)
	fmt.Fprintf(b.io.err, "\r\033[K%-9s %s %3.0f%%  %d/%d files  %s/%s  %s", b.verb, bar, 100*frac,
		p.Files, p.TotalFiles, humanBytes(p.Bytes), humanBytes(p.TotalBytes), truncateName(p.Path, 40))
	b.shown = true
}

func (b *transferBar) stop() {
	if b == nil || !b.on {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown {
		b.draw()
		fmt.Fprintln(b.io.err)
	}
}

// humanBytes writes n bytes in the largest binary unit that keeps it ≥ 1.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// existsError says that an output path is taken.
func existsError(path string) error {
	return &usageError{fmt.Errorf("%s already exists (use --force to replace it): %w", path, fs.ErrExist)}
}
