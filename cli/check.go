package cli

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/tlsprint"
	"github.com/robotsguard/robotsguard/uaclass"
)

func checkCommand(env *Caddy) *cobra.Command {
	c := &cobra.Command{
		Use:   "check [--config FILE [--site NAME]] [--robots FILE] --user-agent UA URL... | check --batch",
		Short: "Says whether a User-Agent may fetch URLs, as the robots_guard handler decides",
		Long: `
Says for each URL whether the User-Agent may fetch it, with the handler's
own decision: the same reading of the request (class, the evidence against
a browser's claim, the target and its spellings, the canonical URL), the
same engine, on the robots.txt the handler serves. With --config (a
Caddyfile or JSON; --site picks one of several robots_guard handlers by
host, server name or listen address) it uses the site's settings: its bot
entries, block_class, traps and allow lists; without, the defaults. A
robots_guard without a robots line enforces the site's own robots.txt:
check then runs the config in this process (loopback ports, no admin API)
and reads what the handler after robots_guard answers for GET /robots.txt.
UA may be a product token (Googlebot/2.1) or a whole User-Agent.

What only a server knows of a request comes from flags, and check says on
standard error which it assumed: --ip (the client address), --header
(fields besides the User-Agent; without any, a browser's claim is judged by
its User-Agent alone), --ja4 (the TLS fingerprint; unknown, no evidence,
without it). A crawler's claim is not verified (no DNS lookups offline).

Output: one line per URL, tab-separated: "allowed", "disallowed",
"feed-only" (a feed reader the "*" group disallows: served only a feed) or
"refused" (a refusal for another reason: trap, blocked_class, ...), the URL,
and why in parentheses (the group and the rule that decided, or the
reason; where mainstream readings of the file's groups differ, both
answers). With --batch, reads JSON Lines {"robots": "...", "ua": "...",
"url": "..."} ("robots" may be left out with --config or --robots) and
writes one JSON object per line: url, allowed, reason, class, group, line,
rule; a bad or over-long (over 1 MB) line gets {"error": "..."} and the
batch goes on.

Exit status: 0 when every URL was answered, allowed or not; 1 when a flag,
the config or the robots.txt file is wrong or unreadable.`,
		Example: `  caddy robots check --robots robots.txt --user-agent Googlebot/2.1 https://example.com/private/x
  caddy robots check --config Caddyfile --site shop.example.com -A GPTBot https://shop.example.com/x
  caddy robots check --batch < queries.jsonl`,
	}
	c.Flags().StringP("robots", "r", "", "robots.txt file (default: the site's robots.txt in --config: its file, or its application's URL, fetched once)")
	c.Flags().StringP("user-agent", "A", "", "product token or User-Agent string")
	c.Flags().String("ip", "192.0.2.1", "client IP the requests come from (for allow_ip)")
	c.Flags().StringArrayP("header", "H", nil, `header field the requests send besides the User-Agent ("Sec-Fetch-Mode: navigate"); repeatable`)
	c.Flags().String("ja4", "", "JA4 fingerprint of the requests' TLS handshake")
	c.Flags().Bool("batch", false, "read JSON Lines from standard input")
	siteFlags(c)
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		site, err := siteOf(env, cmd)
		if err != nil {
			return err
		}
		ipFlag, _ := cmd.Flags().GetString("ip")
		ip, err := netip.ParseAddr(ipFlag)
		if err != nil {
			return fmt.Errorf("--ip: %v", err)
		}
		// The site's robots.txt as its handler reads it (a file, the
		// application's URL fetched once, or without a robots line what
		// the handler after it answers), unless --robots names one.
		file, _ := cmd.Flags().GetString("robots")
		config, _ := cmd.Flags().GetString("config")
		var data []byte
		from := file
		switch {
		case file != "":
			data, err = os.ReadFile(file)
		case config != "" && site.OwnRobots():
			adapter, _ := cmd.Flags().GetString("adapter")
			name, _ := cmd.Flags().GetString("site")
			data, from, err = ownRobots(cmd.Context(), env, config, adapter, name, firstHost(args))
		case config != "":
			from = "the site's robots line"
			data, err = site.Robots(cmd.Context())
		case batch(cmd):
			from = "none (no --robots, no --config): each line's own robots"
		default:
			// Never an "allowed" about no rules (issue 39): the URLs'
			// site's robots.txt (site.go).
			data, from, err = fetchRobots(cmd.Context(), args)
		}
		if err != nil {
			return err
		}
		ck, err := NewChecker(site, ip)
		if err != nil {
			return err
		}
		if ck.Header, err = headerFlags(cmd); err != nil {
			return err
		}
		ck.JA4, _ = cmd.Flags().GetString("ja4")
		fmt.Fprintf(cmd.ErrOrStderr(), "check: robots.txt: %s\ncheck assumes: %s\n", from, strings.Join(ck.Assumptions(), "; "))
		if batch(cmd) {
			return ck.batch(cmd.InOrStdin(), cmd.OutOrStdout(), data)
		}
		ua, _ := cmd.Flags().GetString("user-agent")
		if ua == "" || len(args) == 0 {
			return errors.New("usage: caddy robots check [--config FILE] [--robots FILE] --user-agent UA URL [URL ...]")
		}
		return ck.urls(cmd.OutOrStdout(), data, ua, args)
	})
	return c
}

