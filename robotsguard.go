// Package robotsguard is the module root that "xcaddy build --with
// github.com/robotsguard/robotsguard" imports: it registers the
// http.handlers.robots_guard Caddy module, the robots_guard Caddyfile
// directive and the "caddy robots" commands. The code lives in the
// caddymodule, enforce (with enforce/redisstore), record, policy, uaclass,
// evidence, tlsprint, source, upstream, signature, report, metrics,
// review, audit and cli packages, and internal/ (docs/design.md,
// "Layout").
package robotsguard

import (
	// Registers the Caddy module, directive and commands.
	_ "github.com/robotsguard/robotsguard/caddymodule"
)
