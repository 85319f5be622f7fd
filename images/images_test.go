// Package images holds the container definitions of the project: the
// lm-eval image the container runner starts (lm-eval, vLLM and torch
// pinned end to end, capsule as entrypoint) and the capsule image (the
// static binary on scratch). Its tests check, without network, that
// everything a Containerfile installs is pinned: base images by digest,
// Python distributions by exact version, git checkouts by full commit. With
// EVALCAPSULE_INTEGRATION set they also build the capsule image with buildah
// and run it with podman.
package images

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/evalcapsule/evalcapsule/internal/testenv"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/evalcapsule/evalcapsule/harness"
)

// kind is one way a Containerfile fails to pin what it builds.
type kind int

const (
	unpinnedBase      kind = iota + 1 // FROM or COPY --from an image not named by digest
	unresolvedArg                     // a variable in FROM with no value
	unpinnedPip                       // a requirement that is not name==version, a VCS URL at a full commit, or a local path
	floatingDeps                      // pip install without --no-deps: pip picks the dependencies' versions
	missingFile                       // a requirements file that is not in the build context
	conflictingPin                    // one distribution pinned at two versions
	unpinnedGit                       // a git checkout of something other than a full commit
	lmEvalMissing                     // the lm-eval version or commit is not declared
	lmEvalUnsupported                 // an lm-eval version the harness does not know
	lmEvalMismatch                    // the lm-eval version or commit differs between places
	lmEvalCommit                      // the lm-eval commit is not a full commit, or not what is checked out
)

var kindNames = map[kind]string{
	unpinnedBase: "unpinnedBase", unresolvedArg: "unresolvedArg", unpinnedPip: "unpinnedPip",
	floatingDeps: "floatingDeps", missingFile: "missingFile", conflictingPin: "conflictingPin",
	unpinnedGit: "unpinnedGit", lmEvalMissing: "lmEvalMissing", lmEvalUnsupported: "lmEvalUnsupported",
	lmEvalMismatch: "lmEvalMismatch", lmEvalCommit: "lmEvalCommit",
}

func (k kind) String() string { return kindNames[k] }

// finding is one problem, where it is (file:line) and what it is.
type finding struct {
	kind  kind
	where string
	msg   string
}

func (f finding) String() string { return fmt.Sprintf("%s: %s (%s)", f.where, f.msg, f.kind) }

// pin is one Python distribution installed at one version.
type pin struct {
	name, version, where string
}

// stage is what the checks need to know about one FROM ... stage.
type stage struct {
	name       string
	base       string            // the resolved FROM reference
	vars       map[string]string // ARG and ENV values in scope
	labels     map[string]string
	copies     map[string]string // path in the image -> path in the build context
	pins       []pin
	commits    []string // full commits checked out with git or installed from VCS URLs
	entrypoint []string
	runs       int
	workdir    string
}

// containerfile is a parsed and checked Containerfile.
type containerfile struct {
	name     string
	stages   []*stage
	findings []finding
}

func (c *containerfile) final() *stage { return c.stages[len(c.stages)-1] }

func (c *containerfile) report(k kind, where, format string, args ...any) {
	c.findings = append(c.findings, finding{k, where, fmt.Sprintf(format, args...)})
}

// instruction is one Containerfile instruction, continuation lines joined.
type instruction struct {
	line int
	cmd  string // upper case
	args string
}

// parseInstructions splits a Containerfile into instructions. Comment
// lines are dropped, also inside continued instructions, as the builders
// do; the escape character is the default backslash.
func parseInstructions(src string) []instruction {
	var out []instruction
	var cur *instruction
	var text strings.Builder
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur == nil) {
			continue
		}
		if cur == nil {
			cur = &instruction{line: n}
			text.Reset()
		}
		cont := strings.HasSuffix(strings.TrimRight(line, " \t"), `\`)
		if cont {
			line = strings.TrimSuffix(strings.TrimRight(line, " \t"), `\`)
		}
		text.WriteString(line)
		if cont {
			text.WriteString(" ")
			continue
		}
		cmd, args, _ := strings.Cut(strings.TrimSpace(text.String()), " ")
		cur.cmd, cur.args = strings.ToUpper(cmd), strings.TrimSpace(args)
		out = append(out, *cur)
		cur = nil
	}
	if cur != nil {
		cmd, args, _ := strings.Cut(strings.TrimSpace(text.String()), " ")
		cur.cmd, cur.args = strings.ToUpper(cmd), strings.TrimSpace(args)
		out = append(out, *cur)
	}
	return out
}

var varRef = regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))`)

// expand substitutes $NAME, ${NAME}, ${NAME:-word} and ${NAME:+word} from
// vars, as builders do in FROM, ARG, ENV, LABEL, COPY and WORKDIR (and as
// the shell would in RUN, where ARG and ENV are in its environment).
// Unknown names are left as they are and passed to missing.
func expand(s string, vars map[string]string, missing func(string)) string {
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRef.FindStringSubmatch(m)
		name := sub[1] + sub[4]
		v, ok := vars[name]
		switch sub[2] {
		case "-":
			if v == "" {
				return sub[3]
			}
			return v
		case "+":
			if v != "" {
				return sub[3]
			}
			return ""
		}
		if !ok {
			if missing != nil {
				missing(name)
			}
			return m
		}
		return v
	})
}

