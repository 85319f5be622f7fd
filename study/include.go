package study

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/evalcapsule/evalcapsule/harness"
)

// Custom tasks: a run's include_path (a folder of task YAMLs inside the
// study) is frozen into its run directory before it runs, hashed into its
// identity, and recorded file by file in run.json, so that a capsule holds
// the very tasks its runs used and a rerun uses them again.

// includeFiles lists the files of a folder with their sha256, by
// slash-separated path inside it. Only regular files are taken: a link
// could lead anywhere, and is refused.
func includeFiles(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%w: include_path %s: %s is a symbolic link; put a copy of the file there", ErrStudy, dir, rel)
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%w: include_path %s: %s is not a regular file", ErrStudy, dir, rel)
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = "sha256:" + hex.EncodeToString(h.Sum(nil))
		return nil
	})
	return out, err
}

// Includes are the files of the run's include_path as they are now in the
// study directory; nil when it has none.
func (s *Study) Includes(pr PlannedRun) (map[string]string, error) {
	if pr.Spec.IncludePath == "" {
		return nil, nil
	}
	return includeFiles(filepath.Join(s.Dir, pr.Spec.IncludePath))
}

// freezeIncludes copies the files of a folder into dir/include, replacing
// what an earlier run left there.
func freezeIncludes(from string, files map[string]string, dir string) error {
	to := filepath.Join(dir, harness.IncludeDir)
	if err := os.RemoveAll(to); err != nil {
		return err
	}
	for rel := range files {
		b, err := os.ReadFile(filepath.Join(from, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		p := filepath.Join(to, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
