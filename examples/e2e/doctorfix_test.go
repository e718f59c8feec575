package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// doctorEdit is one fix the doctor printed: lines a to b of a file
// replaced by text (none: deleted).
type doctorEdit struct {
	file string
	a, b int
	text []string
}

var doctorEditRE = regexp.MustCompile(`(replace|delete) (\S+):(\d+)(?:-(\d+))?( with:)?$`)

// doctorEdits reads the fixes of the doctor's output: "replace FILE:A-B
// with:" and the lines to paste, each printed after 8 spaces, or "delete
// FILE:A-B".
func doctorEdits(out string) []doctorEdit {
	var edits []doctorEdit
	lines := strings.Split(out, "\n")
	for i := 0; i < len(lines); i++ {
		m := doctorEditRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		e := doctorEdit{file: m[2]}
		e.a, _ = strconv.Atoi(m[3])
		e.b = e.a
		if m[4] != "" {
			e.b, _ = strconv.Atoi(m[4])
		}
		if m[1] == "replace" {
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "        ") {
				i++
				e.text = append(e.text, strings.TrimPrefix(lines[i], "        "))
			}
		}
		edits = append(edits, e)
	}
	return edits
}

// applyEdits pastes the edits into their file, the last lines first.
func applyEdits(t *testing.T, edits []doctorEdit) {
	t.Helper()
	slices.SortFunc(edits, func(x, y doctorEdit) int { return y.a - x.a })
	for _, e := range edits {
		data, err := os.ReadFile(e.file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		if e.a < 1 || e.b > len(lines) || e.a > e.b {
			t.Fatalf("the fix names lines %d-%d of %s, which has %d", e.a, e.b, e.file, len(lines))
		}
		lines = slices.Concat(lines[:e.a-1], e.text, lines[e.b:])
		if err := os.WriteFile(e.file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDoctorFixes (issue 39, points 2 and 6): over a table of the
// mistakes of a new operator, the doctor sends each group's disallowed
// paths through the real route and names, for every one that leaves a
// disallowed path unguarded or its robots.txt unread, the config line and
// a fix; each fix, pasted as printed, validates, and the doctor then finds
// all good; so does a correct config from the start.
func TestDoctorFixes(t *testing.T) {
	need(t)
	dir, site := doctorSite(t)
	robots := filepath.Join(site, "robots.txt")
	gptOnly := writeTestFile(t, dir, "gpt/robots.txt", "User-agent: GPTBot\nDisallow: /\n")
	back := freePort(t)
	backend := fmt.Sprintf("\n:%d {\n\tbind 127.0.0.1\n\troot * %s\n\tfile_server\n}\n", back, site)
	for _, tc := range []struct {
		name   string
		config string // %[1]d the site's port, %[2]s the site's folder
		wants  []string
		line   int // the line the finding names
	}{
		{
			// The case: a guard of one folder, a robots.txt that
			// shuts GPTBot out of the whole site.
			name:   "matcher on the directive",
			config: "{\n\tadmin off\n}\n:%[1]d {\n\tbind 127.0.0.1\n\troot * %[2]s\n\trobots_guard /private/* {\n\t\trobots " + gptOnly + "\n\t}\n\tfile_server\n}\n",
			wants:  []string{"robots_guard is never reached: GPTBot got GET /, which robots.txt disallows for it, with 200 OK from file_server", "It runs only for requests that match path /private/*"},
			line:   7,
		},
		{
			name:   "route order",
			config: "{\n\tadmin off\n}\n:%[1]d {\n\tbind 127.0.0.1\n\troot * %[2]s\n\troute {\n\t\tfile_server\n\t\trobots_guard {\n\t\t\trobots " + robots + "\n\t\t}\n\t}\n}\n",
			wants:  []string{"It comes after file_server", "in the same route"},
			line:   8,
		},
		{
			name:   "handle blocks",
			config: "{\n\tadmin off\n}\n:%[1]d {\n\tbind 127.0.0.1\n\troot * %[2]s\n\thandle /private/* {\n\t\tfile_server\n\t}\n\thandle {\n\t\trobots_guard {\n\t\t\trobots " + robots + "\n\t\t}\n\t\tfile_server\n\t}\n}\n",
			wants:  []string{"GPTBot got GET /private/, which robots.txt disallows for it, with 200 OK from file_server", "answers it, in handle /private/*", "is in another handle block"},
			line:   8,
		},
		{
			name:   "a wrong robots URL, before an application",
			config: fmt.Sprintf("{\n\tadmin off\n}\n:%%[1]d {\n\tbind 127.0.0.1\n\trobots_guard {\n\t\trobots http://127.0.0.1:%d/robots.txt\n\t}\n\treverse_proxy 127.0.0.1:%d\n}\n", freePort(t), back) + backend,
			wants:  []string{"was set, but robots_guard cannot read it", "connection refused", fmt.Sprintf("the site's reverse_proxy upstream 127.0.0.1:%d serves a robots.txt", back)},
			line:   7,
		},
		{
			name:   "a wrong robots URL, in front of files",
			config: fmt.Sprintf("{\n\tadmin off\n}\n:%%[1]d {\n\tbind 127.0.0.1\n\troot * %%[2]s\n\trobots_guard {\n\t\trobots http://127.0.0.1:%d/robots.txt\n\t}\n\tfile_server\n}\n", freePort(t)),
			wants:  []string{"was set, but robots_guard cannot read it", "Or drop the robots line, and robots_guard reads the robots.txt the site itself serves: delete"},
			line:   8,
		},
		{
			name:   "a typo in the robots path",
			config: "{\n\tadmin off\n}\n:%[1]d {\n\tbind 127.0.0.1\n\troot * %[2]s\n\trobots_guard {\n\t\trobots " + filepath.Join(dir, "sitte", "robots.txt") + "\n\t}\n\tfile_server\n}\n",
			wants:  []string{"does not exist (a typo in the path?)", "Fix: " + robots + " exists"},
			line:   8,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, " ", "_") + ".Caddyfile"
			file := filepath.Join(dir, name)
			out, code := doctor(t, dir, name, fmt.Sprintf(tc.config, freePort(t), site))
			expectDoctor(t, tc.name, out, code, 1, append(tc.wants, fmt.Sprintf("%s:%d", file, tc.line), "1 problem found")...)
			edits := doctorEdits(out)
			if len(edits) != 1 {
				t.Fatalf("%s: %d fixes to paste, want 1:\n%s", tc.name, len(edits), out)
			}
			if edits[0].file != file || edits[0].a > tc.line || edits[0].b < tc.line {
				t.Errorf("%s: the fix changes %s:%d-%d, not the line named (%d)", tc.name, edits[0].file, edits[0].a, edits[0].b, tc.line)
			}
			applyEdits(t, edits)
			fixed, _ := os.ReadFile(file)
			vout, vcode := caddyCmd(t, dir, "validate", "--config", file)
			if vcode != 0 || !strings.Contains(vout, "Valid configuration") || strings.Contains(vout, `"level":"error"`) {
				t.Errorf("%s: the fixed config does not validate (exit %d):\n%s\n%s", tc.name, vcode, fixed, vout)
			}
			out, code = caddyCmd(t, dir, "robots", "doctor", "--config", file)
			expectDoctor(t, tc.name+", fixed", out, code, 0, "all good")
			if t.Failed() {
				t.Logf("the fixed config:\n%s", fixed)
			}
		})
	}
	// A correct config is all good from the start, with every group's
	// paths refused.
	out, code := doctor(t, dir, "good.Caddyfile", fmt.Sprintf("{\n\tadmin off\n}\n:%d {\n\tbind 127.0.0.1\n\troot * %s\n\trobots_guard {\n\t\trobots %s\n\t\ttrap /private-archive/\n\t}\n\thandle /private/* {\n\t\tfile_server\n\t}\n\thandle {\n\t\tfile_server\n\t}\n}\n", freePort(t), site, robots))
	expectDoctor(t, "a correct config", out, code, 0,
		"ok: GPTBot is refused /private/ (403 Forbidden, disallowed; robots.txt line 16: Disallow: /private/), and 1 more disallowed path: /~sam/",
		"ok: roguebot is refused /", "all good")
	if strings.Contains(out, "PROBLEM") || strings.Contains(out, "private-archive") {
		t.Errorf("a correct config:\n%s", out)
	}
}
