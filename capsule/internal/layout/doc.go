// Package layout is the OCI image layout on disk, written and read: the
// blobs under blobs/sha256/ named by their digests, index.json and
// oci-layout (https://github.com/opencontainers/image-spec/blob/main/image-layout.md).
//
// A Writer builds a new layout directory blob by blob, each hashed as it is
// written and named by its digest when committed; it is the pusher
// oras.PackManifest pushes a manifest to. WriteTar writes a layout
// directory as a tar that is a function of the layout's content alone, and
// Rename puts a finished layout directory in place. MkdirTemp and CreateTemp
// name temporary entries beside a destination and lock them while they are
// in use, and RemoveStale removes those a killed process left.
//
// A Reader reads a layout directory (through an os.Root, regular files
// only) or a tar of one (in place, never extracted). OpenBlob streams a
// blob and checks its size and digest against its descriptor as it goes.
// A layout is untrusted input: what is wrong with one is an *Error, which
// says which blob or file, what was expected and what was found.
//
// The package depends on the standard library and the OCI image-spec
// types alone; compression, media types and what a manifest must hold
// belong to its callers.
package layout