// shellCommands splits shell text into simple commands (at ; & && || | and
// newlines) made of words, honouring quotes and backslashes. It is enough
// for the RUN lines of a Containerfile, not a shell.
func shellCommands(s string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
			words = nil
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			inWord = true
			i++
			w.WriteByte(s[i])
		case c == ';' || c == '&' || c == '|' || c == '\n' || c == '(' || c == ')':
			endCmd()
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	endCmd()
	return cmds
}

// keyValues reads the NAME=VALUE words of ARG, ENV and LABEL (and ENV's
// older "NAME VALUE" form).
func keyValues(args string, legacy bool) [][2]string {
	var out [][2]string
	cmds := shellCommands(args)
	if len(cmds) == 0 {
		return nil
	}
	words := cmds[0]
	if legacy && len(words) > 0 && !strings.Contains(words[0], "=") {
		return [][2]string{{words[0], strings.TrimSpace(strings.TrimPrefix(args, words[0]))}}
	}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			out = append(out, [2]string{k, "\x00"}) // declared, no value
			continue
		}
		out = append(out, [2]string{k, v})
	}
	return out
}

// execForm reads a JSON array argument (RUN, ENTRYPOINT, CMD in exec form).
func execForm(args string) ([]string, bool) {
	if !strings.HasPrefix(strings.TrimSpace(args), "[") {
		return nil, false
	}
	var words []string
	if err := json.Unmarshal([]byte(args), &words); err != nil {
		return nil, false
	}
	return words, true
}

// digestRef is an image reference pinned by digest: name[:tag]@sha256:<64
// lowercase hex>, the name optionally with a registry host and port.
var digestRef = regexp.MustCompile(`^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?@sha256:[0-9a-f]{64}$`)

// checkContainerfile parses src, a Containerfile whose build context is
// ctx, and reports every way it fails to pin what it builds.
func checkContainerfile(name, src string, ctx fs.FS) *containerfile {
	c := &containerfile{name: name}
	global := map[string]string{}
	stageNames := map[string]bool{}
	var st *stage
	for _, in := range parseInstructions(src) {
		where := fmt.Sprintf("%s:%d", name, in.line)
		if in.cmd == "FROM" {
			st = c.from(in, where, global, stageNames)
			continue
		}
		if st == nil {
			if in.cmd == "ARG" {
				for _, kv := range keyValues(in.args, false) {
					if kv[1] != "\x00" {
						global[kv[0]] = expand(kv[1], global, nil)
					}
				}
			}
			continue
		}
		switch in.cmd {
		case "ARG":
			for _, kv := range keyValues(in.args, false) {
				if kv[1] != "\x00" {
					st.vars[kv[0]] = expand(kv[1], st.vars, nil)
				} else if v, ok := global[kv[0]]; ok {
					st.vars[kv[0]] = v
				}
			}
		case "ENV":
			env := expand(in.args, st.vars, nil)
			for _, kv := range keyValues(env, true) {
				st.vars[kv[0]] = strings.TrimSuffix(kv[1], "\x00")
			}
		case "LABEL":
			for _, kv := range keyValues(expand(in.args, st.vars, nil), false) {
				st.labels[kv[0]] = strings.TrimSuffix(kv[1], "\x00")
			}
		case "WORKDIR":
			st.workdir = path.Join(st.workdir, expand(in.args, st.vars, nil))
		case "COPY", "ADD":
			c.copy(st, in, where, stageNames)
		case "ENTRYPOINT":
			if words, ok := execForm(in.args); ok {
				st.entrypoint = words
			} else {
				st.entrypoint = []string{"/bin/sh", "-c", in.args}
			}
		case "RUN":
			st.runs++
			c.run(st, in, where, ctx)
		}
	}
	if len(c.stages) == 0 {
		c.report(unpinnedBase, name, "no FROM")
	}
	for _, st := range c.stages {
		seen := map[string]pin{}
		for _, p := range st.pins {
			if q, ok := seen[p.name]; ok && q.version != p.version {
				c.report(conflictingPin, p.where, "%s==%s, but %s==%s at %s", p.name, p.version, q.name, q.version, q.where)
			}
			seen[p.name] = p
		}
	}
	return c
}

func (c *containerfile) from(in instruction, where string, global map[string]string, stageNames map[string]bool) *stage {
	words := strings.Fields(in.args)
	for len(words) > 0 && strings.HasPrefix(words[0], "--") {
		words = words[1:]
	}
	st := &stage{vars: map[string]string{}, labels: map[string]string{}, copies: map[string]string{}, workdir: "/"}
	c.stages = append(c.stages, st)
	if len(words) == 0 {
		c.report(unpinnedBase, where, "FROM without an image")
		return st
	}
	unresolved := false
	st.base = expand(words[0], global, func(v string) {
		unresolved = true
		c.report(unresolvedArg, where, "FROM uses $%s, which no ARG before the first FROM gives a value", v)
	})
	if len(words) >= 3 && strings.EqualFold(words[1], "AS") {
		st.name = strings.ToLower(words[2])
	}
	switch {
	case unresolved:
	case st.base == "scratch", stageNames[strings.ToLower(st.base)]:
	case !digestRef.MatchString(st.base):
		c.report(unpinnedBase, where, "FROM %s: not pinned by digest (name[:tag]@sha256:<64 hex>)", st.base)
	}
	if st.name != "" {
		stageNames[st.name] = true
	}
	return st
}

