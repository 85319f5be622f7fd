package kernel

import (
	"errors"
	"fmt"
)

var (
	// ErrConnection reports a connection file the kernel cannot use.
	ErrConnection = errors.New("invalid connection file")
	// ErrSignature reports a message whose HMAC signature is missing or
	// wrong: it was not sent by a client holding the connection file's
	// key, and is dropped unread.
	ErrSignature = errors.New("invalid message signature")
	// ErrMessage reports a message that is not a Jupyter message.
	ErrMessage = errors.New("malformed message")
	// ErrNoStdin reports input read by a cell whose frontend cannot
	// answer (allow_stdin false, as under nbconvert).
	ErrNoStdin = errors.New("this frontend does not support input (allow_stdin is false)")
	// ErrNotebook reports input that ExecuteNotebook cannot read as a
	// Jupyter notebook in nbformat 4.
	ErrNotebook = errors.New("invalid notebook")
	// ErrTemporaryBuild reports a kernel command that lies in the Go build
	// cache or in the go-build directory `go run` builds into: Go deletes
	// it (when the cache is trimmed, when `go run` ends), and Jupyter could
	// then no longer start the kernel.
	ErrTemporaryBuild = errors.New("the executable is a temporary Go build")
)

// CellError is a notebook cell that failed (see ExecuteNotebook).
type CellError struct {
	Cell           int    // index of the cell in the notebook's cells, from 0
	ExecutionCount int    // its execution_count: the cell is In[ExecutionCount]
	Name           string // Jupyter's ename: CompileError, panic, Interrupted, Timeout, the type of an error the cell returned
	Value          string // evalue, the message
	// Traceback is the error as the notebook shows it, lines with ANSI
	// colour codes.
	Traceback []string
}

func (e *CellError) Error() string {
	return fmt.Sprintf("cell %d (In[%d]): %s: %s", e.Cell, e.ExecutionCount, e.Name, e.Value)
}
