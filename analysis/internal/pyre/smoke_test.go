package pyre

import "testing"

func TestSmoke(t *testing.T) {
	for _, p := range []string{`(-?[$0-9.,]{2,})|(-?[0-9]+)`, `\b(Yes|No|yes|no)\b`, `(?s).*#### `, `\.$`, `(?i)answer[^A-D]{0,25}([A-D])`, `\w+`, `[\W_]+`, `[^\W\d_]+`, `a*|b`, `(?P<x>a)(?P=x)`} {
		re, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s => %s", p, re.expr)
		t.Logf("  %q", re.FindAll("baaa The answer is 1,234.5 and $5. Yes, no! aa ∑x_ĳ٣"))
	}
}
