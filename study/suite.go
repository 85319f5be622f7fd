package study

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// SuiteTemplate is what `capsule suite init` writes: a commented suite
// file to edit.
const SuiteTemplate = `# A benchmark suite: the tasks and settings every checkpoint is evaluated
# with, and the lm-eval that runs them, pinned once. No card, no steps:
#   capsule run THIS_FILE --model ckpt/step-12000 --model org/model@<commit>
# runs it against each checkpoint into runs/<checkpoint>/ (a study folder of
# its own, with the model pinned: a hub id with its revision, a local path
# with the sha256 digest of its files) and packs runs/<checkpoint>.capsule.
# Gate a checkpoint against a baseline with capsule gate (docs/gate.md).
kind: suite
study: release-suite              # the suite's name
harness:
  version: 0.4.9.1                # lm-eval release every checkpoint runs
  # image: ghcr.io/org/lm-eval@sha256:<digest>   # for the container runner
runner: {kind: local}             # local | container | slurm | simulated
settings:                         # lm-eval's settings, as a study's baseline takes them
  model: hf
  model_args: {dtype: bfloat16}
  tasks: [gsm8k, mmlu, hellaswag, arc_challenge, truthfulqa_mc2]
  num_fewshot: 5
  batch_size: 8
  seed: [0, 1234, 1234, 1234]
  log_samples: true               # the gate pairs documents: keep the samples
`

// SuiteModel pins the checkpoint a suite runs against: a local path (an
// existing file or folder) gets the sha256 digest of its files (SuiteDigest)
// and its absolute path as id; anything else is a hub id, "ID@REVISION"
// pinning its revision.
func SuiteModel(arg string) (ModelRef, error) {
	if _, err := os.Stat(arg); err == nil {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return ModelRef{}, err
		}
		d, err := SuiteDigest(abs)
		if err != nil {
			return ModelRef{}, err
		}
		return ModelRef{ID: abs, Digest: d}, nil
	}
	id, rev, _ := strings.Cut(arg, "@")
	if id == "" || strings.ContainsAny(id, " \t\n") {
		return ModelRef{}, fmt.Errorf("%w: --model %q: neither an existing path nor a hub id (org/name[@revision])", ErrStudy, arg)
	}
	return ModelRef{ID: id, Revision: rev}, nil
}

// SuiteDigest is "sha256:<hex>" over a checkpoint's regular files: for each,
// sorted by slash-separated relative path, the path, a NUL, its size in
// decimal, a NUL, and its bytes. Symbolic links are followed by neither
// walk nor digest: they are digested as their target text.
func SuiteDigest(root string) (string, error) {
	var files []string
	st, err := os.Stat(root)
	if err != nil {
		return "", err
	}
	base := root
	if !st.IsDir() {
		base, files = filepath.Dir(root), []string{filepath.Base(root)}
	} else {
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
				rel, _ := filepath.Rel(root, path)
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	sort.Slice(files, func(i, j int) bool { return filepath.ToSlash(files[i]) < filepath.ToSlash(files[j]) })
	h := sha256.New()
	for _, rel := range files {
		p := filepath.Join(base, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return "", err
		}
		io.WriteString(h, filepath.ToSlash(rel)+"\x00")
		if fi.Mode()&fs.ModeSymlink != 0 {
			t, err := os.Readlink(p)
			if err != nil {
				return "", err
			}
			io.WriteString(h, "link\x00"+t)
			continue
		}
		io.WriteString(h, strconv.FormatInt(fi.Size(), 10)+"\x00")
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

var checkpointUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// CheckpointName is the folder name of a checkpoint's runs: the last path
// element of a local path or hub id, with its revision ("step-12000",
// "Llama-3.2-1B@0a1b2c3"), made safe.
func CheckpointName(m ModelRef) string {
	name := filepath.Base(filepath.Clean(m.ID))
	if i := strings.LastIndexByte(m.ID, '/'); i >= 0 && m.Digest == "" {
		name = m.ID[i+1:]
	}
	if m.Revision != "" {
		name += "@" + m.Revision[:min(12, len(m.Revision))]
	}
	name = strings.Trim(checkpointUnsafe.ReplaceAllString(strings.ReplaceAll(name, "@", "-at-"), "-"), "-.")
	if name == "" {
		name = "checkpoint"
	}
	return name
}

// CheckpointFile is the study file of one checkpoint of a suite: the
// suite file's text with the checkpoint's model pinned after it. The suite
// file must not name a model itself.
func CheckpointFile(suite *Study, m ModelRef) ([]byte, error) {
	if suite.Model.ID != "" {
		return nil, &Error{Path: suite.Path, Field: "model", Msg: "a suite names no model: the checkpoints come from capsule run --model"}
	}
	b, err := os.ReadFile(suite.Path)
	if err != nil {
		return nil, err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	line := "\n# The checkpoint, pinned by capsule run --model.\nmodel: {id: " + strconv.Quote(m.ID)
	if m.Revision != "" {
		line += ", revision: " + strconv.Quote(m.Revision)
	}
	if m.Digest != "" {
		line += ", digest: " + strconv.Quote(m.Digest)
	}
	b = append(b, line+"}\n"...)
	if _, err := Parse(suite.Path, b); err != nil {
		return nil, err
	}
	return b, nil
}
