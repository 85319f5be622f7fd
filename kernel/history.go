package kernel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxHistory bounds the entries kept from earlier sessions.
const maxHistory = 10000

// maxHistoryText bounds the input and the output of an entry: a larger
// cell is kept cut, with a line saying so.
const maxHistoryText = 1 << 20

// maxHistoryLine is the longest line of the file read back. Lines are at
// most a few MiB since entries are cut; a longer line, from an older
// version, is skipped.
const maxHistoryLine = 16 << 20

// history is what history_request reads: the cells run in this session
// and, when a file keeps them, in earlier ones. A session is one kernel
// process; sessions are numbered from 1 in the order they first wrote to
// the file, this one last.
type history struct {
	mu      sync.Mutex
	file    string // "" keeps the history in memory only
	kernel  string // this session's id in the file
	session int
	entries []histEntry // oldest first
}

type histEntry struct {
	session int
	line    int
	input   string
	output  string // text/plain of the result, "" for none
}

// histRecord is one line of the history file.
type histRecord struct {
	Kernel string `json:"kernel"`
	Line   int    `json:"line"`
	Input  string `json:"input"`
	Output string `json:"output,omitempty"`
}

// openHistory reads the history file, if any. An unreadable file still
// gives a working in-memory history, with the error.
func openHistory(file, kernel string) (*history, error) {
	h := &history{file: file, kernel: kernel, session: 1}
	if file == "" {
		return h, nil
	}
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		h.file = ""
		return h, err
	}
	defer f.Close()
	sessions := map[string]int{}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := readLine(r, maxHistoryLine)
		var rec histRecord
		if line != nil && json.Unmarshal(line, &rec) == nil && rec.Kernel != "" {
			n, ok := sessions[rec.Kernel]
			if !ok {
				n = len(sessions) + 1
				sessions[rec.Kernel] = n
			}
			h.entries = append(h.entries, histEntry{n, rec.Line, rec.Input, rec.Output})
		} // else a line cut short by a crash, or too long
		if err == io.EOF {
			break
		}
		if err != nil {
			h.file = ""
			return h, err
		}
	}
	if len(h.entries) > maxHistory {
		h.entries = h.entries[len(h.entries)-maxHistory:]
	}
	h.session = len(sessions) + 1
	return h, nil
}

// readLine returns the next line of r without its newline, or nil for a
// line longer than limit, which it skips.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	long := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > limit+1 {
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if long {
			return nil, err
		}
		if err == io.EOF && len(line) == 0 {
			return nil, err
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// cut returns s, or its first maxHistoryText bytes (whole characters)
// and a line saying what was cut.
func cut(s string) string {
	if len(s) <= maxHistoryText {
		return s
	}
	n := maxHistoryText
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("\n// [history: cut to the first %s of %s]", formatBytes(int64(n)), formatBytes(int64(len(s))))
}

// add records cell line of this session, and appends it to the file. One
// write per line, with O_APPEND, so that kernels sharing the file do not
// interleave within a line.
// A large input or output is kept cut (see maxHistoryText), in memory
// and in the file alike.
func (h *history) add(line int, input, output string) {
	input, output = cut(input), cut(output)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries = append(h.entries, histEntry{h.session, line, input, output})
	if h.file == "" {
		return
	}
	b, err := json.Marshal(histRecord{h.kernel, line, input, output})
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(h.file), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(h.file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	f.Write(append(b, '\n'))
	f.Close()
}

// historyRequest is history_request's content.
type historyRequest struct {
	Output         bool   `json:"output"`
	Raw            bool   `json:"raw"`
	HistAccessType string `json:"hist_access_type"`
	Session        int    `json:"session"`
	Start          int    `json:"start"`
	Stop           *int   `json:"stop"`
	N              *int   `json:"n"`
	Pattern        string `json:"pattern"`
	Unique         bool   `json:"unique"`
}

// query answers a history request: "tail" (the last n cells), "range"
// (cells start to stop, stop excluded, of one session: 0 or this one's
// number is this session, -1 the one before), "search" (cells matching a
// glob pattern, * and ?, the last n; unique keeps the latest of equal
// inputs).
func (h *history) query(req historyRequest) []histEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []histEntry
	switch req.HistAccessType {
	case "tail":
		out = h.entries
	case "range":
		s := req.Session
		if s <= 0 {
			s += h.session
		}
		for _, e := range h.entries {
			if e.session == s && e.line >= req.Start && (req.Stop == nil || e.line < *req.Stop) {
				out = append(out, e)
			}
		}
		return out
	case "search":
		re, err := globRE(req.Pattern)
		if err != nil {
			return nil
		}
		seen := map[string]bool{}
		for i := len(h.entries) - 1; i >= 0; i-- {
			e := h.entries[i]
			if !re.MatchString(e.input) || req.Unique && seen[e.input] {
				continue
			}
			seen[e.input] = true
			out = append(out, e)
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	default:
		return nil
	}
	if req.N != nil && *req.N >= 0 && len(out) > *req.N {
		out = out[len(out)-*req.N:]
	}
	return out
}

// globRE compiles a glob as IPython's history search reads it: * is any
// text, ? one character, [ ] a class; it matches the whole input.
func globRE(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	inClass := false
	for _, r := range pattern {
		switch {
		case inClass:
			if r == ']' {
				inClass = false
			}
			if r == '\\' {
				b.WriteString(`\\`)
				continue
			}
			b.WriteRune(r)
		case r == '*':
			b.WriteString(`.*`)
		case r == '?':
			b.WriteString(`.`)
		case r == '[':
			inClass = true
			b.WriteRune(r)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`$`)
	return regexp.Compile(b.String())
}

// historyRequest answers history_request.
func (k *Kernel) historyRequest(m *message) {
	var req historyRequest
	json.Unmarshal(m.content, &req)
	entries := k.history.query(req)
	out := make([]any, 0, len(entries))
	for _, e := range entries {
		if req.Output {
			var o any
			if e.output != "" {
				o = e.output
			}
			out = append(out, []any{e.session, e.line, []any{e.input, o}})
		} else {
			out = append(out, []any{e.session, e.line, e.input})
		}
	}
	k.reply(k.shell, m, "history_reply", map[string]any{"status": "ok", "history": out})
}
