package harness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Sample is one logged line of a samples file: one document under one filter.
//
// Doc and Arguments are the raw JSON of those fields, kept unparsed because
// they hold the long prompts; they point into the reader's buffer and are
// valid only until the next call to Next (use Clone to keep a sample).
type Sample struct {
	Line     int // 1-based line of a JSONL file; 1-based element of a JSON array file
	DocID    int
	Filter   string   // "" when the file does not log it (before v0.4.7)
	Metrics  []string // nil when the file does not log them (before v0.4.7)
	Target   Value
	Resps    Value // requests × repeats; leaves stringified from v0.4.3
	Filtered Value // one entry per request after the filter pipeline

	DocHash, PromptHash, TargetHash string

	// Values holds every other key of the line in file order: the per-doc
	// metric values (and any extra fields a task logs).
	Values []Field

	Doc       []byte
	Arguments []byte

	present []string // which of resps and filtered_resps the line has
}

// Field is one key and value of a samples line.
type Field struct {
	Name  string
	Value Value
}

// Value returns the logged value of a per-doc field (a metric).
func (s *Sample) Value(name string) (Value, bool) {
	for _, f := range s.Values {
		if f.Name == name {
			return f.Value, true
		}
	}
	return Value{}, false
}

// Clone returns a copy that does not share the reader's buffer.
func (s *Sample) Clone() *Sample {
	c := *s
	c.Doc = append([]byte(nil), s.Doc...)
	c.Arguments = append([]byte(nil), s.Arguments...)
	c.Values = append([]Field(nil), s.Values...)
	c.Metrics = append([]string(nil), s.Metrics...)
	c.present = append([]string(nil), s.present...)
	return &c
}

// DocValue parses the logged document.
func (s *Sample) DocValue() (Value, error) {
	p := newParser(s.Doc)
	return p.value(0)
}

// ArgumentsValue parses the logged request arguments.
func (s *Sample) ArgumentsValue() (Value, error) {
	p := newParser(s.Arguments)
	return p.value(0)
}

// SampleReader streams the samples of one file, one line (or array element)
// at a time: memory stays bounded by the longest line, not the file, and a
// line longer than MaxSampleLine is an error.
type SampleReader struct {
	path   string
	f      io.Closer
	br     *bufio.Reader
	array  bool // a JSON array (lm-eval v0.4.0-v0.4.2) rather than JSON Lines
	done   bool
	line   int   // physical line of a JSONL file; element index of an array
	off    int64 // bytes of the file consumed so far
	max    int   // MaxSampleLine when the reader was made
	buf    []byte
	sample Sample
	p      parser // reused across lines for its scratch stacks
	inited bool
}

// OpenSamples opens a samples file of any lm-eval version: JSON Lines (named
// .jsonl, or .json in some 2024 builds) or one JSON array (v0.4.0-v0.4.2).
// It must be a regular file (symbolic links followed); lines are limited to
// MaxSampleLine bytes.
func OpenSamples(path string) (*SampleReader, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	return newSampleReader(path, f, f), nil
}

// sampleReadSize is the samples reader's buffer: lines that fit are parsed
// where they lie, longer ones are copied together.
const sampleReadSize = 1 << 20

func newSampleReader(path string, r io.Reader, c io.Closer) *SampleReader {
	return &SampleReader{path: path, f: c, br: bufio.NewReaderSize(r, sampleReadSize), max: max(MaxSampleLine, 1)}
}

// Path returns the file being read.
func (r *SampleReader) Path() string { return r.path }

// Close closes the file.
func (r *SampleReader) Close() error {
	if r.f == nil {
		return nil
	}
	return r.f.Close()
}

func (r *SampleReader) errAt(line int, err error) error {
	return &FileError{Path: r.path, Line: line, Err: err}
}

// Next returns the next sample, or io.EOF after the last. The sample and the
// slices in it are reused by the next call.
func (r *SampleReader) Next() (*Sample, error) {
	if r.done {
		return nil, io.EOF
	}
	if !r.inited {
		r.inited = true
		if err := r.detect(); err != nil {
			r.done = true
			return nil, err
		}
		if r.done {
			return nil, io.EOF
		}
	}
	var raw []byte
	var err error
	if r.array {
		raw, err = r.nextElement()
	} else {
		raw, err = r.nextLine()
	}
	if err != nil {
		r.done = true
		return nil, err
	}
	if raw == nil {
		r.done = true
		return nil, io.EOF
	}
	s := &r.sample
	if err := parseSample(&r.p, raw, s); err != nil {
		r.done = true
		var se *syntaxError
		if errors.As(err, &se) {
			if se.off >= len(raw) && !r.array {
				return nil, r.splitObject(append([]byte(nil), raw...), se)
			}
			return nil, se.fileError(r.path, len(raw), func(off int) (int, int) { return r.line, off + 1 })
		}
		return nil, r.errAt(r.line, err)
	}
	s.Line = r.line
	return s, nil
}

