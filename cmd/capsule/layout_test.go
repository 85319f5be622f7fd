package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"

	"github.com/rogpeppe/go-internal/testscript"
)

// The capsule scripts damage capsules the way an attacker or a bad disk
// would, with these commands:
//
//	flipbyte LAYOUT TITLE            one byte of the layer titled TITLE changes
//	forge LAYOUT config OLD NEW      the config's text OLD becomes NEW, and the
//	                                 config, manifest and index digests are
//	                                 recomputed so that every digest matches
//	forge LAYOUT title OLD NEW       a layer's title OLD becomes NEW, likewise
//	forge LAYOUT file TITLE OLD NEW  every OLD in the (uncompressed) layer
//	                                 titled TITLE becomes NEW, likewise
//	forgeargv LAYOUT RUN ARG...      run RUN's command line becomes ARG...,
//	                                 in its run.json and in the config alike
//	editre FILE REGEXP REPLACEMENT   every match in FILE (a glob naming one
//	                                 file) is replaced, as regexp.ReplaceAll does
//
// They work on the capsule tagged "latest" of an OCI layout directory.
var layoutCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"flipbyte": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: flipbyte LAYOUT TITLE")
		}
		l := readLayout(ts, args[0])
		for _, layer := range l.manifest["layers"].([]any) {
			d := layer.(map[string]any)
			if titleOf(d) == args[1] {
				p := l.blobPath(d["digest"].(string))
				b, err := os.ReadFile(p)
				ts.Check(err)
				b[len(b)/2] ^= 0x20
				ts.Check(os.WriteFile(p, b, 0o644))
				return
			}
		}
		ts.Fatalf("flipbyte: no layer titled %s", args[1])
	},
	"forge": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 4 && !(len(args) == 5 && args[1] == "file") {
			ts.Fatalf("usage: forge LAYOUT config|title OLD NEW, or forge LAYOUT file TITLE OLD NEW")
		}
		l := readLayout(ts, args[0])
		switch args[1] {
		case "config":
			cd := l.manifest["config"].(map[string]any)
			b, err := os.ReadFile(l.blobPath(cd["digest"].(string)))
			ts.Check(err)
			if !bytes.Contains(b, []byte(args[2])) {
				ts.Fatalf("forge: the config has no %q", args[2])
			}
			b = bytes.Replace(b, []byte(args[2]), []byte(args[3]), 1)
			cd["digest"], cd["size"] = l.writeBlob(ts, b), len(b)
		case "title":
			found := false
			for _, layer := range l.manifest["layers"].([]any) {
				d := layer.(map[string]any)
				if titleOf(d) == args[2] {
					d["annotations"].(map[string]any)["org.opencontainers.image.title"] = args[3]
					found = true
				}
			}
			if !found {
				ts.Fatalf("forge: no layer titled %s", args[2])
			}
		case "file":
			if len(args) != 5 {
				ts.Fatalf("usage: forge LAYOUT file TITLE OLD NEW")
			}
			d := l.layer(ts, args[2])
			b, err := os.ReadFile(l.blobPath(d["digest"].(string)))
			ts.Check(err)
			if !bytes.Contains(b, []byte(args[3])) {
				ts.Fatalf("forge: %s has no %q", args[2], args[3])
			}
			b = bytes.ReplaceAll(b, []byte(args[3]), []byte(args[4]))
			d["digest"], d["size"] = l.writeBlob(ts, b), len(b)
		default:
			ts.Fatalf("forge: %s: want config, title or file", args[1])
		}
		l.write(ts)
	},
	"forgeargv": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 3 {
			ts.Fatalf("usage: forgeargv LAYOUT RUN ARG...")
		}
		l := readLayout(ts, args[0])
		argv := args[2:]
		// The run's run.json layer.
		d := l.layer(ts, "runs/"+args[1]+"/run.json")
		b, err := os.ReadFile(l.blobPath(d["digest"].(string)))
		ts.Check(err)
		var rec map[string]any
		ts.Check(json.Unmarshal(b, &rec))
		rec["argv"] = argv
		b, err = json.MarshalIndent(rec, "", "  ")
		ts.Check(err)
		d["digest"], d["size"] = l.writeBlob(ts, b), len(b)
		// The same record in the config.
		cd := l.manifest["config"].(map[string]any)
		b, err = os.ReadFile(l.blobPath(cd["digest"].(string)))
		ts.Check(err)
		var cfg map[string]any
		ts.Check(json.Unmarshal(b, &cfg))
		found := false
		for _, r := range cfg["runs"].([]any) {
			if r := r.(map[string]any); r["name"] == args[1] {
				r["record"].(map[string]any)["argv"] = argv
				found = true
			}
		}
		if !found {
			ts.Fatalf("forgeargv: the config has no run %s", args[1])
		}
		b, err = json.Marshal(cfg)
		ts.Check(err)
		cd["digest"], cd["size"] = l.writeBlob(ts, b), len(b)
		l.write(ts)
	},
	"editre": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 {
			ts.Fatalf("usage: editre FILE REGEXP REPLACEMENT")
		}
		files, err := filepath.Glob(ts.MkAbs(args[0]))
		ts.Check(err)
		if len(files) != 1 {
			ts.Fatalf("editre: %s names %d files, want one", args[0], len(files))
		}
		re, err := regexp.Compile(args[1])
		ts.Check(err)
		b, err := os.ReadFile(files[0])
		ts.Check(err)
		if !re.Match(b) {
			ts.Fatalf("editre: %s has no match of %s", files[0], args[1])
		}
		ts.Check(os.WriteFile(files[0], re.ReplaceAll(b, []byte(args[2])), 0o644))
	},
}

