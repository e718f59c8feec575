// Command caddy is Caddy with its standard modules and robotsguard compiled
// in, for running the demo and the tests without xcaddy:
//
//	go run ./examples/caddy run --config Caddyfile.example
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	// The standard Caddy modules.
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	// robotsguard.
	_ "github.com/robotsguard/robotsguard"
)

func main() {
	caddycmd.Main()
}
