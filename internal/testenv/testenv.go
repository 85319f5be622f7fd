// Package testenv finds the parts outside Go that some tests need
// (Debian's /usr/bin/python3 and its modules, chromium, Jupyter, podman,
// ...). A test asks for a part with [Python] or [Command]; when the part
// is missing the test skips with one line naming it and how to install
// it, or fails with that line when the environment variable CI is set
// (.ci/run sets it and installs everything). A package's TestMain calls
// [Main], which prints after the tests one line listing the parts its
// tests skipped for, and nothing when none was missing.
//
// EVALCAPSULE_TESTENV_HIDE, a comma-separated list of part names
// (EVALCAPSULE_TESTENV_HIDE=chromium,python3-sklearn; python3 hides the
// interpreter and all its modules), makes those parts count as missing,
// to see how the tests behave without them.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Interpreter is the reference Python of the differential tests: Debian's
// /usr/bin/python3, not whatever python3 is first on PATH.
const Interpreter = "/usr/bin/python3"

// modules are the Debian packages of the Python modules tests import,
// by module name.
var modules = map[string]string{
	"numpy":               "python3-numpy",
	"scipy":               "python3-scipy",
	"regex":               "python3-regex",
	"sklearn":             "python3-sklearn",
	"junitparser":         "python3-junitparser",
	"jupyter_client":      "python3-jupyter-client",
	"nbconvert":           "python3-nbconvert",
	"nbclient":            "python3-nbclient",
	"jupyter_kernel_test": "python3-jupyter-kernel-test",
	"ipykernel":           "python3-ipykernel",
}

// program is where a command is looked for and how it is installed.
type program struct {
	paths   []string // absolute paths tried in order; none: the name on PATH
	env     string   // a variable that names the program, when set
	install string
	// probe, when set, are arguments the program must run with and exit 0
	// for the part to count as here; probeFails says what it means when
	// it does not.
	probe      []string
	probeFails string
	// integration: only the integration suite (or a benchmark script)
	// runs it, so the README's apt line for the other tests leaves it out.
	integration bool
}

// programs are the commands tests run, by the name tests ask for.
var programs = map[string]program{
	"python3":  {paths: []string{Interpreter}, install: "apt install python3"},
	"chromium": {paths: []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"}, install: "apt install chromium"},
	"bwrap": {paths: []string{"/usr/bin/bwrap"}, install: "apt install bubblewrap",
		// bwrap is there but useless where the kernel refuses it a user
		// namespace: in a chroot, or with unprivileged namespaces off.
		probe:      []string{"--unshare-user", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "true"},
		probeFails: "it cannot create a user namespace here (a chroot, or unprivileged user namespaces switched off)"},
	"jupyter":          {paths: []string{"/usr/bin/jupyter"}, install: "apt install jupyter-core jupyter-nbconvert"},
	"jupyter-notebook": {paths: []string{"/usr/bin/jupyter-notebook"}, install: "apt install jupyter-notebook"},
	"podman":           {install: "apt install podman", integration: true},
	"buildah":          {install: "apt install buildah", integration: true},
	"runc":             {install: "apt install runc", integration: true},
	"skopeo":           {env: "EVALCAPSULE_SKOPEO", install: "apt install skopeo", integration: true},
	"oras":             {env: "EVALCAPSULE_ORAS", install: "go install oras.land/oras/cmd/oras@v1.3.6", integration: true},
	"sbatch":           {install: "apt install slurm-client", integration: true},
	"jq":               {install: "apt install jq", integration: true},
}

var (
	mu      sync.Mutex
	skipped = map[string]string{} // part name: install line
	imports = map[string]bool{}   // module: /usr/bin/python3 imports it
	probed  = map[string]bool{}   // part: its probe ran and exited 0
)

// hidden reports whether EVALCAPSULE_TESTENV_HIDE names part.
func hidden(part string) bool {
	return slices.Contains(strings.Split(os.Getenv("EVALCAPSULE_TESTENV_HIDE"), ","), part)
}

// Install is the command that installs part, "" for a part unknown here.
func Install(part string) string {
	if p, ok := programs[part]; ok {
		return p.install
	}
	if strings.HasPrefix(part, "python3-") {
		return "apt install " + part
	}
	return ""
}

// Python returns Debian's /usr/bin/python3 once it imports every module
// named; otherwise the test skips (fails under CI) naming the Debian
// packages that are missing.
func Python(t testing.TB, module ...string) string {
	t.Helper()
	py := Command(t, "python3")
	var missing, unimported []string
	for _, m := range module {
		pkg := modules[m]
		if pkg == "" {
			pkg = "python3-" + m
		}
		if !hidden(pkg) && importable(py, m) {
			continue
		}
		unimported = append(unimported, m)
		if !slices.Contains(missing, pkg) {
			missing = append(missing, pkg)
		}
	}
	if len(missing) > 0 {
		parts := make([]part, len(missing))
		for i, pkg := range missing {
			parts[i] = part{pkg, "apt install " + pkg}
		}
		lack(t, parts, Interpreter+" cannot import "+strings.Join(unimported, ", "))
	}
	return py
}

// HasModule reports whether Debian's /usr/bin/python3 is here and imports
// module, for tests that check either of two behaviours (with pip and
// without it) rather than skip.
func HasModule(module string) bool {
	py, ok := Find("python3")
	return ok && importable(py, module)
}

// PythonVersion is the version of Debian's /usr/bin/python3, the reference
// interpreter (the test skips, or fails under CI, without it): tests of
// numerics that changed between versions (sum() compensates from 3.12)
// compare against the rule of the version that computed the reference.
func PythonVersion(t testing.TB) (major, minor int) {
	t.Helper()
	py := Python(t)
	out, err := exec.Command(py, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])").Output()
	if err != nil {
		t.Fatalf("%s: asking its version: %v", py, err)
	}
	if _, err := fmt.Sscan(string(out), &major, &minor); err != nil {
		t.Fatalf("%s: version %q: %v", py, out, err)
	}
	return major, minor
}

