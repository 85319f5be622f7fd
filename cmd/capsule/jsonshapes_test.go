package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
)

var updateJSONDoc = flag.Bool("update-json-doc", false, "rewrite docs/json.md from the types the commands print")

// jsonShape is what one command prints with --json: a type of the
// project's, or a small object the command builds, described by keys.
type jsonShape struct {
	command string
	typ     reflect.Type
	keys    [][3]string // for a built object: key, type, meaning
	note    string
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// jsonShapes are the documents of every command's --json, in the order of
// docs/json.md.
var jsonShapes = []jsonShape{
	{command: "rescore", typ: typeOf[analysis.RescoreReport]()},
	{command: "rescore --task T --regex R", typ: typeOf[analysis.CounterfactualReport]()},
	{command: "rescore --coverage", typ: typeOf[analysis.RescoreCoverage]()},
	{command: "scores", typ: typeOf[analysis.Uncertainties]()},
	{command: "compare", typ: typeOf[analysis.Comparisons]()},
	{command: "failures", typ: typeOf[analysis.FailureReport]()},
	{command: "attribute", typ: typeOf[analysis.Attribution]()},
	{command: "show", typ: typeOf[showReport]()},
	{command: "run --dry-run", typ: typeOf[dryRunPlan]()},
	{command: "run", keys: [][3]string{
		{"study", "string", "the study's name"},
		{"runs", "array of object", "each run of the sweep: `name`, `label`, `status` (as run.json records it), `seconds`, and `error` and `stale` when there is one"},
	}},
	{command: "demo", typ: typeOf[demoResult]()},
	{command: "pack", typ: typeOf[capsule.PackResult](), keys: [][3]string{
		{"capsule", "string", "where the capsule was written (layout folder or .tar)"},
		{"study", "string", "the study's name"},
		{"digest", "string", "the manifest's digest, sha256:..."},
		{"tag", "string", "the tag in the layout's index"},
		{"files", "integer", "files packed"},
		{"bytes", "integer", "their size before compression"},
		{"stored", "integer", "the size of the blobs written"},
		{"tables", "boolean", "whether the capsule holds the re-scoring and attribution tables (false: an incomplete study)"},
		{"unsupported", "array of string", "checks whose samples do not give lm-eval's number (packed with --allow-differs); left out when empty"},
	}, note: "written by PackResult's own MarshalJSON"},
	{command: "verify", keys: [][3]string{
		{"capsule", "string", "the reference verified"},
		{"verification", "object: capsule.Verification", "every check of the capsule (below)"},
	}},
	{command: "verify (the verification)", typ: typeOf[capsule.Verification]()},
	{command: "replay", typ: typeOf[capsule.ReplayReport]()},
	{command: "inspect", typ: typeOf[capsule.Inspection]()},
	{command: "diff", keys: [][3]string{
		{"a", "string", "the first capsule's reference"},
		{"b", "string", "the second capsule's reference"},
		{"digest_a", "string", "its manifest digest"},
		{"digest_b", "string", "the second's"},
		{"diff", "object: capsule.Differences", "what differs (below)"},
	}},
	{command: "diff (the differences)", typ: typeOf[capsule.Differences]()},
	{command: "push", keys: [][3]string{
		{"target", "string", "the reference pushed to"},
		{"digest", "string", "the manifest's digest"},
		{"reference", "string", "the target pinned by digest (REPO@sha256:...)"},
	}},
	{command: "pull", keys: [][3]string{
		{"reference", "string", "the reference pulled"},
		{"digest", "string", "the manifest's digest"},
		{"layout", "string", "the OCI layout folder written"},
		{"tag", "string", "the tag written into the layout's index"},
	}},
	{command: "unpack", keys: [][3]string{
		{"capsule", "string", "the reference unpacked"},
		{"digest", "string", "the manifest's digest"},
		{"study", "string", "the study's name"},
		{"dir", "string", "the folder written"},
		{"files", "integer", "files written"},
	}},
	{command: "report", keys: [][3]string{
		{"html", "string", "the HTML report written"},
		{"markdown", "string", "the Markdown report written"},
		{"simulated", "boolean", "whether any run came from the simulated backend"},
	}},
	{command: "generate", keys: [][3]string{
		{"simulated", "boolean", "always true: the simulated backend wrote it, no model was run"},
		{"dir", "string", "the output folder"},
		{"results", "string", "the results file written"},
		{"samples", "array of string", "the samples files written"},
		{"bytes", "integer", "bytes written"},
		{"lines", "integer", "sample lines written"},
	}},
	{command: "gate", keys: [][3]string{
		{"baseline", "string", "the baseline's reference (run folder or capsule)"},
		{"candidate", "string", "the candidate's reference"},
		{"baseline_model", "object {id, revision, digest}", "the baseline's model as its run recorded it"},
		{"candidate_model", "object {id, revision, digest}", "the candidate's model"},
		{"verdict", "string", "pass, regression or refused: the whole gate's verdict"},
		{"test", "string", "the policy's test: non-inferiority or no-significant-drop"},
		{"alpha", "number", "the policy's family-wise alpha (Holm across the gated metrics)"},
		{"changes", "array of object {field, task, baseline, candidate, allowed}", "settings that differ between the two (task hashes, chat template, harness), and whether the policy allows each"},
		{"refusals", "array of string", "why the gate refused to compare, when it did"},
		{"metrics", "array of object", "one per gated task and metric: `task`, `metric`, `filter`, `verdict`, `reason`, `test`, `higher_is_better`, `unit`, `n` (common documents), `only_baseline`, `only_candidate`, `missing_examples`, and, for a pass or a regression, `baseline`, `candidate`, `delta`, `ci_low`, `ci_high`, `level`, `p`, `p_holm`, `p_test`, `margin` (lm-eval's values; null otherwise)"},
		{"tasks_not_gated", "array of string", "the baseline's tasks the policy does not gate"},
	}, note: "written by gate.Result's own MarshalJSON; docs/gate.md explains every field"},
	{command: "history", typ: typeOf[historyJSON]()},
	{command: "suite init", keys: [][3]string{
		{"suite", "string", "the suite file written"},
	}},
	{command: "run SUITE --model ...", keys: [][3]string{
		{"suite", "string", "the suite's name"},
		{"checkpoints", "array of object: [suiteCheckpoint](#suitecheckpoint)", "one per checkpoint run"},
	}},
	{command: "run SUITE (a checkpoint)", typ: typeOf[suiteCheckpoint]()},
	{command: "kernel install", keys: [][3]string{
		{"name", "string", "the kernelspec's name"},
		{"dir", "string", "the kernelspec folder written"},
		{"argv", "array of string", "the command Jupyter starts"},
	}},
}

// fieldDocs reads the doc comments of struct fields and types in the
// packages the printed types come from: "pkg.Type.Field" and "pkg.Type".
func fieldDocs(t *testing.T) map[string]string {
	docs := map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range []string{"../../analysis", "../../capsule", "../../study", "../../harness", "../../history", "../../gate", "."} {
		pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for name, p := range pkgs {
			for _, f := range p.Files {
				ast.Inspect(f, func(n ast.Node) bool {
					gd, ok := n.(*ast.GenDecl)
					if !ok || gd.Tok != token.TYPE {
						return true
					}
					for _, spec := range gd.Specs {
						ts := spec.(*ast.TypeSpec)
						tdoc := ts.Doc
						if tdoc == nil && len(gd.Specs) == 1 {
							tdoc = gd.Doc
						}
						prefix := name + "."
						if name == "main" {
							prefix = ""
						}
						docs[prefix+ts.Name.Name] = firstSentence(tdoc.Text())
						st, ok := ts.Type.(*ast.StructType)
						if !ok {
							continue
						}
						for _, fl := range st.Fields.List {
							text := fl.Doc.Text()
							if text == "" {
								text = fl.Comment.Text()
							}
							for _, id := range fl.Names {
								docs[prefix+ts.Name.Name+"."+id.Name] = firstSentence(strings.TrimPrefix(text, id.Name+" "))
							}
						}
					}
					return false
				})
			}
		}
	}
	return docs
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	var p doc.Package
	s = p.Synopsis(s)
	return strings.ReplaceAll(s, "|", `\|`)
}

// typeName is how the document names a type: pkg.Name.
func typeName(t reflect.Type) string {
	pkg := t.PkgPath()
	if strings.HasSuffix(pkg, "/cmd/capsule") || pkg == "main" {
		return t.Name()
	}
	return pkg[strings.LastIndex(pkg, "/")+1:] + "." + t.Name()
}

// describe says what a field's values are, naming project types it
// documents below (queued in todo).
func describe(t reflect.Type, todo *[]reflect.Type) string {
	switch {
	case t == reflect.TypeFor[analysis.Number]():
		return "number, or null (not set), or \"N/A\" (lm-eval's), or \"NaN\"/\"Infinity\"/\"-Infinity\""
	case t == reflect.TypeFor[analysis.Scale]():
		return "object {unit, factor, lo, hi, known}: how the metric's values are shown (unit \"points\" with factor 100 for a [0, 1] metric)"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return describe(t.Elem(), todo)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string (base64)"
		}
		return "array of " + describe(t.Elem(), todo)
	case reflect.Map:
		return "object: " + describe(t.Key(), todo) + " → " + describe(t.Elem(), todo)
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if t.PkgPath() == "time" {
			return "integer (nanoseconds)"
		}
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Interface:
		return "any JSON value"
	case reflect.Struct:
		if t.PkgPath() == "time" && t.Name() == "Time" {
			return "string (RFC 3339 time)"
		}
		if !projectType(t) {
			return "object: " + t.String() + " (that format's own field names)"
		}
		if !slices.Contains(*todo, t) {
			*todo = append(*todo, t)
		}
		return "object: [" + typeName(t) + "](#" + anchor(typeName(t)) + ")"
	}
	return t.String()
}