// Checker answers `caddy robots check` as the site's robots_guard handler
// does: it prepares the handler's classifier and engine from its settings
// and calls the handler's own decision on the robots.txt the handler
// serves (the site's file with the handler's additions). A Checker is not
// safe for concurrent use.
type Checker struct {
	// Header holds the header fields the requests send besides the
	// User-Agent (--header), and JA4 their TLS fingerprint (--ja4).
	Header http.Header
	JA4    string

	site Site
	ip   netip.Addr
	now  time.Time
	last string
	p    *policy.Policy
	// owner is the number of the site's own lines in the served file;
	// the lines after them are robots_guard's (policy.Serve).
	owner int
}

// NewChecker prepares site and returns a Checker whose requests come from
// ip.
func NewChecker(site Site, ip netip.Addr) (*Checker, error) {
	ck := &Checker{site: site, ip: ip, now: time.Unix(1_800_000_000, 0)}
	// Each query is answered 48 hours after the one before, so that no
	// rate, strike or block of one query touches the next.
	now := func() time.Time {
		ck.now = ck.now.Add(48 * time.Hour)
		return ck.now
	}
	if err := site.Prepare(now); err != nil {
		return nil, err
	}
	return ck, nil
}

// Policy returns the policy the handler would enforce for the site's
// robots.txt body, compiling it once per body.
func (ck *Checker) Policy(robots []byte) *policy.Policy {
	if ck.p == nil || string(robots) != ck.last {
		served, owner := policy.Serve(robots, ck.site.Additions(policy.Parse(robots)))
		ck.p, ck.last, ck.owner = policy.Compile(policy.Parse(served)), string(robots), owner
	}
	return ck.p
}

// CheckResult is one answer of `caddy robots check`, one line of its
// --batch output.
type CheckResult struct {
	URL     string `json:"url,omitempty"`
	Allowed bool   `json:"allowed"`
	// Reason is the handler's reason: "disallowed", "departure", "trap",
	// "blocked_class", "bad_agent", "allowlisted", "robots_txt", ...;
	// "feed" for a feed reader's request that is served only if the
	// response is a feed; empty for an ordinary allowed request.
	Reason string `json:"reason,omitempty"`
	Class  string `json:"class"`
	Group  string `json:"group"`
	Line   int    `json:"line"`
	Rule   string `json:"rule,omitempty"`
	// Added is set when the rule is one robots_guard appends to the
	// site's file (a trap, a blocked class), after its own lines.
	Added bool `json:"added,omitempty"`
	// Canonical is the canonical URL by the file's QueryParam, Domain and
	// IndexPage fields, when it has any.
	Canonical string `json:"canonical,omitempty"`
	// Readings holds the answers of Google's and of protego/temoto's
	// reading of the file's groups, when they differ.
	Readings map[string]ReadingResult `json:"readings,omitempty"`
	// Usage is the AI usage preference that applies, when the file states
	// any (Content-Usage, Content-Signal) and robots.txt binds the client.
	Usage *UsageCheck `json:"usage,omitempty"`
}

