package kernel

import (
	"reflect"
)

// Cells' errors.Is and errors.As are these, which know how
// yaegi hands a cell's error type to compiled code (see errorIdentity):
// the standard ones would find no cell error in a chain (errors.Is
// compares wrappers that are not comparable), and errors.As panics on a
// target of a cell's type. A cell type's own Is, As and Unwrap methods are
// not seen (its wrapper has only Error), nor are two cell types with the
// same fields told apart (reflection gives them one type).

// errorsIs is errors.Is.
func errorsIs(err, target error) bool {
	if err == nil || target == nil {
		return err == target
	}
	want := errorIdentity(target)
	comparable := reflect.TypeOf(want).Comparable()
	return walkErrors(err, func(e error) bool {
		if got := errorIdentity(e); comparable && reflect.TypeOf(got) == reflect.TypeOf(want) && got == want {
			return true
		}
		if x, ok := e.(interface{ Is(error) bool }); ok && x.Is(target) {
			return true
		}
		return false
	})
}

// errorsAs is errors.As.
func errorsAs(err error, target any) bool {
	if err == nil {
		return false
	}
	tv := reflect.ValueOf(target)
	if !tv.IsValid() || tv.Kind() != reflect.Pointer || tv.IsNil() {
		panic("errors: target must be a non-nil pointer")
	}
	tt := tv.Type().Elem()
	return walkErrors(err, func(e error) bool {
		if id := reflect.ValueOf(errorIdentity(e)); id.Type() == tt {
			tv.Elem().Set(id)
			return true
		}
		if reflect.TypeOf(e).AssignableTo(tt) {
			tv.Elem().Set(reflect.ValueOf(e))
			return true
		}
		if x, ok := e.(interface{ As(any) bool }); ok && x.As(target) {
			return true
		}
		return false
	})
}

// walkErrors calls f on err and the errors it wraps, depth first, until f
// is true.
func walkErrors(err error, f func(error) bool) bool {
	for err != nil {
		if f(err) {
			return true
		}
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			err = x.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				if walkErrors(e, f) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
