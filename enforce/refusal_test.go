package enforce

import (
	"net/http"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/policy"
)

// TestRefusals: the status, headers, body and error of each kind of
// refusal; a trap is reported as a block; the texts are made once; every
// refusal is marked private (Cache-Control: private, no-store; Vary:
// User-Agent).
func TestRefusals(t *testing.T) {
	rs := NewRefusals(RefusalOptions{DenyStatus: 403, ThrottleStatus: 429, ThrottleBody: "slow down"})
	p, p2 := &policy.Policy{}, &policy.Policy{}
	disallow := &policy.Rule{Pattern: "/private/", Line: 6}
	usage := &policy.Rule{Pattern: "/ train-ai=n", Line: 9, Key: policy.KeyContentUsage}
	for _, tc := range []struct {
		name   string
		d      Decision
		status int
		body   string
		header http.Header
		err    string
	}{
		{"disallowed", Decision{Action: Deny, Reason: ReasonDisallowed, Rule: disallow}, 403, "",
			http.Header{"X-Robots-Guard": {"disallowed"}, "X-Robots-Guard-Rule": {"robots.txt line 6: Disallow: /private/"}},
			"robots_guard: deny: disallowed by robots.txt line 6: Disallow: /private/"},
		{"departure", Decision{Action: Deny, Reason: ReasonDeparture, Rule: disallow}, 403, "",
			http.Header{"X-Robots-Guard": {"departure"}, "X-Robots-Guard-Rule": {"robots.txt line 6: Disallow: /private/"}},
			"robots_guard: deny: departure by robots.txt line 6: Disallow: /private/"},
		{"content usage", Decision{Action: Deny, Reason: ReasonContentUsage, Rule: usage}, 403, "",
			http.Header{"X-Robots-Guard": {"content_usage"}, "X-Robots-Guard-Rule": {"robots.txt line 9: Content-Usage: / train-ai=n"}},
			"robots_guard: deny: content_usage by robots.txt line 9: Content-Usage: / train-ai=n"},
		{"trap", Decision{Action: Deny, Reason: ReasonTrap, Rule: disallow, BlockedUntil: time.Now().Add(90*time.Second + 500*time.Millisecond)}, 403, "",
			http.Header{"X-Robots-Guard": {"blocked_client"}, "Retry-After": {"90"}},
			"robots_guard: deny: blocked_client"},
		{"tarpit, long block", Decision{Action: Tarpit, Reason: ReasonBlockedClient, BlockedUntil: time.Now().Add(2*time.Hour + 500*time.Millisecond)}, 403, "",
			http.Header{"X-Robots-Guard": {"blocked_client"}, "Retry-After": {"7200"}},
			"robots_guard: tarpit: blocked_client"},
		{"throttle", Decision{Action: Throttle, Reason: ReasonCrawlDelay, RetryAfter: 4200 * time.Millisecond}, 429, "slow down",
			http.Header{"X-Robots-Guard": {"crawl_delay"}, "Retry-After": {"5"}, "Content-Type": {"text/plain; charset=utf-8"}, "X-Content-Type-Options": {"nosniff"}},
			"robots_guard: throttle: crawl_delay"},
		{"throttle, under a second", Decision{Action: Throttle, Reason: ReasonRate, RetryAfter: time.Millisecond}, 429, "slow down",
			http.Header{"X-Robots-Guard": {"rate"}, "Retry-After": {"1"}, "Content-Type": {"text/plain; charset=utf-8"}, "X-Content-Type-Options": {"nosniff"}},
			"robots_guard: throttle: rate"},
		{"a reason of its own", Decision{Action: Deny, Reason: "some_new_reason"}, 403, "",
			http.Header{"X-Robots-Guard": {"some_new_reason"}},
			"robots_guard: deny: some_new_reason"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := http.Header{}
			rf := rs.Refuse(hdr, &tc.d, p)
			// Every refusal is the client's own (issue 29, item 4).
			tc.header["Cache-Control"], tc.header["Vary"] = []string{"private, no-store"}, []string{"User-Agent"}
			if rf.Status != tc.status || string(rf.Body) != tc.body {
				t.Errorf("status %d, body %q; want %d, %q", rf.Status, rf.Body, tc.status, tc.body)
			}
			if len(hdr) != len(tc.header) {
				t.Errorf("headers %v, want %v", hdr, tc.header)
			}
			for k, v := range tc.header {
				if got := hdr[k]; len(got) != 1 || got[0] != v[0] {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if err := rf.Err(); err == nil || err.Error() != tc.err {
				t.Errorf("Err() = %v, want %s", err, tc.err)
			}
		})
	}
	// The texts are made once: the same error again, per rule while the
	// policy stays, and the rule's texts of a new policy.
	d := Decision{Action: Deny, Reason: ReasonDisallowed, Rule: disallow}
	first := rs.Refuse(http.Header{}, &d, p)
	again := rs.Refuse(http.Header{}, &d, p)
	reloaded := rs.Refuse(http.Header{}, &d, p2)
	if first.Err() != again.Err() || reloaded.Err() == first.Err() || reloaded.Err().Error() != first.Err().Error() {
		t.Errorf("texts made again: %p %p %p", first.Err(), again.Err(), reloaded.Err())
	}
	blocked := Decision{Action: Deny, Reason: ReasonBlockedClient}
	if a, b := rs.Refuse(http.Header{}, &blocked, p), rs.Refuse(http.Header{}, &blocked, p); a.Err() != b.Err() {
		t.Error("the error of a reason made again")
	}
	// A refusal makes one array for the values of its headers, and nothing
	// else; with a body, the values of its two content headers.
	hdr := http.Header{}
	if allocs := testing.AllocsPerRun(100, func() { clear(hdr); rs.Refuse(hdr, &d, p) }); allocs != 1 {
		t.Errorf("a refusal allocates %v times, want 1", allocs)
	}
	throttle := Decision{Action: Throttle, Reason: ReasonCrawlDelay, RetryAfter: 5 * time.Second}
	if allocs := testing.AllocsPerRun(100, func() { clear(hdr); rs.Refuse(hdr, &throttle, p) }); allocs != 3 {
		t.Errorf("a refusal with a body allocates %v times, want 3", allocs)
	}
}

// TestReasons: every reason the engine gives is in Reasons, once.
func TestReasons(t *testing.T) {
	seen := map[Reason]bool{}
	for _, r := range Reasons {
		if seen[r] {
			t.Errorf("%q twice", r)
		}
		seen[r] = true
	}
	for _, r := range []Reason{ReasonNone, ReasonRobotsTxt, ReasonAllowlisted, ReasonDisallowed, ReasonCrawlDelay, ReasonRate, ReasonAddressRate,
		ReasonBlockedClient, ReasonTrap, ReasonBadAgent, ReasonImpostor, ReasonBlockedClass, ReasonInvalid, ReasonContentUsage, ReasonCrawlerRate} {
		if !seen[r] {
			t.Errorf("%q is missing", r)
		}
	}
}
