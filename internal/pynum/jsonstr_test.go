package pynum

import (
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestAppendString_Python compares string literals with json.dumps(s,
// ensure_ascii=False) on every control character, quotes, backslashes and
// non-ASCII text.
func TestAppendString_Python(t *testing.T) {
	var samples []string
	for c := 0; c < 0x80; c++ {
		samples = append(samples, "a"+string(rune(c))+"b", string(rune(c)))
	}
	samples = append(samples, "", `"quoted" \ back\\slash`, "naïve café – “curly” ’", "中文 😀 \u2028 \u2029 \u0085 \u00a0 \ufeff",
		"tab\tnl\ncr\rff\fbs\b", "\x00\x1f\x7f", "Question: x\nAnswer:", "</s><|im_end|>")
	r := rand.New(rand.NewPCG(2, 1))
	alphabet := []rune("ab\"\\\n\t\x01\x1f é中😀/<>&'")
	for i := 0; i < 2000; i++ {
		n := r.IntN(30)
		rs := make([]rune, n)
		for j := range rs {
			rs[j] = alphabet[r.IntN(len(alphabet))]
		}
		samples = append(samples, string(rs))
	}
	var in strings.Builder
	for _, s := range samples {
		in.WriteString(hex.EncodeToString([]byte(s)))
		in.WriteString(" ")
		in.WriteString(hex.EncodeToString(AppendString(nil, s)))
		in.WriteString("\n")
	}
	out := runPython(t, `
import json, sys
bad = n = 0
for line in sys.stdin:
    n += 1
    raw, lit = line.split(' ')
    s = bytes.fromhex(raw).decode('utf-8')
    want = json.dumps(s, ensure_ascii=False).encode('utf-8').hex()
    if want != lit.strip():
        bad += 1
        if bad < 10: print('mismatch', repr(s), bytes.fromhex(lit).decode())
print('checked', n, 'bad', bad)
`, []byte(in.String()))
	if want := "checked " + strconv.Itoa(len(samples)) + " bad 0\n"; !strings.HasSuffix(out, want) {
		t.Fatalf("string literals differ from CPython (want %q):\n%s", want, out)
	}
}

// TestAppendEscaped checks that the escaped inside of a literal composes:
// escaping a prefix once and appending the rest gives the whole literal,
// and bytes that are not UTF-8 pass through as they are.
func TestAppendEscaped(t *testing.T) {
	prefix, rest := "Q: \"a\"\n\t", "é\\\x01 end"
	esc := AppendEscaped(nil, prefix)
	got := append(append([]byte{'"'}, AppendEscaped(esc, rest)...), '"')
	if want := AppendString(nil, prefix+rest); string(got) != string(want) {
		t.Errorf("prefix escaped apart: %q, whole: %q", got, want)
	}
	if got, want := string(AppendString([]byte("x="), "\xff\x7f\u2028\x1b")), "x=\"\xff\x7f\u2028\\u001b\""; got != want {
		t.Errorf("AppendString = %q, want %q", got, want)
	}
}
