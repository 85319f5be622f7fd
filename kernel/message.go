package kernel

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// protocolVersion is the Jupyter messaging protocol the kernel speaks.
const protocolVersion = "5.3"

// delimiter separates the routing identities from the message.
var delimiter = []byte("<IDS|MSG>")

// header is a message header. Received headers are kept as raw JSON too,
// so that a reply's parent_header is byte for byte what the client sent.
type header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// message is one Jupyter message, received or to be sent.
type message struct {
	// ids are the ZeroMQ routing identities of the sender, which a reply
	// goes back to.
	ids       [][]byte
	header    header
	rawHeader json.RawMessage
	parent    json.RawMessage // the parent header, "{}" when none
	metadata  json.RawMessage
	content   json.RawMessage
	buffers   [][]byte
	// malformed says why the content is not what the protocol says (a
	// JSON object): the request is answered with an error.
	malformed error
}

// signer signs and checks messages with the connection key.
type signer struct{ key []byte }

func (s signer) sign(parts ...[]byte) []byte {
	if len(s.key) == 0 {
		return nil
	}
	mac := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		mac.Write(p)
	}
	sum := mac.Sum(nil)
	out := make([]byte, hex.EncodedLen(len(sum)))
	hex.Encode(out, sum)
	return out
}

// decode parses the frames of a received message and checks its
// signature. A message whose signature does not match is an ErrSignature,
// whatever else is wrong with it.
func (s signer) decode(frames [][]byte) (*message, error) {
	i := 0
	for i < len(frames) && !bytes.Equal(frames[i], delimiter) {
		i++
	}
	if i == len(frames) || len(frames) < i+6 {
		return nil, fmt.Errorf("%w: %d frames, no delimiter and five parts", ErrMessage, len(frames))
	}
	sig, parts := frames[i+1], frames[i+2:i+6]
	if len(s.key) > 0 && !hmac.Equal(sig, s.sign(parts...)) {
		return nil, ErrSignature
	}
	m := &message{
		ids:       frames[:i],
		rawHeader: parts[0],
		parent:    parts[1],
		metadata:  parts[2],
		content:   parts[3],
		buffers:   frames[i+6:],
	}
	if err := json.Unmarshal(m.rawHeader, &m.header); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrMessage, err)
	}
	if m.header.MsgType == "" {
		return nil, fmt.Errorf("%w: header has no msg_type", ErrMessage)
	}
	if err := checkObject(m.content); err != nil {
		m.malformed = fmt.Errorf("%w: the content of this %s is not a JSON object: %v", ErrMessage, m.header.MsgType, err)
	}
	return m, nil
}

// checkObject reports why b is not a JSON object.
func checkObject(b []byte) error {
	if json.Valid(b) {
		if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
			return nil
		}
		return errors.New("another JSON value")
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}

// encode returns the frames of a message of type msgType with content,
// from this kernel's session, in reply to parent (nil for none) and routed
// to ids.
func (s signer) encode(session string, ids [][]byte, msgType string, parent *message, content any) ([][]byte, error) {
	h, err := json.Marshal(header{
		MsgID:    newID(),
		Session:  session,
		Username: "kernel",
		Date:     time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
		MsgType:  msgType,
		Version:  protocolVersion,
	})
	if err != nil {
		return nil, err
	}
	p := []byte("{}")
	if parent != nil {
		p = parent.rawHeader
	}
	c, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("%s content: %w", msgType, err)
	}
	md := []byte("{}")
	frames := make([][]byte, 0, len(ids)+6)
	frames = append(frames, ids...)
	frames = append(frames, delimiter, s.sign(h, p, md, c), h, p, md, c)
	return frames, nil
}

// newID returns a random UUID (version 4), the form of Jupyter's ids.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