// splitObject says why a line that ends in the middle of its JSON object
// (se) is not a samples line: the file ends there (truncated), the object
// goes on over the next lines (pretty-printed, not JSON Lines), or the next
// line does not continue it. It reads on at most MaxSampleLine bytes.
func (r *SampleReader) splitObject(first []byte, se *syntaxError) error {
	line := r.line
	joined := first
	// Where the object closes is found by one scan over the bytes
	// (strings and nesting), so that the look-ahead costs linear time;
	// the object is parsed once, when it closes.
	var sc objectScan
	sc.feed(joined)
	for extra := 1; ; extra++ {
		next, err := r.nextLine()
		if err != nil || (next != nil && len(joined)+1+len(next) > r.max) {
			break
		}
		if next == nil {
			if extra == 1 {
				return r.errAt(line, fmt.Errorf("%w: the file ends in the middle of the JSON object of its last line (%s)", ErrTruncated, se.msg))
			}
			return r.errAt(line, fmt.Errorf("%w: the JSON object that starts on this line is not complete when the file ends, %d lines later (lm-eval writes one object per line)", ErrTruncated, extra-1))
		}
		if next[0] == '{' {
			// A line that is a whole sample of its own starts the next
			// object: the one before it was cut, not continued.
			var p parser
			var s Sample
			if parseSample(&p, next, &s) == nil {
				break
			}
		}
		start := len(joined)
		joined = append(append(joined, '\n'), next...)
		if !sc.feed(joined[start:]) {
			continue
		}
		var p parser
		var s Sample
		if parseSample(&p, joined, &s) == nil {
			return r.errAt(line, fmt.Errorf("%w: a JSON object continues over %d lines, to line %d (lm-eval writes one per line)", ErrNotLMEval, extra+1, r.line))
		}
		break
	}
	return r.errAt(line, fmt.Errorf("%w: the line ends in the middle of a JSON object (%s) and the next line does not continue it; lm-eval writes one complete object per line", ErrSyntax, se.msg))
}

// objectScan follows the nesting of JSON text fed to it in pieces.
type objectScan struct {
	depth     int
	inStr     bool
	esc, open bool
}

// feed scans b and reports whether the outermost value closed in it.
func (sc *objectScan) feed(b []byte) bool {
	for _, c := range b {
		switch {
		case sc.inStr:
			switch {
			case sc.esc:
				sc.esc = false
			case c == '\\':
				sc.esc = true
			case c == '"':
				sc.inStr = false
			}
		case c == '"':
			sc.inStr = true
		case c == '{' || c == '[':
			sc.depth++
			sc.open = true
		case c == '}' || c == ']':
			sc.depth--
			if sc.open && sc.depth <= 0 {
				return true
			}
		}
	}
	return false
}

// detect peeks at the first non-blank byte: '[' is the old array format.
func (r *SampleReader) detect() error {
	for {
		c, err := r.br.ReadByte()
		if err == io.EOF {
			r.done = true
			return nil
		}
		if err != nil {
			return r.errAt(r.line+1, err)
		}
		r.off++
		switch c {
		case ' ', '\t', '\r':
			continue
		case '\n':
			r.line++
			continue
		case '[':
			r.array = true
			return nil
		case '{':
			r.off--
			return r.br.UnreadByte()
		default:
			return r.errAt(r.line+1, fmt.Errorf("%w: samples must be JSON Lines of objects or one JSON array, found %q", ErrNotLMEval, c))
		}
	}
}

