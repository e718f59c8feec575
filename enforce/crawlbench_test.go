package enforce

import (
	"net/netip"
	"testing"
	"time"
)

// BenchmarkApplyCrawler measures one hot client's Op on the in-process
// store without its crawler's record and with it (issue 38).
func BenchmarkApplyCrawler(b *testing.B) {
	for _, crawl := range []bool{false, true} {
		name := map[bool]string{false: "address", true: "address+crawler"}[crawl]
		b.Run(name, func(b *testing.B) {
			s := NewMemoryStore(100_000, 0, time.Hour)
			p := netip.MustParsePrefix("192.0.2.1/32")
			k := Key{Prefix: p, Net: netip.MustParsePrefix("192.0.2.0/24"), Token: "examplebot", Crawler: Crawler{Kind: CrawlerToken, ID: 77, Name: "examplebot"}}
			op := Op{Interval: time.Second, Burst: 3, AddrInterval: time.Second / 4, AddrBurst: 12, CheckAddr: true,
				CheckCrawler: crawl, CrawlerInterval: time.Second / 3, CrawlerBurst: 9, Grace: 1, Blockable: true, Strikes: 5, AddrStrikes: 10, CrawlerStrikes: 10,
				Window: time.Minute, Cooldown: time.Hour, MaxCooldown: time.Hour}
			now := time.Unix(1_800_000_000, 0)
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Second)
				s.Apply(k, now, op)
			}
		})
	}
}
