package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Run statuses, as run.json records them.
const (
	StatusPlanned     = "planned"
	StatusRunning     = "running"
	StatusDone        = "done"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
)

// RecordFile is the name of a run's provenance record in its directory.
const RecordFile = "run.json"

// RecordSchema names the version of run.json's format.
const RecordSchema = "evalcapsule.run/v1"

// RunRecord is run.json: everything needed to know what ran, where and how,
// written atomically by the driver (planned) and by the job on the machine
// that ran it (running, then done, failed or interrupted).
type RunRecord struct {
	Schema string  `json:"schema"`
	Name   string  `json:"name"`
	Status string  `json:"status"`
	Label  string  `json:"label,omitempty"`
	Spec   RunSpec `json:"spec"`
	// Identity is the hash of everything the study pins that can change
	// the run's outputs (settings, lm-eval, model, the simulated backend),
	// computed when the run was planned: a run whose identity changed is
	// stale, never reused.
	Identity string `json:"identity,omitempty"`
	// Includes are the files of the run's include_path (custom tasks), by
	// path inside it, with their sha256: frozen into runs/<name>/include.
	Includes map[string]string `json:"includes,omitempty"`
	// Datasets are the datasets the run's tasks loaded, as lm-eval's
	// results record them (path, name and, where a task pins one, revision).
	Datasets []DatasetInfo `json:"datasets,omitempty"`
	// Argv is the exact lm-eval command line, program name first.
	Argv      []string     `json:"argv"`
	Harness   HarnessInfo  `json:"harness"`
	Image     *ImageInfo   `json:"image,omitempty"`
	Model     ModelInfo    `json:"model"`
	Seeds     []int        `json:"seeds,omitempty"`
	Runner    RunnerInfo   `json:"runner"`
	Env       *Environment `json:"environment,omitempty"`
	Start     *time.Time   `json:"start,omitempty"`
	End       *time.Time   `json:"end,omitempty"`
	ExitCode  *int         `json:"exit_code,omitempty"`
	Error     string       `json:"error,omitempty"`
	Simulated bool         `json:"simulated,omitempty"`
}

// HarnessInfo pins lm-eval.
type HarnessInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Dirty   bool   `json:"dirty,omitempty"`
	// Source is where lm-eval came from: "checkout", "installed", "image"
	// or "simulated".
	Source string `json:"source,omitempty"`
}

// ImageInfo is the container image a run used, always by digest.
type ImageInfo struct {
	Ref            string `json:"ref"`
	IndexDigest    string `json:"index_digest,omitempty"`
	PlatformDigest string `json:"platform_digest,omitempty"`
	Platform       string `json:"platform,omitempty"`
	Engine         string `json:"engine,omitempty"`
}

// ModelInfo is the model and the revision that was resolved for it.
type ModelInfo struct {
	ID               string `json:"id"`
	Revision         string `json:"revision,omitempty"`
	ResolvedRevision string `json:"resolved_revision,omitempty"`
}

// DatasetInfo is one task's dataset: its Hub path, its configuration name
// and the revision the task pins ("" when it pins none: the Hub's main).
type DatasetInfo struct {
	Task     string `json:"task"`
	Path     string `json:"path"`
	Name     string `json:"name,omitempty"`
	Revision string `json:"revision,omitempty"`
}

// RunnerInfo says where the run executed.
type RunnerInfo struct {
	Kind  string `json:"kind"`
	Host  string `json:"host,omitempty"`
	JobID string `json:"job_id,omitempty"`
}

// Terminal reports whether the status is final for this attempt.
func (r *RunRecord) Terminal() bool {
	return r.Status == StatusDone || r.Status == StatusFailed || r.Status == StatusInterrupted
}

// ReadRecord reads dir/run.json.
func ReadRecord(dir string) (*RunRecord, error) {
	path := filepath.Join(dir, RecordFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r RunRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, &FileError{Path: path, Err: fmt.Errorf("%w: %v", ErrRecord, err)}
	}
	if r.Schema != RecordSchema {
		return nil, &FileError{Path: path, Field: "schema", Err: fmt.Errorf("%w: %q, expected %q", ErrRecord, r.Schema, RecordSchema)}
	}
	switch r.Status {
	case StatusPlanned, StatusRunning, StatusDone, StatusFailed, StatusInterrupted:
	default:
		return nil, &FileError{Path: path, Field: "status", Err: fmt.Errorf("%w: unknown status %q", ErrRecord, r.Status)}
	}
	return &r, nil
}

// WriteRecord writes dir/run.json atomically.
func WriteRecord(dir string, r *RunRecord) error {
	r.Schema = RecordSchema
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	// No fsync: a write-then-rename is already ordered on the file systems
	// runs live on (ext4 flushes the data of a file renamed over another),
	// and the worst a crash can do is leave an earlier status, which only
	// makes a finished run run again. An explicit flush costs milliseconds
	// per run on ext4, more than a short simulated run takes.
	return writeAtomic(filepath.Join(dir, RecordFile), append(b, '\n'), false)
}

// WriteFileAtomic writes through a temporary file in the same directory and
// renames it into place, so that readers never see half a file and a crash
// leaves the old content.
func WriteFileAtomic(path string, b []byte) error { return writeAtomic(path, b, true) }

func writeAtomic(path string, b []byte, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(tmp)
			return err
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
