package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/robotsguard/robotsguard/evidence"
)

// TestLive judges what the browsers and tools installed here send now, not
// what they sent when the fixtures were made: a real Chromium (and Firefox
// ESR, when installed) with an ordinary desktop User-Agent draws no
// evidence on any request of a page load over HTTPS and plain HTTP, and
// curl and Go's net/http with a Chrome User-Agent over HTTPS are caught by
// their headers alone. A browser release that changes what it sends fails
// this test before it can fail a person.
func TestLive(t *testing.T) {
	if testing.Short() {
		t.Skip("starts browsers")
	}
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("chromium is not installed")
	}
	if _, err := exec.LookPath("certutil"); err != nil {
		t.Skip("certutil (libnss3-tools) is not installed")
	}
	ip := firstIP()
	if ip == "" {
		t.Skip("no non-loopback IPv4 address")
	}
	dir := t.TempDir()
	s, err := newSite(ip, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	judge := func(r Request) evidence.Verdict {
		o := evidence.Insecure
		switch r.Origin {
		case "secure":
			o = evidence.Secure
		case "loopback":
			o = evidence.Loopback
		}
		return evidence.Judge(evidence.ParseClaim(r.Header.Get("User-Agent")), r.Method, r.Header, evidence.TLS{}, o)
	}
	browsers := []struct {
		name  string
		start func(dir string) (browser, error)
	}{
		{"chromium", func(dir string) (browser, error) { return startChromium(s, dir, "--user-agent="+desktopUA) }},
	}
	if _, err := exec.LookPath("firefox-esr"); err == nil {
		browsers = append(browsers, struct {
			name  string
			start func(dir string) (browser, error)
		}{"firefox", func(dir string) (browser, error) { return startFirefox(s, dir, nil) }})
	} else {
		t.Log("firefox-esr is not installed: Chromium only")
	}
	for _, br := range browsers {
		s.start(br.name)
		for _, kind := range []string{"secure", "insecure"} {
			b, err := br.start(filepath.Join(dir, br.name+"-"+kind))
			if err != nil {
				t.Fatalf("%s: %v", br.name, err)
			}
			browseShort(s, b, kind, t.Logf)
			b.close()
		}
		reqs := s.take()
		judged, fetchMetadata := 0, 0
		for _, r := range reqs {
			if evidence.ParseClaim(r.Header.Get("User-Agent")).Judged() {
				judged++
			}
			if r.Origin == "secure" && r.Header.Get("Sec-Fetch-Site") != "" {
				fetchMetadata++
			}
			if v := judge(r); !v.None() {
				t.Errorf("%s %s %s %s: %s\n%v", br.name, r.Origin, r.Case, r.URL, v.Reason(), r.Header)
			}
		}
		if len(reqs) < 30 || judged < len(reqs) || fetchMetadata < 10 {
			t.Errorf("%s: %d requests, %d with a judged claim, %d with Fetch Metadata over HTTPS: the page did not load", br.name, len(reqs), judged, fetchMetadata)
		}
		t.Logf("%s: %d requests, no evidence", br.name, len(reqs))
	}
	for _, tl := range tools {
		if tl.name != "curl" && tl.name != "go-net-http" {
			continue
		}
		if _, err := exec.LookPath(tl.version[0]); err != nil {
			t.Logf("%s is not installed", tl.name)
			continue
		}
		s.start(tl.name)
		if err := tl.fetch(dir, s.caPEM, "https://"+ip+":"+itoa(s.tlsPort)+"/lib/page", chromeUA, nil); err != nil {
			t.Fatalf("%s: %v", tl.name, err)
		}
		reqs := s.take()
		if len(reqs) != 1 {
			t.Fatalf("%s: %d requests", tl.name, len(reqs))
		}
		if v := judge(reqs[0]); !v.Decisive() {
			t.Errorf("%s with a Chrome User-Agent over HTTPS: %q, want decisive evidence", tl.name, v.Evidence)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
