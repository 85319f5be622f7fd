package pyre

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// caseScript measures CPython's IGNORECASE behaviour code point by code
// point. It only runs patterns and reports what they match; casefold.go
// holds the rules these measurements bear out, and casetables.go the one
// piece of data they need (foldExtra). Run it with
//
//	PYRE_CASEFOLD=check go test -run TestCaseFoldTables   # a few minutes
//	PYRE_CASEFOLD=write go test -run TestCaseFoldTables   # also rewrites casetables.go
const caseScript = `
import json, re, sys

cps = [i for i in range(0x110000) if not 0xd800 <= i < 0xe000]
allstr = ''.join(map(chr, cps))

# Candidates: every character some case mapping touches. Any other one is
# checked below to match nothing but itself.
cand = set(range(128))
for i in cps:
    c = chr(i)
    outs = (c.lower(), c.upper(), c.casefold(), c.title(), c.swapcase())
    if any(o != c for o in outs):
        cand.add(i)
        for o in outs:
            cand.update(map(ord, o))
cand = sorted(cand)
candstr = ''.join(map(chr, cand))

def found(p, s):
    return [ord(x) for x in re.findall(p, s)]

res = {'cand': cand}
for mode in ('i', 'ia'):
    m = {}
    # A literal, a class of that one character, and one of several items
    # (the character and NUL).
    for name, tmpl in (('lit', '(?%s)%s'), ('single', '(?%s)[%s]'), ('multi', '(?%s)[%s\\x00]')):
        out = {}
        for i in cand:
            got = found(tmpl % (mode, re.escape(chr(i))), allstr)
            if name == 'multi':
                got = [x for x in got if x != 0 or i == 0]
            if got != [i]:
                out[i] = got
        m[name] = out
    # Every other character matches only itself.
    others = []
    candset = set(cand)
    for i in cps:
        if i in candset:
            continue
        e = re.escape(chr(i))
        if found('(?%s)%s' % (mode, e), candstr + chr(i)) != [i]:
            others.append(i)
        re.purge()
    m['others'] = others[:100]
    # Ranges reaching above U+FFFF: for each BMP candidate x, the largest
    # lo such that x matches [lo-\U00010000].
    bmp = [x for x in cand if x <= 0xffff]
    bmpstr = ''.join(map(chr, bmp))
    top = {}
    for lo in bmp:
        for x in found('(?%s)[\\U%08x-\\U00010000]' % (mode, lo), bmpstr):
            top[x] = lo
    m['top'] = top
    # ... and for each astral candidate, the astral y with x in [y-y].
    ast = [x for x in cand if x > 0xffff]
    aststr = ''.join(map(chr, ast))
    probes = {}
    for y in ast:
        for x in found('(?%s)[\\U%08x-\\U%08x]' % (mode, y, y), aststr):
            probes.setdefault(x, []).append(y)
    m['astral'] = probes
    res[mode] = m
    print(mode, 'done', file=sys.stderr)
json.dump(res, sys.stdout)
`

type caseMeasure struct {
	Lit, Single, Multi map[rune][]rune
	Others             []rune
	Top                map[rune]rune
	Astral             map[rune][]rune
}

