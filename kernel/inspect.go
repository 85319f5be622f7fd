package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/evalcapsule/evalcapsule/kernel/internal/docs"
)

// inspect answers inspect_request: the declaration and documentation of
// the name under the cursor (Shift-Tab in the notebook).
func (k *Kernel) inspect(m *message) {
	var req struct {
		Code      string `json:"code"`
		CursorPos int    `json:"cursor_pos"`
	}
	json.Unmarshal(m.content, &req)
	text, found := k.engine.describe(nameAt(req.Code, byteOffset(req.Code, req.CursorPos)))
	data := map[string]any{}
	if found {
		data["text/plain"] = text
	}
	k.reply(k.shell, m, "inspect_reply", map[string]any{"status": "ok", "found": found, "data": data, "metadata": map[string]any{}})
}

// helpTopicRE matches a cell asking for help, as IPython's `name?`:
// Go has no ? operator, so no Go code looks like this.
var helpTopicRE = regexp.MustCompile(`^\s*\?{0,2}\s*([A-Za-z_][\w.]*)\s*\?{0,2}\s*$`)

// helpTopic returns the name a cell such as `fmt.Println?` or `?strings`
// asks about, and the imports before it (`import "strings"` on a line
// above), which the cell runs first.
func helpTopic(src string) (topic, imports string, ok bool) {
	s := strings.TrimSpace(src)
	if !strings.HasPrefix(s, "?") && !strings.HasSuffix(s, "?") {
		return "", "", false
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		items, err := splitCell(s[:i])
		if err != nil {
			return "", "", false
		}
		for _, it := range items {
			if it.kind != itemImport {
				return "", "", false
			}
		}
		imports, s = s[:i], strings.TrimSpace(s[i+1:])
	}
	m := helpTopicRE.FindStringSubmatch(s)
	if m == nil {
		return "", "", false
	}
	return strings.Trim(m[1], "."), imports, true
}

