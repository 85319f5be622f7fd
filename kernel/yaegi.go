package kernel

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/traefik/yaegi/interp"
)

// This file reaches into yaegi v0.16.1's unexported state for what its
// API lacks. The go.mod pins that version; TestYaegiInternals fails
// if an upgrade moves the fields, and the functions then do nothing.

// forgetGlobal removes name from the interpreted main package, so that a
// later declaration of the same name starts afresh. yaegi keeps the first
// definition of a type when a type of that name is declared again (the
// new fields are unknown, the new methods ignored), which would make
// re-running an edited cell silently use the old type.
func forgetGlobal(i *interp.Interpreter, name string) bool {
	scopes := field(reflect.ValueOf(i).Elem(), "scopes")
	if !scopes.IsValid() || scopes.Kind() != reflect.Map {
		return false
	}
	sc := scopes.MapIndex(reflect.ValueOf("main"))
	if !sc.IsValid() || sc.IsNil() {
		return false
	}
	sym := field(sc.Elem(), "sym")
	if !sym.IsValid() || sym.Kind() != reflect.Map || sym.Type().Key().Kind() != reflect.String {
		return false
	}
	sym.SetMapIndex(reflect.ValueOf(name), reflect.Value{})
	return true
}

// unwrapValue returns the dynamic value of an interface: yaegi returns a
// variable of interface type as a reflect.Value of interface kind, or as
// its own valueInterface{node, value} when it holds an interpreted type.
func unwrapValue(v reflect.Value) reflect.Value {
	for v.IsValid() {
		if v.Kind() == reflect.Interface {
			if v.IsNil() {
				return v
			}
			v = v.Elem()
			continue
		}
		if v.Kind() != reflect.Struct || v.Type().PkgPath() != "github.com/traefik/yaegi/interp" || v.Type().Name() != "valueInterface" {
			return v
		}
		if !v.CanAddr() {
			c := reflect.New(v.Type()).Elem()
			c.Set(v)
			v = c
		}
		inner := field(v, "value")
		if !inner.IsValid() || inner.Type() != reflect.TypeFor[reflect.Value]() {
			return reflect.Value{}
		}
		v = inner.Interface().(reflect.Value)
	}
	return v
}

// field returns the named field of the addressable struct v, readable and
// settable whether exported or not.
func field(v reflect.Value, name string) reflect.Value {
	f := v.FieldByName(name)
	if !f.IsValid() || !f.CanAddr() {
		return reflect.Value{}
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// fmtSeesErrors makes the fmt and log functions see the Error method of a
// cell's type, as they see String: yaegi wraps an argument of those
// functions in the first of their interfaces it implements (Formatter,
// Stringer), and error is not among them, so fmt.Println(&myErr{}) would
// print the struct. Go's fmt prefers Error to String, as here.
func fmtSeesErrors(i *interp.Interpreter) bool {
	mt := field(reflect.ValueOf(i).Elem(), "mapTypes")
	if !mt.IsValid() || mt.Type() != reflect.TypeFor[map[reflect.Value][]reflect.Type]() {
		return false
	}
	stringer, errType := reflect.TypeFor[fmt.Stringer](), reflect.TypeFor[error]()
	m := mt.Interface().(map[reflect.Value][]reflect.Type)
	for k, types := range m {
		if at := slices.Index(types, stringer); at >= 0 && !slices.Contains(types, errType) {
			m[k] = slices.Insert(slices.Clone(types), at, errType)
		}
	}
	return true
}

// errorIdentity is what an error is for comparison: yaegi hands compiled
// code a cell's error as a struct {IValue; WError func() string}, made
// anew at each conversion and not comparable, around the cell's value.
func errorIdentity(err error) any {
	v := reflect.ValueOf(err)
	if v.Kind() == reflect.Struct && v.Type().PkgPath() == "github.com/traefik/yaegi/interp" && v.Type().Name() == "_error" {
		if iv := v.Field(0); iv.IsValid() && iv.CanInterface() {
			return unwrapValue(iv).Interface()
		}
	}
	return err
}

// forgetInstances drops yaegi's instances of the generic function or
// type name (its cache, keyed "name[int]"), so that a generic declared
// again is instantiated anew rather than from the old body.
func forgetInstances(i *interp.Interpreter, name string) {
	generic := field(reflect.ValueOf(i).Elem(), "generic")
	if !generic.IsValid() || generic.Kind() != reflect.Map || generic.Type().Key().Kind() != reflect.String {
		return
	}
	for _, k := range generic.MapKeys() {
		if strings.HasPrefix(k.String(), name+"[") {
			generic.SetMapIndex(k, reflect.Value{})
		}
	}
}