// importable reports whether py imports module, asking once per module.
func importable(py, module string) bool {
	mu.Lock()
	ok, asked := imports[module]
	mu.Unlock()
	if !asked {
		ok = exec.Command(py, "-c", "import "+module).Run() == nil
		mu.Lock()
		imports[module] = ok
		mu.Unlock()
	}
	return ok
}

// Command returns the path of the program tests know as name (one of
// python3, chromium, jupyter, jupyter-notebook, podman, buildah, runc,
// skopeo, oras, sbatch, jq); missing, the test skips (fails under CI)
// saying how to install it. skopeo and oras may be named by
// EVALCAPSULE_SKOPEO and EVALCAPSULE_ORAS.
func Command(t testing.TB, name string) string {
	t.Helper()
	p, ok := programs[name]
	if !ok {
		t.Fatalf("testenv: no part named %q", name)
	}
	path, found := Find(name)
	if !found {
		where := name + " is not on PATH"
		if len(p.paths) > 0 {
			where = "no " + strings.Join(p.paths, " or ")
		}
		if p.env != "" && os.Getenv(p.env) != "" {
			where = p.env + "=" + os.Getenv(p.env) + " is no program"
		}
		for _, c := range p.paths {
			if st, err := os.Stat(c); err == nil && !st.IsDir() && !hidden(name) && p.probeFails != "" {
				where = c + " is installed but " + p.probeFails
			}
		}
		lack(t, []part{{name, p.install}}, where)
	}
	return path
}

// Find returns the path of the program tests know as name, and whether
// it is here (not hidden by EVALCAPSULE_TESTENV_HIDE).
func Find(name string) (string, bool) {
	p, ok := programs[name]
	if !ok || hidden(name) {
		return "", false
	}
	if p.env != "" && os.Getenv(p.env) != "" {
		path, err := exec.LookPath(os.Getenv(p.env))
		return path, err == nil
	}
	for _, c := range p.paths {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c, works(name, c, p.probe)
		}
	}
	if len(p.paths) > 0 {
		return "", false
	}
	path, err := exec.LookPath(name)
	return path, err == nil
}

// works reports whether the program at path runs with the probe
// arguments (always, without a probe), asking once per part.
func works(name, path string, probe []string) bool {
	if len(probe) == 0 {
		return true
	}
	mu.Lock()
	ok, asked := probed[name]
	mu.Unlock()
	if !asked {
		ok = exec.Command(path, probe...).Run() == nil
		mu.Lock()
		probed[name] = ok
		mu.Unlock()
	}
	return ok
}

// part is one missing part and how to install it.
type part struct{ name, install string }

// Missing returns the one line a test says when part (a name [Command]
// knows, or a Debian python3-* package) is missing. Under CI it is an
// error, to fail with; otherwise part is recorded for [Main]'s summary,
// and the caller skips with the line. It serves callers that cannot
// skip through a testing.TB, such as testscript conditions.
func Missing(name string) (string, error) {
	p := []part{{name, Install(name)}}
	detail := ""
	if prog, ok := programs[name]; ok && prog.probeFails != "" && !hidden(name) {
		for _, c := range prog.paths {
			if st, err := os.Stat(c); err == nil && !st.IsDir() {
				detail = c + " is installed but " + prog.probeFails
			}
		}
	}
	line := missingLine(p, detail)
	if os.Getenv("CI") != "" {
		return "", fmt.Errorf("%s", line+ciNote)
	}
	record(p)
	return line, nil
}

const ciNote = " (CI is set: a missing part fails the test)"

