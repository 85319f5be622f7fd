package study

import (
	"fmt"
	"sort"
	"strings"

	"github.com/evalcapsule/evalcapsule/harness"
)

// EnvDiff is one difference between the environment two run records hold:
// the machine, the container image, lm-eval, Python and its packages.
type EnvDiff struct {
	// Field names what differs: "gpu", "gpu count", "driver", "cuda",
	// "image", "lm-eval version", "lm-eval commit", "lm-eval dirty",
	// "python", "python packages", "package <name>", "environment (...)"
	// when neither record holds an environment.
	Field  string `json:"field"`
	Packed string `json:"packed"` // the packed run's value, as text ("" when Unknown names its side)
	Rerun  string `json:"rerun"`  // the rerun's value, as text ("" when Unknown names its side)
	// Unknown says which side could not be read ("packed", "rerun" or
	// "both"); its value is then empty. A field unknown on either side is
	// never taken as equal.
	Unknown string `json:"unknown,omitempty"`
}

// String is the difference in one line.
func (d EnvDiff) String() string {
	show := func(v, side string) string {
		if d.Unknown == side || d.Unknown == "both" {
			return "unknown"
		}
		return v
	}
	return fmt.Sprintf("%s: packed %s, rerun %s", d.Field, show(d.Packed, "packed"), show(d.Rerun, "rerun"))
}

// DiffEnvironments lists every difference between the environments two run
// records hold (the packed run's, a's, and its rerun's, b's): the GPU
// models and their count, driver, CUDA, the container image's digest,
// lm-eval's version, commit and dirty flag, Python, and every package of
// pip freeze added, removed or at another version. A field that one
// record could not read (nvidia-smi missing, no checkout, no environment
// recorded at all) is listed as unknown, never as equal; records that hold
// no environment on either side (simulated runs) give one "environment"
// entry for the machine's fields.
func DiffEnvironments(a, b *harness.RunRecord) []EnvDiff {
	var out []EnvDiff
	add := func(field string, va, vb string, okA, okB bool) {
		switch {
		case okA && okB && va == vb:
			return
		case !okA && !okB:
			out = append(out, EnvDiff{Field: field, Unknown: "both"})
		case !okA:
			out = append(out, EnvDiff{Field: field, Rerun: vb, Unknown: "packed"})
		case !okB:
			out = append(out, EnvDiff{Field: field, Packed: va, Unknown: "rerun"})
		default:
			out = append(out, EnvDiff{Field: field, Packed: va, Rerun: vb})
		}
	}
	if a.Env == nil && b.Env == nil {
		out = append(out, EnvDiff{Field: "environment (GPU, driver, CUDA, Python, packages)", Unknown: "both"})
	} else {
		ea, eb := a.Env, b.Env
		ga, okA := gpuModels(ea)
		gb, okB := gpuModels(eb)
		add("gpu", ga, gb, okA, okB)
		na, okA := gpuCount(ea)
		nb, okB := gpuCount(eb)
		add("gpu count", na, nb, okA, okB)
		field := func(f func(*harness.Environment) string) (string, string, bool, bool) {
			var va, vb string
			if ea != nil {
				va = f(ea)
			}
			if eb != nil {
				vb = f(eb)
			}
			return va, vb, va != "", vb != ""
		}
		va, vb, okA, okB := field(func(e *harness.Environment) string { return e.DriverVersion })
		add("driver", va, vb, okA, okB)
		va, vb, okA, okB = field(func(e *harness.Environment) string { return e.CUDAVersion })
		add("cuda", va, vb, okA, okB)
		va, vb, okA, okB = field(func(e *harness.Environment) string { return e.PythonVersion })
		add("python", va, vb, okA, okB)
		out = append(out, diffPackages(ea, eb)...)
	}
	add("image", imageDigest(a.Image), imageDigest(b.Image), true, true)
	va, vb := lmEvalVersion(a), lmEvalVersion(b)
	add("lm-eval version", va, vb, va != "", vb != "")
	add("lm-eval commit", a.Harness.Commit, b.Harness.Commit, a.Harness.Commit != "", b.Harness.Commit != "")
	// Only a known commit comes with a dirty flag that was looked at.
	add("lm-eval dirty", fmt.Sprint(a.Harness.Dirty), fmt.Sprint(b.Harness.Dirty), a.Harness.Commit != "", b.Harness.Commit != "")
	return out
}

