package quote

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"gsm8k exact_match":     "gsm8k exact_match",
		"naïve — ok ✓":          "naïve — ok ✓",
		"title\x1b]0;pwned\x07": `title\x1b]0;pwned\a`,
		"erase\r\x1b[2K":        `erase\r\x1b[2K`,
		"bidi \u202eevil":       `bidi \u202eevil`,
		"bad \xff utf8":         `bad \xff utf8`,
		"line\nbreak":           `line\nbreak`,
		"c1 \u009b":             `c1 \u009b`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestArgv(t *testing.T) {
	got := Argv([]string{"lm_eval", "--model_args", "pretrained=m,dtype=bfloat16", "--gen_kwargs", "until=[\"Q:\"]", "", "a b", "\x1b[31m"})
	want := `lm_eval --model_args pretrained=m,dtype=bfloat16 --gen_kwargs "until=[\"Q:\"]" "" "a b" "\x1b[31m"`
	if got != want {
		t.Errorf("Argv:\n%s\nwant\n%s", got, want)
	}
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	in := "study \x1b]0;pwned\x07 ok\n\ttab é"
	// Byte by byte: characters split across writes stay whole.
	for i := 0; i < len(in); i++ {
		w.Write([]byte{in[i]})
	}
	w.Write([]byte("\xe2\x80")) // an incomplete character at the end
	w.Flush()
	want := "study \\x1b]0;pwned\\a ok\n\ttab é\\xe2\\x80"
	if b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
}