func (c *containerfile) copy(st *stage, in instruction, where string, stageNames map[string]bool) {
	args := expand(in.args, st.vars, nil)
	var words []string
	if w, ok := execForm(args); ok {
		words = w
	} else {
		words = strings.Fields(args)
	}
	from := ""
	for len(words) > 0 && strings.HasPrefix(words[0], "--") {
		if v, ok := strings.CutPrefix(words[0], "--from="); ok {
			from = v
		}
		words = words[1:]
	}
	if from != "" && !stageNames[strings.ToLower(from)] && !digestRef.MatchString(from) {
		if _, err := strconv.Atoi(from); err != nil { // a stage's index is fine too
			c.report(unpinnedBase, where, "COPY --from=%s: not an earlier stage nor pinned by digest", from)
		}
	}
	if from != "" || len(words) < 2 {
		return
	}
	srcs, dest := words[:len(words)-1], words[len(words)-1]
	if !path.IsAbs(dest) {
		dest = path.Join(st.workdir, dest)
	}
	for _, s := range srcs {
		to := dest
		if len(srcs) > 1 || strings.HasSuffix(words[len(words)-1], "/") {
			to = path.Join(dest, path.Base(s))
		}
		st.copies[to] = path.Clean(s)
	}
}

func (c *containerfile) run(st *stage, in instruction, where string, ctx fs.FS) {
	var cmds [][]string
	if words, ok := execForm(in.args); ok {
		for i, w := range words {
			words[i] = expand(w, st.vars, nil)
		}
		cmds = [][]string{words}
	} else {
		cmds = shellCommands(expand(in.args, st.vars, nil))
	}
	cloned := false
	before := len(st.commits)
	for _, words := range cmds {
		if args, ok := pipInstallArgs(words); ok {
			c.pipInstall(st, args, where, ctx)
		}
		if len(words) > 0 && path.Base(words[0]) == "git" {
			cloned = c.git(st, words[1:], where) || cloned
		}
	}
	if cloned && len(st.commits) == before {
		c.report(unpinnedGit, where, "git clone without a checkout of a full commit: the clone gets whatever the branch points at")
	}
}

var pipName = regexp.MustCompile(`^pip[0-9.]*$`)

// pipInstallArgs finds "pip install ..." (also "python3 -m pip install",
// "uv pip install") in a command and returns what follows "install".
func pipInstallArgs(words []string) ([]string, bool) {
	for i := 0; i+1 < len(words); i++ {
		if pipName.MatchString(path.Base(words[i])) && words[i+1] == "install" {
			return words[i+2:], true
		}
	}
	return nil, false
}

// pipValueOptions are pip install options that take a value.
var pipValueOptions = map[string]bool{
	"-r": true, "--requirement": true, "-c": true, "--constraint": true, "-e": true, "--editable": true,
	"-i": true, "--index-url": true, "--extra-index-url": true, "-f": true, "--find-links": true,
	"--src": true, "-t": true, "--target": true, "--prefix": true, "--root": true, "--platform": true,
	"--python-version": true, "--implementation": true, "--abi": true, "--progress-bar": true,
	"--cache-dir": true, "--log": true, "-C": true, "--config-settings": true, "--global-option": true,
	"--report": true, "--upgrade-strategy": true, "--trusted-host": true, "--proxy": true,
	"--retries": true, "--timeout": true, "--exists-action": true, "--no-binary": true,
	"--only-binary": true, "--python": true,
}

func (c *containerfile) pipInstall(st *stage, args []string, where string, ctx fs.FS) {
	noDeps := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		opt, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "-") {
			c.requirement(st, a, false, where)
			continue
		}
		if !hasVal {
			opt = a
		}
		if opt == "--no-deps" {
			noDeps = true
			continue
		}
		if !pipValueOptions[opt] {
			if len(opt) > 2 && !strings.HasPrefix(opt, "--") && pipValueOptions[opt[:2]] {
				opt, val, hasVal = opt[:2], opt[2:], true // -rfile
			} else {
				continue
			}
		}
		if !hasVal {
			if i+1 >= len(args) {
				c.report(unpinnedPip, where, "pip install %s without a value", opt)
				break
			}
			i++
			val = args[i]
		}
		switch opt {
		case "-r", "--requirement", "-c", "--constraint":
			c.requirementsFile(st, val, where, ctx, map[string]bool{})
		case "-e", "--editable":
			c.requirement(st, val, true, where)
		}
	}
	if !noDeps {
		c.report(floatingDeps, where, "pip install without --no-deps: pip chooses the versions of whatever the packages depend on")
	}
}

// requirementsFile checks a requirements or constraints file named by its
// path in the image, which a COPY must have brought from the build context.
func (c *containerfile) requirementsFile(st *stage, imagePath, where string, ctx fs.FS, seen map[string]bool) {
	if !path.IsAbs(imagePath) {
		imagePath = path.Join(st.workdir, imagePath)
	}
	src, ok := st.copies[path.Clean(imagePath)]
	if !ok {
		c.report(missingFile, where, "%s: no COPY brings it from the build context", imagePath)
		return
	}
	c.contextRequirements(st, src, where, ctx, seen)
}

