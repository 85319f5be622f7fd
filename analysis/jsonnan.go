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
