package field

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Decode decodes the JSON object data into v, a pointer to a struct, with
// decode (Caddy's strict decoding: unknown fields are errors). When that
// fails, it decodes each field on its own, with the same decode, to find
// every field that does not decode, in the order of data, and returns
// them joined, each an *Error that names the field by its JSON path
// ("rates.script", "bots[0].class") and says in plain words what it wants:
// encoding/json names no field for an error of a type's own UnmarshalJSON
// (a duration's "time: missing unit") and names Go types where it does.
// v then holds the fields that did decode, so that their values can be
// checked too. Where no field can be blamed, the decoder's own error is
// returned.
func Decode(data []byte, v any, decode func([]byte, any) error) error {
	err := decode(data, v)
	if err == nil {
		return nil
	}
	errs := diagnose(data, reflect.TypeOf(v), "", decode)
	if len(errs) == 0 {
		return err
	}
	bad := map[string]bool{}
	for _, e := range errs {
		bad[topLevel(e.(*Error).Path)] = true
	}
	good := map[string]json.RawMessage{}
	for key, raw := range members(data) {
		if !bad[key] {
			good[key] = raw
		}
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rest, _ := json.Marshal(good)
		rv.Elem().SetZero()
		_ = decode(rest, v)
	}
	return errors.Join(errs...)
}

// diagnose returns the errors of the fields of data, a value of type t at
// path, that decode refuses.
func diagnose(data []byte, t reflect.Type, path string, decode func([]byte, any) error) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var errs []error
	switch {
	case t.Kind() == reflect.Struct && isJSON(data, '{'):
		fields := jsonFields(t)
		names := slices.Sorted(maps.Keys(fields))
		for key, raw := range members(data) {
			f, ok := fields[key]
			if !ok {
				for n, g := range fields {
					if strings.EqualFold(n, key) { // as encoding/json matches names
						f, ok = g, true
					}
				}
			}
			if !ok {
				errs = append(errs, Errorf(join(path, key), "unknown field%s", Suggest(key, names, nil, nil)))
				continue
			}
			errs = append(errs, diagnoseValue(raw, f.Type, join(path, key), decode)...)
		}
	case t.Kind() == reflect.Map && isJSON(data, '{'):
		for key, raw := range members(data) {
			errs = append(errs, diagnoseValue(raw, t.Elem(), join(path, key), decode)...)
		}
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && isJSON(data, '['):
		var items []json.RawMessage
		if json.Unmarshal(data, &items) == nil {
			for i, raw := range items {
				errs = append(errs, diagnoseValue(raw, t.Elem(), fmt.Sprintf("%s[%d]", path, i), decode)...)
			}
		}
	}
	return errs
}

// diagnoseValue returns the errors of one value of type t at path: none
// if decode takes it, those of its parts if some can be blamed, else one.
func diagnoseValue(raw []byte, t reflect.Type, path string, decode func([]byte, any) error) []error {
	err := decode(raw, reflect.New(t).Interface())
	if err == nil {
		return nil
	}
	if e := t; isDuration(e) || e.Kind() == reflect.Pointer && isDuration(e.Elem()) {
		return []error{&Error{Path: path, Err: badDuration(raw)}}
	}
	if errs := diagnose(raw, t, path, decode); len(errs) > 0 {
		return errs
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return []error{Errorf(path, "want %s, got %s", want(t), describe(raw))}
	}
	return []error{Errorf(path, "%s", strings.TrimPrefix(err.Error(), "json: "))}
}

// badDuration says why raw is not a duration.
func badDuration(raw []byte) error {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return fmt.Errorf(`want a duration such as "2s", "500ms" or "1h30m", got %s`, describe(raw))
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return fmt.Errorf(`%q has no unit: write "%ss" for seconds, "%sms" for milliseconds`, s, s, s)
	}
	return fmt.Errorf(`%q is not a duration (write e.g. "2s", "500ms", "1h30m" or "2d")`, s)
}

// isDuration reports whether t is a duration: time.Duration, or a type of
// its own named Duration (caddy.Duration) that reads a number as
// nanoseconds and a string with units.
func isDuration(t reflect.Type) bool {
	return t == reflect.TypeFor[time.Duration]() || t.Kind() == reflect.Int64 && t.Name() == "Duration"
}

// want says what a value of type t is, as a JSON author writes it.
func want(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list [...]"
	}
	return "an object {...}"
}

// describe names the JSON value raw, as the error shows it.
func describe(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	kind := "a value"
	switch {
	case len(raw) == 0:
		return "nothing"
	case raw[0] == '"':
		kind = "a string"
	case raw[0] == '{':
		return "an object"
	case raw[0] == '[':
		return "a list"
	case raw[0] == 't' || raw[0] == 'f':
		kind = "a boolean"
	case raw[0] == 'n':
		return "null"
	default:
		kind = "a number"
	}
	if len(raw) > 40 {
		raw = append(raw[:37:37], "..."...)
	}
	return kind + " (" + string(raw) + ")"
}

// jsonFields returns the fields of struct type t by their JSON names, as
// encoding/json names them.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	fields := map[string]reflect.StructField{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		fields[name] = f
	}
	return fields
}

// members yields the members of the JSON object data in their order.
func members(data []byte) func(yield func(string, json.RawMessage) bool) {
	return func(yield func(string, json.RawMessage) bool) {
		dec := json.NewDecoder(bytes.NewReader(data))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return
		}
		for dec.More() {
			tok, err := dec.Token()
			key, ok := tok.(string)
			var raw json.RawMessage
			if err != nil || !ok || dec.Decode(&raw) != nil || !yield(key, raw) {
				return
			}
		}
	}
}

// isJSON reports whether data starts with the byte open, after white space.
func isJSON(data []byte, open byte) bool {
	data = bytes.TrimSpace(data)
	return len(data) > 0 && data[0] == open
}

// join appends key to a JSON path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