// layer is the manifest's layer titled title.
func (l *layout) layer(ts *testscript.TestScript, title string) map[string]any {
	for _, layer := range l.manifest["layers"].([]any) {
		if d := layer.(map[string]any); titleOf(d) == title {
			return d
		}
	}
	ts.Fatalf("no layer titled %s", title)
	return nil
}

// write stores the edited manifest and points index.json at it.
func (l *layout) write(ts *testscript.TestScript) {
	mb, err := json.Marshal(l.manifest)
	ts.Check(err)
	l.entry["digest"], l.entry["size"] = l.writeBlob(ts, mb), len(mb)
	ib, err := json.Marshal(l.index)
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(l.dir, "index.json"), ib, 0o644))
}

type layout struct {
	dir      string
	index    map[string]any
	entry    map[string]any // the manifest's descriptor in index.json
	manifest map[string]any
}

func readLayout(ts *testscript.TestScript, dir string) *layout {
	l := &layout{dir: ts.MkAbs(dir)}
	b, err := os.ReadFile(filepath.Join(l.dir, "index.json"))
	ts.Check(err)
	ts.Check(json.Unmarshal(b, &l.index))
	for _, m := range l.index["manifests"].([]any) {
		d := m.(map[string]any)
		if ann, ok := d["annotations"].(map[string]any); ok && ann["org.opencontainers.image.ref.name"] == "latest" {
			l.entry = d
		}
	}
	if l.entry == nil {
		ts.Fatalf("%s: no capsule tagged latest", dir)
	}
	b, err = os.ReadFile(l.blobPath(l.entry["digest"].(string)))
	ts.Check(err)
	ts.Check(json.Unmarshal(b, &l.manifest))
	return l
}

func (l *layout) blobPath(digest string) string {
	return filepath.Join(l.dir, "blobs", "sha256", digest[len("sha256:"):])
}

func (l *layout) writeBlob(ts *testscript.TestScript, b []byte) string {
	sum := sha256.Sum256(b)
	d := "sha256:" + hex.EncodeToString(sum[:])
	ts.Check(os.WriteFile(l.blobPath(d), b, 0o644))
	return d
}

func titleOf(d map[string]any) string {
	ann, _ := d["annotations"].(map[string]any)
	s, _ := ann["org.opencontainers.image.title"].(string)
	return s
}