func projectType(t reflect.Type) bool {
	p := t.PkgPath()
	return p == "main" || strings.HasPrefix(p, "github.com/evalcapsule/evalcapsule")
}

func anchor(name string) string {
	return strings.ToLower(strings.NewReplacer(".", "", " ", "-").Replace(name))
}

// fieldRows are a struct's JSON keys, with embedded structs' inlined.
func fieldRows(t reflect.Type, docs map[string]string, todo *[]reflect.Type) [][3]string {
	var rows [][3]string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			rows = append(rows, fieldRows(ft, docs, todo)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		what := describe(f.Type, todo)
		if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
			what += "; left out when empty"
		}
		rows = append(rows, [3]string{name, what, docs[typeName(t)+"."+f.Name]})
	}
	return rows
}

func table(b *bytes.Buffer, rows [][3]string) {
	b.WriteString("| key | value | meaning |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", r[0], r[1], r[2])
	}
	b.WriteString("\n")
}

// jsonDoc is docs/json.md: every command's --json document, then every
// project type those documents hold.
func jsonDoc(t *testing.T) []byte {
	docs := fieldDocs(t)
	var b bytes.Buffer
	b.WriteString("<!-- generated by `go test ./cmd/capsule -run TestJSONShapesDoc -update-json-doc`: do not edit -->\n")
	b.WriteString("# What each command prints with `--json`\n\n")
	b.WriteString("The conventions are in [cli.md](cli.md#--json): one indented document on stdout, snake_case keys, the\n")
	b.WriteString("same names for the same things. Scores and differences are lm-eval's own values (a fraction for a\n")
	b.WriteString("[0, 1] metric), with the metric's `scale` beside them where a command also shows them in points;\n")
	b.WriteString("the text output shows every [0, 1] metric in points. A `null` is a number that is not set (or not\n")
	b.WriteString("finite, when the type says so). Generated from the types the commands print, with their doc\n")
	b.WriteString("comments.\n\n")
	var todo []reflect.Type
	for _, s := range jsonShapes {
		fmt.Fprintf(&b, "## `capsule %s --json`\n\n", s.command)
		switch {
		case s.keys != nil:
			if s.note != "" {
				fmt.Fprintf(&b, "An object (%s):\n\n", s.note)
			} else {
				b.WriteString("An object:\n\n")
			}
			table(&b, s.keys)
		default:
			fmt.Fprintf(&b, "An object: [%s](#%s)", typeName(s.typ), anchor(typeName(s.typ)))
			if d := docs[typeName(s.typ)]; d != "" {
				b.WriteString(": " + d)
			}
			b.WriteString("\n\n")
			if !slices.Contains(todo, s.typ) {
				todo = append(todo, s.typ)
			}
		}
	}
	b.WriteString("## The types\n\n")
	for i := 0; i < len(todo); i++ {
		typ := todo[i]
		name := typeName(typ)
		fmt.Fprintf(&b, "### %s\n\n", name)
		if d := docs[name]; d != "" {
			b.WriteString(d + "\n\n")
		}
		switch {
		case typ == reflect.TypeFor[analysis.RunReport]():
			b.WriteString("Written by its own MarshalJSON: an unknown `python_version` is null.\n\n")
		case typ.Implements(marshaler) || reflect.PointerTo(typ).Implements(marshaler):
			b.WriteString("Written by its own MarshalJSON.\n\n")
		}
		table(&b, fieldRows(typ, docs, &todo))
	}
	return b.Bytes()
}

// TestJSONShapesDoc: docs/json.md documents what every command prints, as
// the types are now; -update-json-doc rewrites it.
func TestJSONShapesDoc(t *testing.T) {
	got := jsonDoc(t)
	path := filepath.Join("..", "..", "docs", "json.md")
	if *updateJSONDoc {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: generate it with go test ./cmd/capsule -run TestJSONShapesDoc -update-json-doc", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/json.md is not what the types print now: regenerate it with go test ./cmd/capsule -run TestJSONShapesDoc -update-json-doc")
	}
	// Every command with --json has its section.
	for _, c := range newRootCmd(streams{}).Commands() {
		if c.Flags().Lookup("json") == nil && c.Name() != "kernel" {
			continue
		}
		found := false
		for _, s := range jsonShapes {
			if strings.SplitN(s.command, " ", 2)[0] == c.Name() {
				found = true
			}
		}
		if !found {
			t.Errorf("capsule %s has --json but docs/json.md has no section for it: add it to jsonShapes", c.Name())
		}
	}
}
