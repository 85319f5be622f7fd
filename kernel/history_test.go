package kernel

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHistory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "h", "history.jsonl")
	h1, err := openHistory(file, "k1")
	if err != nil {
		t.Fatal(err)
	}
	h1.add(1, `import "fmt"`, "")
	h1.add(2, "6 * 7", "42")
	h1.add(3, `fmt.Println("a")`, "")
	h2, err := openHistory(file, "k2")
	if err != nil {
		t.Fatal(err)
	}
	if h2.session != 2 {
		t.Fatalf("second session numbered %d", h2.session)
	}
	h2.add(1, "6 * 7", "42")
	h2.add(2, `fmt.Println("b")`, "")

	n := func(i int) *int { return &i }
	inputs := func(es []histEntry) (out []string) {
		for _, e := range es {
			out = append(out, e.input)
		}
		return out
	}
	for _, c := range []struct {
		req  historyRequest
		want []string
	}{
		{historyRequest{HistAccessType: "tail", N: n(2)}, []string{"6 * 7", `fmt.Println("b")`}},
		{historyRequest{HistAccessType: "range", Session: 0, Start: 1}, []string{"6 * 7", `fmt.Println("b")`}},
		{historyRequest{HistAccessType: "range", Session: -1, Start: 2, Stop: n(3)}, []string{"6 * 7"}},
		{historyRequest{HistAccessType: "range", Session: 1, Start: 1}, []string{`import "fmt"`, "6 * 7", `fmt.Println("a")`}},
		{historyRequest{HistAccessType: "search", Pattern: "*Println*"}, []string{`fmt.Println("a")`, `fmt.Println("b")`}},
		{historyRequest{HistAccessType: "search", Pattern: "6 [*] 7", Unique: true}, []string{"6 * 7"}},
		{historyRequest{HistAccessType: "search", Pattern: "6 ? 7", N: n(1)}, []string{"6 * 7"}},
		{historyRequest{HistAccessType: "search", Pattern: "nothing"}, nil},
	} {
		got := inputs(h2.query(c.req))
		if len(got) != len(c.want) {
			t.Errorf("%+v: %q, want %q", c.req, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%+v: %q, want %q", c.req, got, c.want)
				break
			}
		}
	}
	if es := h2.query(historyRequest{HistAccessType: "range", Session: 1, Start: 2, Stop: n(3)}); len(es) != 1 || es[0].output != "42" {
		t.Errorf("output of 6 * 7: %+v", es)
	}
}

// TestHistoryLargeCell runs a cell of 17 MB between two small ones: the
// file kept a line longer than the reader took, and every later session
// read no history past it. The large cell is kept cut, and the history
// goes on; a file that has such a line from an older version is read
// past it.
func TestHistoryLargeCell(t *testing.T) {
	file := filepath.Join(t.TempDir(), "history.jsonl")
	h1, err := openHistory(file, "k1")
	if err != nil {
		t.Fatal(err)
	}
	large := strings.Repeat("x := 1\n", 17<<20/7)
	h1.add(1, "before", "")
	h1.add(2, large, "")
	h1.add(3, "after", "a"+strings.Repeat("é", 1<<20)) // cut in the middle of an é
	h2, err := openHistory(file, "k2")
	if err != nil {
		t.Fatal(err)
	}
	if h2.session != 2 {
		t.Errorf("second session numbered %d", h2.session)
	}
	h2.add(1, "next session", "")
	for _, h := range []*history{h1, h2} {
		es := h.query(historyRequest{HistAccessType: "range", Session: 1, Start: 1})
		if len(es) != 3 || es[0].input != "before" || es[2].input != "after" {
			t.Fatalf("session 1: %d entries", len(es))
		}
		in := es[1].input
		if len(in) > maxHistoryText+100 || !strings.HasPrefix(in, large[:1000]) || !strings.HasSuffix(in, "\n// [history: cut to the first 1 MiB of 17 MiB]") {
			t.Errorf("the large cell is kept as %d bytes ending %q", len(in), in[max(0, len(in)-60):])
		}
		if out := es[2].output; !utf8.ValidString(out) || !strings.HasSuffix(out, "é\n// [history: cut to the first 1 MiB of 2 MiB]") {
			t.Errorf("the large output is kept as %d bytes ending %q", len(out), out[max(0, len(out)-60):])
		}
	}
	h3, err := openHistory(file, "k3")
	if err != nil {
		t.Fatal(err)
	}
	if es := h3.query(historyRequest{HistAccessType: "tail"}); len(es) != 4 || es[3].input != "next session" || h3.session != 3 {
		t.Errorf("third session: %d entries, numbered %d", len(es), h3.session)
	}

	// A line of 17 MB, as older versions wrote them.
	old := filepath.Join(t.TempDir(), "old.jsonl")
	b, _ := json.Marshal(histRecord{Kernel: "k0", Line: 1, Input: large})
	b = append(append(b, '\n'), `{"kernel":"k0","line":2,"input":"after"}`+"\n"...)
	if err := os.WriteFile(old, b, 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := openHistory(old, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if es := h.query(historyRequest{HistAccessType: "tail"}); len(es) != 1 || es[0].input != "after" || h.session != 2 || h.file == "" {
		t.Errorf("an old file with a long line: %+v, session %d, file %q", es, h.session, h.file)
	}
}