// UsageCheck is the AI usage preference that applies to a URL, and why.
type UsageCheck struct {
	// Purposes are the client's purposes from the bot database (none for
	// a client of unknown purpose, which no preference refuses).
	Purposes []string `json:"purposes"`
	// Preferences is what the client's group states for the URL, e.g.
	// "train-ai=n, search=y", or "unknown".
	Preferences string `json:"preferences"`
	// Lines are the lines that decide it, e.g. "line 4: Content-Usage:
	// train-ai=n".
	Lines []string `json:"lines,omitempty"`
	// Refused lists the categories of the client's purposes that the
	// preferences refuse (in both readings of the groups), or is empty.
	Refused string `json:"refused,omitempty"`
	// Ambiguous is set when the two readings of the file's groups refuse
	// different categories.
	Ambiguous bool `json:"ambiguous,omitempty"`
}

// usageOf answers which AI usage preference applies to the request.
func usageOf(p *policy.Policy, req *enforce.Request) *UsageCheck {
	if !p.HasUsage() || req.UA.Class == uaclass.Browser {
		return nil
	}
	purposes := req.UA.Purposes()
	r := p.MatchUsage(req.UA.Tokens, &req.Target, purposes.Usage())
	if r.Agent == "" {
		return nil
	}
	u := &UsageCheck{Purposes: purposes.List(), Preferences: r.Prefs.String(), Ambiguous: r.Ambiguous}
	if u.Purposes == nil {
		u.Purposes = []string{}
	}
	for _, l := range r.Lines {
		if l != nil {
			u.Lines = append(u.Lines, fmt.Sprintf("line %d: %s", l.Line, l))
		}
	}
	if r.Refused != 0 {
		u.Refused = r.Refused.String()
	}
	return u
}

// describe says which preference applies and what it means for the
// client.
func (u *UsageCheck) describe() string {
	out := "AI usage " + u.Preferences
	if len(u.Lines) > 0 {
		out += " by " + strings.Join(u.Lines, " and ")
	}
	switch {
	case len(u.Purposes) == 0:
		out += "; purpose unknown: judged by Allow/Disallow only"
	case u.Refused != "":
		out += "; its purposes " + strings.Join(u.Purposes, ",") + ": " + u.Refused + " refused"
	default:
		out += "; its purposes " + strings.Join(u.Purposes, ",") + ": none refused"
	}
	if u.Ambiguous {
		out += " (the readings of the groups differ: refused only what both refuse)"
	}
	return out
}

// ReadingResult is one reading's answer.
type ReadingResult struct {
	Allowed bool   `json:"allowed"`
	Line    int    `json:"line"`
	Rule    string `json:"rule,omitempty"`
}

// Check decides on one URL for ua under the site's robots.txt body
// robots: the request is read as the handler reads it
// (enforce.Reader.Read), with the facts only a server knows taken from the
// Checker (Assumptions), and decided by the handler's engine. It fails
// only for a URL the handler answers 400.
func (ck *Checker) Check(robots []byte, ua, rawURL string) (CheckResult, error) {
	p := ck.Policy(robots)
	r, f := ck.request(ua, rawURL)
	var rd enforce.Reading
	if err := ck.site.Reader().Read(r, &f, p, &rd); err != nil {
		return CheckResult{}, err
	}
	req := &rd.Request
	if len(req.UA.Tokens) == 0 && !strings.ContainsAny(ua, " ();") && policy.ProductToken(ua) != "" {
		// A bare product token names itself, as RFC 9309 reads it: the
		// value of --user-agent, not a User-Agent a client sends.
		req.UA.Tokens = []string{policy.ProductToken(ua)}
	}
	d := ck.site.Reader().Engine.Decide(req, p)
	out := CheckResult{URL: rawURL, Allowed: !d.Enforced(), Reason: string(d.Reason), Class: req.UA.Class.String(), Group: d.Group, Canonical: rd.Canonical}
	if d.Rule != nil {
		out.Line, out.Rule, out.Added = d.Rule.Line, d.Rule.String(), d.Rule.Line > ck.owner
	}
	if d.FeedOnly() {
		out.Reason = string(enforce.ReasonFeed)
	}
	if d.Reason != enforce.ReasonDisallowed {
		out.Usage = usageOf(p, req)
	}
	if req.UA.Class != uaclass.Browser {
		g := p.MatchReading(req.UA.Tokens, &req.Target, policy.GoogleReading)
		s := p.MatchReading(req.UA.Tokens, &req.Target, policy.SplitReading)
		if g.Allowed != s.Allowed {
			out.Readings = map[string]ReadingResult{"google": reading(g), "split": reading(s)}
		}
	}
	return out, nil
}

