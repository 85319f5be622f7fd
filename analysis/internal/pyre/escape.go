package pyre

import "strings"

// Escape is Python 3.7+'s re.escape: a backslash before each of
// ()[]{}?*+-|^$\.&~# and the whitespace characters space, \t, \n, \r, \v
// and \f, and nothing else (earlier versions escaped every non-alphanumeric
// ASCII character). lm-eval's multi_choice_regex builds its fallback
// pattern from re.escape of the answer choices.
func Escape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("()[]{}?*+-|^$\\.&~# \t\n\r\v\f", s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
