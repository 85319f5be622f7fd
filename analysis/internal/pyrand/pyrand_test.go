package pyrand

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// debianPython is the interpreter the cross-checks run. It is Debian's
// /usr/bin/python3 on purpose: a python3 found on PATH may be a pyenv or
// conda build of another version, and the reference should be one known
// CPython whose random module the checks pin down.
const debianPython = "/usr/bin/python3"

// runPython runs script with Debian's Python and returns its standard
// output. A missing interpreter skips the test, and fails it under CI:
// these comparisons are the evidence that the port is exact.
func runPython(t *testing.T, script string) []byte {
	t.Helper()
	testenv.Python(t)
	cmd := exec.Command(debianPython, "-c", script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", debianPython, err, stderr.String())
	}
	return out
}

var (
	testSeeds = []int64{0, 1, 7, 999, 1<<32 + 5, -3, math.MinInt64}
	testSizes = []int{1, 2, 3, 10, 817, 1319, 14042}
)

// pyStream is what the reference script prints for one seed.
type pyStream struct {
	Seed    string   `json:"seed"`
	Floats  []string `json:"floats"`
	Bits    []uint32 `json:"bits"`
	Choices [][]int  `json:"choices"`
	Fresh   [][]int  `json:"fresh"`
}

// TestAgainstCPython compares the generator with CPython's for several
// seeds: the first 20 random() values (as float.hex, so exactly), a few
// getrandbits(32) words, choices(range(n), k=n) drawn one after another from
// the same instance (which runs the state through many regenerations), and
// choices from a freshly seeded instance per size, as lm-eval draws them.
func TestAgainstCPython(t *testing.T) {
	seeds, _ := json.Marshal(func() []string {
		s := make([]string, len(testSeeds))
		for i, v := range testSeeds {
			s[i] = strconv.FormatInt(v, 10)
		}
		return s
	}())
	sizes, _ := json.Marshal(testSizes)
	script := fmt.Sprintf(`
import json, random, sys
for s in %s:
    seed = int(s)
    r = random.Random(seed)
    floats = [r.random().hex() for _ in range(20)]
    bits = [r.getrandbits(32) for _ in range(5)]
    choices = [r.choices(range(n), k=n) for n in %s]
    fresh = [random.Random(seed).choices(range(n), k=n) for n in %s]
    print(json.dumps({"seed": s, "floats": floats, "bits": bits, "choices": choices, "fresh": fresh}))
`, seeds, sizes, sizes)
	dec := json.NewDecoder(bytes.NewReader(runPython(t, script)))
	for _, seed := range testSeeds {
		var want pyStream
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("decoding Python output for seed %d: %v", seed, err)
		}
		if want.Seed != strconv.FormatInt(seed, 10) {
			t.Fatalf("Python output out of order: got seed %s, want %d", want.Seed, seed)
		}
		r := New(seed)
		for i, h := range want.Floats {
			w, err := strconv.ParseFloat(h, 64)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Random(); got != w {
				t.Errorf("seed %d: random() #%d = %x, CPython %s", seed, i, got, h)
			}
		}
		for i, w := range want.Bits {
			if got := r.Uint32(); got != w {
				t.Errorf("seed %d: getrandbits(32) #%d = %d, CPython %d", seed, i, got, w)
			}
		}
		var buf []int
		for i, n := range testSizes {
			buf = r.Choices(n, n, buf)
			compareIndices(t, fmt.Sprintf("seed %d, stream, n=%d", seed, n), buf, want.Choices[i])
			fresh := New(seed).Choices(n, n, nil)
			compareIndices(t, fmt.Sprintf("seed %d, fresh, n=%d", seed, n), fresh, want.Fresh[i])
		}
	}
}

func compareIndices(t *testing.T, what string, got, want []int) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d indices, CPython %d", what, len(got), len(want))
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: index #%d = %d, CPython %d", what, i, got[i], want[i])
			return
		}
	}
}

// TestSeedSign checks CPython's rule that a seed and its negation give the
// same stream, including the one int64 whose negation overflows.
func TestSeedSign(t *testing.T) {
	for _, s := range []int64{1, 3, 1<<40 + 7} {
		a, b := New(s), New(-s)
		for i := 0; i < 1000; i++ {
			if x, y := a.Uint32(), b.Uint32(); x != y {
				t.Fatalf("seed %d vs %d: output #%d differs (%d, %d)", s, -s, i, x, y)
			}
		}
	}
	// -2^63 has magnitude 2^63, key [0, 0x80000000]: the same as seeding
	// with that two-word key directly.
	var want Random
	want.initByArray([]uint32{0, 0x80000000})
	got := New(math.MinInt64)
	if got.mt != want.mt || got.index != want.index {
		t.Fatal("Seed(math.MinInt64) is not init_by_array([0, 0x80000000])")
	}
}

// TestKnownValues pins a few values without Python, so a regression shows
// up even where the interpreter is missing: random.Random(0).random() and
// random.Random(42).random() as CPython prints them.
func TestKnownValues(t *testing.T) {
	for _, c := range []struct {
		seed int64
		want float64
	}{
		{0, 0.8444218515250481},
		{42, 0.6394267984578837},
		{1, 0.13436424411240122},
	} {
		if got := New(c.seed).Random(); got != c.want {
			t.Errorf("Random(%d).random() = %v, want %v", c.seed, got, c.want)
		}
	}
}

func TestChoicesEdges(t *testing.T) {
	r := New(0)
	if got := r.Choices(5, 0, make([]int, 3)); len(got) != 0 {
		t.Errorf("k=0: got %v, want empty", got)
	}
	if got := r.Choices(0, -1, nil); len(got) != 0 {
		t.Errorf("k=-1: got %v, want empty", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("Choices(0, 1, nil) did not panic")
		}
	}()
	r.Choices(0, 1, nil)
}

func TestChoicesDoesNotAllocate(t *testing.T) {
	r := New(1)
	buf := make([]int, 0, 1000)
	allocs := testing.AllocsPerRun(20, func() {
		buf = r.Choices(1000, 1000, buf)
	})
	if allocs != 0 {
		t.Errorf("Choices allocates %v times per call with a large enough dst", allocs)
	}
}

func ExampleRandom_Choices() {
	// The resample lm-eval's bootstrap draws first for a 10-item task:
	// random.Random(0).choices(range(10), k=10).
	r := New(0)
	fmt.Println(r.Choices(10, 10, nil))
	// Output: [8 7 4 2 5 4 7 3 4 5]
}

func BenchmarkChoices1000(b *testing.B) {
	r := New(0)
	buf := make([]int, 0, 1000)
	for b.Loop() {
		buf = r.Choices(1000, 1000, buf)
	}
}

// TestMain lists the parts outside Go that tests skipped for.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
