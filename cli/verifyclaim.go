package cli

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/robotsguard/robotsguard/uaclass"
	"github.com/robotsguard/robotsguard/upstream"
)

// claimChecker answers "caddy robots classify --verify ADDR": what the
// site's lists of IP ranges make of a claim from ADDR.
type claimChecker struct {
	ip    netip.Addr
	lists map[string][]*uaclass.RangeList
	now   time.Time
}

// claimCheck is the verification of one classify line.
type claimCheck struct {
	Address string `json:"address"`
	// Verdict is verified, impostor, unverified, dns (reverse DNS
	// decides) or none.
	Verdict string `json:"verdict"`
	// List is the list that holds the address; Lists, when none does,
	// those checked (a list not loaded is left out).
	List  *listInfo  `json:"list,omitempty"`
	Lists []listInfo `json:"lists,omitempty"`
	Note  string     `json:"note,omitempty"`
}

// listInfo says where a list came from and how old it is.
type listInfo struct {
	Source   string `json:"source"`
	From     string `json:"from"` // file, url or storage
	Format   string `json:"format"`
	Prefixes int    `json:"prefixes"`
	Created  string `json:"created,omitempty"` // the list's creationTime
	Fetched  string `json:"fetched"`           // when it was read or fetched
	Age      string `json:"age"`               // since created, else since fetched
}

func newClaimChecker(ctx context.Context, site Site, addr string, stderr io.Writer) (*claimChecker, error) {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return nil, fmt.Errorf("--verify: %q is not an IP address", addr)
	}
	lists, failed, err := site.Ranges(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range failed {
		fmt.Fprintf(stderr, "ranges: %s (using the copy in storage, if any)\n", f)
	}
	return &claimChecker{ip: ip.Unmap(), lists: lists, now: time.Now()}, nil
}

func (c *claimChecker) check(r uaclass.Result) *claimCheck {
	res := &claimCheck{Address: c.ip.String(), Verdict: "none"}
	if r.Bot == nil {
		return res
	}
	lists := c.lists[r.Bot.Token]
	v, by, dns := uaclass.ListVerdict(r.Bot, lists, c.ip)
	res.Verdict = v.String()
	switch {
	case by != nil:
		info := c.info(by)
		res.List = &info
	case dns:
		res.Verdict = "dns"
		res.Note = "not in the lists; the server checks it by reverse DNS"
	case v == uaclass.Unverified:
		res.Note = "no list of the crawler's ranges is loaded: the server refuses the claim as unverified"
	}
	if by == nil {
		for _, l := range lists {
			if l != nil {
				res.Lists = append(res.Lists, c.info(l))
			}
		}
	}
	return res
}

func (c *claimChecker) info(l *uaclass.RangeList) listInfo {
	info := listInfo{Source: l.Source, From: "file", Format: l.Format, Prefixes: len(l.Prefixes), Fetched: l.Read.UTC().Format(time.RFC3339)}
	switch {
	case l.Cached:
		info.From = "storage"
	case upstream.IsURL(l.Source):
		info.From = "url"
	}
	since := l.Read
	if !l.Created.IsZero() {
		info.Created, since = l.Created.Format(time.RFC3339), l.Created
	}
	info.Age = c.now.Sub(since).Round(time.Second).String()
	return info
}
