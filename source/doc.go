// Package source is where the rules come from: the site's robots.txt file,
// watched and settled, or the application's robots.txt refreshed from
// upstream (package upstream does the fetches). A [Source] hands out
// immutable compiled [Snapshot] values, read with one atomic load and no
// lock. A changed file replaces the rules in force only once it has
// settled; a file that goes missing, or is unreadable, invalid or cut
// short, keeps the last good rules (an application's 4xx answer clears
// them, as RFC 9309 says); of a larger file, only the first
// policy.MaxSize bytes are read.
//
// The package does not import Caddy: the state carried across
// configuration reloads ([Carried]) is joined through a [Pool] the caller
// provides, and the counters it keeps are [Counters] function values.
package source
