package caddymodule

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/robotsguard/robotsguard/policy"
)

// FuzzCaddyfile: any option block is either accepted, giving a handler that
// survives a JSON round trip and provisions, or refused with an error; it
// never panics.
func FuzzCaddyfile(f *testing.F) {
	for _, s := range []string{
		"robots /srv/robots.txt\ntrap /trap/ /*.bak$\ncooldown 1m 1h",
		"rate ai 5s\nrate bogus 1s",
		"verify {\n wait 1s\n ranges gptbot /x.json\n}",
		"bot acme monitor Acme \"Acme Check\"",
		"x_robots_tag /a googlebot: noindex \"max-snippet:0\"",
		"deny 404 \"gone\"\nthrottle 503\ntarpit 10s 5",
		"cooldown 48h\nua_cache 4MiB\ngrace 0\nsitemap https://example.com/s.xml",
		"verify off\nzone fuzz\nstrikes 2\nblock_class ai\nallow_token x\nallow_ip ::1",
		"{\n}\n}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, block string) {
		var h Handler
		err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser("robots_guard {\n" + block + "\n}"))
		if err != nil {
			return
		}
		js, err := json.Marshal(&h)
		if err != nil {
			t.Fatalf("accepted config does not marshal: %v", err)
		}
		var back Handler
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatalf("accepted config does not unmarshal: %v\n%s", err, js)
		}
		if _, err := provisionJSON(t, string(js)); err != nil {
			t.Fatalf("the adapter accepted a config that Provision refuses: %v\n%s", err, js)
		}
	})
}

// FuzzReport: any log input is read without panicking; every decision it
// counts comes from a line of the input.
func FuzzReport(f *testing.F) {
	f.Add([]byte(`{"level":"info","ts":1796006803.64,"logger":"http.handlers.robots_guard","msg":"request refused","client_ip":"127.0.0.1","user_agent":"x","class":"ai","tokens":["gptbot"],"uri":"/secret","action":"deny","reason":"disallowed","read_robots":true}` + "\n"))
	f.Add([]byte("{\"logger\":\"http.handlers.robots_guard\",\"action\":\"allow\",\"ts\":\"2026-11-30T01:02:03Z\"}\nnot json\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep := newReport()
		if err := rep.read(bytes.NewReader(data)); err != nil {
			return
		}
		s := rep.summary(5)
		if lines := bytes.Count(data, []byte("\n")) + 1; s.Decisions > lines {
			t.Fatalf("%d decisions from %d lines", s.Decisions, lines)
		}
		var buf bytes.Buffer
		s.writeText(&buf)
	})
}

// FuzzParsePage: any HTML is read without panicking, and every link and
// image kept is a same-site path.
func FuzzParsePage(f *testing.F) {
	f.Add(`<html><head><meta name="robots" content="noindex, nofollow"></head><body><a href="/private/">x</a><img src="../img/a.png" alt="a"><a href="https://other.example/">o</a></body></html>`)
	f.Add(`<a href="//example.test/x?y=1"><a href="javascript:alert(1)"><a href=" /%zz">`)
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := parsePage("/dir/page.html", "example.test", strings.NewReader(doc))
		if err != nil {
			return
		}
		for _, l := range append(append([]string{}, p.links...), imageSrcs(p)...) {
			if !strings.HasPrefix(l, "/") {
				t.Fatalf("kept %q, not a same-site path", l)
			}
		}
	})
}

func imageSrcs(p *auditPage) []string {
	var out []string
	for _, i := range p.images {
		out = append(out, i.src)
	}
	return out
}

// FuzzTargetVariants: any request target yields variants without panicking;
// each variant is a path, differs from the target, and is a fixed point of
// normalisation once normalised.
func FuzzTargetVariants(f *testing.F) {
	for _, s := range []string{"/private%2Freport.html", "//private/", `/a\b`, "/p;jsessionid=1/r.html?q=1", "/%zz;/", "/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		if !strings.HasPrefix(target, "/") {
			return
		}
		for _, v := range targetVariants(target) {
			if v == target || !strings.HasPrefix(v, "/") {
				t.Fatalf("targetVariants(%q) gives %q", target, v)
			}
			n := policy.NormalizeTarget(v)
			if policy.NormalizeTarget(n) != n {
				t.Fatalf("variant %q does not normalise stably", v)
			}
		}
	})
}

// FuzzRobotsTag: any X-Robots-Tag values are read without panicking, and
// merging directives into them never drops a value the backend sent.
func FuzzRobotsTag(f *testing.F) {
	f.Add("noindex, nofollow", "googlebot: noimageindex")
	f.Add("unavailable_after: 25 Jun 2010 15:00:00 PST", "max-snippet:-1")
	f.Fuzz(func(t *testing.T, a, b string) {
		h := http.Header{}
		h.Add("X-Robots-Tag", a)
		h.Add("X-Robots-Tag", b)
		before := append([]string{}, h.Values("X-Robots-Tag")...)
		mergeRobotsTag(h, map[string][]string{"": {"noindex"}, "googlebot": {"nosnippet"}})
		after := h.Values("X-Robots-Tag")
		if len(after) < len(before) {
			t.Fatalf("merge dropped values: %q -> %q", before, after)
		}
		for i := range before {
			if after[i] != before[i] {
				t.Fatalf("merge changed the backend's value %q to %q", before[i], after[i])
			}
		}
	})
}
