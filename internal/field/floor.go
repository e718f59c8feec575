package field

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Floors checks the durations in v's JSON form against the least value
// that makes sense for each: floors maps a JSON path to it, "*" standing
// for every key of an object ("rates.*"). A duration is a JSON number of
// nanoseconds (caddy.Duration's form) or a string with units. Zero (the
// default, or off) and negative values (which their own checks refuse)
// pass. Each value below its floor is an *Error; for a small number (below
// 100000: seconds or minutes written bare, as no one writes nanoseconds),
// its hint says that JSON numbers are nanoseconds, so that "cooldown": 900
// (900ns, meant as 900 seconds) is refused with the spelling meant. The errors are
// joined, in the order of the paths.
func Floors(v any, floors map[string]time.Duration) error {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&tree) != nil {
		return nil
	}
	var errs []error
	for _, path := range slices.Sorted(maps.Keys(floors)) {
		least := floors[path]
		for at, val := range lookup(tree, "", strings.Split(path, ".")) {
			if err := floor(at, val, least); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// floor checks one duration of the JSON tree.
func floor(path string, val any, least time.Duration) error {
	var d time.Duration
	hint := ""
	switch v := val.(type) {
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			return nil
		}
		d = time.Duration(n)
		if n < 100_000 { // a number of seconds (or minutes) written bare
			hint = fmt.Sprintf(`JSON numbers are nanoseconds; write "%ds"`, n)
		}
	case string:
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return nil // not ours to refuse: the decoder does
		}
	default:
		return nil
	}
	if d <= 0 || d >= least {
		return nil
	}
	return &Error{Path: path, Err: fmt.Errorf("must be at least %v, got %v", least, d), Hint: hint}
}

// lookup yields the values at the path elements keys below node, with
// their paths; "*" matches every key of an object.
func lookup(node any, at string, keys []string) func(yield func(string, any) bool) {
	return func(yield func(string, any) bool) {
		if len(keys) == 0 {
			yield(at, node)
			return
		}
		m, ok := node.(map[string]any)
		if !ok {
			return
		}
		names := []string{keys[0]}
		if keys[0] == "*" {
			names = names[:0]
			for k := range m {
				names = append(names, k)
			}
			slices.Sort(names)
		}
		for _, k := range names {
			if v, ok := m[k]; ok {
				for p, x := range lookup(v, join(at, k), keys[1:]) {
					if !yield(p, x) {
						return
					}
				}
			}
		}
	}
}
