package e2e

import (
	"net/url"
)

// zone returns the name of the state of the test server's site when the
// guard names no zone: the site's name, ":PORT" for the front site of
// start, which answers any host.
func (s *server) zone() string {
	u, err := url.Parse(s.front)
	if err != nil {
		return ""
	}
	return ":" + u.Port()
}
