package source

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robotsguard/robotsguard/upstream"
)

// Carried is the last robots.txt fetched from one URL (with one Host and
// header set), shared by the sources that fetch it and kept across config
// reloads: Caddy provisions the new config before it cleans up the old
// one, so a reload starts from the rules in force instead of none while
// the new config fetches its own. Its zero value holds none.
type Carried struct {
	mu         sync.Mutex
	data       []byte // nil when none is known
	file       fileStamp
	modTime    time.Time
	validators upstream.Validators
}

// Destruct implements caddy.Destructor; Carried holds no resources.
func (*Carried) Destruct() error { return nil }

// Pool is where a remote source finds the robots.txt carried from an
// earlier configuration: Join returns the Carried robots.txt that the
// sources fetching the same thing share (see [Key]), and Leave gives back
// this source's share of it.
type Pool interface {
	Join() *Carried
	Leave()
}

// ownPool carries nothing across reloads.
type ownPool struct{}

func (ownPool) Join() *Carried { return &Carried{} }
func (ownPool) Leave()         {}

func (c *Carried) store(data []byte, file fileStamp, modTime time.Time, v upstream.Validators) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.data, c.file, c.modTime, c.validators = data, file, modTime, v
}

func (c *Carried) load() (data []byte, file fileStamp, modTime time.Time, v upstream.Validators) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.data, c.file, c.modTime, c.validators
}

// Key names what a fetch gets: the URL, the Host header and the header
// fields; sources with the same key share their [Carried] robots.txt.
func Key(url, host string, header map[string]string) string {
	var b strings.Builder
	b.WriteString("robots_guard/upstream\n" + url + "\n" + host)
	for _, name := range slices.Sorted(maps.Keys(header)) {
		b.WriteString("\n" + http.CanonicalHeaderKey(name) + ": " + header[name])
	}
	return b.String()
}
