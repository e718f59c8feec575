package caddymodule

import (
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("robots_guard", parseCaddyfile)
	// After header, so that site headers also apply to refusals and to the
	// served robots.txt; before redir, rewrite, respond, reverse_proxy and
	// file_server, so that nothing is served before the decision. Operators
	// can override this with the global order option.
	httpcaddyfile.RegisterDirectiveOrder("robots_guard", httpcaddyfile.After, "header")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	var rg Handler
	err := rg.UnmarshalCaddyfile(h.Dispenser)
	return &rg, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	robots_guard [<matcher>] {
//	    robots           <robots.txt file>
//	    serve_robots     on|off
//	    mode             enforce|dry_run
//	    block_class      <class...>
//	    trap             <path...>
//	    sitemap          <url...>
//	    crawl_delay      <duration>
//	    rate             <class> <duration>
//	    burst            <n>
//	    grace            <n>
//	    strikes          <n>
//	    window           <duration>
//	    cooldown         <duration> [<max duration>]
//	    tarpit           <duration> [<max held>]
//	    escalate_verified_search
//	    allow_bad_agents
//	    allow_impostors
//	    user_triggered_skip_global
//	    allow_ip         <ip or cidr...>
//	    allow_token      <token...>
//	    verify           off
//	    verify {
//	        wait           <duration>
//	        lookup_timeout <duration>
//	        ttl            <duration>
//	        ranges         <token> <file>
//	    }
//	    web_bot_auth {
//	        trusted_agent     <agent-url> <jwks-file>
//	        fetch_directories on|off
//	        max_validity      <duration>
//	        clock_skew        <duration>
//	        nonce_cache       <entries>
//	    }
//	    bot              <token> <class> <match phrase...>
//	    max_clients      <n>
//	    state_ttl        <duration>
//	    ua_cache         <bytes>
//	    zone             <name>
//	    deny             <status> [<body>]
//	    throttle         <status> [<body>]
//	    log_allowed      <fraction>
//	    x_robots_tag     <pattern> [<agent>:] <directive...>
//	    canonical        redirect|header|off
//	    canonical_redirect_humans
//	}
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	// The robots.txt file is an option, not an argument: an argument that
	// starts with '/' would be taken for a path matcher.
	if d.NextArg() {
		return d.Errf("robots_guard: unexpected argument '%s' (name the robots.txt file with the robots option)", d.Val())
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		opt := d.Val()
		repeatable := map[string]bool{"block_class": true, "trap": true, "sitemap": true, "rate": true, "allow_ip": true, "allow_token": true, "bot": true, "x_robots_tag": true}
		if seen[opt] && !repeatable[opt] {
			return d.Errf("robots_guard: option '%s' already specified", opt)
		}
		seen[opt] = true
		var err error
		switch opt {
		case "robots":
			h.Robots, err = oneArg(d)
		case "serve_robots":
			var on bool
			on, err = onOff(d)
			h.DisableServe = !on
		case "mode":
			h.Mode, err = oneArg(d)
			if err == nil && h.Mode != "enforce" && h.Mode != "dry_run" {
				return d.Errf("robots_guard: mode: unknown mode '%s' (want enforce or dry_run)", h.Mode)
			}
		case "block_class":
			args, err := someArgs(d)
			if err != nil {
				return err
			}
			for _, a := range args {
				c, err := uaclass.ParseClass(a)
				if err != nil {
					return d.Errf("robots_guard: block_class: %v", err)
				}
				if c == uaclass.Browser {
					return d.Errf("robots_guard: block_class: refusing to block browsers")
				}
			}
			h.BlockClasses = append(h.BlockClasses, args...)
		case "trap":
			args, err := someArgs(d)
			if err != nil {
				return err
			}
			for _, a := range args {
				if a[0] != '/' && a[0] != '*' {
					return d.Errf("robots_guard: trap: path '%s' must start with '/' or '*'", a)
				}
			}
			h.Traps = append(h.Traps, args...)
		case "sitemap":
			args, err := someArgs(d)
			if err != nil {
				return err
			}
			for _, a := range args {
				if !strings.HasPrefix(a, "http://") && !strings.HasPrefix(a, "https://") {
					return d.Errf("robots_guard: sitemap: '%s' is not an absolute http(s) URL", a)
				}
			}
			h.Sitemaps = append(h.Sitemaps, args...)
		case "crawl_delay":
			h.CrawlDelay, err = durationArg(d, opt)
		case "rate":
			args := d.RemainingArgs()
			if len(args) != 2 {
				return d.Errf("robots_guard: rate: want <class> <duration>, got %d arguments", len(args))
			}
			if _, err := uaclass.ParseClass(args[0]); err != nil {
				return d.Errf("robots_guard: rate: %v", err)
			}
			dur, err := caddy.ParseDuration(args[1])
			if err != nil || dur < 0 {
				return d.Errf("robots_guard: rate: invalid duration '%s'", args[1])
			}
			if h.Rates == nil {
				h.Rates = map[string]caddy.Duration{}
			}
			if _, dup := h.Rates[args[0]]; dup {
				return d.Errf("robots_guard: rate: class '%s' already has a rate", args[0])
			}
			h.Rates[args[0]] = caddy.Duration(dur)
		case "burst":
			h.Burst, err = intArg(d, opt, 1)
		case "grace":
			h.Grace, err = intArg(d, opt, -1)
		case "strikes":
			h.Strikes, err = intArg(d, opt, 1)
		case "window":
			h.Window, err = durationArg(d, opt)
		case "cooldown":
			args := d.RemainingArgs()
			if len(args) < 1 || len(args) > 2 {
				return d.Errf("robots_guard: cooldown: want <duration> [<max duration>], got %d arguments", len(args))
			}
			for i, a := range args {
				dur, err := caddy.ParseDuration(a)
				if err != nil || dur <= 0 {
					return d.Errf("robots_guard: cooldown: invalid duration '%s'", a)
				}
				if i == 0 {
					h.Cooldown = caddy.Duration(dur)
				} else {
					h.MaxCooldown = caddy.Duration(dur)
				}
			}
			if h.MaxCooldown != 0 && h.MaxCooldown < h.Cooldown {
				return d.Errf("robots_guard: cooldown: max %s is shorter than %s", args[1], args[0])
			}
		case "tarpit":
			args := d.RemainingArgs()
			if len(args) < 1 || len(args) > 2 {
				return d.Errf("robots_guard: tarpit: want <duration> [<max held>], got %d arguments", len(args))
			}
			dur, err := caddy.ParseDuration(args[0])
			if err != nil || dur <= 0 {
				return d.Errf("robots_guard: tarpit: invalid duration '%s'", args[0])
			}
			h.Tarpit = caddy.Duration(dur)
			if len(args) == 2 {
				n, err := strconv.Atoi(args[1])
				if err != nil || n < 1 {
					return d.Errf("robots_guard: tarpit: max held must be a positive integer, got '%s'", args[1])
				}
				h.TarpitMax = n
			}
		case "escalate_verified_search":
			h.EscalateVerifiedSearch, err = flagOption(d)
		case "allow_bad_agents":
			h.AllowBadAgents, err = flagOption(d)
		case "allow_impostors":
			h.AllowImpostors, err = flagOption(d)
		case "user_triggered_skip_global":
			h.UserTriggeredSkipGlobal, err = flagOption(d)
		case "allow_ip":
			args, err := someArgs(d)
			if err != nil {
				return err
			}
			for _, a := range args {
				if _, err := parsePrefix(a); err != nil {
					return d.Errf("robots_guard: allow_ip: %v", err)
				}
			}
			h.AllowIPs = append(h.AllowIPs, args...)
		case "allow_token":
			args, err := someArgs(d)
			if err != nil {
				return err
			}
			for _, a := range args {
				if policy.ProductToken(a) == "" {
					return d.Errf("robots_guard: allow_token: '%s' is not a product token", a)
				}
			}
			h.AllowTokens = append(h.AllowTokens, args...)
		case "verify":
			err = h.unmarshalVerify(d)
		case "web_bot_auth":
			err = h.unmarshalWebBotAuth(d)
		case "bot":
			args := d.RemainingArgs()
			if len(args) < 3 {
				return d.Errf("robots_guard: bot: want <token> <class> <match phrase...>, got %d arguments", len(args))
			}
			c, cerr := uaclass.ParseClass(args[1])
			if cerr != nil {
				return d.Errf("robots_guard: bot: %v", cerr)
			}
			b := uaclass.Bot{Token: args[0], Class: c, Name: args[0], Match: args[2:], Source: "config"}
			if verr := b.Validate(); verr != nil {
				return d.Errf("robots_guard: %v", verr)
			}
			h.Bots = append(h.Bots, b)
		case "max_clients":
			h.MaxClients, err = intArg(d, opt, 1)
		case "state_ttl":
			h.StateTTL, err = durationArg(d, opt)
		case "ua_cache":
			h.UACacheBytes, err = intArg(d, opt, 0)
		case "zone":
			h.Zone, err = oneArg(d)
		case "deny", "throttle":
			args := d.RemainingArgs()
			if len(args) < 1 || len(args) > 2 {
				return d.Errf("robots_guard: %s: want <status> [<body>], got %d arguments", opt, len(args))
			}
			code, cerr := strconv.Atoi(args[0])
			if cerr != nil || code < 400 || code > 599 {
				return d.Errf("robots_guard: %s: '%s' is not an error status (400-599)", opt, args[0])
			}
			body := ""
			if len(args) == 2 {
				body = args[1]
			}
			if opt == "deny" {
				h.DenyStatus, h.DenyBody = code, body
			} else {
				h.ThrottleStatus, h.ThrottleBody = code, body
			}
		case "log_allowed":
			var s string
			if s, err = oneArg(d); err == nil {
				f, ferr := strconv.ParseFloat(s, 64)
				if ferr != nil || f < 0 || f > 1 {
					return d.Errf("robots_guard: log_allowed: '%s' is not a fraction between 0 and 1", s)
				}
				h.LogAllowed = f
			}
		case "x_robots_tag":
			args := d.RemainingArgs()
			if len(args) < 2 {
				return d.Errf("robots_guard: x_robots_tag: want <pattern> [<agent>:] <directive...>, got %d arguments", len(args))
			}
			rule := IndexRule{Pattern: args[0]}
			rest := args[1:]
			if a, ok := strings.CutSuffix(rest[0], ":"); ok && len(rest) > 1 {
				rule.Agent, rest = a, rest[1:]
			}
			rule.Directives = rest
			if _, err := compileIndexRules([]IndexRule{rule}); err != nil {
				return d.Errf("robots_guard: x_robots_tag: %v", strings.TrimPrefix(err.Error(), "index rule 0 ("+rule.Pattern+"): "))
			}
			h.IndexRules = append(h.IndexRules, rule)
		case "canonical":
			h.Canonical, err = oneArg(d)
			if err == nil && h.Canonical != "redirect" && h.Canonical != "header" && h.Canonical != "off" {
				return d.Errf("robots_guard: canonical: unknown mode '%s' (want redirect, header or off)", h.Canonical)
			}
		case "canonical_redirect_humans":
			h.CanonicalRedirectHumans, err = flagOption(d)
		default:
			return d.Errf("robots_guard: unrecognized option '%s'", opt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (h *Handler) unmarshalVerify(d *caddyfile.Dispenser) error {
	if h.Verify == nil {
		h.Verify = &VerifyConfig{}
	}
	if d.NextArg() {
		if d.Val() != "off" || d.NextArg() {
			return d.Errf("robots_guard: verify: want 'off' or a block, got '%s'", d.Val())
		}
		h.Verify.Disabled = true
		return nil
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		var err error
		switch opt {
		case "wait":
			h.Verify.Wait, err = durationArg(d, "verify "+opt)
		case "lookup_timeout":
			h.Verify.LookupTimeout, err = durationArg(d, "verify "+opt)
		case "ttl":
			h.Verify.TTL, err = durationArg(d, "verify "+opt)
		case "ranges":
			args := d.RemainingArgs()
			if len(args) != 2 {
				return d.Errf("robots_guard: verify ranges: want <token> <file>, got %d arguments", len(args))
			}
			if policy.ProductToken(args[0]) == "" {
				return d.Errf("robots_guard: verify ranges: '%s' is not a product token", args[0])
			}
			if h.Verify.Ranges == nil {
				h.Verify.Ranges = map[string]string{}
			}
			h.Verify.Ranges[args[0]] = args[1]
		default:
			return d.Errf("robots_guard: verify: unrecognized option '%s'", opt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func oneArg(d *caddyfile.Dispenser) (string, error) {
	opt := d.Val()
	args := d.RemainingArgs()
	if len(args) != 1 {
		return "", d.Errf("robots_guard: %s: want one argument, got %d", opt, len(args))
	}
	return args[0], nil
}

func someArgs(d *caddyfile.Dispenser) ([]string, error) {
	opt := d.Val()
	args := d.RemainingArgs()
	if len(args) == 0 {
		return nil, d.Errf("robots_guard: %s: want at least one argument", opt)
	}
	return args, nil
}

func flagOption(d *caddyfile.Dispenser) (bool, error) {
	if d.NextArg() {
		return false, d.Errf("robots_guard: %s: takes no arguments", d.Val())
	}
	return true, nil
}

func onOff(d *caddyfile.Dispenser) (bool, error) {
	opt := d.Val()
	v, err := oneArg(d)
	if err != nil {
		return false, err
	}
	switch v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, d.Errf("robots_guard: %s: want on or off, got '%s'", opt, v)
}

func durationArg(d *caddyfile.Dispenser, opt string) (caddy.Duration, error) {
	s, err := oneArg(d)
	if err != nil {
		return 0, err
	}
	dur, err := caddy.ParseDuration(s)
	if err != nil || dur <= 0 {
		return 0, d.Errf("robots_guard: %s: invalid duration '%s'", opt, s)
	}
	return caddy.Duration(dur), nil
}

func intArg(d *caddyfile.Dispenser, opt string, least int) (int, error) {
	s, err := oneArg(d)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < least {
		return 0, d.Errf("robots_guard: %s: '%s' is not a whole number of at least %d", opt, s, least)
	}
	return n, nil
}

// Interface guard
var _ caddyfile.Unmarshaler = (*Handler)(nil)
