package capsule

import (
	"context"
	"fmt"
	"slices"

	"github.com/opencontainers/go-digest"
)

// maxTags bounds how many tags Tags lists: a registry that pages without
// end cannot make a history read forever.
const maxTags = 10000

// Tagged is one tag of a registry repository and the manifest it names.
type Tagged struct {
	// Ref is the full reference, host[:port]/repository:tag.
	Ref string
	Tag string
	// Digest is the manifest digest the tag resolved to when listed.
	Digest digest.Digest
	// ArtifactType is the manifest's artifactType, "" when the registry's
	// answer to the resolve does not say (it never does for a HEAD).
	ArtifactType string
}

// Tags lists every tag of the registry repository repo
// (host[:port]/repository, without a tag), in the registry's order
// (lexical for the distribution registry), each resolved to its manifest
// digest, so that a caller can skip manifests it has seen without pulling
// them. At most 10,000 tags are listed; more is an error wrapping
// ErrRegistry.
func Tags(ctx context.Context, repo string, opts PullOptions) ([]Tagged, error) {
	ref, err := parseRegistryReference(repo)
	if err != nil {
		return nil, err
	}
	if ref.Reference != "" {
		return nil, fmt.Errorf("%w: %s names a tag or digest: give the repository alone (host[:port]/repository)", ErrReference, repo)
	}
	r, err := newRepository(ref, opts.PlainHTTP, opts.timeouts())
	if err != nil {
		return nil, err
	}
	var tags []string
	err = r.Tags(ctx, "", func(page []string) error {
		tags = append(tags, page...)
		if len(tags) > maxTags {
			return fmt.Errorf("%w: %s has more than %d tags", ErrRegistry, repo, maxTags)
		}
		return nil
	})
	if err != nil {
		return nil, registryFailure(ref.Registry, err)
	}
	out := make([]Tagged, 0, len(tags))
	for _, tag := range slices.Compact(tags) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		desc, err := r.Resolve(ctx, tag)
		if err != nil {
			return nil, registryFailure(ref.Registry, fmt.Errorf("resolving %s:%s: %w", repo, tag, err))
		}
		out = append(out, Tagged{Ref: repo + ":" + tag, Tag: tag, Digest: desc.Digest, ArtifactType: desc.ArtifactType})
	}
	return out, nil
}
