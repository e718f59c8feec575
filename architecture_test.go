package robotsguard

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestArchitecture checks the layout the README describes with "go list":
// only caddymodule, the example Caddy main and this root package depend on
// Caddy, directly or not, tests included; policy, evidence (and
// evidence/behaviour), tlsprint,
// tlsprint/quicprint, internal/sfv (the one structured-field scanner) and
// internal/stacktable (the one reader of the stack tables), internal/conntable
// (the one fixed table of per-connection facts), internal/benchstage (a
// measurement build's stops in the handler)
// use the standard library only, besides each other (quicprint reads its
// hellos with tlsprint); and dependencies point one way: caddymodule ->
// {report, review, metrics} -> record -> enforce -> {policy, uaclass,
// signature}, and nothing below caddymodule imports it.
func TestArchitecture(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/robotsguard/robotsguard"
	usesCaddy := func(deps []string) bool {
		return slices.ContainsFunc(deps, func(d string) bool { return strings.HasPrefix(d, "github.com/caddyserver/caddy") })
	}
	// The code: only these depend on Caddy (besides the glue, two Caddy
	// mains: the one with robotsguard, and examples/bench/stackdepth's,
	// a measurement without it).
	code := goList(t, mod)
	caddyOK := []string{mod, mod + "/caddymodule", mod + "/examples/caddy", mod + "/examples/bench/stackdepth"}
	for path, p := range code {
		if usesCaddy(p.deps) && !slices.Contains(caddyOK, path) {
			t.Errorf("%s depends on Caddy; only %v may", path, caddyOK)
		}
		if path != mod && !strings.HasPrefix(path, mod+"/examples/") && path != mod+"/caddymodule" && slices.Contains(p.imports, mod+"/caddymodule") {
			t.Errorf("%s imports caddymodule: dependencies point the other way", path)
		}
	}
	if !usesCaddy(code[mod+"/caddymodule"].deps) {
		t.Error("caddymodule does not depend on Caddy: go list's answer is not what this test expects")
	}
	// These use the standard library only, and each other.
	stdOnly := []string{"/policy", "/evidence", "/evidence/behaviour", "/tlsprint", "/tlsprint/quicprint", "/internal/sfv", "/internal/stacktable", "/internal/conntable", "/internal/benchstage"}
	for _, pkg := range stdOnly {
		for _, d := range code[mod+pkg].deps {
			if first, _, _ := strings.Cut(d, "/"); strings.Contains(first, ".") && !slices.Contains(stdOnly, strings.TrimPrefix(d, mod)) {
				t.Errorf("%s depends on %s; it uses the standard library only", pkg[1:], d)
			}
		}
	}
	for _, below := range []struct{ pkg, must string }{
		{"/policy", "/uaclass"}, {"/policy", "/enforce"}, {"/uaclass", "/enforce"},
		// The one reading of a request (enforce.Reader) uses the Web Bot
		// Auth signatures: they stay below it.
		{"/signature", "/enforce"},
		// The one record of a decision (package record) is below what is
		// made from it: the log line, the metrics, the statistics.
		{"/enforce", "/record"}, {"/record", "/report"}, {"/record", "/review"}, {"/record", "/metrics"},
	} {
		if slices.Contains(code[mod+below.pkg].deps, mod+below.must) {
			t.Errorf("%s depends on %s: dependencies point one way", below.pkg, below.must)
		}
	}
	// The tests: those of the Caddy-free packages run without Caddy too.
	for path, p := range goList(t, mod, "-test") {
		if usesCaddy(p.deps) && !slices.Contains(caddyOK, path) && !strings.HasPrefix(path, mod+"/examples/") {
			t.Errorf("the tests of %s depend on Caddy", path)
		}
	}
}

type listed struct{ imports, deps []string }

// goList returns the module's packages with their imports and transitive
// dependencies; with "-test", a package's test variants count as it.
func goList(t *testing.T, mod string, flags ...string) map[string]listed {
	t.Helper()
	args := append([]string{"list", "-deps"}, flags...)
	args = append(args, "-f", `{{.ImportPath}}|{{.Standard}}|{{join .Imports " "}}|{{join .Deps " "}}`, "./...")
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]listed{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		// "p [p.test]" and "p.test" are p's test variants.
		path, _, _ := strings.Cut(f[0], " ")
		path = strings.TrimSuffix(strings.TrimSuffix(path, ".test"), "_test")
		if f[1] == "true" || !strings.HasPrefix(path, mod) {
			continue
		}
		p := pkgs[path]
		p.imports = append(p.imports, strings.Fields(f[2])...)
		p.deps = append(p.deps, strings.Fields(f[3])...)
		pkgs[path] = p
	}
	if len(pkgs) < 15 {
		t.Fatalf("go list found only %d packages of the module", len(pkgs))
	}
	return pkgs
}

// TestCaddymoduleSize keeps caddymodule the thin adapter the README
// describes (issues 13, 36): under 1,800 lines of non-test Go code,
// counting neither blank lines nor comments, since every config field's
// doc comment is Caddy's JSON documentation. Code that needs no Caddy
// belongs in the package that owns the behaviour: the reading of a request
// (enforce.Reader), its record (package record), the admin endpoints
// (review.Admin), the response header rules (policy.HeaderRules), each
// option group's check (enforce, source, signature, report Settings).
func TestCaddymoduleSize(t *testing.T) {
	files, err := filepath.Glob("caddymodule/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no caddymodule sources: %v", err)
	}
	code, all := 0, 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			all++
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "//") {
				code++
			}
		}
	}
	t.Logf("caddymodule: %d lines of non-test code (%d with blank lines and comments)", code, all)
	if code >= 1800 {
		t.Errorf("caddymodule has %d lines of non-test code, want under 1,800: move what needs no Caddy into the package that owns it", code)
	}
}
