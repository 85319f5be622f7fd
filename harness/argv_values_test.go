package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// Text values as a study gives them: lm-eval's key=value reading types them.
var argvValueTexts = []string{
	"bfloat16", "true", "FALSE", "5", "007", "-1", "0.0", "1e3", "1_000", "inf", "-Infinity", "nan",
	"None", "null", "no", "", "a,b", "x=y", "x=y,z", "{x}", `say "hi"`, `"quoted"`, `'single'`,
	"it's", "a b", "a\tb", "[1]", `["a","b"]`, `["a"]`, `{"a": 1}`, `{"a": null}`, "/path/a,b", "(1,2)",
	"(1)", "()", "- 1", "-(1)", "[1, [2, (3,)]]", "{'a': 1}", `["a\nb"]`, `'\x41\u00e9'`, "١٢", "ünïcödé",
	"<s>&</s>", "9213176726f574b556790deb65791e0c5aa438b6", "0x1F", "1j", "True,1", `b"x"`, "set()",
	"x\\ny", "1,2", "[1,2]", "{1: 2}", "[True, None]",
}

// JSON values: their document is the Python value.
var argvValueJSON = []string{
	`["Question:","</s>"]`, `[]`, `{}`, `null`, `true`, `false`, `0`, `-1`, `-0`, `1.0`, `0.5`, `1e-07`,
	`1E+2`, `12345678901234567890`, `"plain"`, `""`, `"a,b"`, `"x=y"`, `"{braces}"`, `"say \"hi\""`,
	`"it's"`, `" spaced "`, `"tab\tnl\n"`, `"\u0000nul"`, `"ünï©ødé ☃ \ud83d\ude00"`, `"</s><|im_end|>&"`,
	`"\/slash"`, `"None"`, `"true"`, `"5"`,
	`{"chat_template_args":{"enable_thinking":false},"stop":[["a","b"],{"c":null}]}`,
	`[1,2.5,"3",true,null]`, `{"a":{"b":{"c":[1]}}}`, `["a, b","x=y","{","}","\"","'"," lead","trail "]`,
	` [ 1 , 2 ] `, `{"k=v,x":"{"}`,
}

// JSON documents Argv refuses: not JSON, or read back otherwise than they
// say.
var argvValueBadJSON = []string{`[1,`, `{"a":1,"a":2}`, `1e999`, `NaN`, `[1] [2]`, `'single'`, ``, "\"\xff\""}

type argvValueSpec struct {
	name string
	spec RunSpec
}

func argvValueSpecs() []argvValueSpec {
	var out []argvValueSpec
	for _, t := range argvValueTexts {
		out = append(out,
			argvValueSpec{fmt.Sprintf("gen_kwargs text %q", t),
				RunSpec{Tasks: []string{"gsm8k"}, GenKwargs: KVs{{Key: "max_gen_toks", Value: "256"}, {Key: "k", Value: t}}}},
			// A JSON neighbour makes v0.4.9.x write the whole dict as JSON.
			argvValueSpec{fmt.Sprintf("model_args text %q beside JSON", t),
				RunSpec{Tasks: []string{"gsm8k"}, ModelArgs: KVs{{Key: "pretrained", Value: "gpt2"}, {Key: "k", Value: t}, {Key: "l", Value: "[1]", JSON: true}}}})
	}
	for _, j := range argvValueJSON {
		out = append(out,
			argvValueSpec{fmt.Sprintf("gen_kwargs JSON %s", j),
				RunSpec{Tasks: []string{"gsm8k"}, GenKwargs: KVs{{Key: "max_gen_toks", Value: "256"}, {Key: "k", Value: j, JSON: true}, {Key: "t", Value: "0.5"}}}},
			argvValueSpec{fmt.Sprintf("model_args JSON %s with trust_remote_code", j),
				RunSpec{Tasks: []string{"gsm8k"}, ModelArgs: KVs{{Key: "pretrained", Value: "gpt2"}, {Key: "k", Value: j, JSON: true}}, TrustRemoteCode: true}})
	}
	return out
}

// argvUnsupported returns the *UnsupportedSettingErrors in err.
func argvUnsupported(err error) []*UnsupportedSettingError {
	var out []*UnsupportedSettingError
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case *UnsupportedSettingError:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	return out
}

// TestArgvValues: every value, on every release, is either passed so that
// the release reads back the Python value the spec means, or refused; a
// refusal for lack of support names a release that takes that setting.
func TestArgvValues(t *testing.T) {
	unmodelled := 0
	for _, c := range argvValueSpecs() {
		for _, v := range Releases {
			args, err := Argv(c.spec, v, "")
			if err != nil {
				if !errors.Is(err, ErrUnsupportedSetting) && !errors.Is(err, ErrInvalidSetting) {
					t.Errorf("%s on %s: error matches no sentinel: %v", c.name, v, err)
				}
				for _, u := range argvUnsupported(err) {
					if u.Since == (Version{}) {
						continue
					}
					_, again := Argv(c.spec, u.Since, "")
					for _, u2 := range argvUnsupported(again) {
						if u2.Setting == u.Setting {
							t.Errorf("%s on %s: %q is said to be supported from %s, which refuses it too: %v", c.name, v, u.Setting, u.Since, u2)
						}
					}
				}
				continue
			}
			checkArgvShape(t, c.name, v, args)
			diff, err := argvRoundTrip(v, c.spec, args)
			switch {
			case errors.Is(err, errPyUnmodelled):
				unmodelled++
			case err != nil:
				t.Errorf("%s on %s: %v", c.name, v, err)
			case diff != "":
				t.Errorf("%s on %s: %s\nargv %q", c.name, v, diff, args)
			}
		}
	}
	t.Logf("%d argvs left to the Python cross-check alone (the Go model cannot tell)", unmodelled)
}

