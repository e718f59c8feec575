package cli

import (
	"fmt"
	"slices"
)

// FramingOff is the message robots_guard logs at start-up, once per
// server, when the server reads no HTTP framing: it has no robots_guard
// listener wrapper.
const FramingOff = "this server reads no HTTP framing (no robots_guard listener wrapper): a client that copies a browser's TLS hello over a library's HTTP/1.1 or HTTP/2 stack is not caught"

// checkFraming names, for each server of a guard, whether robots_guard
// reads how its clients' HTTP stacks speak: the robots_guard listener
// wrapper in its listener_wrappers (the Caddyfile directive adds it, a
// servers block's listener_wrappers replace what it adds). The doctor's
// own copy of the config runs without listener wrappers, so its start-up
// message (FramingOff) is this check's, not a finding of its own.
func (d *doctor) checkFraming(guards []*guardSite) {
	fmt.Fprintln(d.out, "framing")
	for _, s := range d.orig {
		if !slices.ContainsFunc(guards, func(g *guardSite) bool { return g.server == s.name }) {
			continue
		}
		wrappers, _ := s.raw["listener_wrappers"].([]any)
		if slices.ContainsFunc(wrappers, func(w any) bool { m, _ := w.(map[string]any); return m["wrapper"] == "robots_guard" }) {
			d.ok("server %s reads how clients speak HTTP/1.1 and HTTP/2 (listener wrapper robots_guard)", s.name)
			continue
		}
		d.note("server %s reads no HTTP framing: a client that copies a browser's TLS hello over a library's HTTP stack (uTLS, ...)\n"+
			"is caught only over HTTP/3. Fix, in the global options: servers { listener_wrappers { robots_guard } }\n"+
			"(JSON: \"listener_wrappers\": [{\"wrapper\": \"robots_guard\"}]); a servers block's listener_wrappers replace the one robots_guard adds", s.name)
	}
}

// FramingFix says how to add the robots_guard listener wrapper.
const FramingFix = `servers { listener_wrappers { robots_guard } } in the global options (JSON: "listener_wrappers": [{"wrapper": "robots_guard"}])`
