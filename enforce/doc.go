// Package enforce is robotsguard's reading of a request and its judgement.
// [Reader.Read] reads a request, with the [Facts] only the server knows,
// into the one [Request] that is judged: who is asking (package uaclass,
// a Web Bot Auth signature, the evidence against a browser's claim, the
// verification of a crawler's) and what it asks for (the target and its
// spellings); given that and what the site's robots.txt says (package
// policy), [Engine] decides whether to serve, refuse, slow down or shut
// out, and explains the [Decision] in terms one log line can carry.
//
// Clients are tracked by address prefix ([Config].IPv4Prefix and IPv6Prefix)
// and product token, and each address prefix also as a whole, so that moving
// within a prefix or rotating User-Agents dodges nothing. The escalation
// ladder punishes persistence, not concurrency: rate violations within one
// Retry-After window are one strike at most (see [Apply]).
//
// Per-client state (token buckets, strikes, blocks, robots.txt-fetched
// marks) lives behind the small [Store] interface: the engine describes each
// request's change as one [Op] value, and the store applies it with [Apply]
// under its own lock, as one atomic operation on one address's record, so a
// store shared by several Caddy instances can be added without touching the
// decision logic. [MemoryStore] is the bounded, sharded, in-process store;
// it keeps blocks apart from a flood of new addresses. Dry-run state is kept
// apart too ([Key].DryRun). Time comes from an injectable clock. The package
// does not import Caddy.
package enforce
