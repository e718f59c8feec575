// Package enforce is robotsguard's judgement: given who is asking (package
// uaclass) and what the site's robots.txt says (package policy), [Engine]
// decides per request whether to serve, refuse, slow down or shut out, and
// explains the [Decision] in terms one log line can carry.
//
// Per-client state (token buckets, strikes, blocks, robots.txt-fetched
// marks) lives behind the small [Store] interface: the engine describes each
// change as an [Op] value, and the store applies it with [State.Apply] under
// its own lock, so a store shared by several Caddy instances can be added
// without touching the decision logic. [MemoryStore] is the bounded,
// sharded, in-process store. Time comes from an injectable clock. The
// package does not import Caddy.
package enforce