func (c *containerfile) contextRequirements(st *stage, file, where string, ctx fs.FS, seen map[string]bool) {
	if seen[file] {
		return
	}
	seen[file] = true
	data, err := fs.ReadFile(ctx, file)
	if err != nil {
		c.report(missingFile, where, "%s is not in the build context: %v", file, err)
		return
	}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		n := i + 1
		line := lines[i]
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + lines[i]
		}
		if j := strings.Index(line, "#"); j == 0 || (j > 0 && (line[j-1] == ' ' || line[j-1] == '\t')) {
			line = line[:j]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		at := fmt.Sprintf("%s:%d", path.Join(path.Dir(c.name), file), n)
		if strings.HasPrefix(line, "-") {
			opt, val, _ := strings.Cut(line, " ")
			if o, v, ok := strings.Cut(opt, "="); ok {
				opt, val = o, v
			} else if len(opt) > 2 && !strings.HasPrefix(opt, "--") {
				opt, val = opt[:2], opt[2:]
			}
			val = strings.TrimSpace(val)
			switch opt {
			case "-r", "--requirement", "-c", "--constraint":
				c.contextRequirements(st, path.Join(path.Dir(file), val), at, ctx, seen)
			case "-e", "--editable":
				c.requirement(st, val, true, at)
			}
			continue
		}
		if j := strings.Index(line, " --"); j >= 0 { // --hash=... options
			line = line[:j]
		}
		c.requirement(st, line, false, at)
	}
}

var (
	exactPin  = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[A-Za-z0-9._,\s-]*\])?\s*==\s*([A-Za-z0-9!+._-]+)$`)
	vcsPin    = regexp.MustCompile(`^(?:([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*@\s*)?(?:git|hg|svn|bzr)\+\S+@([0-9a-f]{40})(?:#(?:egg=([A-Za-z0-9._-]+))?\S*)?$`)
	hashedURL = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*@\s*https://\S+#sha256=[0-9a-f]{64}$`)
	separator = regexp.MustCompile(`[-_.]+`)
)

func canonicalName(name string) string {
	return strings.ToLower(separator.ReplaceAllString(name, "-"))
}

// requirement checks one requirement specifier: name==version, a VCS URL
// at a full commit, an archive URL with its sha256, or a local path (a
// checkout the Containerfile made, whose commit the git checks cover).
func (c *containerfile) requirement(st *stage, spec string, editable bool, where string) {
	spec, _, _ = strings.Cut(spec, ";") // environment markers
	spec = strings.TrimSpace(spec)
	if m := exactPin.FindStringSubmatch(spec); m != nil && !editable {
		st.pins = append(st.pins, pin{canonicalName(m[1]), m[2], where})
		return
	}
	if m := vcsPin.FindStringSubmatch(spec); m != nil {
		st.commits = append(st.commits, m[2])
		return
	}
	if hashedURL.MatchString(spec) && !editable {
		return
	}
	if strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || spec == "." {
		return
	}
	c.report(unpinnedPip, where, "%q is not pinned: use name==version, a VCS URL at a full commit, or a checked-out path", spec)
}

// gitValueOptions are git fetch and checkout options that take a separate value.
var gitValueOptions = map[string]bool{
	"--depth": true, "--deepen": true, "--shallow-since": true, "--shallow-exclude": true,
	"-j": true, "--jobs": true, "--filter": true, "--upload-pack": true, "-o": true,
	"--server-option": true, "--negotiation-tip": true, "--refmap": true,
	"-b": true, "-B": true, "--orphan": true, "--branch": true, "--origin": true,
	"--reference": true, "--separate-git-dir": true, "--template": true, "-c": true, "--config": true,
}

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// git checks the revisions a git command fetches or checks out; it reports
// whether the command is a clone.
func (c *containerfile) git(st *stage, args []string, where string) (clone bool) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if args[0] == "-C" || args[0] == "-c" {
			args = args[1:]
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return false
	}
	sub, rest := args[0], args[1:]
	var positional []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") {
			if gitValueOptions[a] {
				i++
			}
			continue
		}
		positional = append(positional, a)
	}
	var revs []string
	switch sub {
	case "clone":
		return true
	case "fetch":
		if len(positional) > 1 {
			revs = positional[1:] // after the remote
		}
	case "checkout", "switch":
		revs = positional
	case "reset":
		revs = positional
	default:
		return false
	}
	for _, r := range revs {
		r, _, _ = strings.Cut(strings.TrimPrefix(r, "+"), ":")
		if !fullCommit.MatchString(r) {
			c.report(unpinnedGit, where, "git %s %s: not a full commit", sub, r)
			continue
		}
		st.commits = append(st.commits, r)
	}
	return false
}

// lmEvalSupported reports whether v is a release string the harness knows.
func lmEvalSupported(s string) bool {
	v, err := harness.ParseVersion(s)
	return err == nil && v.String() == s && slices.Contains(harness.Releases, v)
}

