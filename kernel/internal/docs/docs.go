// Package docs is the documentation that inspect_request answers from: the
// declaration and doc comment of every exported symbol of the packages
// cells can import, taken with go/doc from their source when the kernel is
// generated (the installed binary has no source to read).
package docs

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"sync"
)

// An Entry documents one symbol.
type Entry struct {
	// Decl is the declaration as gofmt prints it, without a function's
	// body: "func Println(a ...any) (n int, err error)".
	Decl string `json:"decl"`
	// Doc is the doc comment as plain text.
	Doc string `json:"doc,omitempty"`
}

// Table maps an import path, then a symbol name ("Println", "Plot",
// "Plot.PNG"; "" for the package itself), to its documentation.
type Table map[string]map[string]Entry

//go:embed docs.json.gz
var encoded []byte

var (
	once  sync.Once
	table Table
)

// Load returns the table compiled into the kernel.
func Load() Table {
	once.Do(func() {
		t, err := Decode(encoded)
		if err != nil {
			panic("docs: the embedded table is corrupt: " + err.Error())
		}
		table = t
	})
	return table
}

// Lookup returns the documentation of name in the package at path.
func Lookup(path, name string) (Entry, bool) {
	e, ok := Load()[path][name]
	return e, ok
}

// Encode returns t as the embedded file holds it: gzip-compressed JSON,
// byte for byte the same for the same table, so that a test can compare.
func Encode(t Table) ([]byte, error) {
	raw, err := json.Marshal(t) // map keys sorted
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decode reverses Encode.
func Decode(b []byte) (Table, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	var t Table
	if err := json.NewDecoder(zr).Decode(&t); err != nil {
		return nil, err
	}
	return t, nil
}