func missingLine(parts []part, detail string) string {
	var names, installs []string
	for _, p := range parts {
		names = append(names, p.name)
		installs = append(installs, strings.TrimPrefix(p.install, "apt install "))
	}
	verb := "is"
	if len(parts) > 1 {
		verb = "are"
	}
	line := strings.Join(names, ", ") + " " + verb + " missing"
	if detail != "" {
		line += " (" + detail + ")"
	}
	install := parts[0].install
	if strings.HasPrefix(install, "apt install ") {
		install = "apt install " + strings.Join(installs, " ")
	}
	if install == "" {
		return line
	}
	return line + ": " + install
}

// lack skips t, or fails it under CI, with one line naming the parts.
func lack(t testing.TB, parts []part, detail string) {
	t.Helper()
	line := missingLine(parts, detail)
	if os.Getenv("CI") != "" {
		t.Fatal(line + ciNote)
	}
	record(parts)
	t.Skip(line)
}

func record(parts []part) {
	mu.Lock()
	defer mu.Unlock()
	for _, p := range parts {
		skipped[p.name] = p.install
	}
}

// Summary is the line [Main] prints: the parts tests skipped for, each
// with its install command, or "" when none was missing.
func Summary() string {
	mu.Lock()
	defer mu.Unlock()
	if len(skipped) == 0 {
		return ""
	}
	var names []string
	for n := range skipped {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		if in := skipped[n]; in != "" {
			names[i] += " (" + in + ")"
		}
	}
	return "skipped for missing parts: " + strings.Join(names, ", ")
}

// Runner runs a package's tests: a *testing.M.
type Runner interface{ Run() int }

// Main runs the tests and then prints [Summary] when it is not empty. A
// TestMain ends with os.Exit(testenv.Main(m)).
func Main(m Runner) int {
	return Wrap(m).Run()
}

// Wrap is m whose Run prints [Summary] after the tests, for a TestMain
// that hands m on (testscript.Main).
func Wrap(m Runner) Runner { return summarized{m} }

type summarized struct{ m Runner }

func (s summarized) Run() int {
	code := s.m.Run()
	if line := Summary(); line != "" {
		fmt.Println(line)
		toTerminal(line)
	}
	return code
}

// toTerminal writes line to the controlling terminal, if there is one:
// go test ./... shows a passing package's output only with -v, so a user
// at a terminal would otherwise never see what was skipped. The line
// names the package, since it appears before go test's "ok" line.
func toTerminal(line string) {
	if os.Getenv("EVALCAPSULE_TESTENV_QUIET") != "" || testing.Verbose() {
		return
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer tty.Close()
	pkg := ""
	if wd, err := os.Getwd(); err == nil {
		if root, err := moduleRoot(wd); err == nil {
			if rel, err := filepath.Rel(root, wd); err == nil {
				pkg = "./" + filepath.ToSlash(rel) + ": "
			}
		}
	}
	fmt.Fprintln(tty, pkg+line)
}

// moduleRoot is the folder above dir holding go.mod.
func moduleRoot(dir string) (string, error) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", os.ErrNotExist
		}
		dir = up
	}
}

// IntegrationEnv switches the integration suite on: the tests that need
// the services .ci/run starts (a registry, Slurm, podman with runc).
const IntegrationEnv = "EVALCAPSULE_INTEGRATION"

// integrationPart is how the summary names the integration suite.
var integrationPart = part{"the integration suite", IntegrationEnv + "=1 with the services .ci/run starts"}

// Integration skips t unless EVALCAPSULE_INTEGRATION is set, saying in
// one line what the test needs; the summary lists the integration suite.
// Under CI it fails instead: CI must run every test.
func Integration(t testing.TB, needs string) {
	t.Helper()
	if os.Getenv(IntegrationEnv) != "" {
		return
	}
	line := IntegrationEnv + " is not set: this test needs " + needs + " (.ci/run starts them)"
	if os.Getenv("CI") != "" {
		t.Fatal(line + ciNote)
	}
	record([]part{integrationPart})
	t.Skip(line)
}

// AptPackages are the Debian packages of every part a test outside the
// integration suite may ask for: the README's apt line must name them all.
func AptPackages() []string {
	var pkgs []string
	add := func(install string) {
		rest, ok := strings.CutPrefix(install, "apt install ")
		if !ok {
			return
		}
		for _, p := range strings.Fields(rest) {
			if !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
	}
	for _, p := range programs {
		if !p.integration {
			add(p.install)
		}
	}
	for _, pkg := range modules {
		add("apt install " + pkg)
	}
	slices.Sort(pkgs)
	return pkgs
}

// Note records that tests were skipped for want of name (installed by
// install), for callers that skip by other means (testscript conditions).
func Note(name, install string) { record([]part{{name, install}}) }

// NoteIntegration records that tests were skipped without the integration
// suite, for callers that skip by other means (testscript conditions).
func NoteIntegration() { record([]part{integrationPart}) }

// Lack skips t (fails it under CI) with line, and lists name with its
// install hint in the summary: for parts that are not programs or Python
// modules, such as the fixtures.
func Lack(t testing.TB, name, install, line string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(line + ciNote)
	}
	record([]part{{name, install}})
	t.Skip(line)
}
