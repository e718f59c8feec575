package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsguard/robotsguard/enforce"
)

// adminTimeout bounds an operator's request (a listing, an unblock), which
// may take many round trips.
const adminTimeout = 10 * time.Second

// Blocked lists the clients blocked at now in the zone, across the fleet:
// the records in the zone's index of blocks (pruned of ended ones as it
// goes), read back from Redis.
func (s *Store) Blocked(now time.Time) ([]enforce.BlockedClient, error) {
	ctx, cancel := context.WithTimeout(s.ctx, adminTimeout)
	defer cancel()
	t := now.UnixNano()
	ms := strconv.FormatInt(t/1e6, 10)
	if err := s.client.ZRemRangeByScore(ctx, s.index, "-inf", "("+ms).Err(); err != nil {
		return nil, err
	}
	ids, err := s.client.ZRangeByScore(ctx, s.index, &redis.ZRangeBy{Min: ms, Max: "+inf"}).Result()
	if err != nil {
		return nil, err
	}
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, s.base+id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []enforce.BlockedClient
	for i, id := range ids {
		r, ok := parseRef(id)
		h := cmds[i].Val()
		if !ok || len(h) == 0 {
			continue
		}
		rec, err := decodeRecord(h)
		if err != nil {
			return nil, fmt.Errorf("record %s: %v", id, err)
		}
		entry := func(token string, st *enforce.State) enforce.BlockedClient {
			p := r.Prefix
			b := enforce.BlockedClient{Prefix: p, IP: enforce.PrefixString(p), Token: token, Until: time.Unix(0, st.BlockedUntil),
				Offenses: int(st.Offenses), Reason: st.Why, ReadRobots: rec.Addr.RobotsAt != 0, DryRun: r.Dry}
			switch {
			case r.crawler():
				b.Prefix, b.IP, b.ReadRobots = r.Net, enforce.PrefixString(r.Net), false
				b.Crawler = enforce.Crawler{Kind: r.Kind, Name: rec.Name}.Label()
				if r.Kind == enforce.CrawlerVerified {
					b.IP = enforce.EveryAddress
				}
			case r.Ident != 0 && len(rec.Tokens) > 0:
				b.Crawler = enforce.Crawler{Kind: enforce.CrawlerVerified, Name: rec.Tokens[0].Name}.Label()
			}
			return b
		}
		if rec.Addr.Blocked(t) {
			out = append(out, entry("", &rec.Addr))
		}
		for j := range rec.Tokens {
			if st := &rec.Tokens[j].State; st.Blocked(t) {
				out = append(out, entry(rec.Tokens[j].Name, st))
			}
		}
	}
	enforce.SortBlocked(out)
	return out, nil
}

// Unblock lifts every block of the zone's records whose address prefix
// overlaps p, across the fleet, and forgets their strikes and offences, as
// [enforce.MemoryStore.Unblock] does: the crawlers' of the networks that
// overlap p too, and a verified crawler's that p holds an address of; the
// other instances drop them from their caches. It returns how many blocks
// were in force. It scans the zone's keys, so it takes a while on a large
// zone.
func (s *Store) Unblock(p netip.Prefix, now time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(s.ctx, adminTimeout)
	defer cancel()
	p = p.Masked()
	var ids, identities []string
	seen := map[uint64]bool{}
	err := s.scan(ctx, func(key string) {
		id := strings.TrimPrefix(key, s.base)
		r, ok := parseRef(id)
		if !ok || !r.overlaps(p) {
			return
		}
		ids = append(ids, id)
		if r.Ident != 0 && !r.crawler() && !seen[r.Ident] {
			seen[r.Ident] = true
			for _, dry := range []bool{false, true} {
				identities = append(identities, ref{Ident: r.Ident, Kind: enforce.CrawlerVerified, ID: r.Ident, Dry: dry}.String())
			}
		}
	})
	if err != nil {
		return 0, err
	}
	ids = append(ids, identities...)
	lifted := 0
	nowArg := strconv.FormatInt(now.UnixNano(), 10)
	for _, id := range ids {
		n, err := unblockScript.Run(ctx, s.client, []string{s.base + id}, nowArg).Int()
		if err != nil {
			return lifted, err
		}
		lifted += n
		if err := s.client.ZRem(ctx, s.index, id).Err(); err != nil {
			return lifted, err
		}
	}
	if s.cache != nil {
		s.cache.invalidate(p, identities)
	}
	msg, _ := json.Marshal(event{Op: "unblock", From: s.id, Zone: s.zone, Prefix: p.String(), IDs: identities})
	if err := s.client.Publish(ctx, s.channel, msg).Err(); err != nil {
		return lifted, err
	}
	return lifted, nil
}

// Counts returns the records of the zone in Redis and the states blocked
// at now, for metrics.
func (s *Store) Counts(now time.Time) (tracked, blocked int, err error) {
	if tracked, err = s.count(); err != nil {
		return 0, 0, err
	}
	b, err := s.Blocked(now)
	return tracked, len(b), err
}

// count counts the zone's records.
func (s *Store) count() (int, error) {
	ctx, cancel := context.WithTimeout(s.ctx, adminTimeout)
	defer cancel()
	n := 0
	err := s.scan(ctx, func(string) { n++ })
	return n, err
}

// scan calls f for every record key of the zone, on every primary of a
// cluster.
func (s *Store) scan(ctx context.Context, f func(key string)) error {
	match := globEscape(s.base) + "{*"
	var mu sync.Mutex
	one := func(ctx context.Context, c redis.Cmdable) error {
		it := c.Scan(ctx, 0, match, 1000).Iterator()
		for it.Next(ctx) {
			mu.Lock()
			f(it.Val())
			mu.Unlock()
		}
		return it.Err()
	}
	if cc, ok := s.client.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return one(ctx, c) })
	}
	return one(ctx, s.client)
}

// globEscape escapes the characters SCAN's MATCH pattern gives a meaning.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
