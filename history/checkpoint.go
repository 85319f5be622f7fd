package history

import (
	"strconv"
	"strings"

	"encoding/binary"
	"fmt"
	"github.com/evalcapsule/evalcapsule/gate"
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
	Model string `json:"model"`
	// Identity is what the gate compares: lm-eval, the prompts, the chat
	// template, the model.
	Identity gate.Identity `json:"identity"`
	// Scores are every task, metric and filter of its runs, sorted.
	Scores []*Score `json:"scores"`
}

// Score is one task, metric and filter of a checkpoint: lm-eval's score,
// its confidence interval and the per-document values.
type Score struct {
	Task   string `json:"task"`   // lm-eval's task name (a group's, for its joined documents)
	Metric string `json:"metric"` // lm-eval's metric name
	Filter string `json:"filter"` // lm-eval's filter name
	// Value is the mean of the per-document values (lm-eval's score, a
	// fraction for a [0, 1] metric).
	Value float64 `json:"value"`
	// Low is the lower bound of Value's 95 % interval: Wilson's for a 0/1
	// metric, else the normal one from the values' standard error (null
	// with fewer than two documents).
	Low  float64 `json:"ci_low"`
	High float64 `json:"ci_high"` // the upper bound of that interval, null as Low is
	// Higher is lm-eval's higher_is_better for the metric.
	Higher bool `json:"higher_is_better"`
	// Docs and Values are the per-document values, keyed as the gate keys
	// them ("12", or "member/12" in a group's joined series), in doc order
	// (member, then doc_id).
	Docs   []string  `json:"-"`
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

// encodeValues packs doc keys and values as the index stores them: the
// count, then per document its key (a uvarint length and the bytes) and
// the value's float64 bits (8 bytes, little endian).
func encodeValues(docs []string, values []float64) []byte {
	b := make([]byte, 0, binary.MaxVarintLen64+len(docs)*(1+5+8))
	b = binary.AppendUvarint(b, uint64(len(docs)))
	for i, d := range docs {
		b = binary.AppendUvarint(b, uint64(len(d)))
		b = append(b, d...)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(values[i]))
	}
	return b
}

// decodeValues is encodeValues' inverse; a blob that does not decode to
// its own count is ErrIndex.
func decodeValues(b []byte) ([]string, []float64, error) {
	n, k := binary.Uvarint(b)
	// Each document takes at least 9 bytes: a count beyond that is corrupt.
	if k <= 0 || n > uint64(len(b))/9 {
		return nil, nil, fmt.Errorf("%w: per-document values: bad count", ErrIndex)
	}
	b = b[k:]
	// The keys are cut from one copy of the blob: one allocation, not one
	// per document.
	all := string(b)
	off := 0
	docs, values := make([]string, n), make([]float64, n)
	for i := range docs {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)) || uint64(len(b)-k) < l+8 {
			return nil, nil, fmt.Errorf("%w: per-document values: truncated at document %d of %d", ErrIndex, i, n)
		}
		docs[i] = all[off+k : off+k+int(l)]
		off += k + int(l) + 8
		b = b[k+int(l):]
		values[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	if len(b) != 0 {
		return nil, nil, fmt.Errorf("%w: per-document values: %d bytes after the last document", ErrIndex, len(b))
	}
	return docs, values, nil
}

// Side is the checkpoint as the gate reads it.
func (c *Checkpoint) Side() *gate.Side {
	s := &gate.Side{Name: c.Name, Identity: c.Identity, Tasks: map[string]*gate.TaskValues{}}
	for _, sc := range c.Scores {
		tv := s.Tasks[sc.Task]
		if tv == nil {
			tv = &gate.TaskValues{Metrics: map[string]map[string]float64{}, Higher: map[string]bool{}}
			s.Tasks[sc.Task] = tv
		}
		m := make(map[string]float64, len(sc.Docs))
		for i, d := range sc.Docs {
			m[d] = sc.Values[i]
		}
		tv.Metrics[sc.Key()] = m
		tv.Higher[sc.Key()] = sc.Higher
	}
	return s
}

// compareDocs orders doc keys by member, then numerically by doc_id.
func compareDocs(a, b string) int {
	ma, ia := splitDoc(a)
	mb, ib := splitDoc(b)
	if c := strings.Compare(ma, mb); c != 0 {
		return c
	}
	if ia != ib {
		if ia < ib {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func splitDoc(k string) (string, int64) {
	m, id := "", k
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		m, id = k[:i], k[i+1:]
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return k, -1
	}
	return m, n
}
