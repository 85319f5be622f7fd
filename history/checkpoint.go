package history

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// Checkpoint is one capsule as the index holds it: one evaluated
// checkpoint of a model line.
type Checkpoint struct {
	// Digest is the capsule's manifest digest: what identifies it in the
	// index, for a registry tag and a local folder or tar alike (the
	// manifest digest covers the config and every file).
	Digest string `json:"digest"`
	// Ref is where it was read: host[:port]/repository:tag, or the local
	// folder or tar as given.
	Ref string `json:"ref"`
	// Repo is the registry repository, "" for a local capsule.
	Repo string `json:"repo"`
	// Name is the tag, or the local folder's or tar's base name.
	Name string `json:"name"`
	// Created is the capsule's creation time (its manifest's
	// org.opencontainers.image.created), zero when it has none.
	Created time.Time `json:"created"`
	// Step is the training step parsed from the name or the model (see
	// ParseStep), -1 when neither has one.
	Step int64 `json:"step"`
	// Model is the model the runs evaluated (id@revision).
	Model    string   `json:"model"`
	Identity Identity `json:"identity"`
	// Scores are every task, metric and filter of its runs, sorted.
	Scores []*Score `json:"scores"`
}

// Identity is what must not change between two checkpoints for their
// scores to be compared: lm-eval, the prompts and the model line.
type Identity struct {
	HarnessVersion string `json:"harness_version"`
	HarnessCommit  string `json:"harness_commit,omitempty"`
	// TaskHashes are lm-eval's task_hashes (the prompt set), by task.
	TaskHashes map[string]string `json:"task_hashes,omitempty"`
	// ChatTemplate is lm-eval's chat_template_sha, "" without one.
	ChatTemplate string `json:"chat_template,omitempty"`
	// SystemInstruction is lm-eval's system_instruction_sha.
	SystemInstruction string `json:"system_instruction,omitempty"`
	ModelID           string `json:"model_id"`
	ModelRevision     string `json:"model_revision,omitempty"`
}

// Score is one task, metric and filter of a checkpoint: lm-eval's score,
// its confidence interval and the per-document values.
type Score struct {
	Task   string `json:"task"`
	Metric string `json:"metric"`
	Filter string `json:"filter"`
	// Value is the mean of the per-document values (lm-eval's score).
	Value float64 `json:"value"`
	// Low and High bound the 95 % interval: Wilson's for a 0/1 metric,
	// the normal one from lm-eval's stderr otherwise (NaN without one).
	Low  float64 `json:"ci_low"`
	High float64 `json:"ci_high"`
	// Higher is lm-eval's higher_is_better for the metric.
	Higher bool `json:"higher_is_better"`
	// Docs and Values are the per-document values by doc_id, in doc_id
	// order.
	Docs   []int     `json:"-"`
	Values []float64 `json:"-"`
}

// Key is lm-eval's "metric,filter".
func (s *Score) Key() string { return s.Metric + "," + s.Filter }

// Binary reports whether every value is 0 or 1 (right or wrong).
func (s *Score) Binary() bool {
	for _, v := range s.Values {
		if v != 0 && v != 1 {
			return false
		}
	}
	return len(s.Values) > 0
}

// encodeValues packs doc ids and values as the index stores them: the
// count, then per document the doc_id's difference from the previous one
// (a signed varint) and the value's float64 bits (8 bytes, little endian).
func encodeValues(docs []int, values []float64) []byte {
	b := make([]byte, 0, binary.MaxVarintLen64+len(docs)*(2+8))
	b = binary.AppendUvarint(b, uint64(len(docs)))
	prev := 0
	for i, d := range docs {
		b = binary.AppendVarint(b, int64(d-prev))
		prev = d
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(values[i]))
	}
	return b
}

// decodeValues is encodeValues' inverse; a blob that does not decode to
// its own count is ErrIndex.
func decodeValues(b []byte) ([]int, []float64, error) {
	n, k := binary.Uvarint(b)
	// Each document takes at least 9 bytes: a count beyond that is corrupt.
	if k <= 0 || n > uint64(len(b))/9 {
		return nil, nil, fmt.Errorf("%w: per-document values: bad count", ErrIndex)
	}
	b = b[k:]
	docs, values := make([]int, n), make([]float64, n)
	prev := int64(0)
	for i := range docs {
		d, k := binary.Varint(b)
		if k <= 0 || len(b) < k+8 {
			return nil, nil, fmt.Errorf("%w: per-document values: truncated at document %d of %d", ErrIndex, i, n)
		}
		prev += d
		docs[i] = int(prev)
		values[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[k:]))
		b = b[k+8:]
	}
	if len(b) != 0 {
		return nil, nil, fmt.Errorf("%w: per-document values: %d bytes after the last document", ErrIndex, len(b))
	}
	return docs, values, nil
}
