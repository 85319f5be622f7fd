package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/internal/quote"
)

// shellQuote's words mean, to sh, exactly the string quoted, and show
// nothing a terminal would obey.
func TestShellQuote(t *testing.T) {
	for _, s := range []string{
		"", "plain", "pretrained=org/model,dtype=bfloat16", "two words", "it's", "'", "''",
		`$HOME`, "`date`", `back\slash`, `"double"`, "a\nb", "tab\there", "~user", "#hash", "!bang", "*.json",
		"\x1b[31mred\x1b[0m", "bidi \u202e override", "bad \xff utf-8", "trailing newline\n", "é ü 中文",
	} {
		w := shellQuote(s)
		if strings.ContainsFunc(w, func(r rune) bool { return r != '\n' && r != '\t' && quote.Text(string(r)) != string(r) }) || strings.ToValidUTF8(w, "") != w {
			t.Errorf("%q: %q shows characters a terminal obeys", s, w)
		}
		out, err := exec.Command("sh", "-c", "printf '%s' "+w).Output()
		if err != nil || string(out) != s {
			t.Errorf("%q: sh reads %q as %q (%v)", s, w, out, err)
		}
	}
	if got := shellJoin([]string{"A=b", "c=d"}); got != "'A=b' c=d" {
		t.Errorf("an assignment-like program name: %s", got)
	}
}
