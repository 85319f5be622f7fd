package kernel

import (
	"path/filepath"
	"testing"
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
