package pynum

import "math"

// Kind is the Python type an item had when lm-eval summed it. CPython's
// sum() adds exact floats differently from numpy scalars, so the kind of
// every item decides the last bits of a mean or a standard error.
type Kind uint8

const (
	// Float is a Python float (multiple-choice acc, most custom metrics).
	Float Kind = iota
	// Int is a Python int (loglikelihood acc, multiple-choice exact_match).
	Int
	// Numpy is a numpy.float64 (exact_match from the vendored HF metric,
	// and any value computed with numpy, such as a group's np.sqrt stderr).
	Numpy
)

func (k Kind) String() string {
	switch k {
	case Int:
		return "int"
	case Numpy:
		return "numpy.float64"
	}
	return "float"
}

// Summation names the rule CPython's built-in sum() follows for floats.
type Summation uint8

const (
	// Naive is plain left-to-right double addition: CPython up to 3.11, and
	// numpy scalars on every version.
	Naive Summation = iota
	// Neumaier is the compensated summation CPython 3.12 and later use for
	// exact float objects.
	Neumaier
)

func (s Summation) String() string {
	if s == Neumaier {
		return "neumaier"
	}
	return "naive"
}

// SummationFor returns the rule of the CPython version major.minor.
func SummationFor(major, minor int) Summation {
	if major > 3 || (major == 3 && minor >= 12) {
		return Neumaier
	}
	return Naive
}

// Sum reproduces CPython's sum(items) with start 0, item by item, as a
// state machine over the three fast paths of builtin_sum: exact ints, exact
// floats (compensated from 3.12), and the generic path that anything else
// (a numpy scalar) drops into for the rest of the iteration.
//
// All items share one kind here; mixed sequences go through SumKinds.
func Sum(xs []float64, kind Kind, rule Summation) float64 {
	switch {
	case kind == Int:
		// Exact integer arithmetic; float64 holds it exactly below 2^53,
		// far beyond any sample count.
		var s float64
		for _, x := range xs {
			s += x
		}
		return s
	case kind == Numpy || rule == Naive:
		var s float64
		for _, x := range xs {
			s += x
		}
		return s
	}
	return neumaier(xs)
}

// neumaier is CPython 3.12's float path of sum(): Neumaier's improvement of
// Kahan-Babuska, with the compensation added once at the end when it is
// finite and non-zero.
func neumaier(xs []float64) float64 {
	var f, c float64
	for _, x := range xs {
		f, c = neumaierAdd(f, c, x)
	}
	return neumaierEnd(f, c)
}

// neumaierAdd adds x to the running sum f with compensation c.
func neumaierAdd(f, c, x float64) (float64, float64) {
	t := f + x
	if math.Abs(f) >= math.Abs(x) {
		c += (f - t) + x
	} else {
		c += (x - t) + f
	}
	return t, c
}

// neumaierEnd adds the compensation, as CPython does when it leaves the
// float path: only when it is finite and non-zero.
func neumaierEnd(f, c float64) float64 {
	if c != 0 && !math.IsInf(c, 0) && !math.IsNaN(c) {
		f += c
	}
	return f
}

// SumKinds is Sum for a sequence whose items have different kinds, such as
// the members of a group where leaves carry Python floats and sub-groups
// numpy scalars; kinds[i] is the kind of xs[i]. It follows builtin_sum's
// transitions: int path, float path, generic path (which is never left
// again).
func SumKinds(xs []float64, kinds []Kind, rule Summation) float64 {
	const (
		intPath = iota
		floatPath
		genericPath
	)
	state := intPath
	var f, c float64
	for i, x := range xs {
		k := kinds[i]
		switch state {
		case intPath:
			switch k {
			case Int:
				f += x
			case Float:
				f += x
				c = 0
				state = floatPath
			default:
				f += x
				state = genericPath
			}
		case floatPath:
			switch k {
			case Float:
				if rule == Neumaier {
					f, c = neumaierAdd(f, c, x)
				} else {
					f += x
				}
			case Int:
				f += x
			default:
				f = neumaierEnd(f, c) + x
				c = 0
				state = genericPath
			}
		default:
			f += x
		}
	}
	if state == floatPath {
		return neumaierEnd(f, c)
	}
	return f
}