// request returns the request check decides on for ua and rawURL, and the
// facts only a server knows of it, from the Checker's (see Assumptions):
// GET of the URL's target as written, to its host, from the Checker's IP,
// with the User-Agent and the Checker's header fields, over the URL's
// scheme, with the Checker's TLS fingerprint.
func (ck *Checker) request(ua, rawURL string) (*http.Request, enforce.Facts) {
	r := &http.Request{Method: http.MethodGet, Header: http.Header{}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	for k, v := range ck.Header {
		r.Header[k] = v
	}
	r.Header.Set("User-Agent", ua)
	f := enforce.Facts{ClientIP: ck.ip, URI: policy.TargetOf(rawURL), Scheme: "http", Origin: evidence.Insecure}
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		f.Scheme, r.Host = u.Scheme, u.Host
	}
	if f.Scheme == "https" && len(ck.Header) > 0 {
		// Without header fields check does not know what a browser would
		// send, and judges its claim by the User-Agent alone, as over
		// plain HTTP (where browsers send no Fetch Metadata).
		f.Origin = evidence.Secure
	}
	enforce.Fingerprints{}.Given(&f, ck.JA4)
	return r, f
}

// Assumptions says which facts of a request, which only the server
// knows, check takes from its flags or assumes: the client address, the
// header fields besides the User-Agent, the TLS fingerprint, and the
// verification of a crawler's claim.
func (ck *Checker) Assumptions() []string {
	a := []string{"the requests come from " + ck.ip.String() + " (--ip)"}
	if len(ck.Header) == 0 {
		a = append(a, "they send no header field but the User-Agent, and a browser's claim is judged by its User-Agent alone (--header sends a browser's fields, and judges them over https as the handler does)")
	} else {
		a = append(a, "they send the --header fields; a browser's claim is judged by them over https, as the handler judges it")
	}
	if ck.JA4 == "" {
		a = append(a, "their TLS fingerprint is unknown, which is no evidence (--ja4)")
	} else if s := tlsprint.Lookup(ck.JA4); !s.Known {
		a = append(a, "their TLS fingerprint "+ck.JA4+" is one the table does not know, which is no evidence")
	}
	return append(a, "a crawler's claim is not verified: check looks up no DNS and no published ranges")
}

// batch reports whether check reads JSON Lines (--batch).
func batch(cmd *cobra.Command) bool {
	b, _ := cmd.Flags().GetBool("batch")
	return b
}

// firstHost returns the host of the first URL of args that names one.
func firstHost(args []string) string {
	for _, a := range args {
		if u, err := url.Parse(a); err == nil && u.Host != "" {
			return u.Host
		}
	}
	return ""
}

