package layout

import (
	"strconv"
	"strings"
)

// Error is something wrong with a layout: which blob or file, what about
// it, what was expected and what was found.
type Error struct {
	// Blob is the blob's digest, or the layout file ("index.json",
	// "blobs/sha256/…") or tar the problem is in.
	Blob string
	// Path is the name the caller gave the blob when it opened it
	// (OpenBlob's title), if any.
	Path     string
	What     string
	Expected string
	Found    string
}

func (e *Error) Error() string { return "invalid OCI image layout: " + e.Detail() }

// Detail is the error without its prefix: where, what, what was expected
// and what was found.
func (e *Error) Detail() string {
	var b strings.Builder
	switch {
	case e.Path != "" && e.Blob != "":
		b.WriteString(e.Path + " (" + e.Blob + "): ")
	case e.Path != "":
		b.WriteString(e.Path + ": ")
	case e.Blob != "":
		b.WriteString(e.Blob + ": ")
	}
	b.WriteString(e.What)
	if e.Expected != "" {
		b.WriteString(": expected " + e.Expected)
	}
	if e.Found != "" {
		if e.Expected != "" {
			b.WriteString(",")
		} else {
			b.WriteString(":")
		}
		b.WriteString(" found " + e.Found)
	}
	return b.String()
}

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return strconv.Quote(s)
}
