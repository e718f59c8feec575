package caddymodule

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

func init() {
	httpcaddyfile.RegisterDirective("robots_guard", parseCaddyfile)
	// After header, so that site headers also apply to refusals and to the
	// served robots.txt; before redir, rewrite, respond, reverse_proxy and
	// file_server, so that nothing is served before the decision. Operators
	// can override this with the global order option.
	httpcaddyfile.RegisterDirectiveOrder("robots_guard", httpcaddyfile.After, "header")
}

// parseCaddyfile is what RegisterHandlerDirective would register (the
// matcher token, then the handler's tokens), with one check first: Caddy
// reads a directive-line argument that starts with '/' as a path matcher,
// so the robots.txt file written there, as root takes its folder, would
// make the guard run only for requests of that path, which never come.
func parseCaddyfile(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
	if h.Next() && h.NextArg() && field.RobotsFileArg(h.Val()) {
		return nil, h.Errf("robots_guard: '%s' would be read as a request matcher (only requests for that path would be guarded); name the robots.txt file in the block: robots_guard { robots %s }", h.Val(), h.Val())
	}
	h.Reset()
	h.Next()
	matcherSet, err := h.ExtractMatcherSet()
	if err != nil {
		return nil, err
	}
	var rg Handler
	if err := rg.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	// The wrappers must be on the server's listeners, which Caddy sets up
	// before the routes: a site block's own directive can add them; one
	// inside route, handle or a named route cannot, as those take routes
	// only. A servers block of the global options replaces them with its
	// own listener_wrappers and packet_conn_wrappers: list them there
	// (wrappers.go warns at start-up when a server has none).
	route := h.NewRoute(matcherSet, &rg)
	if siteLevel(h) {
		route = append(route, httpcaddyfile.ConfigValue{Class: "listener_wrapper", Value: &FramingWrapper{}})
		if rg.QUIC != "off" {
			route = append(route, httpcaddyfile.ConfigValue{Class: "packet_conn_wrapper", Value: &QUICWrapper{}})
		}
	}
	return route, nil
}

