package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/evalcapsule/evalcapsule/capsule"
)

// UpdateOptions configures Update. The zero value opens capsules with
// capsule's default limits.
type UpdateOptions struct {
	// Open are the limits and timeouts every capsule is opened with.
	Open capsule.OpenOptions
	// Progress, when set, is told each capsule as it is read or skipped.
	Progress func(ref string, read bool)
}

// Updated is what Update did.
type Updated struct {
	// Refs are the checkpoints the sources name, in the sources' order
	// (a repository's tags in the registry's order).
	Refs []string `json:"refs"`
	// Read is how many capsules were opened and read into the index.
	Read    int `json:"read"`
	Skipped int `json:"skipped"` // how many the index held already by manifest digest (not read again)
	// NotCapsules are the tags of a repository that are not capsules
	// (another artifact, or one that does not open), each with why.
	NotCapsules []NotCapsule `json:"not_capsules"`
	// Rebuilt says why the index was emptied and filled again from the
	// capsules (Collect), "" when it was not.
	Rebuilt string `json:"rebuilt"`
}

// NotCapsule is a tag Update left out, and why.
type NotCapsule struct {
	Ref    string `json:"ref"`    // the tag's reference, host[:port]/repository:tag
	Reason string `json:"reason"` // why it is not a capsule, in words
}

// Update brings the index up to date with the sources: a registry
// repository (host[:port]/repository: every tag), a registry reference
// with a tag or digest, or a local capsule (an OCI layout folder or a
// tar). A capsule whose manifest digest the index holds is not read again,
// only linked to the name it was found under. A repository's tag that is
// not a capsule is listed in NotCapsules; a source named alone that is not
// a capsule is an error.
func Update(ctx context.Context, x *Index, sources []string, opts UpdateOptions) (*Updated, error) {
	u := &Updated{NotCapsules: []NotCapsule{}}
	for _, src := range sources {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if isRepository(src) {
			tags, err := capsule.Tags(ctx, src, capsule.PullOptions{PlainHTTP: opts.Open.PlainHTTP,
				IdleTimeout: opts.Open.IdleTimeout, TransferTimeout: opts.Open.TransferTimeout})
			if err != nil {
				return nil, err
			}
			for _, t := range tags {
				err := x.updateOne(ctx, t.Ref, src, t.Tag, t.Digest.String(), opts, u)
				var skip *notCapsuleError
				if errors.As(err, &skip) {
					u.NotCapsules = append(u.NotCapsules, NotCapsule{Ref: t.Ref, Reason: skip.Error()})
					continue
				}
				if err != nil {
					return nil, err
				}
				u.Refs = append(u.Refs, t.Ref)
			}
			continue
		}
		repo, name := "", ""
		if _, err := os.Lstat(src); err != nil {
			repo, name = splitRef(src)
		}
		if err := x.updateOne(ctx, src, repo, name, "", opts, u); err != nil {
			var skip *notCapsuleError
			if errors.As(err, &skip) {
				return nil, skip.err
			}
			return nil, err
		}
		u.Refs = append(u.Refs, src)
	}
	if len(u.Refs) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoCheckpoints, strings.Join(sources, ", "))
	}
	return u, nil
}

// notCapsuleError is a ref that does not open as a capsule.
type notCapsuleError struct{ err error }

func (e *notCapsuleError) Error() string { return e.err.Error() }
func (e *notCapsuleError) Unwrap() error { return e.err }

// updateOne indexes one capsule unless its digest (known from a tag
// listing, else from opening it) is indexed already.
func (x *Index) updateOne(ctx context.Context, ref, repo, name, digest string, opts UpdateOptions, u *Updated) error {
	if digest != "" {
		has, err := x.Has(ctx, digest)
		if err != nil {
			return err
		}
		if has {
			u.Skipped++
			if opts.Progress != nil {
				opts.Progress(ref, false)
			}
			return x.Link(ctx, ref, repo, name, digest)
		}
	}
	c, err := capsule.OpenRef(ctx, ref, opts.Open)
	if err != nil {
		if errors.Is(err, capsule.ErrFormat) || errors.Is(err, capsule.ErrReference) {
			return &notCapsuleError{err}
		}
		return err
	}
	defer c.Close()
	if digest == "" {
		d := c.Descriptor.Digest.String()
		has, err := x.Has(ctx, d)
		if err != nil {
			return err
		}
		if has {
			u.Skipped++
			if opts.Progress != nil {
				opts.Progress(ref, false)
			}
			if name == "" {
				name = localName(ref)
			}
			return x.Link(ctx, ref, repo, name, d)
		}
	}
	cp, err := ReadCapsule(ctx, c)
	if err != nil {
		return err
	}
	cp.Ref, cp.Repo = ref, repo
	if name != "" {
		cp.Name = name
	}
	if err := x.Put(ctx, cp); err != nil {
		return err
	}
	u.Read++
	if opts.Progress != nil {
		opts.Progress(ref, true)
	}
	return nil
}

// isRepository reports whether s names a registry repository without a
// tag or digest, and no local file of that name exists.
func isRepository(s string) bool {
	if _, err := os.Lstat(s); err == nil || !capsule.IsRef(s) {
		return false
	}
	_, rest, _ := strings.Cut(s, "/")
	return !strings.Contains(rest, ":") && !strings.Contains(rest, "@")
}

// splitRef splits host/repo:tag into the repository and the tag (or
// digest).
func splitRef(s string) (repo, name string) {
	if r, d, ok := strings.Cut(s, "@"); ok {
		return r, d
	}
	host, rest, _ := strings.Cut(s, "/")
	if i := strings.LastIndex(rest, ":"); i >= 0 {
		return host + "/" + rest[:i], rest[i+1:]
	}
	return s, ""
}
