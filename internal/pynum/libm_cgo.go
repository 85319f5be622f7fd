//go:build cgo

package pynum

/*
#cgo LDFLAGS: -lm
#include <math.h>
*/
import "C"

// CPython's float ** 2 and math.exp, and numpy's scalar ** 2, call the C
// library's pow and exp, which are not correctly rounded: glibc's pow(d, 2.0)
// differs from d*d for about one d in a thousand, and Go's math.Exp differs
// from glibc's exp for about one argument in eight. To reproduce lm-eval's
// last bits the re-scorer calls the same functions of this machine's C
// library. On Linux with glibc 2.28 or later (any distribution since 2018)
// they give the results lm-eval got on Linux; macOS's libm can differ.

// Square is Python's x ** 2: the C library's pow(x, 2.0).
func Square(x float64) float64 { return float64(C.pow(C.double(x), 2)) }

// Exp is Python's math.exp: the C library's exp(x).
func Exp(x float64) float64 { return float64(C.exp(C.double(x))) }

// Log is Python's math.log of a positive finite float: the C library's
// log(x).
func Log(x float64) float64 { return float64(C.log(C.double(x))) }

// LibmExact reports whether Square, Exp and Log are the C library's.
const LibmExact = true
