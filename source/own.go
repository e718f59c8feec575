package source

import (
	"net/http"
	"time"

	"github.com/robotsguard/robotsguard/upstream"
)

// The site's own robots.txt: with no robots option, the rules are those of
// the robots.txt the site serves, what the handler after robots_guard in
// the site's chain (a file_server, a reverse_proxy, an application)
// answers for GET /robots.txt. It is read as a robots URL is (package
// upstream's fetch, with its bounds of size and time, conditional
// requests, the last good copy kept, a 4xx meaning none), through a
// transport that asks that handler in process instead of the network.

// OwnURL is the URL the fetches of the site's own robots.txt are made
// for; its transport answers them in process, whatever the host.
const OwnURL = "http://robots-guard.internal/robots.txt"

// OwnFrom names the site's own robots.txt in the logs.
const OwnFrom = "the site's own /robots.txt (what the handler after robots_guard answers)"

// NewOwn returns a Source of the site's own robots.txt, which transport
// answers, fetched again every refresh (0: DefaultRefresh), with no rules
// installed until [Source.Run] starts the fetches.
func NewOwn(transport http.RoundTripper, refresh time.Duration, o Options) *Source {
	f, err := upstream.New(upstream.Options{URL: OwnURL, Transport: transport})
	if err != nil {
		panic(err) // OwnURL is a valid URL
	}
	if refresh <= 0 {
		refresh = DefaultRefresh
	}
	o.From = OwnFrom
	s := NewRemote(f, refresh, nil, o)
	s.Seed()
	return s
}
