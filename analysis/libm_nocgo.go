//go:build !cgo

package analysis

import "math"

// Without cgo the C library's pow and exp are out of reach: the correctly
// rounded square and Go's exp stand in, and a few stderrs and perplexities
// in a thousand may differ from lm-eval's in the last bit. See libm_cgo.go.

func libmSquare(x float64) float64 { return float64(x * x) }

func libmExp(x float64) float64 { return math.Exp(x) }

const libmExact = false
