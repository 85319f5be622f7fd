// Package layering holds no code: its test checks the project's layers
// (docs/design.md, "Layout"). Dependencies point one way,
//
//	internal/pynum, internal/buildinfo, examples, notebooks (the bottom)
//	← harness ← analysis ← study ← capsule ← kernel ← cmd/capsule,
//
// harness, analysis and study import no OCI, Jupyter or interpreter code,
// capsule/internal/layout imports only the standard library and the OCI
// image-spec, and internal/pynum only the standard library. A package
// that is in no layer fails the test until it is placed.
package layering
