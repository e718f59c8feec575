package stacktable

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	var got []Row
	var lines []int
	err := Parse("# a comment\n\nm1\tchromium\tbrowser\tobserved\nm2\tgo\tlibrary\tsource: x\n", func(n int, r Row) error {
		got, lines = append(got, r), append(lines, n)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{{"m1", Stack{Known: true, Browser: true, Family: "chromium"}, "observed"}, {"m2", Stack{Known: true, Browser: false, Family: "go"}, "source: x"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] || lines[0] != 3 || lines[1] != 4 {
		t.Errorf("Parse: %v at lines %v, want %v at 3, 4", got, lines, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"x\tgo\tlibrary\n", "line 1: want 4"},
		{"x\tgo\tlibrary\t\n", "line 1: want 4"},
		{"x\t\tlibrary\tsrc\n", "line 1: want 4"},
		{"x\tgo\tlibrary\tsrc\textra\n", "line 1: want 4"},
		{"x\tgo\tengine\tsrc\n", `line 1: kind "engine"`},
		{"x\tgo\tlibrary\tsrc\n# c\ny\tgo\tbrowser\tsrc\n", `line 3: family "go" is a browser's and a library's`},
		{"x\tgo\tlibrary\tsrc\nbad\tgo\tlibrary\tsrc\n", "line 2: bad match"},
	} {
		err := Parse(c.text, func(_ int, r Row) error {
			if r.Match == "bad" {
				return errBad
			}
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q): %v, want an error with %q", c.text, err, c.want)
		}
	}
}

type badMatch struct{}

func (badMatch) Error() string { return "bad match" }

var errBad error = badMatch{}
