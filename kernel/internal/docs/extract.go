package docs

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
)

// Extract reads the documentation of the packages at paths from their
// source, as the go command finds it from the current directory (module
// packages through go.mod, the standard library in GOROOT).
func Extract(paths []string) (Table, error) {
	t := Table{}
	for _, p := range paths {
		entries, err := extractPackage(p)
		if err != nil {
			return nil, fmt.Errorf("docs: %s: %w", p, err)
		}
		t[p] = entries
	}
	return t, nil
}

func extractPackage(path string) (map[string]Entry, error) {
	bp, err := build.Default.Import(path, ".", 0)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range append(append([]string{}, bp.GoFiles...), bp.CgoFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(bp.Dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	// The builtin package documents len, append and the rest, all
	// unexported names.
	builtin := path == "builtin"
	var mode doc.Mode
	if builtin {
		mode = doc.AllDecls
	}
	pkg, err := doc.NewFromFiles(fset, files, path, mode)
	if err != nil {
		return nil, err
	}
	exported := func(name string) bool { return builtin || token.IsExported(name) }
	text := func(s string) string { return string(pkg.Text(s)) }
	decl := func(n ast.Node) string {
		var buf bytes.Buffer
		cfg := printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}
		if err := cfg.Fprint(&buf, fset, n); err != nil {
			return ""
		}
		return buf.String()
	}
	out := map[string]Entry{"": {Decl: "package " + pkg.Name + ` // import "` + path + `"`, Doc: text(pkg.Doc)}}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			e := Entry{Decl: decl(v.Decl), Doc: text(v.Doc)}
			for _, n := range v.Names {
				if exported(n) {
					out[n] = e
				}
			}
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			if !exported(f.Name) {
				continue
			}
			f.Decl.Body = nil
			out[prefix+f.Name] = Entry{Decl: decl(f.Decl), Doc: text(f.Doc)}
		}
	}
	values(pkg.Consts)
	values(pkg.Vars)
	funcs("", pkg.Funcs)
	for _, typ := range pkg.Types {
		if exported(typ.Name) {
			out[typ.Name] = Entry{Decl: decl(typ.Decl), Doc: text(typ.Doc)}
		}
		values(typ.Consts)
		values(typ.Vars)
		funcs("", typ.Funcs)
		funcs(typ.Name+".", typ.Methods)
	}
	return out, nil
}
