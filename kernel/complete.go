package kernel

import (
	"context"
	"encoding/json"
	"go/token"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// complete answers complete_request (Tab in the notebook): the members of
// a package or a value after a dot, otherwise the names in scope, Go's
// keywords and builtins, and package names.
func (k *Kernel) complete(m *message) {
	var req struct {
		Code      string `json:"code"`
		CursorPos int    `json:"cursor_pos"`
	}
	json.Unmarshal(m.content, &req)
	off := byteOffset(req.Code, req.CursorPos)
	matches, kinds, start := k.engine.completions(req.Code[:off])
	// cursor_start counts code points, as cursor_pos does.
	cs := utf8.RuneCountInString(req.Code[:start])
	types := make([]map[string]any, len(matches))
	for i, mt := range matches {
		types[i] = map[string]any{"start": cs, "end": req.CursorPos, "text": mt, "type": kinds[i]}
	}
	k.reply(k.shell, m, "complete_reply", map[string]any{
		"status":       "ok",
		"matches":      matches,
		"cursor_start": cs,
		"cursor_end":   req.CursorPos,
		"metadata":     map[string]any{"_jupyter_types_experimental": types},
	})
}

// completions returns the completions of the text before the cursor, the
// kind of each (function, type, package…), and the byte offset where the
// completed word starts.
func (e *engine) completions(before string) (matches, kinds []string, start int) {
	start = len(before)
	for start > 0 && isNameByte(before[start-1]) {
		start--
	}
	word := before[start:]
	if i := strings.LastIndexByte(word, '.'); i >= 0 {
		head, prefix := word[:i], word[i+1:]
		start += i + 1
		cands := e.members(head)
		return filter(cands, prefix), kindsOf(cands, filter(cands, prefix)), start
	}
	cands := map[string]string{}
	for _, kw := range keywords {
		cands[kw] = "keyword"
	}
	for name, kind := range predeclared {
		cands[name] = kind
	}
	for key := range e.exports {
		if i := strings.LastIndex(key, "/"); i >= 0 && !strings.HasPrefix(key, "github.com/traefik") {
			cands[key[i+1:]] = "module"
		}
	}
	for name := range e.pkgNames {
		cands[name] = "module"
	}
	for name, src := range e.decls {
		if strings.Contains(name, ".") || strings.HasPrefix(name, "__") {
			continue
		}
		cands[name] = declKind(src)
	}
	for name := range e.vars {
		if _, ok := cands[name]; !ok && !strings.HasPrefix(name, "__") {
			cands[name] = "instance"
		}
	}
	delete(cands, mainName)
	matches = filter(cands, word)
	return matches, kindsOf(cands, matches), start
}

// members are the names after head.: a package's exported symbols, or the
// exported fields and methods of a value (never evaluated when it would
// call something).
func (e *engine) members(head string) map[string]string {
	out := map[string]string{}
	for _, p := range e.packagePaths(head) {
		for name, v := range e.exports[p+"/"+e.packageName(p)] {
			if token.IsExported(name) {
				out[name] = symbolKind(v)
			}
		}
	}
	if len(out) > 0 || head == "" || !isSelectorChain(head) {
		return out
	}
	v, err := e.eval(context.Background(), 1, 1, head)
	if v = unwrapValue(v); err != nil || !v.IsValid() {
		return out
	}
	t := v.Type()
	for _, tt := range []reflect.Type{t, reflect.PointerTo(t)} {
		for i := range tt.NumMethod() {
			out[tt.Method(i).Name] = "function"
		}
	}
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() == reflect.Struct {
		for i := range st.NumField() {
			if f := st.Field(i); f.IsExported() {
				out[f.Name] = "instance"
			}
		}
	}
	return out
}

// isSelectorChain reports whether s is a.b.c: evaluating it calls nothing.
func isSelectorChain(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if !token.IsIdentifier(part) {
			return false
		}
	}
	return true
}

func filter(cands map[string]string, prefix string) []string {
	var out []string
	for c := range cands {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

func kindsOf(cands map[string]string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = cands[n]
	}
	return out
}

// symbolKind names the kind of a symbol table entry for the frontend's
// completion icons.
func symbolKind(v reflect.Value) string {
	switch {
	case v.Kind() == reflect.Pointer && v.IsNil():
		return "class" // types are stored as nil pointers
	case v.Kind() == reflect.Func:
		return "function"
	}
	return "instance"
}

func declKind(src string) string {
	s := strings.TrimSpace(stripDirectives(src))
	switch {
	case strings.HasPrefix(s, "func"):
		return "function"
	case strings.HasPrefix(s, "type"):
		return "class"
	}
	return "instance"
}

var keywords = []string{"break", "case", "chan", "const", "continue", "default", "defer", "else",
	"fallthrough", "for", "func", "go", "goto", "if", "import", "interface", "map", "package",
	"range", "return", "select", "struct", "switch", "type", "var"}

var predeclared = map[string]string{
	"any": "class", "bool": "class", "byte": "class", "comparable": "class", "complex64": "class",
	"complex128": "class", "error": "class", "float32": "class", "float64": "class", "int": "class",
	"int8": "class", "int16": "class", "int32": "class", "int64": "class", "rune": "class",
	"string": "class", "uint": "class", "uint8": "class", "uint16": "class", "uint32": "class",
	"uint64": "class", "uintptr": "class",
	"true": "instance", "false": "instance", "iota": "instance", "nil": "instance",
	"append": "function", "cap": "function", "clear": "function", "close": "function",
	"complex": "function", "copy": "function", "delete": "function", "imag": "function",
	"len": "function", "make": "function", "max": "function", "min": "function", "new": "function",
	"panic": "function", "print": "function", "println": "function", "real": "function",
	"recover": "function",
}
