package audit

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/robotsguard/robotsguard/policy"
)

// UserAgent is the User-Agent of the crawl; its product token is
// robotsguard-audit, which the site's robots.txt may address.
const UserAgent = "robotsguard-audit/1.0 (+https://github.com/robotsguard/robotsguard)"

// Token is the crawl's robots.txt product token.
const Token = "robotsguard-audit"

// CrawlOptions configure a crawl.
type CrawlOptions struct {
	// MaxPages bounds the pages read. Default: 1000.
	MaxPages int
	// Delay is the pause between requests. Default: the robots.txt's
	// Crawl-delay for the crawl's token, else 1s, the rate robots_guard
	// grants an unknown bot; a negative Delay means none.
	Delay time.Duration
	// Client makes the requests. Default: a client with a 10 s timeout.
	Client *http.Client
	// Progress, when set, is called after each request.
	Progress func(Progress)
	// Sleep waits between requests; tests replace it. Default: time.Sleep.
	Sleep func(time.Duration)
}

// Progress is the state of a crawl, for a progress display.
type Progress struct {
	// Read is the pages read; Queued the same-site links still to read
	// (bounded by the page cap); Refused the requests the site refused.
	Read, Queued, Refused int
	// Path is the last path requested.
	Path string
}

// Crawl is what a crawl saw besides the pages.
type Crawl struct {
	// Site holds the pages read.
	Site *Site
	// Robots is the robots.txt the site serves (nil when it has none).
	Robots []byte
	// Refusals are the requests the site answered with 401, 403 or 429.
	Refusals []Refusal
	// Disallowed counts the same-site links not followed because the
	// served robots.txt disallows them for the crawl (traps included).
	Disallowed int
	// Requests counts the HTTP requests made, robots.txt included.
	Requests int
	// NotPages counts the answers that were not an HTML page (another
	// status than 200, or another Content-Type); FirstNotPage describes the
	// first, for when no page could be read at all.
	NotPages     int
	FirstNotPage string
	// Stopped says why the crawl ended early, or "".
	Stopped string
}

// Refusal is one refused request.
type Refusal struct {
	Path   string `json:"path"`
	Status int    `json:"status"`
	// Guard is robots_guard's X-Robots-Guard header: why it refused.
	Guard string `json:"guard,omitempty"`
}

// CrawlSite reads a running site from base, breadth first from its home
// page, as a polite crawler: it reads robots.txt first and never requests
// a path that robots.txt disallows for it (so it never walks into a
// robots_guard trap or earns strikes), keeps the Crawl-delay, waits out a
// 429 once, and stops when the site blocks it. Only text/html answers are
// parsed.
func CrawlSite(base string, o CrawlOptions) (*Crawl, error) {
	u, err := url.Parse(strings.TrimSuffix(base, "/"))
	if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("--url %q is not an absolute http(s) URL", base)
	}
	if o.MaxPages <= 0 {
		o.MaxPages = 1000
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Sleep == nil {
		o.Sleep = time.Sleep
	}
	c := &Crawl{Site: &Site{Pages: map[string]*Page{}}}
	get := func(p string) (*http.Response, error) {
		req, err := http.NewRequest("GET", u.Scheme+"://"+u.Host+p, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("User-Agent", UserAgent)
		c.Requests++
		return o.Client.Do(req)
	}

	// robots.txt first. RFC 9309: 4xx means no rules; 5xx or no answer
	// means "disallow everything", so there is nothing to crawl.
	resp, err := get("/robots.txt")
	if err != nil {
		return nil, fmt.Errorf("reading robots.txt: %v", err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, policy.MaxSize))
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		c.Robots = body
	case resp.StatusCode >= 500:
		return nil, fmt.Errorf("reading robots.txt: %s: RFC 9309 treats the whole site as disallowed", resp.Status)
	}
	rules := policy.Compile(policy.Parse(c.Robots))
	tokens := []string{Token}
	delay := o.Delay
	if delay == 0 {
		delay = time.Second
		if cd := rules.Match(tokens, "/").CrawlDelay; cd > 0 {
			delay = cd
		}
	}
	// The enforcer's own reading (both group readings, its departures), so
	// that the audit never asks for what robots_guard would refuse.
	allowed := func(p string) bool {
		t, err := policy.ParseTarget(p)
		return err == nil && rules.MatchTarget(tokens, &t).Allowed
	}

	queue := []string{"/"}
	seen := map[string]bool{"/": true}
	report := func(p string) {
		if o.Progress != nil {
			o.Progress(Progress{Read: len(c.Site.Pages), Queued: min(len(queue), o.MaxPages-len(c.Site.Pages)), Refused: len(c.Refusals), Path: p})
		}
	}
	first := true
	for len(queue) > 0 {
		if len(c.Site.Pages) >= o.MaxPages {
			c.Site.Unread = len(queue)
			break
		}
		p := queue[0]
		queue = queue[1:]
		if !allowed(p) {
			c.Disallowed++ // the home page itself can be disallowed
			continue
		}
		if !first && delay > 0 {
			o.Sleep(delay)
		}
		first = false
		resp, err := get(p)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			resp.Body.Close()
			c.Refusals = append(c.Refusals, Refusal{Path: p, Status: resp.StatusCode, Guard: resp.Header.Get("X-Robots-Guard")})
			o.Sleep(retryAfter(resp.Header.Get("Retry-After"), delay))
			if resp, err = get(p); err != nil {
				return nil, err
			}
		}
		if refused(resp.StatusCode) {
			resp.Body.Close()
			r := Refusal{Path: p, Status: resp.StatusCode, Guard: resp.Header.Get("X-Robots-Guard")}
			c.Refusals = append(c.Refusals, r)
			report(p)
			if r.Guard == "blocked_client" || r.Guard == "trap" {
				c.Stopped = fmt.Sprintf("the site blocked this client at %s (X-Robots-Guard: %s)", p, r.Guard)
				break
			}
			continue
		}
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/html") {
			resp.Body.Close()
			if c.NotPages == 0 {
				c.FirstNotPage = fmt.Sprintf("%s answered %s with Content-Type %q", p, resp.Status, ct)
			}
			c.NotPages++
			report(p)
			continue
		}
		page, err := ParsePage(p, u.Host, io.LimitReader(resp.Body, 8<<20))
		resp.Body.Close()
		if err != nil {
			report(p)
			continue
		}
		c.Site.Pages[p] = page
		for _, l := range page.Links {
			t, _, _ := strings.Cut(l.Target, "#")
			if seen[t] {
				continue
			}
			seen[t] = true
			if !allowed(t) {
				c.Disallowed++
				continue
			}
			queue = append(queue, t)
		}
		report(p)
	}
	return c, nil
}

func refused(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusTooManyRequests
}

// retryAfter reads a Retry-After of seconds, bounded to a minute; else
// def.
func retryAfter(v string, def time.Duration) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, time.Minute)
	}
	return max(def, time.Second)
}
