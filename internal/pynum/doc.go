// Package pynum holds the numerics that must match CPython's bit for bit:
// the text of a float (repr and json.dumps), the string escaping of
// json.dumps, the rules of the built-in sum(), the C library's pow and exp
// that CPython calls, and lm-eval's mean, stderr and group formulas built
// on them.
//
// lm-eval's numbers are computed and written by CPython: its means are
// sum(items) / len(items), its standard errors use x ** 2 and math.sqrt, and
// its files are json.dumps output. A re-scorer that compares against them,
// or a simulator that writes files lm-eval could have written, has to follow
// CPython's rules rather than Go's wherever the two differ in the last bit
// or byte: shortest-repr digits with Python's exponent form, sum()'s
// compensated float path from 3.12 on, glibc's pow(x, 2.0) instead of x*x.
//
// The package sits at the bottom of the module: harness, harness/simulate
// and analysis use it, and it imports only the standard library (and the C
// library through cgo).
package pynum
