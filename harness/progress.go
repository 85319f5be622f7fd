package harness

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ProgressFile is where a job writes its progress, beside run.json, so that
// a driver on another machine (a Slurm login node) can follow it.
const ProgressFile = "progress.json"

// Progress is how far a run has come.
type Progress struct {
	// Phase is what lm-eval is doing: "loading", "generate_until",
	// "loglikelihood", "writing", or "done".
	Phase string `json:"phase"`
	Done  int    `json:"done"`
	Total int    `json:"total"`
	// Updated is when the job last wrote it.
	Updated time.Time `json:"updated"`
}

// Fraction returns Done/Total, 0 when the total is unknown.
func (p Progress) Fraction() float64 {
	if p.Total <= 0 {
		return 0
	}
	return float64(p.Done) / float64(p.Total)
}

// tqdmRE matches the bars lm-eval prints through tqdm, e.g.
// "Running generate_until requests:  45%|████▌     | 594/1319 [00:10<00:12, 58.2it/s]"
// and "Running loglikelihood requests: 100%|██████████| 56168/56168 [...]".
var tqdmRE = regexp.MustCompile(`(?:Running (\w+) requests|Requesting API|([A-Za-z][\w ]*?))\s*:\s*\d+%\|[^|]*\|\s*(\d+)/(\d+)`)

// ParseProgressLine reads one tqdm line of lm-eval's stderr; ok is false for
// other lines.
func ParseProgressLine(line string) (p Progress, ok bool) {
	m := tqdmRE.FindStringSubmatch(line)
	if m == nil {
		return p, false
	}
	done, err1 := strconv.Atoi(m[3])
	total, err2 := strconv.Atoi(m[4])
	if err1 != nil || err2 != nil {
		return p, false
	}
	phase := m[1]
	if phase == "" {
		phase = strings.TrimSpace(strings.ToLower(m[2]))
		if strings.HasPrefix(line, "Requesting API") || phase == "" {
			phase = "requests"
		}
	}
	return Progress{Phase: phase, Done: done, Total: total}, true
}

// ScanProgress reads lm-eval's stderr, which tqdm rewrites with carriage
// returns, copies it to log, and calls report with each progress update.
func ScanProgress(r io.Reader, log io.Writer, report func(Progress)) error {
	br := bufio.NewReader(r)
	var line []byte
	for {
		c, err := br.ReadByte()
		if err != nil {
			if len(line) > 0 {
				if p, ok := ParseProgressLine(string(line)); ok {
					report(p)
				}
			}
			if err == io.EOF {
				return nil
			}
			return err
		}
		if log != nil {
			log.Write([]byte{c})
		}
		if c == '\r' || c == '\n' {
			if p, ok := ParseProgressLine(string(line)); ok {
				report(p)
			}
			line = line[:0]
			continue
		}
		line = append(line, c)
	}
}

// WriteProgress writes dir/progress.json atomically.
func WriteProgress(dir string, p Progress) error {
	if p.Updated.IsZero() {
		p.Updated = time.Now().UTC()
	}
	b, _ := json.Marshal(p)
	return writeAtomic(filepath.Join(dir, ProgressFile), b, false)
}

// ReadProgress reads dir/progress.json; ok is false when there is none yet.
func ReadProgress(dir string) (Progress, bool) {
	b, err := os.ReadFile(filepath.Join(dir, ProgressFile))
	if err != nil {
		return Progress{}, false
	}
	var p Progress
	if json.Unmarshal(b, &p) != nil {
		return Progress{}, false
	}
	return p, true
}