// nextLine returns the next non-blank line without its newline, or nil at
// the end. A last line without a newline is accepted only if it is complete
// JSON (parseSample reports a truncated one). A line longer than r.max is an
// error; it is read through without being kept.
func (r *SampleReader) nextLine() ([]byte, error) {
	for {
		r.buf = r.buf[:0]
		start := r.off
		var line []byte
		for {
			chunk, err := r.br.ReadSlice('\n')
			r.off += int64(len(chunk))
			n := len(r.buf) + len(chunk)
			if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
				n--
			}
			if n > r.max {
				return nil, r.skipLong(start, err)
			}
			if err == bufio.ErrBufferFull {
				r.grow(len(chunk))
				r.buf = append(r.buf, chunk...)
				continue
			}
			if err != nil && err != io.EOF {
				return nil, r.errAt(r.line+1, err)
			}
			if len(r.buf) > 0 {
				r.grow(len(chunk))
				r.buf = append(r.buf, chunk...)
				line = r.buf
			} else {
				line = chunk
			}
			if err == io.EOF && len(line) == 0 {
				return nil, nil
			}
			break
		}
		r.line++
		if off := invalidUTF8(line); off >= 0 {
			return nil, &FileError{Path: r.path, Line: r.line, Col: off + 1, Err: utf8Error(line, off, start+int64(off))}
		}
		trimmed := trimSpace(line)
		if len(trimmed) == 0 {
			continue
		}
		return trimmed, nil
	}
}

// grow makes room for n more bytes in r.buf, doubling its capacity (up to
// what r.max needs) so that a long line costs a bounded multiple of its
// length in copies rather than append's smaller steps.
func (r *SampleReader) grow(n int) {
	need := len(r.buf) + n
	if need <= cap(r.buf) {
		return
	}
	c := max(2*cap(r.buf), need, 64<<10)
	c = min(c, r.max+sampleReadSize)
	c = max(c, need)
	nb := make([]byte, len(r.buf), c)
	copy(nb, r.buf)
	r.buf = nb
}