// headerFlags reads the --header flags ("Name: value").
func headerFlags(cmd *cobra.Command) (http.Header, error) {
	fields, _ := cmd.Flags().GetStringArray("header")
	h := http.Header{}
	for _, f := range fields {
		name, value, ok := strings.Cut(f, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("--header %q: want \"Name: value\"", f)
		}
		if http.CanonicalHeaderKey(name) == "User-Agent" {
			return nil, fmt.Errorf("--header %q: the User-Agent is --user-agent's", f)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

func reading(r policy.Result) ReadingResult {
	out := ReadingResult{Allowed: r.Allowed}
	if r.Rule != nil {
		out.Line, out.Rule = r.Rule.Line, r.Rule.String()
	}
	return out
}

// urls prints one line per URL: the verdict, the URL and why.
func (ck *Checker) urls(w io.Writer, robots []byte, ua string, urls []string) error {
	for _, u := range urls {
		r, err := ck.Check(robots, ua, u)
		if err != nil {
			fmt.Fprintf(w, "refused\t%s\t(400: %v)\n", u, err)
			continue
		}
		verdict := "allowed"
		switch {
		case r.Reason == string(enforce.ReasonDisallowed) || r.Reason == string(enforce.ReasonDeparture):
			verdict = "disallowed"
		case r.Reason == string(enforce.ReasonFeed):
			verdict = "feed-only"
		case !r.Allowed:
			verdict = "refused"
		}
		why := r.reasons()
		if g, ok := r.Readings["google"]; ok {
			s := r.Readings["split"]
			why = append(why, fmt.Sprintf("the readings of the groups differ: Google's %s, protego/temoto's %s; refused only when both disallow", describe(g), describe(s)))
		}
		if r.Usage != nil {
			why = append(why, r.Usage.describe())
		}
		if r.Canonical != "" {
			why = append(why, "canonical "+r.Canonical)
		}
		fmt.Fprintf(w, "%s\t%s\t(%s)\n", verdict, u, strings.Join(why, "; "))
	}
	return nil
}

// reasons says why the handler decides r as it does: the reason in words,
// then the group and the rule that decided. Each names what the handler
// does, for this client: a browser is told that robots.txt does not bind
// people only where that is why it is served.
func (r *CheckResult) reasons() []string {
	var why []string
	browser := r.Class == uaclass.Browser.String()
	switch enforce.Reason(r.Reason) {
	case enforce.ReasonNone:
		if browser {
			return []string{"a browser: robots.txt does not bind people; only a trap or a block refuses one"}
		}
	case enforce.ReasonDisallowed:
	case enforce.ReasonTrap:
		why = append(why, "trap: the served robots.txt disallows it to every client; a request for it blocks the client's whole address (a browser's fetch for another site, such as an image embedded elsewhere, is refused without a block)")
	case enforce.ReasonBlockedClass:
		why = append(why, "blocked_class: block_class shuts out its class, and the served robots.txt disallows the path for it; each request is a strike")
	case enforce.ReasonContentUsage:
		why = append(why, "content_usage: the site's AI usage preferences refuse its purpose")
	case enforce.ReasonDeparture:
		why = append(why, "departure: the reference reading allows it; refused to a client that is not verified, without a strike")
	case enforce.ReasonFeed:
		why = append(why, "a feed reader: served only if the response is a feed (RSS, Atom, JSON Feed), else refused")
	case enforce.ReasonBadAgent:
		return []string{"bad_agent: a User-Agent of a known abusive client, refused on every path with a strike (allow_bad_agents lets it through)"}
	case enforce.ReasonAllowlisted:
		return []string{"allowlisted: allow_ip or allow_token lets it through"}
	case enforce.ReasonRobotsTxt:
		return []string{"robots.txt itself: always served"}
	case enforce.ReasonInvalid:
		return []string{"invalid_request: the target cannot be read, and a bot is refused rather than passed unchecked"}
	default:
		why = append(why, r.Reason)
	}
	group := r.Group
	if group == "" {
		group = "none"
	}
	why = append(why, "group "+group)
	switch {
	case r.Rule != "" && (r.Line == 0 || r.Added):
		why = append(why, "added to the served robots.txt: "+r.Rule)
	case r.Rule != "":
		why = append(why, fmt.Sprintf("line %d: %s", r.Line, r.Rule))
	default:
		why = append(why, "no rule matches")
	}
	return why
}

func describe(r ReadingResult) string {
	verdict := "allows"
	if !r.Allowed {
		verdict = "disallows"
	}
	if r.Rule != "" {
		return fmt.Sprintf("%s by line %d: %s", verdict, r.Line, r.Rule)
	}
	return verdict
}