// The build arguments and labels that name the lm-eval of an image.
const (
	argLMEvalVersion   = "LM_EVAL_VERSION"
	argLMEvalCommit    = "LM_EVAL_COMMIT"
	labelLMEvalVersion = "org.evalcapsule.lm-eval.version"
	labelLMEvalCommit  = "org.evalcapsule.lm-eval.commit"
	labelImageVersion  = "org.opencontainers.image.version"
)

// checkLMEval reports whether the final stage of c pins one lm-eval
// release, one the harness supports, at a full commit that is the one
// checked out, and says the same version and commit everywhere.
func checkLMEval(c *containerfile) []finding {
	var out []finding
	report := func(k kind, format string, args ...any) {
		out = append(out, finding{k, c.name, fmt.Sprintf(format, args...)})
	}
	st := c.final()
	version, okV := st.vars[argLMEvalVersion]
	commit, okC := st.vars[argLMEvalCommit]
	if !okV || !okC {
		report(lmEvalMissing, "ARG %s and ARG %s must name the lm-eval release and its commit", argLMEvalVersion, argLMEvalCommit)
		return out
	}
	if !lmEvalSupported(version) {
		report(lmEvalUnsupported, "lm-eval %q is not a release the harness supports (%v ... %v)", version, harness.Releases[0], harness.Releases[len(harness.Releases)-1])
	}
	if !fullCommit.MatchString(commit) {
		report(lmEvalCommit, "lm-eval commit %q is not 40 lowercase hex digits", commit)
	} else if !slices.Contains(st.commits, commit) {
		report(lmEvalCommit, "nothing checks out or installs lm-eval at %s (checked out: %v)", commit, st.commits)
	}
	for _, l := range []string{labelLMEvalVersion, labelImageVersion} {
		if got := st.labels[l]; got != version {
			report(lmEvalMismatch, "LABEL %s=%q, ARG %s=%q", l, got, argLMEvalVersion, version)
		}
	}
	if got := st.labels[labelLMEvalCommit]; got != commit {
		report(lmEvalMismatch, "LABEL %s=%q, ARG %s=%q", labelLMEvalCommit, got, argLMEvalCommit, commit)
	}
	for _, p := range st.pins {
		if p.name == "lm-eval" && p.version != version {
			report(lmEvalMismatch, "%s pins lm_eval==%s, ARG %s=%q", p.where, p.version, argLMEvalVersion, version)
		}
	}
	return out
}

