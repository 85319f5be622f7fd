package pynum

import (
	"math"
	"strconv"
)

// AppendRepr appends Python's repr(f) (which str(f) equals): the shortest
// digits that round-trip, in positional notation when the decimal exponent
// is in [-4, 16) (always with a fractional part, so 1.0 not 1) and in
// scientific notation otherwise, with a signed exponent of at least two
// digits (1e-05, 1.5e+16). Non-finite values follow str(): nan, inf, -inf.
func AppendRepr(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	return appendFinite(dst, f)
}

// AppendJSONFloat appends a float as json.dumps writes it: repr for finite
// values, and the non-standard tokens NaN, Infinity and -Infinity otherwise.
func AppendJSONFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	return appendFinite(dst, f)
}

// AppendJSONNumber appends a number read from a JSON file the way json.dumps
// writes it back: a Python int (isInt, the number was written without
// fraction or exponent) as its decimal digits, a float as AppendJSONFloat.
// An isInt number that is not integral, or not below 2^53 in magnitude, where
// a float64 no longer holds every int, is written as a float; -0 as an int
// is 0.
func AppendJSONNumber(dst []byte, f float64, isInt bool) []byte {
	if isInt && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return AppendJSONFloat(dst, f)
}

// appendFinite appends repr(f) of a finite f.
func appendFinite(dst []byte, f float64) []byte {
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // [-]d[.ddd]e±XX
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	var digits [24]byte
	nd := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	// decpt is the position of the decimal point relative to the digits:
	// value = 0.d1d2... × 10^decpt, CPython's format_float_short convention.
	decpt := exp + 1
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			dst = append(dst, '0', '.')
			for k := 0; k < -decpt; k++ {
				dst = append(dst, '0')
			}
			dst = append(dst, digits[:nd]...)
		case decpt >= nd:
			dst = append(dst, digits[:nd]...)
			for k := nd; k < decpt; k++ {
				dst = append(dst, '0')
			}
			dst = append(dst, '.', '0')
		default:
			dst = append(dst, digits[:decpt]...)
			dst = append(dst, '.')
			dst = append(dst, digits[decpt:nd]...)
		}
		return dst
	}
	dst = append(dst, digits[0])
	if nd > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:nd]...)
	}
	dst = append(dst, 'e')
	x := decpt - 1
	if x < 0 {
		dst = append(dst, '-')
		x = -x
	} else {
		dst = append(dst, '+')
	}
	if x < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, int64(x), 10)
}

// ParseFloat reads a float as Python writes it: a repr, str()'s nan, inf
// and -inf, or json.dumps's NaN, Infinity and -Infinity. Any other text goes
// to strconv.ParseFloat.
func ParseFloat(s string) (float64, error) {
	switch s {
	case "nan", "NaN":
		return math.NaN(), nil
	case "inf", "Infinity":
		return math.Inf(1), nil
	case "-inf", "-Infinity":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(s, 64)
}
