package redisstore

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/robotsguard/robotsguard/enforce"
)

// A record's ID names it within the zone: "{SCOPE}REST", with ":dry" for
// dry-run state. SCOPE, the Redis Cluster hash tag, keeps the records one
// request touches in one hash slot, so that one script can apply an Op to
// them: the client's network ("{203.0.113.0/24}", enforce.Key.Net), or a
// verified identity ("{v1f2e…}", whose address state is kept apart:
// enforce.Crawler.Scopes), or "{none}" for a client without an address.
// REST is the address prefix of an address's record
// ("{203.0.113.0/24}203.0.113.7/32"), or "~" with the crawler's kind and
// ID for a crawler's record ("{203.0.113.0/24}~t9f3a…", "{v1f2e…}~v1f2e…").
//
// Before issue 38 an address's record was "{203.0.113.7/32}": such IDs
// still read (old), and an instance moves the blocks it finds under them
// (migrate.go).

// ref is what a record ID says.
type ref struct {
	// Prefix is an address record's prefix.
	Prefix netip.Prefix
	// Net is the network of the scope (zero for a verified identity's or
	// no address).
	Net netip.Prefix
	// Ident is the verified identity of the scope, or 0.
	Ident uint64
	// Kind and ID name a crawler's record (Kind is CrawlerNone for an
	// address's).
	Kind enforce.CrawlerKind
	ID   uint64
	Dry  bool
	// Old marks an ID of the format before issue 38.
	Old bool
}

// crawler reports whether r names a crawler's record.
func (r ref) crawler() bool { return r.Kind != enforce.CrawlerNone }

// kindChars are the crawler kinds in IDs.
var kindChars = [...]byte{enforce.CrawlerVerified: 'v', enforce.CrawlerToken: 't', enforce.CrawlerPrint: 'f'}

// addrRef returns the ref of the record of k's address.
func addrRef(k enforce.Key) ref {
	r := ref{Prefix: k.Prefix, Net: k.Net, Dry: k.DryRun}
	if k.Crawler.Scopes() {
		r.Net, r.Ident = netip.Prefix{}, k.Crawler.ID
	}
	return r
}

// crawlerRef returns the ref of the record of k's crawler.
func crawlerRef(k enforce.Key) ref {
	r := ref{Kind: k.Crawler.Kind, ID: k.Crawler.ID, Dry: k.DryRun}
	switch {
	case k.Crawler.Scopes():
		r.Ident = k.Crawler.ID
	case k.Crawler.Networked():
		r.Net = k.Net
	}
	return r
}

// String returns the record ID of r.
func (r ref) String() string {
	var b strings.Builder
	b.WriteByte('{')
	switch {
	case r.Ident != 0:
		b.WriteByte('v')
		b.WriteString(strconv.FormatUint(r.Ident, 16))
	case r.Net.IsValid():
		b.WriteString(r.Net.String())
	default:
		b.WriteString("none")
	}
	b.WriteByte('}')
	if r.crawler() {
		b.WriteByte('~')
		if int(r.Kind) < len(kindChars) {
			b.WriteByte(kindChars[r.Kind])
		}
		b.WriteString(strconv.FormatUint(r.ID, 16))
	} else if r.Prefix.IsValid() {
		b.WriteString(r.Prefix.String())
	} else if r.Ident != 0 {
		b.WriteString("none") // a verified client without an address
	}
	if r.Dry {
		b.WriteString(":dry")
	}
	return b.String()
}

// parseRef reads a record ID back; ok is false for what no store writes.
func parseRef(id string) (r ref, ok bool) {
	if len(id) < 2 || id[0] != '{' {
		return r, false
	}
	scope, rest, found := strings.Cut(id[1:], "}")
	if !found {
		return r, false
	}
	if rest, r.Dry = strings.CutSuffix(rest, ":dry"); strings.Contains(rest, ":dry") {
		return r, false
	}
	switch {
	case scope == "none":
	case strings.HasPrefix(scope, "v"):
		n, err := strconv.ParseUint(scope[1:], 16, 64)
		if err != nil || n == 0 {
			return r, false
		}
		r.Ident = n
	default:
		p, err := netip.ParsePrefix(scope)
		if err != nil {
			return r, false
		}
		r.Net = p
	}
	switch {
	case rest == "":
		// Before issue 38: "{prefix}" (or "{none}"), the scope the prefix.
		if r.Ident != 0 {
			return r, false
		}
		r.Prefix, r.Net, r.Old = r.Net, netip.Prefix{}, true
		return r, true
	case rest[0] == '~':
		if len(rest) < 3 {
			return r, false
		}
		for k, c := range kindChars {
			if c == rest[1] && c != 0 {
				r.Kind = enforce.CrawlerKind(k)
			}
		}
		n, err := strconv.ParseUint(rest[2:], 16, 64)
		if r.Kind == enforce.CrawlerNone || err != nil {
			return r, false
		}
		r.ID = n
		if r.Kind == enforce.CrawlerVerified && r.Ident != n {
			return r, false
		}
		return r, true
	}
	if rest == "none" && r.Ident != 0 {
		return r, true
	}
	p, err := netip.ParsePrefix(rest)
	if err != nil {
		return r, false
	}
	r.Prefix = p
	return r, true
}

// overlaps reports whether the record's addresses overlap p: an address
// record's prefix, a networked crawler's network. A verified identity's
// crawler record has no addresses of its own (see Store.Unblock).
func (r ref) overlaps(p netip.Prefix) bool {
	if r.crawler() {
		return r.Net.IsValid() && r.Net.Overlaps(p)
	}
	return r.Prefix.Overlaps(p)
}
