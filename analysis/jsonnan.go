package analysis

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
)

// MarshalJSON encodes v as encoding/json does, except that NaN and infinite
// floats, which JSON cannot hold and encoding/json refuses, become null:
// a McNemar p without discordant pairs, a stderr of one document. Types
// with their own MarshalJSON keep it.
func MarshalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	var uve *json.UnsupportedValueError
	if err == nil || !errors.As(err, &uve) {
		return b, err
	}
	return json.Marshal(nanToNull(reflect.ValueOf(v)))
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// nanToNull rebuilds v as maps, slices and scalars with non-finite floats
// replaced by nil, following the struct fields' json tags.
func nanToNull(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.Type().Implements(marshalerType) && (v.Kind() != reflect.Pointer || !v.IsNil()) {
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return f
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return nanToNull(v.Elem())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = nanToNull(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := map[string]any{}
		it := v.MapRange()
		for it.Next() {
			k := it.Key()
			key := k.String()
			if k.Kind() != reflect.String {
				b, _ := json.Marshal(k.Interface())
				key = strings.Trim(string(b), `"`)
			}
			out[key] = nanToNull(it.Value())
		}
		return out
	case reflect.Struct:
		out := orderedObject{}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fv := v.Field(i)
			if strings.Contains(opts, "omitempty") && fv.IsZero() {
				continue
			}
			out = append(out, jsonMember{name, nanToNull(fv)})
		}
		return out
	}
	return v.Interface()
}

type jsonMember struct {
	key string
	val any
}

// orderedObject keeps a struct's field order in the output.
type orderedObject []jsonMember

func (o orderedObject) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(m.key)
		b = append(b, k...)
		b = append(b, ':')
		v, err := json.Marshal(m.val)
		if err != nil {
			return nil, err
		}
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// unmarshalNaN decodes b into v as encoding/json does, then sets to NaN the
// floats that b holds as null, undoing MarshalJSON (an infinity, also
// written as null, comes back as NaN). A *float64 member written as null
// becomes a pointer to NaN when the member has omitempty (a nil pointer is
// omitted, so null was a NaN); without omitempty null stays nil. Values of
// types with their own UnmarshalJSON restore themselves and are left alone,
// so v must not be one: an UnmarshalJSON method passes its receiver
// converted to a type without methods.
func unmarshalNaN(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	var raw any
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	restoreNaN(reflect.ValueOf(v).Elem(), raw)
	return nil
}

// restoreNaN sets the floats of v that raw (the same JSON decoded
// generically) holds as null to NaN, following the struct fields' json tags
// as nanToNull does.
func restoreNaN(v reflect.Value, raw any) {
	if v.Type().Implements(unmarshalerType) || v.CanAddr() && v.Addr().Type().Implements(unmarshalerType) {
		return
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if raw == nil {
			v.SetFloat(math.NaN())
		}
	case reflect.Pointer:
		if !v.IsNil() {
			restoreNaN(v.Elem(), raw)
		}
	case reflect.Slice, reflect.Array:
		list, _ := raw.([]any)
		for i := 0; i < v.Len() && i < len(list); i++ {
			restoreNaN(v.Index(i), list[i])
		}
	case reflect.Map:
		obj, _ := raw.(map[string]any)
		if v.IsNil() || len(obj) == 0 {
			return
		}
		it := v.MapRange()
		for it.Next() {
			k := it.Key()
			key := k.String()
			if k.Kind() != reflect.String {
				b, _ := json.Marshal(k.Interface())
				key = strings.Trim(string(b), `"`)
			}
			val, present := obj[key]
			if !present {
				continue
			}
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			restoreNaN(e, val)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		obj, _ := raw.(map[string]any)
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			val, present := obj[name]
			if !present {
				continue
			}
			fv := v.Field(i)
			if k := f.Type.Kind(); val == nil && k == reflect.Pointer && strings.Contains(opts, "omitempty") {
				if ek := f.Type.Elem().Kind(); ek == reflect.Float32 || ek == reflect.Float64 {
					fv.Set(reflect.New(f.Type.Elem()))
					fv.Elem().SetFloat(math.NaN())
				}
				continue
			}
			restoreNaN(fv, val)
		}
	}
}
