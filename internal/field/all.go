package field

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// All returns every error that check finds in v, not only the first:
// after each error that names a field, check runs again on a copy of v
// without that field (and without the fields that dependents lists for
// it, which mean nothing without it: a robots_host without its robots
// URL), until check passes, an error names no field, or no field is left
// to drop. The copies are made through v's JSON form, so v must
// round-trip through encoding/json; v itself is not changed.
//
// The errors are those of check, *Error where check's are, with the
// paths of v (an element dropped from a list does not shift the others'),
// sorted by [Sort]. check may return several errors joined (errors.Join).
func All[T any](v *T, check func(*T) error, dependents map[string][]string) []error {
	data, err := json.Marshal(v)
	if err != nil {
		c := *v
		return []error{check(&c)}
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // durations are int64 nanoseconds: no float64 rounding
	if err := dec.Decode(&tree); err != nil {
		c := *v
		return []error{check(&c)}
	}
	var (
		out     []error
		seen    = map[string]bool{}
		dropped []drop // the list elements dropped so far, in order
	)
	for range 200 {
		var c T
		b, _ := json.Marshal(tree)
		if err := json.Unmarshal(b, &c); err != nil {
			return append(out, err)
		}
		errs := Split(check(&c))
		if len(errs) == 0 {
			break
		}
		progress := false
		for _, e := range errs {
			var fe *Error
			if !errors.As(e, &fe) || fe.Path == "" {
				if !seen["\x01"+e.Error()] { // nothing to drop
					seen["\x01"+e.Error()] = true
					out = append(out, e)
				}
				continue
			}
			path := original(fe.Path, dropped)
			if !seen[path] {
				seen[path] = true
				out = append(out, &Error{Path: path, Err: fe.Err, Hint: fe.Hint})
			} else {
				// Dropping the field did not help (a required value):
				// drop the whole top-level field.
				fe = &Error{Path: topLevel(fe.Path)}
				if seen["\x00"+fe.Path] {
					continue
				}
				seen["\x00"+fe.Path] = true
			}
			for _, p := range append([]string{fe.Path}, dependents[fe.Path]...) {
				var d *drop
				if tree, d = remove(tree, p); d != nil {
					progress = true
					if d.index >= 0 {
						dropped = append(dropped, *d)
					}
				}
			}
		}
		if !progress {
			break
		}
	}
	return Sort[T](out)
}

// Sort sorts errs, stably, by the place of the fields they name among the
// JSON fields of struct type T (the order of its declaration, the
// documentation's); errors that name no field of T come last.
func Sort[T any](errs []error) []error {
	t := reflect.TypeFor[T]()
	order := map[string]int{}
	for i, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		order[name] = i
	}
	rank := func(err error) int {
		var fe *Error
		if errors.As(err, &fe) {
			if i, ok := order[topLevel(fe.Path)]; ok {
				return i
			}
		}
		return len(order)
	}
	slices.SortStableFunc(errs, func(a, b error) int { return rank(a) - rank(b) })
	return errs
}

// Split returns the errors joined in err (errors.Join), or err alone;
// none for nil.
func Split(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, Split(e)...)
		}
		return out
	}
	return []error{err}
}

// drop is an element dropped from the list at path (in the coordinates of
// the tree it was dropped from); index is -1 for a member of an object.
type drop struct {
	path  string
	index int
}

// original maps a path of the reduced tree back to v's: each element
// dropped before it in its list moves it one place up.
func original(path string, dropped []drop) string {
	for _, d := range slices.Backward(dropped) {
		rest, ok := strings.CutPrefix(path, d.path+"[")
		if !ok {
			continue
		}
		n, tail, ok := strings.Cut(rest, "]")
		i, err := strconv.Atoi(n)
		if ok && err == nil && i >= d.index {
			path = fmt.Sprintf("%s[%d]%s", d.path, i+1, tail)
		}
	}
	return path
}

// remove drops the value at path from the JSON tree node and returns the
// new node, and what it dropped (nil when path names nothing). An
// object's key may hold dots ("trusted_agents.https://a.example"): the
// longest key that path starts with is the one meant.
func remove(node any, path string) (any, *drop) {
	return removeAt(node, "", path)
}

func removeAt(node any, at, rest string) (any, *drop) {
	switch n := node.(type) {
	case map[string]any:
		key := ""
		for k := range n {
			if (rest == k || strings.HasPrefix(rest, k+".") || strings.HasPrefix(rest, k+"[")) && len(k) > len(key) {
				key = k
			}
		}
		if key == "" {
			return node, nil
		}
		if rest == key {
			delete(n, key)
			return n, &drop{path: join(at, key), index: -1}
		}
		next := strings.TrimPrefix(strings.TrimPrefix(rest, key), ".")
		var d *drop
		n[key], d = removeAt(n[key], join(at, key), next)
		return n, d
	case []any:
		num, tail, ok := strings.Cut(strings.TrimPrefix(rest, "["), "]")
		i, err := strconv.Atoi(num)
		if !strings.HasPrefix(rest, "[") || !ok || err != nil || i < 0 || i >= len(n) {
			return node, nil
		}
		if tail == "" {
			return slices.Delete(n, i, i+1), &drop{path: at, index: i}
		}
		var d *drop
		n[i], d = removeAt(n[i], fmt.Sprintf("%s[%d]", at, i), strings.TrimPrefix(tail, "."))
		return n, d
	}
	return node, nil
}

// topLevel returns the first element of a JSON path.
func topLevel(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}
