package kernel

import "errors"

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
)
