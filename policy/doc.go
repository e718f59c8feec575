// Package policy parses, lints, compiles, matches and generates robots.txt
// files as specified by [RFC 9309], following Google's reference parser
// ([google/robotstxt]) where the RFC is silent.
//
// The main types are:
//
//   - [Robots], the parsed, editable model of a robots.txt file: groups of
//     user agents with their Allow and Disallow [Rule]s and other [Field]s,
//     plus file-wide fields such as Sitemap. [Parse] builds it from bytes
//     and never fails; [Robots.Lint] reports what was odd about the input.
//   - [Policy], an immutable, compiled form of a [Robots] that answers
//     [Policy.Match] queries in time proportional to the length of the
//     request target and without allocating. A Policy is safe for
//     concurrent use.
//   - [Robots.Generate], which writes a model back as standard robots.txt
//     text that parses to the same answers.
//   - [RobotsTagRules] and [UsageRules], the X-Robots-Tag and Content-Usage
//     response headers a site states for the resources a pattern matches,
//     with [MergeRobotsTag] and [MergeContentUsage], which add them to a
//     backend's own headers.
//
// The enforcement path is [ParseTarget], which reads a request target once
// (its normal form and the other spellings a backend serves alike), and
// [Policy.MatchTarget]. [Policy.Match] is the answer a polite crawler
// computes.
//
// robotsguard deliberately departs from the reference parser where
// enforcement needs it; each departure is documented where it is
// implemented and pinned by a test:
//
//   - /robots.txt is always allowed (RFC 9309 section 2.2.2).
//   - Request targets and patterns are compared after the same
//     normalisation ([NormalizeTarget]): octets that need no encoding are
//     decoded, hex digits are upper-cased, non-ASCII octets are encoded, a
//     literal "*" or "$" is written %2A or %24, and dot-segments are
//     removed, so that a rogue bot cannot slip past a rule by re-spelling a
//     path.
//   - A product token is the leading run of letters, digits, "_" and "-",
//     lower-cased ([ProductToken]); tokens are never matched by prefix.
//   - For enforcement ([Policy.MatchTarget]), every spelling of a target
//     that a backend serves alike counts, and a query never turns a
//     disallowed resource into an allowed one: a pattern without '?' is
//     also matched against the path alone.
//   - Where a line other than Allow and Disallow stands between User-agent
//     lines, Google's reference parser (and RFC 9309) keep one group and
//     Scrapy's protego and temoto start a new one, at Sitemap lines too;
//     both readings are compiled ([Reading]) and MatchTarget refuses only
//     what both refuse. Match answers as Google's parser does.
//
// A refusal that only the departures on spellings and queries make, where
// the reference reading of the target's normal form allows it, is marked
// ([Result].Departure): robotsguard applies those departures only to
// clients whose identity is a claim, never to a verified crawler, and
// never counts such a refusal as an offence.
//
// [RFC 9309]: https://www.rfc-editor.org/rfc/rfc9309.html
// [google/robotstxt]: https://github.com/google/robotstxt
package policy