func TestCaseFoldTables(t *testing.T) {
	mode := os.Getenv("PYRE_CASEFOLD")
	if mode == "" {
		t.Skip("set PYRE_CASEFOLD=check (or write) to measure IGNORECASE on CPython (takes minutes)")
	}
	cmd := exec.Command(pythonPath, "-I", "-c", caseScript)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", pythonPath, err, stderr.String())
	}
	var res struct {
		Cand []rune
		I    caseMeasure `json:"i"`
		IA   caseMeasure `json:"ia"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}

	// Derive foldExtra: the orbits Python's literal matching shows that
	// differ from Go's simple case folding orbits.
	extra := map[rune][]rune{}
	for _, c := range res.Cand {
		py, ok := res.I.Lit[c]
		if !ok {
			py = []rune{c}
		}
		slices.Sort(py)
		goOrbit := []rune{c}
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			goOrbit = append(goOrbit, f)
		}
		slices.Sort(goOrbit)
		if !slices.Equal(py, goOrbit) {
			extra[c] = py
		}
	}
	if mode == "write" {
		writeCaseTables(t, extra)
	} else if fmt.Sprint(sortedMap(extra)) != fmt.Sprint(sortedMap(foldExtra)) {
		t.Errorf("foldExtra is out of date; run with PYRE_CASEFOLD=write\n got %v\nwant %v", sortedMap(foldExtra), sortedMap(extra))
	}

	// Check the rules of casefold.go against every measurement.
	for _, m := range []struct {
		name string
		fl   flags
		meas caseMeasure
	}{{"(?i)", flagI, res.I}, {"(?ia)", flagI | flagA, res.IA}} {
		if len(m.meas.Others) > 0 {
			t.Errorf("%s: characters outside the candidates match others: %U", m.name, m.meas.Others)
		}
		bad := 0
		check := func(what string, c rune, got runeSet, want []rune) {
			if !got.equal(setOf(want...)) && bad < 20 {
				bad++
				t.Errorf("%s %s %U: pyre %v, Python %U", m.name, what, c, got, want)
			}
		}
		for _, c := range res.Cand {
			get := func(tab map[rune][]rune) []rune {
				if v, ok := tab[c]; ok {
					return v
				}
				return []rune{c}
			}
			check("literal", c, charSet(c, m.fl), get(m.meas.Lit))
			check("[c]", c, classSet(&class{items: []classItem{{lo: c, hi: c, lit: true}}}, m.fl), get(m.meas.Single))
			multi := classSet(&class{items: []classItem{{lo: c, hi: c, lit: true}, {lo: 0, hi: 0, lit: true}}}, m.fl)
			if c != 0 {
				multi = subtract(multi, setOf(0))
			}
			check("[c\\x00]", c, multi, get(m.meas.Multi))
		}
		// Ranges above U+FFFF: for each BMP candidate x, the largest
		// candidate lo with x in [lo-\U00010000]; for each astral one, the
		// astral candidates y with x in [y-y].
		got := map[rune]rune{}
		astral := map[rune][]rune{}
		for _, lo := range res.Cand {
			s := rangeFold(lo, max(lo, 0x10000), m.fl)
			for _, x := range res.Cand {
				switch {
				case lo <= 0xffff && x <= 0xffff && s.contains(x):
					got[x] = lo
				case lo > 0xffff && x > 0xffff && s.contains(x):
					astral[x] = append(astral[x], lo)
				}
			}
		}
		for _, x := range res.Cand {
			if x <= 0xffff {
				if want, ok := m.meas.Top[x]; (!ok || got[x] != want) && bad < 20 {
					bad++
					t.Errorf("%s: %U is in [lo-U+10000] up to lo=%U, Python up to %U", m.name, x, got[x], want)
				}
				continue
			}
			want, ok := m.meas.Astral[x]
			if !ok {
				want = []rune{x}
			}
			check("in [y-y] for y", x, setOf(astral[x]...), want)
		}
	}
}
func sortedMap(m map[rune][]rune) [][]rune {
	var keys []rune
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out [][]rune
	for _, k := range keys {
		out = append(out, append([]rune{k}, m[k]...))
	}
	return out
}

func writeCaseTables(t *testing.T, extra map[rune][]rune) {
	var b strings.Builder
	b.WriteString(`// Code generated by PYRE_CASEFOLD=write go test -run TestCaseFoldTables; DO NOT EDIT.

package pyre

// foldExtra holds the IGNORECASE orbits CPython 3.11 shows that differ
// from Go's unicode.SimpleFold orbits, keyed by each of their members.
var foldExtra = map[rune][]rune{
`)
	for _, e := range sortedMap(extra) {
		fmt.Fprintf(&b, "\t0x%04X: {", e[0])
		for i, r := range e[1:] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "0x%04X", r)
		}
		fmt.Fprintf(&b, "}, // %s\n", strings.Join(strings.Split(string(e[1:]), ""), " "))
	}
	b.WriteString("}\n")
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(".", "casetables.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
}
