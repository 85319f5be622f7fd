package analysis

import (
	"encoding/json"
	"math"
	"math/rand"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// f1Reference prints, for each JSON [golds, preds] line, Debian's
// scikit-learn f1_score for macro, micro and weighted, and the same
// averages with the 1.4+ formula 2·tp/(true+pred) written out with numpy.
const f1Reference = `import json, sys, warnings
import numpy as np
import sklearn
from sklearn.metrics import f1_score
warnings.simplefilter("ignore")
legacy = tuple(int(x) for x in sklearn.__version__.split(".")[:2]) < (1, 4)
for line in sys.stdin:
    g, p = json.loads(line)
    out = [float(f1_score(g, p, average=a)) for a in ("macro", "micro", "weighted")]
    labels = sorted(set(g) | set(p))
    tp = np.array([sum(1 for a, b in zip(g, p) if a == b == l) for l in labels], dtype=np.int64)
    ts = np.array([g.count(l) for l in labels], dtype=np.int64)
    ps = np.array([p.count(l) for l in labels], dtype=np.int64)
    def f(tp, ts, ps):
        d = ts + ps
        return np.where(d == 0, 0.0, 2 * tp / np.where(d == 0, 1, d))
    new = [np.average(f(tp, ts, ps)), float(f(np.array([tp.sum()]), np.array([ts.sum()]), np.array([ps.sum()]))[0]), np.average(f(tp, ts, ps), weights=ts)]
    print(int(legacy), " ".join(repr(float(x)) for x in out + new))
`

// TestF1AverageAgainstSklearn compares F1Average with Debian's scikit-learn
// (whose release decides which formula it checks) and with numpy running
// the other formula, on random labels.
func TestF1AverageAgainstSklearn(t *testing.T) {
	py := testenv.Python(t, "sklearn", "numpy")
	rng := rand.New(rand.NewSource(3))
	var in strings.Builder
	var cases [][2][]int
	for i := 0; i < 400; i++ {
		n := 1 + rng.Intn(60)
		k := 1 + rng.Intn(12)
		g, p := make([]int, n), make([]int, n)
		for j := range g {
			g[j] = rng.Intn(k)
			p[j] = rng.Intn(k + 1)
			if rng.Intn(3) == 0 {
				p[j] = g[j]
			}
		}
		cases = append(cases, [2][]int{g, p})
		b, _ := json.Marshal([2][]int{g, p})
		in.Write(b)
		in.WriteByte('\n')
	}
	cmd := exec.Command(py, "-c", f1Reference)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%d lines for %d cases", len(lines), len(cases))
	}
	bad := 0
	for i, l := range lines {
		f := strings.Fields(l)
		sklearnLegacy := f[0] == "1"
		for j, avg := range []string{"macro", "micro", "weighted", "macro", "micro", "weighted"} {
			want, err := strconv.ParseFloat(f[1+j], 64)
			if err != nil {
				t.Fatal(err)
			}
			legacy := j < 3 && sklearnLegacy
			got := F1Average(cases[i][0], cases[i][1], avg, legacy)
			if math.Float64bits(got) != math.Float64bits(want) {
				bad++
				if bad <= 5 {
					t.Errorf("case %d %s legacy=%v: %v, Python %v", i, avg, legacy, got, want)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d values differ", bad)
	}
}
