package cli

import (
	"fmt"
	"strings"
	"testing"
)

// TestEachLine: lines without their ends, CRLF included; a line over the
// bound comes empty with tooLong set and the reading goes on.
func TestEachLine(t *testing.T) {
	in := "a\r\n" + strings.Repeat("x", 100) + "\nb\n\nlast"
	var got []string
	err := eachLine(strings.NewReader(in), 10, func(line []byte, tooLong bool) error {
		got = append(got, fmt.Sprintf("%q:%v", line, tooLong))
		return nil
	})
	if want := `["a":false "":true "b":false "":false "last":false]`; err != nil || fmt.Sprint(got) != want {
		t.Errorf("got %v %v, want %s", got, err, want)
	}
}
