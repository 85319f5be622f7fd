//go:build !cgo

package pynum

import "math"

// Without cgo the C library's pow and exp are out of reach: the correctly
// rounded square and Go's exp stand in, and a few stderrs and perplexities
// in a thousand may differ from lm-eval's in the last bit. See libm_cgo.go.

// Square is Python's x ** 2; without cgo, the correctly rounded x*x.
func Square(x float64) float64 { return float64(x * x) }

// Exp is Python's math.exp; without cgo, Go's math.Exp.
func Exp(x float64) float64 { return math.Exp(x) }

// Log is Python's math.log; without cgo, Go's math.Log.
func Log(x float64) float64 { return math.Log(x) }

// LibmExact reports whether Square, Exp and Log are the C library's.
const LibmExact = false