// containerfiles lists the Containerfiles under the images directory.
func containerfiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (d.Name() == "Containerfile" || strings.HasPrefix(d.Name(), "Dockerfile")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func load(t *testing.T, file string) *containerfile {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return checkContainerfile(file, string(src), os.DirFS(filepath.Dir(file)))
}

func TestContainerfilesPinned(t *testing.T) {
	files := containerfiles(t)
	for _, want := range []string{filepath.Join("capsule", "Containerfile"), filepath.Join("lm-eval", "Containerfile")} {
		if !slices.Contains(files, want) {
			t.Errorf("%s is missing (found %v)", want, files)
		}
	}
	for _, f := range files {
		c := load(t, f)
		for _, x := range c.findings {
			t.Errorf("%v", x)
		}
	}
}

func TestLMEvalImage(t *testing.T) {
	c := load(t, filepath.Join("lm-eval", "Containerfile"))
	for _, x := range checkLMEval(c) {
		t.Errorf("%v", x)
	}
	st := c.final()

	// The lock file really carries the stack: each of these exactly once.
	names := map[string]int{}
	for _, p := range st.pins {
		names[p.name]++
	}
	for _, n := range []string{"vllm", "torch", "transformers", "pip", "setuptools"} {
		if names[n] != 1 {
			t.Errorf("%s is pinned %d times, want once", n, names[n])
		}
	}
	if len(st.pins) < 100 {
		t.Errorf("only %d distributions pinned: the lock must list everything pip installs", len(st.pins))
	}

	// The base labels say what FROM says.
	name, digest, _ := strings.Cut(c.stages[0].base, "@")
	if got := st.labels["org.opencontainers.image.base.digest"]; got != digest {
		t.Errorf("base.digest label %q, FROM has %q", got, digest)
	}
	if got := st.labels["org.opencontainers.image.base.name"]; got != name {
		t.Errorf("base.name label %q, FROM has %q", got, name)
	}
	for _, l := range []string{"org.opencontainers.image.source", "org.opencontainers.image.revision"} {
		if st.labels[l] == "" {
			t.Errorf("label %s is missing", l)
		}
	}

	// What the container runner and capsule job rely on.
	if want := []string{"/usr/local/bin/capsule"}; !slices.Equal(st.entrypoint, want) {
		t.Errorf("ENTRYPOINT %q, want %q", st.entrypoint, want)
	}
	if st.copies["/usr/local/bin/capsule"] != "capsule" {
		t.Errorf("no COPY of the capsule binary from the build context to /usr/local/bin/capsule")
	}
	if !strings.HasPrefix(st.vars["PATH"], st.vars["VIRTUAL_ENV"]+"/bin:") {
		t.Errorf("PATH %q does not start with the virtual environment %q: python3 must be its", st.vars["PATH"], st.vars["VIRTUAL_ENV"])
	}
	if st.vars["PYTHONUNBUFFERED"] != "1" {
		t.Errorf("PYTHONUNBUFFERED=%q, want 1 (lm-eval's progress is read as it is written)", st.vars["PYTHONUNBUFFERED"])
	}
	if st.vars["PIP_NO_INDEX"] != "1" {
		t.Errorf("PIP_NO_INDEX=%q, want 1: nothing may be fetched at run time", st.vars["PIP_NO_INDEX"])
	}
	// HF_HOME is where the runner mounts the cache.
	args, err := harness.ContainerRunner{Engine: "podman", Image: "x@sha256:" + strings.Repeat("0", 64), Cache: "/hf-cache"}.Args(t.TempDir(), "n")
	if err != nil {
		t.Fatal(err)
	}
	mount := ""
	for i, a := range args {
		if i > 0 && args[i-1] == "-v" && strings.HasPrefix(a, "/hf-cache:") {
			mount = strings.TrimPrefix(a, "/hf-cache:")
		}
	}
	if mount == "" || st.vars["HF_HOME"] != mount {
		t.Errorf("HF_HOME=%q, the runner mounts the cache at %q", st.vars["HF_HOME"], mount)
	}
}

func TestCapsuleImage(t *testing.T) {
	c := load(t, filepath.Join("capsule", "Containerfile"))
	if len(c.stages) != 1 || c.stages[0].base != "scratch" {
		t.Fatalf("stages %v: want a single FROM scratch", c.stages)
	}
	st := c.final()
	if st.runs != 0 {
		t.Errorf("%d RUN instructions: a scratch image has nothing to run them with", st.runs)
	}
	if want := []string{"/usr/local/bin/capsule"}; !slices.Equal(st.entrypoint, want) {
		t.Errorf("ENTRYPOINT %q, want %q", st.entrypoint, want)
	}
	for dest, src := range map[string]string{
		"/usr/local/bin/capsule":             "capsule",
		"/etc/ssl/certs/ca-certificates.crt": "ca-certificates.crt",
	} {
		if st.copies[dest] != src {
			t.Errorf("no COPY %s %s", src, dest)
		}
	}
	for _, l := range []string{"org.opencontainers.image.source", "org.opencontainers.image.revision", "org.opencontainers.image.version"} {
		if st.labels[l] == "" {
			t.Errorf("label %s is missing", l)
		}
	}
}

// TestCheckFindsUnpinned feeds the checker Containerfiles that float and
// expects each to be caught (and the pinned ones to pass).
func TestCheckFindsUnpinned(t *testing.T) {
	const (
		ref    = "docker.io/library/ubuntu:22.04@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		base   = "FROM " + ref + "\n"
		commit = "6d2abda4fd171e68a8789330c4149e37c1ca0bda"
	)
	ctx := fstest.MapFS{
		"good.txt":     {Data: []byte("# pinned\ntorch==2.6.0  # via vllm\nnumpy==1.26.4 ; python_version < \"3.13\"\nsix==1.16.0 \\\n    --hash=sha256:1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926\n-r more.txt\n")},
		"more.txt":     {Data: []byte("lm-eval @ git+https://github.com/EleutherAI/lm-evaluation-harness@" + commit + "\n")},
		"floating.txt": {Data: []byte("torch==2.6.0\nvllm>=0.6\ntransformers\nnumpy==1.*\n")},
		"twice.txt":    {Data: []byte("torch==2.6.0\nTorch==2.5.1\n")},
	}
	tests := []struct {
		name string
		src  string
		want []kind
	}{
		{"pinned", base + "COPY good.txt more.txt /req/\nRUN python3 -m pip install --no-deps -r /req/good.txt && pip install --no-deps torch==2.6.0\n", nil},
		{"scratch", "FROM scratch\nCOPY capsule /capsule\n", nil},
		{"stage", "FROM " + ref + " AS build\nFROM build\nCOPY --from=build /x /x\n", nil},
		{"arg resolved", "ARG BASE=" + ref + "\nFROM ${BASE}\n", nil},
		{"env expanded", base + "ENV TORCH=2.6.0\nRUN pip install --no-deps \"torch==${TORCH}\"\n", nil},
		{"exec form", base + `RUN ["pip", "install", "--no-deps", "torch==2.6.0"]` + "\n", nil},
		{"vcs at commit", base + "RUN pip install --no-deps git+https://github.com/EleutherAI/lm-evaluation-harness@" + commit + "#egg=lm_eval\n", nil},
		{"checkout", base + "ARG C=" + commit + "\nRUN git init -q /src && git -C /src fetch --depth 1 origin \"$C\" && git -C /src checkout -q \"$C\" && pip install --no-deps -e /src\n", nil},
		{"continued", base + "RUN pip install \\\n# a comment inside\n    --no-deps \\\n    torch==2.6.0\n", nil},

		{"tag only", "FROM ubuntu:22.04\n", []kind{unpinnedBase}},
		{"name only", "FROM ubuntu\n", []kind{unpinnedBase}},
		{"short digest", "FROM ubuntu@sha256:0123456789abcdef\n", []kind{unpinnedBase}},
		{"upper-case digest", "FROM ubuntu@sha256:0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF\n", []kind{unpinnedBase}},
		{"arg tag", "ARG BASE=ubuntu:22.04\nFROM $BASE\n", []kind{unpinnedBase}},
		{"arg unset", "ARG BASE\nFROM ${BASE}\n", []kind{unresolvedArg}},
		{"arg after FROM", base + "ARG TAG=22.04\nFROM ubuntu:${TAG}\n", []kind{unresolvedArg}},
		{"later stage", "FROM build\nFROM " + ref + " AS build\n", []kind{unpinnedBase}},
		{"copy from image", base + "COPY --from=golang:1.22 /usr/local/go /go\n", []kind{unpinnedBase}},
		{"pip install torch", base + "RUN pip install torch\n", []kind{unpinnedPip, floatingDeps}},
		{"no-deps bare name", base + "RUN pip install --no-deps torch\n", []kind{unpinnedPip}},
		{"vllm>=0.6", base + "RUN python3 -m pip install --no-deps \"vllm>=0.6\"\n", []kind{unpinnedPip}},
		{"pinned without no-deps", base + "RUN pip3 install torch==2.6.0\n", []kind{floatingDeps}},
		{"uv", base + "RUN uv pip install vllm\n", []kind{unpinnedPip, floatingDeps}},
		{"exec form bare", base + `RUN ["pip", "install", "--no-deps", "torch"]` + "\n", []kind{unpinnedPip}},
		{"unset version", base + "RUN pip install --no-deps torch==$TORCH\n", []kind{unpinnedPip}},
		{"wildcard", base + "RUN pip install --no-deps torch==2.*\n", []kind{unpinnedPip}},
		{"url", base + "RUN pip install --no-deps https://example.com/torch.whl\n", []kind{unpinnedPip}},
		{"git branch", base + "RUN pip install --no-deps git+https://github.com/EleutherAI/lm-evaluation-harness@main\n", []kind{unpinnedPip}},
		{"git short commit", base + "RUN pip install --no-deps git+https://github.com/EleutherAI/lm-evaluation-harness@6d2abda\n", []kind{unpinnedPip}},
		{"requirements file", base + "COPY floating.txt /r.txt\nRUN pip install --no-deps -r /r.txt\n", []kind{unpinnedPip, unpinnedPip, unpinnedPip}},
		{"not copied", base + "RUN pip install --no-deps -r /r.txt\n", []kind{missingFile}},
		{"not in context", base + "COPY absent.txt /r.txt\nRUN pip install --no-deps -r /r.txt\n", []kind{missingFile}},
		{"constraints", base + "COPY floating.txt /r.txt\nRUN pip install --no-deps -c /r.txt torch==2.6.0\n", []kind{unpinnedPip, unpinnedPip, unpinnedPip}},
		{"twice in a file", base + "COPY twice.txt /r.txt\nRUN pip install --no-deps -r /r.txt\n", []kind{conflictingPin}},
		{"file and command", base + "COPY good.txt more.txt /req/\nRUN pip install --no-deps -r /req/good.txt torch==2.5.1\n", []kind{conflictingPin}},
		{"fetch branch", base + "RUN git fetch origin main && git checkout FETCH_HEAD\n", []kind{unpinnedGit, unpinnedGit}},
		{"clone", base + "RUN git clone https://github.com/EleutherAI/lm-evaluation-harness /src && pip install --no-deps -e /src\n", []kind{unpinnedGit}},
		{"clone then commit", base + "RUN git clone https://github.com/EleutherAI/lm-evaluation-harness /src && git -C /src checkout " + commit + "\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := checkContainerfile("Containerfile", tt.src, ctx)
			var got []kind
			for _, f := range c.findings {
				got = append(got, f.kind)
			}
			sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
			want := slices.Clone(tt.want)
			sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
			if !slices.Equal(got, want) {
				t.Errorf("findings %v, want %v:\n%v", got, want, c.findings)
			}
		})
	}
}