// siteLevel reports a directive of a site block itself: Caddy gives those
// the block's state as their block state, and a nested block's directives
// a copy of it.
func siteLevel(h httpcaddyfile.Helper) bool {
	if h.BlockState == nil || h.IsNamedRoute() {
		return false
	}
	h.BlockState["robots_guard.site_level"] = true
	defer delete(h.BlockState, "robots_guard.site_level")
	return h.State["robots_guard.site_level"] == true
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	robots_guard [<matcher>] {
//	    robots           <robots.txt file or http(s) URL>
//	    robots_optional
//	    robots_host      <host>
//	    robots_header    <field> <value>
//	    robots_refresh   <duration>
//	    serve_robots     on|off
//	    mode             enforce|dry_run
//	    block_class      <class...>
//	    trap             <path...>
//	    sitemap          <url...>
//	    crawl_delay      <duration>
//	    rate             <class> <duration>
//	    burst            <n>
//	    grace            <n>
//	    strikes          <n> [<per address>]
//	    window           <duration>
//	    cooldown         <duration> [<max>]
//	    tarpit           <duration> [<max held>]
//	    escalate_verified_search
//	    allow_bad_agents
//	    allow_impostors
//	    posers           enforce|log|off
//	    allow_fingerprint <ja4...>
//	    behaviour        off
//	    behaviour {
//	        window     <duration>
//	        pages      <n>
//	        disallowed <n>
//	        hold       <duration>
//	    }
//	    allow_ip         <ip or cidr...>
//	    allow_token      <token...>
//	    verify           off
//	    verify {
//	        wait           <duration>
//	        lookup_timeout <duration>
//	        ttl            <duration>
//	        ranges         <token> <file or url>
//	        ranges         published
//	        ranges_refresh <duration>
//	    }
//	    web_bot_auth {
//	        trusted_agent     <agent-url> <jwks-file>
//	        fetch_directories on|off
//	        max_validity      <duration>
//	        clock_skew        <duration>
//	        nonce_cache       <entries>
//	    }
//	    bot              <token> <class> <match phrase...>
//	    ipv4_prefix      <bits>
//	    ipv6_prefix      <bits>
//	    crawler_share    <n>
//	    crawler_ipv4_prefix <bits>
//	    crawler_ipv6_prefix <bits>
//	    max_clients      <n>
//	    max_blocks       <n>
//	    state_ttl        <duration>
//	    store            memory | redis <url>
//	    store redis [<url>] {
//	        url        <url>
//	        key_prefix <prefix>
//	        timeout    <duration>
//	        on_error   local|allow|deny
//	    }
//	    ua_cache         <size>
//	    zone             <name>
//	    deny             <status> [<body>]
//	    throttle         <status> [<body>]
//	    log_allowed      <fraction>
//	    log_repeats      <interval>
//	    x_robots_tag     <pattern> [<agent>:] <directive...>
//	    content_usage    enforce|log|off
//	    content_usage_header <pattern> <preferences...>
//	    canonical        redirect|header|off
//	    canonical_redirect_humans
//	    ja4              on|off
//	    ja4_header       <header>
//	    quic             on|off
//	}
//
// The parser reads syntax only: the number of arguments, durations, sizes
// and numbers. It then checks the values with the same function Provision
// uses (checkConfig), on a copy, and reports a bad value at the line that
// set it. It reports every bad option, each at its line, in line order.
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	directive := d.Token()
	// The robots.txt file is an option, not an argument: an argument that
	// starts with '/' would be taken for a path matcher.
	if d.NextArg() {
		return d.Errf("robots_guard: unexpected argument '%s' (name the robots.txt file with the robots option)", d.Val())
	}
	r := &optionReader{d: d, at: map[string]place{}}
	readOptions(h, r, d.Nesting(), caddyfileOptions, "")
	checked := *h
	if _, err := checked.checkConfig(); err != nil {
		for _, e := range field.Split(err) {
			r.errorAt(e, directive)
		}
	}
	return r.errs.Err()
}

// readOptions reads the options of a block with the given table; block
// names a nested block ("verify"), "" the directive's own. A bad option's
// error is recorded and the next option read.
func readOptions(h *Handler, r *optionReader, nesting int, table map[string]caddyfileOption, block string) error {
	d := r.d
	where, prefix := "", ""
	if block != "" {
		where, prefix = block+": ", block+" "
	}
	seen := map[string]bool{}
	for d.NextBlock(nesting) {
		name := d.Val()
		opt, ok := table[name]
		var err error
		switch {
		case !ok:
			err = d.Errf("robots_guard: %sunrecognized option '%s'%s", where, name, field.Suggest(name, slices.Collect(maps.Keys(table)), func(o string) bool { return table[o].repeatable }, field.CaddyfileSpellings))
		case seen[name] && !opt.repeatable:
			err = d.Errf("robots_guard: %soption '%s' already specified", where, name)
		default:
			r.opt, r.tok = prefix+name, d.Token()
			err = opt.read(h, r)
			seen[name] = err == nil
		}
		if err != nil {
			r.errs.Add(d.Line(), err)
			// Skip the rest of the option: its line, and the block it is
			// in or opens, up to the next option.
			d.RemainingArgs()
			for d.NextBlock(nesting + 1) {
			}
		}
	}
	return nil
}

// caddyfileOption reads one option of the robots_guard block into the
// Handler's JSON fields.
type caddyfileOption struct {
	// repeatable options may be given more than once; their values add up.
	repeatable bool
	// read reads the option's arguments (the dispenser is on its name). It
	// reads syntax only, and records with r.set which JSON field it set, so
	// that checkConfig's error for that field names this line.
	read func(h *Handler, r *optionReader) error
}

// fieldOption returns the option that sets one field, at path, from its one
// argument by the field's type (a string as it is, a duration or a whole
// number above zero; on or off for an optional flag, any duration for an
// optional one), or, for a flag, from no argument.
func fieldOption[T string | bool | int | caddy.Duration | *bool | *caddy.Duration](path string, to func(h *Handler) *T) caddyfileOption {
	return caddyfileOption{read: func(h *Handler, r *optionReader) error {
		r.set(path)
		switch p := any(to(h)).(type) {
		case *string:
			return r.one(p)
		case *bool:
			return r.flag(p)
		case *int:
			return r.positiveInt(p)
		case *caddy.Duration:
			return r.positiveDuration(p)
		case **bool:
			on, err := r.onOff()
			*p = &on
			return err
		case **caddy.Duration:
			var s string
			err := r.one(&s)
			if err == nil {
				var d caddy.Duration
				d, err = r.duration(s)
				*p = &d
			}
			return err
		}
		return r.errf("no reader for %T", to(h))
	}}
}

// offOrBlock returns the option "<name> off", which sets the flag off
// returns, or "<name> { ... }", a block of table's options; off also
// makes the block's config, which table's options fill.
func offOrBlock(name string, table map[string]caddyfileOption, off func(h *Handler) *bool) caddyfileOption {
	return caddyfileOption{read: func(h *Handler, r *optionReader) error {
		flag := off(h)
		r.set(name)
		if d := r.d; d.NextArg() {
			if d.Val() != "off" || d.NextArg() {
				return r.errf("want 'off' or a block, got '%s'", d.Val())
			}
			*flag = true
			return nil
		}
		return readOptions(h, r, r.d.Nesting(), table, name)
	}}
}

// behaviourOptions are the behaviour block's (docs/posers.md).
var behaviourOptions = map[string]caddyfileOption{
	"window":     fieldOption("behaviour.window", func(h *Handler) *caddy.Duration { return &h.Behaviour.Window }),
	"pages":      fieldOption("behaviour.pages", func(h *Handler) *int { return &h.Behaviour.Pages }),
	"disallowed": fieldOption("behaviour.disallowed", func(h *Handler) *int { return &h.Behaviour.Disallowed }),
	"hold":       fieldOption("behaviour.hold", func(h *Handler) *caddy.Duration { return &h.Behaviour.Hold }),
}

// listOption returns the repeatable option whose arguments (at least
// one) add up in a list field, at path.
func listOption(path string, to func(h *Handler) *[]string) caddyfileOption {
	return caddyfileOption{repeatable: true, read: func(h *Handler, r *optionReader) error { return r.appendTo(to(h), path) }}
}

// appendOption returns the repeatable option (usage, at least least
// arguments) that appends the element its arguments make to a list field,
// at path[i]; an error of make is the option's.
func appendOption[E any](path, usage string, least int, make func(args []string) (E, error), to func(h *Handler) *[]E) caddyfileOption {
	return caddyfileOption{repeatable: true, read: func(h *Handler, r *optionReader) error {
		args, err := r.args(least, -1, usage)
		if err != nil {
			return err
		}
		e, err := make(args)
		if err != nil {
			return r.errf("%v", err)
		}
		list := to(h)
		*list = append(*list, e)
		r.set(fmt.Sprintf("%s[%d]", path, len(*list)-1))
		return nil
	}}
}

// mapOption returns the repeatable option "<key> <value>" (usage) that
// sets an entry of a map field, at path.<key>: key canonicalises the key
// (nil: as written), value reads the value, and a key given again is an
// error (dup, a format of the key).
func mapOption[T any](path, usage, dup string, key func(string) string, value func(r *optionReader, arg string) (T, error), to func(h *Handler) *map[string]T) caddyfileOption {
	return caddyfileOption{repeatable: true, read: func(h *Handler, r *optionReader) error {
		args, err := r.args(2, 2, usage)
		if err != nil {
			return err
		}
		k, m := args[0], to(h)
		if key != nil {
			k = key(k)
		}
		if _, ok := (*m)[k]; ok {
			return r.errf(dup, k)
		}
		v, err := value(r, args[1])
		if err != nil {
			return err
		}
		if *m == nil {
			*m = map[string]T{}
		}
		(*m)[k] = v
		r.set(path + "." + k)
		return nil
	}}
}

// plainArg reads an argument as it is written.
func plainArg(_ *optionReader, arg string) (string, error) { return arg, nil }

// pairOption returns the option "<first> [<second>]" (usage) that sets
// the fields at paths from its one or two arguments, each by its reader;
// an error of the second names it ("tarpit <max held>").
func pairOption(usage, second string, paths [2]string, read ...func(h *Handler, r *optionReader, arg string) error) caddyfileOption {
	return caddyfileOption{read: func(h *Handler, r *optionReader) error {
		args, err := r.args(1, 2, usage)
		for i, arg := range args {
			if i == 1 {
				r.opt += " " + second
			}
			if err := read[i](h, r, arg); err != nil {
				return err
			}
			r.set(paths[i])
		}
		return err
	}}
}

// noneAtZero returns the option that sets a whole number, at path, where
// 0 (none, or off) is written -1 in JSON, in which 0 is the default
// (grace, crawler_share).
func noneAtZero(path string, to func(h *Handler) *int) caddyfileOption {
	return caddyfileOption{read: func(h *Handler, r *optionReader) error {
		p := to(h)
		if err := r.set(path).integer(p); err != nil {
			return err
		}
		if *p == 0 {
			*p = -1
		}
		return nil
	}}
}

// countArg reads a whole number above zero (zero would read as "the
// default" in JSON: an explicit one is refused).
func countArg(to func(h *Handler) *int) func(h *Handler, r *optionReader, arg string) error {
	return func(h *Handler, r *optionReader, arg string) (err error) {
		p := to(h)
		if *p, err = r.atoi(arg); err == nil && *p == 0 {
			err = r.errf("%v", field.AtLeast(1, 0))
		}
		return err
	}
}

// statusArg reads a refusal's status (0 would read as "the default" in
// JSON: an explicit one is refused).
func statusArg(to func(h *Handler) *int) func(h *Handler, r *optionReader, arg string) error {
	return func(h *Handler, r *optionReader, arg string) (err error) {
		p := to(h)
		if *p, err = r.atoi(arg); err == nil && *p == 0 {
			err = r.errf("0 is not an error status (400-599)")
		}
		return err
	}
}

// textArg reads an argument as it is written.
func textArg(to func(h *Handler) *string) func(h *Handler, r *optionReader, arg string) error {
	return func(h *Handler, _ *optionReader, arg string) error { *to(h) = arg; return nil }
}

// durationArg reads a duration above zero (see positive).
func durationArg(to func(h *Handler) *caddy.Duration) func(h *Handler, r *optionReader, arg string) error {
	return func(h *Handler, r *optionReader, arg string) (err error) {
		*to(h), err = r.positive(arg)
		return err
	}
}

// caddyfileOptions are the options of the robots_guard block. A new option
// is a field of Handler (with its doc comment and default), an entry here
// (fieldOption where it sets one field from one argument), its check in
// checkConfig or in the owning package's Settings, and rows in the tests'
// tables.
var caddyfileOptions = map[string]caddyfileOption{
	"robots":          fieldOption("robots", func(h *Handler) *string { return &h.Robots }),
	"robots_optional": fieldOption("robots_optional", func(h *Handler) *bool { return &h.RobotsOptional }),
	"robots_host":     fieldOption("robots_host", func(h *Handler) *string { return &h.RobotsHost }),
	"robots_header": mapOption("robots_headers", "<field> <value>", "field '%s' already set", http.CanonicalHeaderKey, plainArg,
		func(h *Handler) *map[string]string { return &h.RobotsHeaders }),
	"robots_refresh": fieldOption("robots_refresh", func(h *Handler) *caddy.Duration { return &h.RobotsRefresh }),
	"serve_robots":   fieldOption("serve_robots", func(h *Handler) **bool { return &h.ServeRobots }),
	"mode":           fieldOption("mode", func(h *Handler) *string { return &h.Mode }),
	"block_class":    listOption("block_classes", func(h *Handler) *[]string { return &h.BlockClasses }),
	"trap":           listOption("traps", func(h *Handler) *[]string { return &h.Traps }),
	"sitemap":        listOption("sitemaps", func(h *Handler) *[]string { return &h.Sitemaps }),
	"crawl_delay":    fieldOption("crawl_delay", func(h *Handler) *caddy.Duration { return &h.CrawlDelay }),
	"rate": mapOption("rates", "<class> <duration>", "class '%s' already has a rate", nil, (*optionReader).duration,
		func(h *Handler) *map[string]caddy.Duration { return &h.Rates }),
	"burst": fieldOption("burst", func(h *Handler) *int { return &h.Burst }),
	"grace": noneAtZero("grace", func(h *Handler) *int { return &h.Grace }),
	"strikes": pairOption("<n> [<per address>]", "<per address>", [2]string{"strikes", "address_strikes"},
		countArg(func(h *Handler) *int { return &h.Strikes }), countArg(func(h *Handler) *int { return &h.AddressStrikes })),
	"ipv4_prefix":         fieldOption("ipv4_prefix", func(h *Handler) *int { return &h.IPv4Prefix }),
	"ipv6_prefix":         fieldOption("ipv6_prefix", func(h *Handler) *int { return &h.IPv6Prefix }),
	"window":              fieldOption("window", func(h *Handler) *caddy.Duration { return &h.Window }),
	"crawler_share":       noneAtZero("crawler_share", func(h *Handler) *int { return &h.CrawlerShare }),
	"crawler_ipv4_prefix": fieldOption("crawler_ipv4_prefix", func(h *Handler) *int { return &h.CrawlerIPv4Prefix }),
	"crawler_ipv6_prefix": fieldOption("crawler_ipv6_prefix", func(h *Handler) *int { return &h.CrawlerIPv6Prefix }),
	"cooldown": pairOption("<duration> [<max>]", "<max>", [2]string{"cooldown", "max_cooldown"},
		durationArg(func(h *Handler) *caddy.Duration { return &h.Cooldown }), durationArg(func(h *Handler) *caddy.Duration { return &h.MaxCooldown })),
	"tarpit": pairOption("<duration> [<max held>]", "<max held>", [2]string{"tarpit", "tarpit_max"},
		durationArg(func(h *Handler) *caddy.Duration { return &h.Tarpit }), countArg(func(h *Handler) *int { return &h.TarpitMax })),
	"escalate_verified_search": fieldOption("escalate_verified_search", func(h *Handler) *bool { return &h.EscalateVerifiedSearch }),
	"allow_bad_agents":         fieldOption("allow_bad_agents", func(h *Handler) *bool { return &h.AllowBadAgents }),
	"allow_impostors":          fieldOption("allow_impostors", func(h *Handler) *bool { return &h.AllowImpostors }),
	"posers":                   fieldOption("posers", func(h *Handler) *string { return &h.Posers }),
	"allow_fingerprint":        listOption("allow_fingerprints", func(h *Handler) *[]string { return &h.AllowFingerprints }),
	"behaviour":                offOrBlock("behaviour", behaviourOptions, func(h *Handler) *bool { return &h.Behaviour.Disabled }),
	"allow_ip":                 listOption("allow_ips", func(h *Handler) *[]string { return &h.AllowIPs }),
	"allow_token":              listOption("allow_tokens", func(h *Handler) *[]string { return &h.AllowTokens }),
	"verify": offOrBlock("verify", verifyOptions, func(h *Handler) *bool {
		h.Verify = cmp.Or(h.Verify, &VerifyConfig{})
		return &h.Verify.Disabled
	}),
	"web_bot_auth": webBotAuthOption,
	"bot":          appendOption("bots", "<token> <class> <match phrase...>", 3, uaclass.ConfigBot, func(h *Handler) *[]uaclass.Bot { return &h.Bots }),
	"max_clients":  fieldOption("max_clients", func(h *Handler) *int { return &h.MaxClients }),
	"max_blocks":   fieldOption("max_blocks", func(h *Handler) *int { return &h.MaxBlocks }),
	"state_ttl":    fieldOption("state_ttl", func(h *Handler) *caddy.Duration { return &h.StateTTL }),
	"store":        {read: readStore}, // store.go
	"ua_cache": {read: func(h *Handler, r *optionReader) error {
		return r.set("ua_cache").size(&h.UACache)
	}},
	"zone": fieldOption("zone", func(h *Handler) *string { return &h.Zone }),
	"deny": pairOption("<status> [<body>]", "<body>", [2]string{"deny_status", "deny_body"},
		statusArg(func(h *Handler) *int { return &h.DenyStatus }), textArg(func(h *Handler) *string { return &h.DenyBody })),
	"throttle": pairOption("<status> [<body>]", "<body>", [2]string{"throttle_status", "throttle_body"},
		statusArg(func(h *Handler) *int { return &h.ThrottleStatus }), textArg(func(h *Handler) *string { return &h.ThrottleBody })),
	"log_allowed": {read: func(h *Handler, r *optionReader) error {
		var s string
		if err := r.set("log_allowed").one(&s); err != nil {
			return err
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) {
			return r.errf("'%s' is not a number", s)
		}
		h.LogAllowed = f
		return nil
	}},
	"log_repeats": fieldOption("log_repeats", func(h *Handler) **caddy.Duration { return &h.LogRepeats }),
	"x_robots_tag": appendOption("x_robots_tags", "<pattern> [<agent>:] <directive...>", 2, policy.IndexRuleOf,
		func(h *Handler) *[]policy.IndexRule { return &h.XRobotsTags }),
	"content_usage": fieldOption("content_usage", func(h *Handler) *string { return &h.ContentUsage }),
	"content_usage_header": appendOption("content_usage_headers", "<pattern> <preferences...>", 2, policy.UsageHeaderOf,
		func(h *Handler) *[]policy.UsageHeader { return &h.ContentUsageHeaders }),
	"canonical":                 fieldOption("canonical", func(h *Handler) *string { return &h.Canonical }),
	"canonical_redirect_humans": fieldOption("canonical_redirect_humans", func(h *Handler) *bool { return &h.CanonicalRedirectHumans }),
	"ja4":                       fieldOption("ja4", func(h *Handler) *string { return &h.JA4 }),
	"ja4_header":                fieldOption("ja4_header", func(h *Handler) *string { return &h.JA4Header }),
	"quic":                      fieldOption("quic", func(h *Handler) *string { return &h.QUIC }),
}

// verifyOptions are the options of the verify block.
var verifyOptions = map[string]caddyfileOption{
	"wait":           fieldOption("verify.wait", func(h *Handler) *caddy.Duration { return &h.Verify.Wait }),
	"lookup_timeout": fieldOption("verify.lookup_timeout", func(h *Handler) *caddy.Duration { return &h.Verify.LookupTimeout }),
	"ttl":            fieldOption("verify.ttl", func(h *Handler) *caddy.Duration { return &h.Verify.TTL }),
	"ranges_refresh": fieldOption("verify.ranges_refresh", func(h *Handler) *caddy.Duration { return &h.Verify.RangesRefresh }),
	"ranges": {repeatable: true, read: func(h *Handler, r *optionReader) error {
		args, err := r.args(1, 2, "<token> <file or url>, or published")
		if err != nil {
			return err
		}
		if len(args) == 1 {
			if args[0] != "published" {
				return r.errf("want <token> <file or url>, or published, got '%s' alone", args[0])
			}
			h.Verify.PublishedRanges = true
			r.set("verify.published_ranges")
			return nil
		}
		if h.Verify.Ranges == nil {
			h.Verify.Ranges = map[string]string{}
		}
		if _, dup := h.Verify.Ranges[args[0]]; dup {
			return r.errf("token '%s' already has ranges", args[0])
		}
		h.Verify.Ranges[args[0]] = args[1]
		r.set("verify.ranges." + args[0])
		return nil
	}},
}

// place is where a JSON field was set in the Caddyfile.
type place struct {
	label string // the option as the Caddyfile writes it
	tok   caddyfile.Token
}

// optionReader reads one option's arguments and records where each JSON
// field was set.
type optionReader struct {
	d    *caddyfile.Dispenser
	opt  string          // the option being read, e.g. "verify wait"
	tok  caddyfile.Token // its name's token
	at   map[string]place
	errs field.Lines // the bad options so far
}

// set records that the current option (r.opt, which names an argument
// where the option sets more than one field, e.g. "tarpit <max held>") sets
// the JSON field at path. It returns r, to read the arguments next.
func (r *optionReader) set(path string) *optionReader {
	r.at[path] = place{label: r.opt, tok: r.tok}
	return r
}

// errorAt records an error of checkConfig as a Caddyfile error at the
// line of the option that set the field, or of the directive.
func (r *optionReader) errorAt(err error, directive caddyfile.Token) {
	var ce *field.Error
	if !errors.As(err, &ce) {
		r.errs.Add(directive.Line, err)
		return
	}
	p, ok := place{tok: directive}, false
	for path := ce.Path; path != "" && !ok; path = field.Parent(path) {
		if q, found := r.at[path]; found {
			p, ok = q, true
		}
	}
	d := caddyfile.NewDispenser([]caddyfile.Token{p.tok})
	d.Next()
	label := p.label + ": "
	if p.label == "" {
		label = ""
	}
	r.errs.Add(p.tok.Line, d.Errf("robots_guard: %s%v", label, ce.Err))
}

func (r *optionReader) errf(format string, args ...any) error {
	return r.d.Errf("robots_guard: %s: %s", r.opt, fmt.Sprintf(format, args...))
}

// args reads between least and most (-1: any number) arguments.
func (r *optionReader) args(least, most int, usage string) ([]string, error) {
	args := r.d.RemainingArgs()
	if len(args) < least || most >= 0 && len(args) > most {
		return nil, r.errf("want %s, got %d arguments", usage, len(args))
	}
	return args, nil
}

func (r *optionReader) one(to *string) error {
	args := r.d.RemainingArgs()
	if len(args) != 1 {
		return r.errf("want one argument, got %d", len(args))
	}
	*to = args[0]
	return nil
}

// appendTo appends the option's arguments (at least one) to a list field.
func (r *optionReader) appendTo(list *[]string, path string) error {
	args, err := r.args(1, -1, "at least one argument")
	if err != nil {
		return err
	}
	for i := range args {
		r.set(fmt.Sprintf("%s[%d]", path, len(*list)+i))
	}
	*list = append(*list, args...)
	return nil
}

func (r *optionReader) flag(to *bool) error {
	if r.d.NextArg() {
		return r.errf("takes no arguments, got '%s'", r.d.Val())
	}
	*to = true
	return nil
}

func (r *optionReader) onOff() (bool, error) {
	var v string
	if err := r.one(&v); err != nil {
		return false, err
	}
	switch v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, r.errf("want on or off, got '%s'", v)
}

func (r *optionReader) duration(s string) (caddy.Duration, error) {
	d, err := caddy.ParseDuration(s)
	if err != nil {
		return 0, r.errf("'%s' is not a duration", s)
	}
	return caddy.Duration(d), nil
}

// positive reads a duration where zero would read as "the default" in
// JSON: an explicit zero is refused rather than silently replaced.
func (r *optionReader) positive(s string) (caddy.Duration, error) {
	d, err := r.duration(s)
	if err == nil && d == 0 {
		err = r.errf("%v", field.AboveZero(0))
	}
	return d, err
}

func (r *optionReader) positiveDuration(to *caddy.Duration) error {
	var s string
	if err := r.one(&s); err != nil {
		return err
	}
	d, err := r.positive(s)
	*to = d
	return err
}

func (r *optionReader) atoi(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, r.errf("'%s' is not a whole number", s)
	}
	return n, nil
}

func (r *optionReader) integer(to *int) error {
	var s string
	if err := r.one(&s); err != nil {
		return err
	}
	n, err := r.atoi(s)
	*to = n
	return err
}

// positiveInt reads a number where zero would read as "the default" in
// JSON; see positive.
func (r *optionReader) positiveInt(to *int) error {
	if err := r.integer(to); err != nil {
		return err
	}
	if *to == 0 {
		return r.errf("%v", field.AtLeast(1, 0))
	}
	return nil
}

// size reads a size with units as Caddy's own options take them ("4MiB",
// "512KB", "1048576").
func (r *optionReader) size(to *int) error {
	var s string
	if err := r.one(&s); err != nil {
		return err
	}
	n, err := field.Size(s)
	if err != nil {
		return r.errf("%v", err)
	}
	*to = n
	return nil
}

// Interface guard
var _ caddyfile.Unmarshaler = (*Handler)(nil)
