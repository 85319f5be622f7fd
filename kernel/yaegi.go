package kernel

import (
	"reflect"
	"strings"
	"unsafe"

	"github.com/traefik/yaegi/interp"
)

// This file reaches into yaegi v0.16.1's unexported state for what its
// API lacks. The go.mod pins that version; TestYaegiInternals fails
// if an upgrade moves the fields, and both functions then do nothing.

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
