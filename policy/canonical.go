package policy

import (
	"fmt"
	"net/url"
	"strings"
)

// The canonicalisation fields proposed for robots.txt, applied:
//
//	QueryParam: -sid                drop the parameter sid
//	QueryParam: refby=search        keep refby, with the value "search"
//	QueryParam: page                keep page as it is
//	QueryParam: -*                  drop every parameter not listed
//	QueryParam: *                   keep every parameter not listed (the default)
//	QueryParam: -sid, refby=search  several per line
//	Domain: https://example.com/    the canonical scheme and host
//	IndexPage: index.html           "/dir/index.html" is "/dir/"
//
// QueryParam lines before the first group apply to every agent; a group's
// lines apply to the agents it names and override the file-wide ones for the
// same parameter. Domain and IndexPage are file-wide.

// queryRules is a compiled set of QueryParam lines.
type queryRules struct {
	params   map[string]queryRule
	dropRest bool // "-*"
	restSet  bool // "*" or "-*" was given
	set      bool // any QueryParam line at all
}

type queryRule struct {
	drop     bool
	value    string
	hasValue bool
}

// parseQueryParams reads QueryParam values into rules, later values
// overriding earlier ones.
func parseQueryParams(into *queryRules, values []string) error {
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			item = trimSpace(item)
			if item == "" {
				continue
			}
			into.set = true
			drop := strings.HasPrefix(item, "-")
			name, value, hasValue := strings.Cut(strings.TrimPrefix(item, "-"), "=")
			if name == "*" && !hasValue {
				into.dropRest, into.restSet = drop, true
				continue
			}
			if name == "" || drop && hasValue {
				return fmt.Errorf("QueryParam %q: want name, -name, name=value, * or -*", item)
			}
			if into.params == nil {
				into.params = map[string]queryRule{}
			}
			into.params[name] = queryRule{drop: drop, value: value, hasValue: hasValue}
		}
	}
	return nil
}

// apply rewrites a raw query by the rules, keeping the order of the
// parameters that stay.
func (q *queryRules) apply(rawQuery string) string {
	if !q.set || rawQuery == "" {
		return rawQuery
	}
	var kept []string
	for _, pair := range strings.Split(rawQuery, "&") {
		if pair == "" {
			continue
		}
		rawName, _, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			name = rawName
		}
		rule, listed := q.params[name]
		switch {
		case listed && rule.drop, !listed && q.dropRest:
			continue
		case listed && rule.hasValue:
			pair = rawName + "=" + url.QueryEscape(rule.value)
		}
		kept = append(kept, pair)
	}
	return strings.Join(kept, "&")
}

// canon holds a policy's canonicalisation settings.
type canon struct {
	scheme, host string // from Domain; empty when not set
	indexPage    string
	global       queryRules
	// any caches HasCanonical: it is asked on every request.
	any bool
}

// compileCanon reads the file-wide canonicalisation fields. A bad value is
// skipped (the first Domain and IndexPage that are valid count) and
// reported by Lint.
func compileCanon(r *Robots) canon {
	var c canon
	for _, d := range r.Values(KeyDomain) {
		if u, err := url.Parse(d); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
			c.scheme, c.host = u.Scheme, strings.ToLower(u.Host)
			break
		}
	}
	for _, ip := range r.Values(KeyIndexPage) {
		if validIndexPage(ip) {
			c.indexPage = ip
			break
		}
	}
	for _, v := range r.Values(KeyQueryParam) {
		_ = parseQueryParams(&c.global, []string{v}) // bad items are linted
	}
	return c
}

func validIndexPage(s string) bool {
	return s != "" && !strings.ContainsAny(s, "/?#")
}

// HasCanonical reports whether the robots.txt sets any canonicalisation
// field (QueryParam, Domain, IndexPage).
func (p *Policy) HasCanonical() bool { return p.canon.any }

// hasCanonical computes HasCanonical, once, when the policy is compiled.
func (p *Policy) hasCanonical() bool {
	if p.canon.scheme != "" || p.canon.indexPage != "" || p.canon.global.set {
		return true
	}
	for _, g := range p.byToken {
		if g.query.set {
			return true
		}
	}
	return p.global != nil && p.global.query.set
}

// HasDomain reports whether the robots.txt names a valid canonical Domain,
// so that canonical URLs carry a host of the site's choosing rather than the
// request's.
func (p *Policy) HasDomain() bool {
	return p.canon.scheme != ""
}

// Canonical returns the canonical URL of a request for the agent with the
// given tokens (the "*" group's QueryParam lines apply when no group names
// them): scheme and host from Domain, the index page dropped from the path,
// and the query rewritten by QueryParam. target is the request target (path
// and query); scheme and host are the request's. It returns the canonical
// absolute URL, its target, and whether it differs from the request.
func (p *Policy) Canonical(tokens []string, scheme, host, target string) (canonicalURL, canonicalTarget string, changed bool) {
	path, query, hasQuery := strings.Cut(target, "?")
	c := &p.canon
	newScheme, newHost := scheme, strings.ToLower(host)
	if c.scheme != "" {
		newScheme, newHost = c.scheme, c.host
	}
	newPath := path
	if c.indexPage != "" && strings.HasSuffix(path, "/"+c.indexPage) {
		newPath = path[:len(path)-len(c.indexPage)]
	}
	rules := c.global
	if g := p.lookup(tokens); g != nil && g.query.set {
		rules = mergeQueryRules(c.global, g.query)
	}
	newQuery := rules.apply(query)
	canonicalTarget = newPath
	if newQuery != "" {
		canonicalTarget += "?" + newQuery
	}
	changed = newScheme != scheme || newHost != strings.ToLower(host) || newPath != path || newQuery != query || hasQuery && newQuery == ""
	return newScheme + "://" + newHost + canonicalTarget, canonicalTarget, changed
}

// RelativeRef returns the relative reference to a canonical target (as
// Canonical returns it), for the Link header and redirects where
// robots.txt names no Domain: the request's Host header, which any client
// sets, is never echoed into a response that a shared cache may keep.
func RelativeRef(target string) string {
	if strings.HasPrefix(target, "//") || strings.HasPrefix(target, "/\\") {
		// "//x/" alone would be read as a host; "/./" keeps it a path.
		return "/." + target
	}
	return target
}

// mergeQueryRules overlays a group's rules on the file-wide ones.
func mergeQueryRules(global, group queryRules) queryRules {
	out := queryRules{set: true, dropRest: global.dropRest, params: map[string]queryRule{}}
	for k, v := range global.params {
		out.params[k] = v
	}
	for k, v := range group.params {
		out.params[k] = v
	}
	if group.restSet {
		out.dropRest = group.dropRest
	}
	return out
}