// scanError puts the positions of a scanner error in the running cell
// (see directive); a ? that is not a help cell says what one is.
func (e *engine) scanError(err error) error {
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		return err
	}
	var msgs []string
	for _, se := range list {
		msg := se.Msg
		if strings.Contains(msg, "U+003F '?'") {
			msg += ": Go has no ?; a help cell is name? alone, after imports only"
		}
		msgs = append(msgs, fmt.Sprintf("%d:%d: %s", e.cur*cellLines+se.Pos.Line, se.Pos.Column, msg))
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// help is the pager text of a help cell.
func (e *engine) help(topic string) string {
	if text, ok := e.describe(topic); ok {
		return text
	}
	return "No documentation found for " + topic + "."
}

// byteOffset converts a cursor position, which Jupyter counts in Unicode
// code points, to a byte offset in code.
func byteOffset(code string, cursor int) int {
	if cursor < 0 {
		return 0
	}
	off := 0
	for i := 0; i < cursor && off < len(code); i++ {
		_, size := utf8.DecodeRuneInString(code[off:])
		off += size
	}
	return off
}

func isNameByte(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// nameAt returns the dotted name around byte offset off: the function
// being called when the cursor follows its parenthesis.
func nameAt(code string, off int) string {
	off = min(off, len(code))
	for off > 0 && code[off-1] == '(' {
		off--
	}
	start, end := off, off
	for start > 0 && isNameByte(code[start-1]) {
		start--
	}
	for end < len(code) && isNameByte(code[end]) {
		end++
	}
	return strings.Trim(code[start:end], ".")
}

// describe is what the kernel knows about a dotted name: a package, a
// symbol or method of one, or a name declared in a cell.
func (e *engine) describe(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	parts := strings.Split(name, ".")
	for _, p := range e.packagePaths(parts[0]) {
		switch len(parts) {
		case 1:
			if d, ok := docs.Lookup(p, ""); ok {
				return d.Decl + "\n\n" + d.Doc, true
			}
		case 2, 3:
			sym := strings.Join(parts[1:], ".")
			if d, ok := docs.Lookup(p, sym); ok {
				return entryText(d), true
			}
			if v, ok := e.exports[p+"/"+e.packageName(p)][parts[1]]; ok && len(parts) == 2 {
				return fmt.Sprintf("%s.%s %s", parts[0], parts[1], typeOfSymbol(v)), true
			}
		}
	}
	if len(parts) == 1 {
		if src, ok := e.decls[name]; ok {
			return strings.TrimSpace(stripDirectives(src)), true
		}
		if d, ok := docs.Lookup("builtin", name); ok {
			return entryText(d), true
		}
	}
	if len(parts) == 2 {
		if src, ok := e.decls[name]; ok { // T.Method of a cell's type
			return strings.TrimSpace(stripDirectives(src)), true
		}
	}
	if !e.isGlobal(parts[0]) {
		return "", false
	}
	// A variable: its type, its value, and the documentation of the
	// method or type named.
	v, err := e.eval(context.Background(), 1, 1, name)
	if v = unwrapValue(v); err != nil || !v.IsValid() {
		if len(parts) < 2 {
			return "", false
		}
		base, err := e.eval(context.Background(), 1, 1, strings.Join(parts[:len(parts)-1], "."))
		if base = unwrapValue(base); err != nil || !base.IsValid() {
			return "", false
		}
		if d, ok := methodDoc(base.Type(), parts[len(parts)-1]); ok {
			return entryText(d), true
		}
		return "", false
	}
	t := v.Type()
	text := fmt.Sprintf("%s %s", name, typeName(t))
	if v.Kind() != reflect.Func && v.CanInterface() {
		s := fmt.Sprintf("%+v", v.Interface())
		if len(s) > 2000 {
			s = s[:2000] + "…"
		}
		text += " = " + s
	}
	if len(parts) >= 2 {
		base, err := e.eval(context.Background(), 1, 1, strings.Join(parts[:len(parts)-1], "."))
		if base = unwrapValue(base); err == nil && base.IsValid() {
			if d, ok := methodDoc(base.Type(), parts[len(parts)-1]); ok {
				return entryText(d), true
			}
		}
	}
	if d, ok := typeDoc(t); ok {
		text += "\n\n" + entryText(d)
	}
	return text, true
}

func entryText(d docs.Entry) string {
	if d.Doc == "" {
		return d.Decl
	}
	return d.Decl + "\n\n" + strings.TrimSpace(d.Doc)
}

// packagePaths are the packages a cell could mean by name: the one it
// imported under that name, or else every package with that name.
func (e *engine) packagePaths(name string) []string {
	if p, ok := e.pkgNames[name]; ok {
		return []string{p}
	}
	if e.isGlobal(name) {
		return nil
	}
	var out []string
	for key := range e.exports {
		i := strings.LastIndex(key, "/")
		if i >= 0 && key[i+1:] == name {
			out = append(out, key[:i])
		}
	}
	slices.Sort(out)
	return out
}

// isGlobal reports whether a cell declared name.
func (e *engine) isGlobal(name string) bool {
	if _, ok := e.decls[name]; ok {
		return true
	}
	return e.vars[name]
}

// typeOfSymbol describes a symbol of a compiled package from its table
// entry: types are stored as nil pointers to them.
func typeOfSymbol(v reflect.Value) string {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return "type " + typeName(v.Type().Elem())
	}
	return typeName(v.Type())
}

// typeName prints a type the way Go source does: interface{} as any.
func typeName(t reflect.Type) string {
	return strings.ReplaceAll(t.String(), "interface {}", "any")
}

// typeDoc is the documentation of a compiled named type (through one
// pointer).
func typeDoc(t reflect.Type) (docs.Entry, bool) {
	if t.Kind() == reflect.Pointer && t.Name() == "" {
		t = t.Elem()
	}
	if t.PkgPath() == "" || t.Name() == "" {
		return docs.Entry{}, false
	}
	return docs.Lookup(t.PkgPath(), t.Name())
}

// methodDoc is the documentation of a method of a compiled type.
func methodDoc(t reflect.Type, method string) (docs.Entry, bool) {
	if !token.IsExported(method) {
		return docs.Entry{}, false
	}
	if t.Kind() == reflect.Pointer && t.Name() == "" {
		t = t.Elem()
	}
	if t.PkgPath() == "" || t.Name() == "" {
		return docs.Entry{}, false
	}
	return docs.Lookup(t.PkgPath(), t.Name()+"."+method)
}

var directiveRE = regexp.MustCompile(`(?m)^//line .*\n`)

// stripDirectives removes the //line directives the kernel adds to kept
// declarations.
func stripDirectives(src string) string { return directiveRE.ReplaceAllString(src, "") }
