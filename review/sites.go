package review

import (
	"maps"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// Sites holds the live statistics of a zone's sites, each apart (a zone,
// the state clients earn, may be several sites', each with its robots.txt:
// no row of the review page mixes two), and the site whose decision made
// each of the zone's blocks, for the blocked lists. It is safe for
// concurrent use.
type Sites struct {
	mu     sync.Mutex
	stats  map[string]*Stats
	blocks map[blockKey]string
}

type blockKey struct {
	prefix netip.Prefix
	token  string
}

// MaxBlockSites bounds how many blocks' sites Sites remembers; past it,
// it forgets them all, and their rows name the zone.
const MaxBlockSites = 100000

// NewSites returns an empty Sites.
func NewSites() *Sites {
	return &Sites{stats: map[string]*Stats{}, blocks: map[blockKey]string{}}
}

// Of returns the live statistics of a site, made at its first use.
func (s *Sites) Of(site string) *Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stats[site] == nil {
		s.stats[site] = New(Options{Clock: 100 * time.Millisecond})
	}
	return s.stats[site]
}

// Names returns the sites that have statistics, in name order.
func (s *Sites) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.stats))
}

// Close stops every site's statistics' clock.
func (s *Sites) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stats {
		st.Close()
	}
}

// BlockedOn notes that site's decision blocked a client: its whole
// address (prefix) or its token there.
func (s *Sites) BlockedOn(prefix netip.Prefix, token, site string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.blocks) >= MaxBlockSites {
		clear(s.blocks)
	}
	s.blocks[blockKey{prefix, ""}], s.blocks[blockKey{prefix, token}] = site, site
}

// SiteOf names the site of a block of prefix (and token, "" for the whole
// address): the one whose decision made it, else the zone's only site,
// else the zone.
func (s *Sites) SiteOf(prefix netip.Prefix, token, zone string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if site := s.blocks[blockKey{prefix, token}]; site != "" {
		return site
	}
	if len(s.stats) == 1 {
		for site := range s.stats {
			return site
		}
	}
	return zone
}
