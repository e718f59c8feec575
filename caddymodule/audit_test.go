package caddymodule

import (
	"bytes"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"testing"

	"github.com/robotsguard/robotsguard/policy"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestAuditGolden: the audit of a fixture site that has each problem once
// matches the expected report.
func TestAuditGolden(t *testing.T) {
	site, err := readSiteDir("testdata/audit/site", 1000)
	if err != nil {
		t.Fatal(err)
	}
	robots, err := os.ReadFile("testdata/audit/site/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	findings := audit(policy.Parse(robots), site)
	var out bytes.Buffer
	writeFindings(&out, findings)
	if *update {
		if err := os.WriteFile("testdata/audit/golden.txt", out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/audit/golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("audit report differs from testdata/audit/golden.txt:\n%s", out.String())
	}
	kinds := map[string]int{}
	for _, f := range findings {
		kinds[f.Kind]++
	}
	for _, k := range []string{"lint", "noindex_disallowed", "disallowed_linked", "disallowed_image_embedded", "conflicting_image_robots"} {
		if kinds[k] != 1 {
			t.Errorf("%d %s findings, want 1", kinds[k], k)
		}
	}

	// The same site read over HTTP gives the same findings.
	srv := httptest.NewServer(http.FileServer(http.Dir("testdata/audit/site")))
	defer srv.Close()
	crawled, served, err := crawlSite(srv.URL, nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, robots) {
		t.Errorf("crawl read robots.txt %q", served)
	}
	if got := audit(policy.Parse(served), crawled); !reflect.DeepEqual(got, findings) {
		t.Errorf("findings over HTTP differ:\n%+v\nwant\n%+v", got, findings)
	}
}

// TestAuditDemoSite: on the demo site the audit reports only what is true:
// /private/ and /~sam/ are disallowed but linked from allowed pages (on
// purpose: the demo shows robots being refused there).
func TestAuditDemoSite(t *testing.T) {
	site, err := readSiteDir("../examples/site", 1000)
	if err != nil {
		t.Fatal(err)
	}
	robots, err := os.ReadFile("../examples/site/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range audit(policy.Parse(robots), site) {
		got = append(got, f.Kind+" "+f.Path)
	}
	want := []string{"disallowed_linked /private/", "disallowed_linked /~sam/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("demo site findings = %q, want %q", got, want)
	}
}
