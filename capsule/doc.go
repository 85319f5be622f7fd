// Package capsule is the frozen artifact: a study packed into an OCI
// artifact (Pack), opened from a layout directory, a tar or a registry
// (Open, OpenRef), checked (Verify), re-derived and optionally re-executed
// (Replay), moved between registries (Push, Pull), compared (Diff), with
// replay reports attached beside it as referrers (Attach, Reports).
//
// A capsule is untrusted input: opening, verifying and replaying it read
// it within limits and never write outside the target.
package capsule
