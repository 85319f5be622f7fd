package analysis

import "github.com/evalcapsule/evalcapsule/internal/pynum"

// PyKind is the Python type an item had when lm-eval summed it. CPython's
// sum() adds exact floats differently from numpy scalars, so the kind of
// every item decides the last bits of a mean or a standard error.
type PyKind = pynum.Kind

const (
	// PyFloat is a Python float (multiple-choice acc, most custom metrics).
	PyFloat = pynum.Float
	// PyInt is a Python int (loglikelihood acc, multiple-choice exact_match).
	PyInt = pynum.Int
	// NumpyFloat is a numpy.float64 (exact_match from the vendored HF metric,
	// and any value computed with numpy, such as a group's np.sqrt stderr).
	NumpyFloat = pynum.Numpy
)

// Summation names the rule CPython's built-in sum() follows for floats.
type Summation = pynum.Summation

const (
	// Naive is plain left-to-right double addition: CPython up to 3.11, and
	// numpy scalars on every version.
	Naive = pynum.Naive
	// Neumaier is the compensated summation CPython 3.12 and later use for
	// exact float objects.
	Neumaier = pynum.Neumaier
)

// SummationFor returns the rule of the CPython version major.minor.
func SummationFor(major, minor int) Summation { return pynum.SummationFor(major, minor) }
