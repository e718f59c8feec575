// Package stacktable is the one reader of robotsguard's stack tables: the
// TLS table (tlsprint/stacks.tsv), the QUIC table
// (tlsprint/quicprint/quic.tsv) and the HTTP framing table
// (framing/stacks.tsv). Each says, a row a line, which stack sends a
// fingerprint: tab-separated, the match (what the row's table compares),
// the stack's family, its kind (browser or library) and where it was
// seen; "#" starts a comment line. The tables differ only in their
// matches, which their packages read. It uses the standard library only.
package stacktable

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Stack is what a table says of the stack that sent a fingerprint. The
// zero Stack is an unknown one, which is never evidence.
type Stack struct {
	// Known reports that the table knows the stack.
	Known bool
	// Browser reports a browser engine's own stack.
	Browser bool
	// Family names the stack: "chromium", "firefox" or "webkit" for a
	// browser engine's; a library's ("go", "openssl", "python-h2",
	// "quic-go", ...) for the others.
	Family string
}

// Row is one line of a table: its match, its stack and where it was seen.
type Row struct {
	Match  string
	Stack  Stack
	Source string
}

// Kind is a table's word for a stack's kind: "browser" for a browser
// engine's own stack, else "library".
func Kind(browser bool) string {
	if browser {
		return "browser"
	}
	return "library"
}

// Parse reads the rows of a table and calls each with every row and its
// line number (from 1), in order. It refuses a line without the four
// fields, a source or a family, a kind other than browser or library,
// and a family that is a browser's on one line and a library's on
// another; an error of each is returned with its line.
func Parse(text string, each func(line int, r Row) error) error {
	kinds := map[string]bool{}
	for n, line := range strings.Split(text, "\n") {
		n++
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 || f[1] == "" || f[3] == "" {
			return fmt.Errorf("line %d: want 4 tab-separated fields (match, family, kind, source), with a family and a source", n)
		}
		if f[2] != "browser" && f[2] != "library" {
			return fmt.Errorf("line %d: kind %q: want browser or library", n, f[2])
		}
		r := Row{Match: f[0], Stack: Stack{Known: true, Browser: f[2] == "browser", Family: f[1]}, Source: f[3]}
		if k, ok := kinds[r.Stack.Family]; ok && k != r.Stack.Browser {
			return fmt.Errorf("line %d: family %q is a browser's and a library's", n, f[1])
		}
		kinds[r.Stack.Family] = r.Stack.Browser
		if err := each(n, r); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return nil
}

// ReadFile calls f with the fields of each line of a tab-separated file
// that is neither empty nor a "#" comment: the collect commands' inputs
// (testdata/observed.tsv, published.tsv, ...), from which they make the
// tables. Each line must have n fields; an error names the file and line.
func ReadFile(path string, n int, f func([]string) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if sc.Text() == "" || strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != n {
			return fmt.Errorf("%s:%d: %d fields, want %d", path, line, len(fields), n)
		}
		if err := f(fields); err != nil {
			return fmt.Errorf("%s:%d: %v", path, line, err)
		}
	}
	return sc.Err()
}