// gpuModels is the GPUs of an environment by model and count
// ("NVIDIA H200 ×8"); not known when nvidia-smi listed none.
func gpuModels(e *harness.Environment) (string, bool) {
	if e == nil || len(e.GPUs) == 0 {
		return "", false
	}
	n := map[string]int{}
	for _, g := range e.GPUs {
		n[g.Name]++
	}
	var names []string
	for name := range n {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		names[i] = fmt.Sprintf("%s ×%d", cmpOr(name, "(unnamed)"), n[name])
	}
	return strings.Join(names, ", "), true
}

func gpuCount(e *harness.Environment) (string, bool) {
	if e == nil || len(e.GPUs) == 0 {
		return "", false
	}
	return fmt.Sprint(len(e.GPUs)), true
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// imageDigest names the image a run ran in by its digest: the platform
// manifest's, else the index's, else the reference; "none" when the run
// was not in a container.
func imageDigest(im *harness.ImageInfo) string {
	switch {
	case im == nil || im.Ref == "" && im.IndexDigest == "" && im.PlatformDigest == "":
		return "none (not in a container)"
	case im.PlatformDigest != "":
		return im.PlatformDigest
	case im.IndexDigest != "":
		return im.IndexDigest
	}
	if _, d, ok := strings.Cut(im.Ref, "@"); ok {
		return d
	}
	return im.Ref + " (no digest)"
}

// lmEvalVersion is the installed lm-eval's version where the environment
// was captured, else the version the record pins.
func lmEvalVersion(r *harness.RunRecord) string {
	if r.Env != nil && r.Env.LMEvalVersion != "" {
		return r.Env.LMEvalVersion
	}
	return r.Harness.Version
}

// diffPackages lists the packages of pip freeze added, removed or changed
// between two environments (names compared in their normal form); when
// one side has no list, that it is unknown.
func diffPackages(a, b *harness.Environment) []EnvDiff {
	pa, okA := packages(a)
	pb, okB := packages(b)
	switch {
	case !okA && !okB:
		return []EnvDiff{{Field: "python packages", Unknown: "both"}}
	case !okA:
		return []EnvDiff{{Field: "python packages", Rerun: fmt.Sprintf("%d packages", len(pb)), Unknown: "packed"}}
	case !okB:
		return []EnvDiff{{Field: "python packages", Packed: fmt.Sprintf("%d packages", len(pa)), Unknown: "rerun"}}
	}
	names := map[string]bool{}
	for n := range pa {
		names[n] = true
	}
	for n := range pb {
		names[n] = true
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var out []EnvDiff
	for _, n := range sorted {
		va, inA := pa[n]
		vb, inB := pb[n]
		switch {
		case !inA:
			out = append(out, EnvDiff{Field: "package " + n, Packed: "absent", Rerun: vb})
		case !inB:
			out = append(out, EnvDiff{Field: "package " + n, Packed: va, Rerun: "absent"})
		case va != vb:
			out = append(out, EnvDiff{Field: "package " + n, Packed: va, Rerun: vb})
		}
	}
	return out
}

// packages maps an environment's packages by normal name to their version
// (or source, for a direct reference); not known when pip freeze gave none.
func packages(e *harness.Environment) (map[string]string, bool) {
	if e == nil || len(e.Packages) == 0 {
		return nil, false
	}
	m := map[string]string{}
	for _, p := range e.Packages {
		v := p.Version
		if v == "" {
			v = p.Source
		}
		if p.Editable {
			v += " (editable)"
		}
		m[strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(p.Name))] = strings.TrimSpace(v)
	}
	return m, true
}
