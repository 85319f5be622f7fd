package harness

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// fullSHA is a git commit as the Hub names a model revision.
var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ResolveRevision is the commit of the model a finished run evaluated, from
// what is at hand, in order: the model_sha lm-eval recorded in its results
// (the HF models record the commit they loaded), the Hugging Face cache's
// ref for the revision the run asked for (main when none: what the cache
// resolved it to when the model was downloaded), or the revision the run
// pinned when that is a full commit. "" when none says.
func ResolveRevision(rec *RunRecord, outDir string) string {
	if res := resultsIn(outDir); res != nil {
		if sha, ok := res.ModelSHA(); ok && sha != "" {
			return sha
		}
	}
	asked := rec.Model.Revision
	if v, ok := rec.Spec.ModelArgs.Get("revision"); ok {
		asked = v
	}
	if fullSHA.MatchString(asked) {
		return asked
	}
	id := rec.Model.ID
	if v, ok := rec.Spec.ModelArgs.Get("pretrained"); ok {
		id = v
	}
	if rev := cachedRevision(id, asked); rev != "" {
		return rev
	}
	return ""
}

// cachedRevision reads the Hugging Face cache's ref of a Hub model (org/name)
// for a branch or tag: hub/models--org--name/refs/<ref>, holding the commit.
func cachedRevision(id, ref string) string {
	if strings.Count(id, "/") != 1 || strings.HasPrefix(id, "/") || strings.HasPrefix(id, ".") {
		return "" // a local path, not a Hub id
	}
	if ref == "" {
		ref = "main"
	}
	if strings.Contains(ref, "..") {
		return ""
	}
	hub := os.Getenv("HF_HUB_CACHE")
	if hub == "" {
		home := os.Getenv("HF_HOME")
		if home == "" {
			if h, err := os.UserHomeDir(); err == nil {
				home = filepath.Join(h, ".cache", "huggingface")
			}
		}
		hub = filepath.Join(home, "hub")
	}
	b, err := os.ReadFile(filepath.Join(hub, "models--"+strings.ReplaceAll(id, "/", "--"), "refs", filepath.FromSlash(ref)))
	if sha := strings.TrimSpace(string(b)); err == nil && fullSHA.MatchString(sha) {
		return sha
	}
	return ""
}

// Datasets lists the dataset of every task a results file has a config
// for, sorted by task.
func (r *Results) Datasets() []DatasetInfo {
	var out []DatasetInfo
	for _, task := range r.TaskNames() {
		cfg, ok := r.Configs[task]
		if !ok {
			continue
		}
		text := func(v Value, key string) string {
			if x, ok := v.Get(key); ok && x.Kind == String {
				return x.Str
			}
			return ""
		}
		d := DatasetInfo{Task: task, Path: text(cfg, "dataset_path"), Name: text(cfg, "dataset_name"), Revision: text(cfg, "revision")}
		if kw, ok := cfg.Get("dataset_kwargs"); ok && d.Revision == "" {
			d.Revision = text(kw, "revision")
		}
		if d.Path != "" {
			out = append(out, d)
		}
	}
	return out
}

// resultsIn is the results file of a run's output, nil when there is none
// to read.
func resultsIn(outDir string) *Results {
	outs, err := Find(outDir)
	if err != nil {
		return nil
	}
	for _, o := range outs {
		if o.Results != nil {
			return o.Results
		}
	}
	return nil
}