func TestArgvBadJSON(t *testing.T) {
	for _, doc := range argvValueBadJSON {
		for _, v := range Releases {
			spec := RunSpec{Tasks: []string{"gsm8k"}, GenKwargs: KVs{{Key: "k", Value: doc, JSON: true}}}
			if v == (Version{0, 4, 2}) {
				spec.GenKwargs, spec.ModelArgs = nil, spec.GenKwargs
			}
			args, err := Argv(spec, v, "")
			if !errors.Is(err, ErrInvalidSetting) || errors.Is(err, ErrUnsupportedSetting) {
				t.Errorf("JSON %q on %s: want only ErrInvalidSetting, got %q, %v", doc, v, args, err)
			}
		}
	}
}

// TestArgvPython reads every accepted argv of the golden cases and of
// TestArgvValues back with Debian's Python, following each release's
// parsing (argvPythonScript), and checks the values against what the spec
// means and against the Go model.
func TestArgvPython(t *testing.T) {
	py := testenv.Python(t)
	type item struct {
		name string
		v    Version
		spec RunSpec
		args []string
	}
	var items []item
	var in bytes.Buffer
	cases := argvValueSpecs()
	for _, c := range argvCases {
		cases = append(cases, argvValueSpec{c.name, c.spec})
	}
	for _, c := range cases {
		for _, v := range Releases {
			args, err := Argv(c.spec, v, "out")
			if err != nil {
				continue
			}
			items = append(items, item{c.name, v, c.spec, args})
			kvs := func(kvs KVs) [][3]any {
				out := [][3]any{}
				for _, kv := range kvs {
					out = append(out, [3]any{kv.Key, kv.Value, kv.JSON})
				}
				return out
			}
			line, err := json.Marshal(map[string]any{
				"v": v.String(), "argv": args, "trust": c.spec.TrustRemoteCode,
				"model_args": kvs(c.spec.ModelArgs), "gen_kwargs": kvs(c.spec.GenKwargs),
			})
			if err != nil {
				t.Fatal(err)
			}
			in.Write(line)
			in.WriteByte('\n')
		}
	}
	cmd := exec.Command(py, "-c", argvPythonScript)
	cmd.Stdin = &in
	cmd.Env = append(os.Environ(), "PYTHONIOENCODING=utf-8")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", py, err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	n := 0
	for ; sc.Scan(); n++ {
		if n >= len(items) {
			t.Fatalf("python wrote more lines than it was given")
		}
		it := items[n]
		var res struct{ Parsed, Intended json.RawMessage }
		if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
			t.Fatalf("python line %d: %v: %s", n, err, sc.Bytes())
		}
		var parsed, intended []string
		if json.Unmarshal(res.Parsed, &parsed) != nil {
			t.Errorf("%s on %s: Python's lm-eval %s cannot read the argv: %s\nargv %q", it.name, it.v, it.v, res.Parsed, it.args)
			continue
		}
		if json.Unmarshal(res.Intended, &intended) != nil {
			t.Errorf("%s on %s: Python cannot make the intended values: %s", it.name, it.v, res.Intended)
			continue
		}
		if !slices.Equal(parsed, intended) {
			t.Errorf("%s on %s: Python reads back %s, the spec means %s\nargv %q", it.name, it.v, parsed, intended, it.args)
		}
		// The Go model, where it can tell, must agree with Python.
		if ma, gk, err := pyParseKVFlags(it.v, it.args); err == nil {
			if got := []string{ma.canon(), gk.canon()}; !slices.Equal(got, parsed) {
				t.Errorf("%s on %s: the Go model reads %s, Python %s\nargv %q", it.name, it.v, got, parsed, it.args)
			}
		} else if !errors.Is(err, errPyUnmodelled) {
			t.Errorf("%s on %s: the Go model fails where Python reads %s: %v", it.name, it.v, parsed, err)
		}
		if ma, gk, err := pyIntended(it.v, it.spec); err == nil {
			if got := []string{ma.canon(), gk.canon()}; !slices.Equal(got, intended) {
				t.Errorf("%s on %s: the Go model means %s, Python %s", it.name, it.v, got, intended)
			}
		} else if !errors.Is(err, errPyUnmodelled) {
			t.Errorf("%s on %s: the Go model cannot make the intended values: %v", it.name, it.v, err)
		}
	}
	if n != len(items) {
		t.Fatalf("python answered %d of %d lines\n%s", n, len(items), stderr.String())
	}
	t.Logf("%d argvs read back by Python", n)
}