// skipLong reads through the rest of a line that is over the limit, without
// keeping it, and returns the error that names it. err is what the read of
// the line's last chunk so far returned: bufio.ErrBufferFull when the line
// goes on.
func (r *SampleReader) skipLong(start int64, err error) error {
	r.line++
	r.buf = nil // reading ends here: let the buffer go
	for err == bufio.ErrBufferFull {
		var chunk []byte
		chunk, err = r.br.ReadSlice('\n')
		r.off += int64(len(chunk))
	}
	if err != nil && err != io.EOF {
		return r.errAt(r.line, err)
	}
	n := r.off - start
	if err == nil {
		n-- // the newline
	}
	return r.errAt(r.line, fmt.Errorf("%w: the line is %d bytes, over the %d-byte limit for a samples line (harness.MaxSampleLine)", ErrTooLarge, n, r.max))
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// nextElement returns the bytes of the next element of a JSON array, or nil
// after the closing bracket. It tracks strings and nesting byte by byte; the
// array format only exists in old, small files.
func (r *SampleReader) nextElement() ([]byte, error) {
	r.buf = r.buf[:0]
	depth := 0
	inStr, esc := false, false
	started := false
	var start int64
	for {
		c, err := r.br.ReadByte()
		if err == io.EOF {
			return nil, r.errAt(r.line+1, fmt.Errorf("%w: the JSON array of samples is not closed", ErrTruncated))
		}
		if err != nil {
			return nil, r.errAt(r.line+1, err)
		}
		r.off++
		if len(r.buf) >= r.max {
			return nil, r.errAt(r.line, fmt.Errorf("%w: element %d of the samples array is over the %d-byte limit for a sample (harness.MaxSampleLine)", ErrTooLarge, r.line, r.max))
		}
		if inStr {
			r.buf = append(r.buf, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			if started {
				r.buf = append(r.buf, c)
			}
			continue
		case ',':
			if depth == 0 {
				if !started && r.line == 0 {
					return nil, r.errAt(r.line+1, fmt.Errorf("%w: unexpected ',' in the samples array", ErrSyntax))
				}
				continue
			}
		case ']':
			if depth == 0 {
				if started {
					return nil, r.errAt(r.line+1, fmt.Errorf("%w: unbalanced ']' in the samples array", ErrSyntax))
				}
				return nil, nil
			}
			depth--
		case '[', '{':
			depth++
		case '}':
			depth--
		case '"':
			inStr = true
		}
		if !started {
			if c != '{' {
				return nil, r.errAt(r.line+1, fmt.Errorf("%w: expected an object in the samples array, found %q", ErrNotLMEval, c))
			}
			started = true
			start = r.off - 1
			r.line++
		}
		r.buf = append(r.buf, c)
		if depth == 0 {
			if off := invalidUTF8(r.buf); off >= 0 {
				return nil, r.errAt(r.line, utf8Error(r.buf, off, start+int64(off)))
			}
			return r.buf, nil
		}
	}
}

// parseSample fills s from one line. Only the small fields are decoded; the
// document and the arguments are skipped and kept as raw bytes.
func parseSample(p *parser, b []byte, s *Sample) error {
	*s = Sample{Values: s.Values[:0], DocID: -1, present: s.present[:0]}
	p.reset(b)
	err := p.object("sample object", func(key string) (bool, error) {
		switch key {
		case "doc", "arguments":
			raw, err := p.raw()
			if key == "doc" {
				s.Doc = raw
			} else {
				s.Arguments = raw
			}
			return false, err
		}
		v, err := p.value(0)
		if err != nil {
			return false, err
		}
		return false, s.set(key, v)
	})
	if err == nil {
		err = p.end("sample object")
	}
	if err != nil {
		return err
	}
	if s.DocID < 0 {
		return fmt.Errorf(`%w: field "doc_id" is missing`, ErrNotLMEval)
	}
	// lm-eval writes every line with its responses and per-doc values;
	// a line without them was cut down by hand and cannot be re-scored.
	switch {
	case s.Resps.Kind == Null && !s.has("resps"):
		return fmt.Errorf(`%w: field "resps" is missing (lm-eval logs the raw responses on every line)`, ErrNotLMEval)
	case s.Filtered.Kind == Null && !s.has("filtered_resps"):
		return fmt.Errorf(`%w: field "filtered_resps" is missing (lm-eval logs the filtered responses on every line)`, ErrNotLMEval)
	}
	for _, m := range s.Metrics {
		if _, ok := s.Value(m); !ok {
			return fmt.Errorf(`%w: field %q is missing (the line's "metrics" names it)`, ErrNotLMEval, m)
		}
	}
	return nil
}

// has reports whether the line held key among its fields the reader
// decodes (resps and filtered_resps may be logged as null).
func (s *Sample) has(key string) bool {
	for _, k := range s.present {
		if k == key {
			return true
		}
	}
	return false
}

func (s *Sample) set(key string, v Value) error {
	switch key {
	case "resps", "filtered_resps":
		s.present = append(s.present, key)
	}
	switch key {
	case "doc_id":
		if v.Kind != Number || !v.IsInt || v.Num < 0 {
			return fmt.Errorf(`"doc_id": expected a non-negative integer, found %s`, v)
		}
		s.DocID = int(v.Num)
	case "target":
		s.Target = v
	case "resps":
		s.Resps = v
	case "filtered_resps":
		s.Filtered = v
	case "filter":
		if v.Kind != String {
			return fmt.Errorf(`"filter": expected a string, found %s`, v)
		}
		s.Filter = v.Str
	case "metrics":
		if v.Kind != List {
			return fmt.Errorf(`"metrics": expected a list of metric names, found %s`, v)
		}
		s.Metrics = make([]string, 0, len(v.List))
		for _, m := range v.List {
			if m.Kind != String {
				return fmt.Errorf(`"metrics": expected metric names, found %s`, m)
			}
			s.Metrics = append(s.Metrics, m.Str)
		}
	case "doc_hash":
		s.DocHash = v.Str
	case "prompt_hash":
		s.PromptHash = v.Str
	case "target_hash":
		s.TargetHash = v.Str
	default:
		s.Values = append(s.Values, Field{Name: key, Value: v})
	}
	return nil
}

// IsArray reports whether the file is the JSON-array format of v0.4.0-v0.4.2
// (known after the first call to Next).
func (r *SampleReader) IsArray() bool { return r.array }

// DocField returns one top-level field of the logged document without
// parsing the rest of it.
func (s *Sample) DocField(key string) (Value, bool, error) {
	if doc := bytes.TrimLeft(s.Doc, " \t\n\r"); len(doc) == 0 || doc[0] != '{' {
		return Value{}, false, fmt.Errorf("doc is not a JSON object")
	}
	p := newParser(s.Doc)
	var v Value
	found := false
	err := p.object("doc", func(k string) (bool, error) {
		if k != key {
			return false, p.skip()
		}
		var err error
		v, err = p.value(0)
		found = err == nil
		return true, err
	})
	return v, found, err
}
