package kernel

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestSignature(t *testing.T) {
	s := signer{key: []byte("secret")}
	frames, err := s.encode("sess", [][]byte{[]byte("peer")}, "execute_request", nil, map[string]any{"code": "1"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.decode(frames)
	if err != nil {
		t.Fatal(err)
	}
	if m.header.MsgType != "execute_request" || string(m.ids[0]) != "peer" || m.header.Version != protocolVersion {
		t.Errorf("decoded %+v", m.header)
	}
	var c map[string]any
	json.Unmarshal(m.content, &c)
	if c["code"] != "1" {
		t.Errorf("content %v", c)
	}

	forged := append([][]byte{}, frames...)
	forged[len(forged)-1] = []byte(`{"code":"os.RemoveAll(\"/\")"}`)
	if _, err := s.decode(forged); !errors.Is(err, ErrSignature) {
		t.Errorf("changed content: %v, want ErrSignature", err)
	}
	unsigned, _ := signer{}.encode("sess", nil, "execute_request", nil, map[string]any{})
	if _, err := s.decode(unsigned); !errors.Is(err, ErrSignature) {
		t.Errorf("unsigned: %v, want ErrSignature", err)
	}
	other, _ := signer{key: []byte("other")}.encode("sess", nil, "execute_request", nil, map[string]any{})
	if _, err := s.decode(other); !errors.Is(err, ErrSignature) {
		t.Errorf("other key: %v, want ErrSignature", err)
	}
	if _, err := s.decode([][]byte{[]byte("x")}); !errors.Is(err, ErrMessage) {
		t.Errorf("garbage: %v, want ErrMessage", err)
	}
}

func TestReplyParent(t *testing.T) {
	s := signer{key: []byte("k")}
	req, _ := s.encode("client", [][]byte{[]byte("id")}, "kernel_info_request", nil, map[string]any{})
	m, _ := s.decode(req)
	rep, _ := s.encode("kernel", m.ids, "kernel_info_reply", m, map[string]any{})
	r, err := s.decode(rep)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.parent) != string(m.rawHeader) {
		t.Errorf("parent %s, want the request's header %s", r.parent, m.rawHeader)
	}
}
