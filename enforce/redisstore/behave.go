package redisstore

import (
	"context"
	_ "embed"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence/behaviour"
)

// Behaviour evidence for a fleet (issue 37): the Store is an
// [enforce.BehaviourStore]. A browser's navigation runs behave.lua, which
// adds it to the summaries of its group and of its client
// (behaviour.Summary.Observe in Lua), then apply.lua's peek of the
// address, in one script: one round trip, as the peek alone was. Each
// summary is a string key of its own with the address record's hash tag
// (so one script reaches it on a cluster): "b" and the record's ID, "~" and
// the fingerprint's hash for a client; "b", the tag, "g", the group's
// network, "~" and the hash for a group (the group's network within the
// tag: a crawler network longer than /24, /48 splits the group). A
// summary takes 56 bytes and 8 per target of the window; it expires two
// windows and a minute after its last navigation (80 s by default), or a
// minute after its hold ends or its free burst (behaviour.BurstGap) is
// forgotten (a hold's length after it), so that under maxmemory-policy
// volatile-ttl Redis evicts the summaries of a flood first, then the holds
// and bursts, and the blocks last.

//go:embed behave.lua
var behaveSource string

// behaveScript is behave.lua, then apply.lua as a function whose reply
// gets the verdict.
var behaveScript = redis.NewScript(behaveSource + "\nlocal function b_apply()\n" + applySource + "\nend\nreturn b_reply(b_apply())\n")

// Behave implements [enforce.BehaviourStore]: n's summaries and op on k
// in one round trip. ok is false while Redis cannot be reached.
func (s *Store) Behave(k enforce.Key, now time.Time, op enforce.Op, n *enforce.Navigation) (enforce.Outcome, behaviour.Verdict, bool) {
	t := now.UnixNano()
	if !k.Net.IsValid() {
		k.Net = enforce.Network(k.Prefix, s.v4, s.v6)
	}
	if s.down.Load() {
		return enforce.Outcome{}, behaviour.Verdict{}, false
	}
	if s.cache != nil {
		// A blocked client is refused whatever it does: its flood costs
		// no round trip.
		if out, ok := s.cache.lookup(k, t, op, s.ttl, false); ok {
			return out, behaviour.Verdict{}, true
		}
	}
	out, v, rp, err := s.behave(k, t, op, n)
	if err != nil {
		s.failed(err)
		return enforce.Outcome{}, behaviour.Verdict{}, false
	}
	s.settle(k, op, t, out, rp, nil)
	return out, v, true
}

// behave runs behaveScript.
func (s *Store) behave(k enforce.Key, t int64, op enforce.Op, n *enforce.Navigation) (enforce.Outcome, behaviour.Verdict, reply, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	s.trips.Add(1)
	group, client := s.behaviourKeys(k, n)
	keys := append(s.keys(k, op), group, client)
	b := &n.Request
	args := append(s.args(k, t, op), b.Site, b.User, bit(b.Conditional), bit(b.Gestures), int64(b.Target), bit(b.Disallowed))
	for _, c := range [...]*behaviour.Config{&n.Client, &n.GroupConfig, &n.Member} {
		args = append(args, int64(c.Window), c.Pages, c.Disallowed, int64(c.Hold))
	}
	res, err := behaveScript.Run(ctx, s.client, keys, args...).Slice()
	if err != nil {
		return enforce.Outcome{}, behaviour.Verdict{}, reply{}, err
	}
	if len(res) < 1 {
		return enforce.Outcome{}, behaviour.Verdict{}, reply{}, errors.New("redisstore: short reply from the script")
	}
	bits, ok := res[len(res)-1].(int64)
	if !ok {
		return enforce.Outcome{}, behaviour.Verdict{}, reply{}, errors.New("redisstore: bad verdict from the script")
	}
	out, rp, err := decodeReply(res[:len(res)-1])
	return out, decodeVerdict(bits), rp, err
}

// decodeVerdict reads behave.lua's verdict.
func decodeVerdict(bits int64) behaviour.Verdict {
	return behaviour.Verdict{Held: bits&1 != 0, Fired: bits&2 != 0, Counted: bits&4 != 0,
		Pages: int(bits >> 3 & 0xff), Disallowed: int(bits >> 11 & 0xff), Navs: int(bits >> 19 & 0xffff)}
}

// behaviourKeys returns the keys of n's group's and client's summaries.
func (s *Store) behaviourKeys(k enforce.Key, n *enforce.Navigation) (group, client string) {
	id := addrRef(k).String()
	fp := strconv.FormatUint(n.Print, 16)
	tag := id[:strings.IndexByte(id, '}')+1]
	dry := ""
	if k.DryRun {
		dry = ":dry"
	}
	return s.base + "b" + tag + "g" + n.Group.String() + "~" + fp + dry, s.base + "b" + id + "~" + fp
}

func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Interface guard
var _ enforce.BehaviourStore = (*Store)(nil)
