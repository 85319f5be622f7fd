package quote

import "testing"

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