// TestCheckLMEval feeds the lm-eval checks images that disagree with
// themselves or pin a release the harness does not know.
func TestCheckLMEval(t *testing.T) {
	const (
		base   = "FROM scratch\n"
		commit = "6d2abda4fd171e68a8789330c4149e37c1ca0bda"
		other  = "d021bf846218f1bb3bdc0603864789329476d464"
	)
	image := func(version, commit, labelVersion, labelCommit, checkout, extra string) string {
		return base + "ARG LM_EVAL_VERSION=" + version + "\nARG LM_EVAL_COMMIT=" + commit + "\n" +
			"LABEL org.evalcapsule.lm-eval.version=\"" + labelVersion + "\" org.opencontainers.image.version=\"${LM_EVAL_VERSION}\" \\\n" +
			"      org.evalcapsule.lm-eval.commit=\"" + labelCommit + "\"\n" +
			"RUN git fetch --depth 1 origin " + checkout + " && git checkout -q " + checkout + "\n" + extra
	}
	tests := []struct {
		name string
		src  string
		want []kind
	}{
		{"consistent", image("0.4.8", commit, "${LM_EVAL_VERSION}", "${LM_EVAL_COMMIT}", "${LM_EVAL_COMMIT}", ""), nil},
		{"pinned in pip too", image("0.4.9.1", other, "0.4.9.1", other, other, "RUN pip install --no-deps lm_eval==0.4.9.1\n"), nil},
		{"undeclared", base + "LABEL org.evalcapsule.lm-eval.version=0.4.8\n", []kind{lmEvalMissing}},
		{"unknown release", image("0.4.99", commit, "0.4.99", commit, commit, ""), []kind{lmEvalUnsupported}},
		{"dev build", image("0.4.13.dev0", commit, "0.4.13.dev0", commit, commit, ""), []kind{lmEvalUnsupported}},
		{"too old", image("0.3.0", commit, "0.3.0", commit, commit, ""), []kind{lmEvalUnsupported}},
		{"label version", image("0.4.8", commit, "0.4.9", commit, commit, ""), []kind{lmEvalMismatch}},
		{"label commit", image("0.4.8", commit, "0.4.8", other, commit, ""), []kind{lmEvalMismatch}},
		{"pip version", image("0.4.8", commit, "0.4.8", commit, commit, "RUN pip install --no-deps lm-eval==0.4.9\n"), []kind{lmEvalMismatch}},
		{"short commit", image("0.4.8", "6d2abda", "0.4.8", "6d2abda", commit, ""), []kind{lmEvalCommit}},
		{"other checkout", image("0.4.8", commit, "0.4.8", commit, other, ""), []kind{lmEvalCommit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []kind
			for _, f := range checkLMEval(checkContainerfile("Containerfile", tt.src, fstest.MapFS{})) {
				got = append(got, f.kind)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %v, want %v", got, tt.want)
			}
		})
	}
}

