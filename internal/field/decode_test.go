package field

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Duration reads as caddy.Duration does: a number of nanoseconds, or a
// string with units.
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		*d = Duration(v)
		return err
	}
	return json.Unmarshal(b, (*int64)(d))
}

type testInner struct {
	Wait   Duration          `json:"wait,omitempty"`
	Ranges map[string]string `json:"ranges,omitempty"`
}

type testConfig struct {
	Delay  Duration            `json:"delay,omitempty"`
	Rates  map[string]Duration `json:"rates,omitempty"`
	On     bool                `json:"on,omitempty"`
	Count  int                 `json:"count,omitempty"`
	Names  []string            `json:"names,omitempty"`
	Inner  *testInner          `json:"inner,omitempty"`
	Repeat *Duration           `json:"repeat,omitempty"`
	Raw    json.RawMessage     `json:"raw,omitempty"`
}

func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// TestDecode: every field that does not decode is named by its JSON path
// in plain words, in the input's order; the others are decoded.
func TestDecode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"delay": "2s", "count": 3}`, ""},
		{`{"rates": {"a": "1s", "b": "1"}}`, `rates.b: "1" has no unit: write "1s" for seconds, "1ms" for milliseconds`},
		{`{"on": "yes", "count": 1.5, "names": ["a", 2], "bogus": 1, "Delay": "x"}`,
			"on: want true or false, got a string (\"yes\")\ncount: want a whole number, got a number (1.5)\nnames[1]: want a string, got a number (2)\nbogus: unknown field\nDelay: \"x\" is not a duration (write e.g. \"2s\", \"500ms\", \"1h30m\" or \"2d\")"},
		{`{"inner": {"wait": true, "range": {}}}`, "inner.wait: want a duration such as \"2s\", \"500ms\" or \"1h30m\", got a boolean (true)\ninner.range: unknown field (did you mean 'ranges'?)"},
		{`{"repeat": "often", "names": "a"}`, "repeat: \"often\" is not a duration (write e.g. \"2s\", \"500ms\", \"1h30m\" or \"2d\")\nnames: want a list [...], got a string (\"a\")"},
		{`{"inner": [1]}`, "inner: want an object {...}, got a list"},
		{`{"count": "` + strings.Repeat("9", 60) + `"}`, `count: want a whole number, got a string ("999999999999999999999999999999999999...)`},
		{`[1]`, "json: cannot unmarshal array into Go value of type field.testConfig"},
		{`{"count": 1`, "unexpected EOF"},
	} {
		var c testConfig
		err := Decode([]byte(tc.in), &c, strict)
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
			t.Errorf("Decode(%s):\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	// The fields that decode are kept, for their values to be checked.
	var c testConfig
	err := Decode([]byte(`{"count": 4, "on": "x", "names": ["a"], "delay": 5}`), &c, strict)
	var fe *Error
	if !errors.As(err, &fe) || fe.Path != "on" || c.Count != 4 || len(c.Names) != 1 || c.Delay != 5 || c.On {
		t.Errorf("partial decode: %+v, %v", c, err)
	}
}

// TestAll: every error is found, with the paths of the original (list
// elements dropped before do not shift them), in the order of the fields;
// a dependent field is not reported with the bad one it needs; a required
// value that stays bad ends the search.
func TestAll(t *testing.T) {
	check := func(c *testConfig) error {
		for i, n := range c.Names {
			if !strings.HasPrefix(n, "/") {
				return Errorf(fmt.Sprintf("names[%d]", i), "%q must start with '/'", n)
			}
		}
		if c.Count < 0 {
			return Errorf("count", "must not be negative")
		}
		if c.Inner != nil && c.Count == 0 {
			return Errorf("inner", "only with a count")
		}
		if c.Delay < 0 {
			return Errorf("delay", "must not be negative")
		}
		for k, v := range c.Rates {
			if v < 0 {
				return Errorf("rates."+k, "must not be negative")
			}
		}
		return errors.Join(Errorf("raw", "always wrong"), fmt.Errorf("no field"))
	}
	v := &testConfig{Names: []string{"a", "/b", "c", "d"}, Count: -1, Inner: &testInner{}, Delay: -1, Rates: map[string]Duration{"x.y": -1}}
	got := fmt.Sprint(All(v, check, map[string][]string{"count": {"inner"}}))
	want := `[delay: must not be negative rates.x.y: must not be negative count: must not be negative names[0]: "a" must start with '/' names[2]: "c" must start with '/' names[3]: "d" must start with '/' raw: always wrong no field]`
	if got != want {
		t.Errorf("All:\n got %s\nwant %s", got, want)
	}
	if len(v.Names) != 4 || v.Count != -1 || v.Inner == nil {
		t.Errorf("All changed its argument: %+v", v)
	}
	// A value that stays bad once dropped (a required one) is reported once.
	req := func(c *testConfig) error {
		if c.Inner == nil || c.Inner.Wait == 0 {
			return Errorf("inner.wait", "required")
		}
		return nil
	}
	if got := fmt.Sprint(All(&testConfig{Inner: &testInner{Ranges: map[string]string{"a": "b"}}}, req, nil)); got != "[inner.wait: required]" {
		t.Errorf("required: %s", got)
	}
}

// TestFloors: durations below their floor are refused, a small number with
// the hint that JSON numbers are nanoseconds; zero and negatives pass.
func TestFloors(t *testing.T) {
	r := Duration(time.Minute)
	v := testConfig{Delay: 2, Rates: map[string]Duration{"a": 0, "b": 900, "c": Duration(time.Second)}, Repeat: &r, Inner: &testInner{Wait: -5}, Raw: json.RawMessage(`{"timeout": "10us", "x": 3}`)}
	floors := map[string]time.Duration{"delay": time.Millisecond, "rates.*": time.Second, "repeat": time.Hour, "inner.wait": time.Second, "raw.timeout": time.Millisecond, "raw.x": time.Second, "absent": time.Second}
	got := fmt.Sprint(Floors(v, floors))
	want := `delay: must be at least 1ms, got 2ns (JSON numbers are nanoseconds; write "2s")
rates.b: must be at least 1s, got 900ns (JSON numbers are nanoseconds; write "900s")
raw.timeout: must be at least 1ms, got 10µs
raw.x: must be at least 1s, got 3ns (JSON numbers are nanoseconds; write "3s")
repeat: must be at least 1h0m0s, got 1m0s`
	if got != want {
		t.Errorf("Floors:\n got %s\nwant %s", got, want)
	}
	if err := Floors(testConfig{}, floors); err != nil {
		t.Errorf("zero values: %v", err)
	}
}

// TestSuggest: a JSON name gets its Caddyfile spelling, a plural its
// repeatable option, a typo the nearest option; nothing else gets a hint.
func TestSuggest(t *testing.T) {
	options := []string{"block_class", "tarpit", "strikes", "trap", "mode"}
	repeatable := func(o string) bool { return o == "block_class" || o == "trap" }
	for name, want := range map[string]string{
		"tarpit_max":    " (did you mean 'tarpit <duration> <max held>'? tarpit_max is the JSON name)",
		"block_classes": " (did you mean 'block_class'? block_classes is the JSON name)",
		"traps":         " (did you mean 'trap'? traps is the JSON name)",
		"modes":         " (did you mean 'mode'?)", // not repeatable: a typo
		"strikess":      " (did you mean 'strikes'?)",
		"colour":        "",
	} {
		if got := Suggest(name, options, repeatable, CaddyfileSpellings); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestLines: errors come out in line order, the first of each line only.
func TestLines(t *testing.T) {
	var l Lines
	if l.Err() != nil {
		t.Error("empty Lines has an error")
	}
	l.Add(5, errors.New("e5"))
	l.Add(2, errors.New("e2"))
	l.Add(5, errors.New("e5 again"))
	l.Add(3, errors.New("e3"))
	if got := l.Err().Error(); got != "e2\ne3\ne5" {
		t.Errorf("Lines: %q", got)
	}
}

// TestRobotsFileArg: a path that ends in robots.txt or names a file is a
// robots file; a path matcher is not.
func TestRobotsFileArg(t *testing.T) {
	for arg, want := range map[string]bool{"/srv/www/robots.txt": true, "/Robots.TXT": true, "/etc/hostname": true, "/blog/*": false, "/etc": false, "robots.txt": false, "@bots": false} {
		if got := RobotsFileArg(arg); got != want {
			t.Errorf("RobotsFileArg(%q) = %v", arg, got)
		}
	}
}

// TestTablesDocumented: docs/troubleshooting.md lists every duration floor
// and every Caddyfile spelling of a JSON name.
func TestTablesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/troubleshooting.md")
	if err != nil {
		t.Fatal(err)
	}
	for path, least := range DurationFloors {
		col := map[time.Duration]string{time.Millisecond: "at least 1ms", time.Second: "at least 1s"}[least]
		if col == "" || !strings.Contains(string(doc), "`"+path+"`") {
			t.Errorf("docs/troubleshooting.md lacks the floor of %s (%v)", path, least)
		}
	}
	for name, spelling := range CaddyfileSpellings {
		if !strings.Contains(string(doc), "`"+name+"`") || !strings.Contains(string(doc), "`"+strings.Fields(spelling)[0]+" ") {
			t.Errorf("docs/troubleshooting.md lacks the spelling of %s (%s)", name, spelling)
		}
	}
}
