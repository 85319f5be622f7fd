package harness

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"unicode/utf8"
)

// Limits on what the readers accept, so that a damaged or hostile file
// costs an error rather than the machine's memory. They are read when a file
// is opened; change them before reading, not while files are being read.
var (
	// MaxResultsSize is the largest results file ReadResults reads, in
	// bytes: 256 MiB. lm-eval's results files are a few hundred KB to a few
	// MB (the largest of the real outputs in the test fixtures, a full MMLU
	// run with its 57 task configs, is 116 KB); a results file that embeds
	// its samples is the one legitimate reason to go past that.
	MaxResultsSize int64 = 256 << 20
	// MaxSampleLine is the longest line of a samples JSONL file (or element
	// of a v0.4.0-v0.4.2 JSON-array file) the samples reader accepts, in
	// bytes: 64 MiB. A line holds one document, its prompt and the model's
	// responses; the longest line of the real outputs in the test fixtures
	// is 8,268 bytes, and a long-context task (a 128k-token prompt, logged
	// in the document and again in the arguments) stays near a few MB. A
	// longer line is an error naming the file and line, found without
	// holding the line in memory.
	MaxSampleLine = 64 << 20
)

// openRegular opens path for reading, refusing anything but a regular file
// (after symbolic links): a FIFO would block the read forever and a device
// such as /dev/zero never ends. The open itself does not block
// (O_NONBLOCK), so a FIFO swapped in after a check is refused as well.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, nil, err
	} else if !st.Mode().IsRegular() {
		return nil, nil, notRegular(path, st.Mode())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular(path, st.Mode())
	}
	return f, st, nil
}

// notRegular is the error for a path of the given mode that is not a
// regular file.
func notRegular(path string, mode fs.FileMode) error {
	return &FileError{Path: path, Err: fmt.Errorf("%w (%s): expected an lm-eval results or samples file", ErrNotRegular, modeName(mode))}
}

func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.String()
}

// readResultsFile reads a whole results file, at most MaxResultsSize bytes.
func readResultsFile(path string) ([]byte, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := MaxResultsSize
	if st.Size() > limit {
		return nil, tooLarge(path, st.Size(), limit)
	}
	// The size can change under the read: bound the read itself too.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(path, -1, limit)
	}
	return b, nil
}

func tooLarge(path string, size, limit int64) error {
	what := "larger than"
	if size >= 0 {
		what = fmt.Sprintf("%d bytes,", size)
	}
	return &FileError{Path: path, Err: fmt.Errorf("%w: %s over the %d-byte limit for a results file (harness.MaxResultsSize); lm-eval's are a few MB at most", ErrTooLarge, what, limit)}
}

// invalidUTF8 returns the offset of the first byte of b that is not part of
// valid UTF-8, or -1. lm-eval writes UTF-8 (json.dump with
// ensure_ascii=False): anything else is a damaged file.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// utf8Error says where the invalid byte at b[off] is.
func utf8Error(b []byte, off int, fileOff int64) error {
	return fmt.Errorf("%w: invalid UTF-8 (byte 0x%02x) at byte offset %d of the file; lm-eval writes UTF-8", ErrSyntax, b[off], fileOff)
}