// TestBuildScriptUsage runs build.sh where it stops before building.
func TestBuildScriptUsage(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed to check build.sh")
	}
	if out, err := exec.Command(bash, "-n", "build.sh").CombinedOutput(); err != nil {
		t.Fatalf("bash -n build.sh: %v\n%s", err, out)
	}
	for _, tt := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"--help"}, 0, "usage: images/build.sh"},
		{nil, 2, "no target"},
		{[]string{"capsule", "all"}, 2, "one target only"},
		{[]string{"--engine", "rkt", "capsule"}, 2, "unknown engine rkt"},
		{[]string{"--push", "noslash", "capsule"}, 2, "REGISTRY/REPO"},
		{[]string{"--frobnicate", "capsule"}, 2, "unknown option --frobnicate"},
	} {
		cmd := exec.Command(bash, append([]string{"build.sh"}, tt.args...)...)
		// Every case stops before anything is built.
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bash))
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.code || !bytes.Contains(out, []byte(tt.out)) {
			t.Errorf("build.sh %q: exit %d, output:\n%s\nwant exit %d and %q", tt.args, code, out, tt.code, tt.out)
		}
	}
}

// TestCapsuleImageRuns builds the static capsule and the capsule image as
// build.sh does, runs it with podman and compares its --version with the
// binary's own. It needs buildah, podman (with the CONTAINERS_CONF .ci/run
// writes) and a C toolchain with a static glibc.
func TestCapsuleImageRuns(t *testing.T) {
	testenv.Integration(t, "buildah and podman with runc")
	for _, tool := range []string{"go", "buildah", "podman"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found on PATH: the integration tests need it", tool)
		}
	}
	run := func(name string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(name, args...) // the environment (CONTAINERS_CONF) passes through
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
		}
		return out
	}

	root := strings.TrimSpace(string(run("go", "env", "GOMOD")))
	if root == "" || root == os.DevNull {
		t.Fatal("not inside the module")
	}
	ctx := t.TempDir()
	bin := filepath.Join(ctx, "capsule")
	build := exec.Command("go", "build", "-tags", "netgo,osusergo", "-trimpath",
		"-ldflags", "-linkmode external -extldflags -static -s -w", "-o", bin, "./cmd/capsule")
	build.Dir = filepath.Dir(root)
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the static capsule: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a dynamic loader: not linked statically", bin)
		}
	}
	f.Close()
	version := string(run(bin, "--version"))
	if !regexp.MustCompile(`^capsule \S+\n$`).MatchString(version) {
		t.Fatalf("capsule --version printed %q, want \"capsule <version>\"", version)
	}

	// The build context build.sh makes: the Containerfile, the binary and
	// the host's CA bundle.
	for dest, src := range map[string]string{
		"Containerfile":       filepath.Join("capsule", "Containerfile"),
		"ca-certificates.crt": "/etc/ssl/certs/ca-certificates.crt",
	} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ctx, dest), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	tag := "localhost/evalcapsule-test/capsule:" + hex.EncodeToString(rnd[:])
	run("buildah", "build", "--timestamp", "0", "-f", filepath.Join(ctx, "Containerfile"), "-t", tag, ctx)
	t.Cleanup(func() {
		if out, err := exec.Command("buildah", "rmi", tag).CombinedOutput(); err != nil {
			t.Errorf("removing %s: %v\n%s", tag, err, out)
		}
	})
	digest := strings.TrimSpace(string(run("podman", "image", "inspect", "--format", "{{.Digest}}", tag)))
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(digest) {
		t.Fatalf("digest of %s: %q", tag, digest)
	}
	// By digest, as a study names it.
	ref := strings.TrimSuffix(tag, tag[strings.LastIndex(tag, ":"):]) + "@" + digest
	got := string(run("podman", "run", "--rm", "--network", "none", ref, "--version"))
	if got != version {
		t.Errorf("podman run %s --version printed %q, the binary prints %q", ref, got, version)
	}
}
