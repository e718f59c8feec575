// Command stackdepth is Caddy with one extra handler, stack_depth N, that
// answers 403 after using about N KiB of its goroutine's stack: what a
// handler's stack depth alone costs a flood of refusals, without
// robots_guard. A connection's goroutine starts with 8 KiB of stack; a
// request whose path goes past that grows it to 16 KiB, and each garbage
// collection that finds the connection idle shrinks it back, so that the
// next request copies it again (runtime.copystack in a profile).
//
//	go build -o /tmp/caddy-stack ./examples/bench/stackdepth
//
// and a Caddyfile with one site per depth, each on its own port:
//
//	{
//		order stack_depth before respond
//	}
//	:18097 {
//		stack_depth 2
//	}
//
// then flood.sh's wrk script against each port in turn (see
// examples/bench/README.md, "the refusal's stack").
package main

import (
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func init() {
	caddy.RegisterModule(StackDepth{})
	httpcaddyfile.RegisterHandlerDirective("stack_depth", func(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
		s := new(StackDepth)
		err := s.UnmarshalCaddyfile(h.Dispenser)
		return s, err
	})
}

// StackDepth answers 403 after using about KiB KiB of stack.
type StackDepth struct {
	// KiB is how much stack the handler uses before it answers, in
	// frames of about 1 KiB. Default: 0.
	KiB int `json:"kib,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (StackDepth) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.stack_depth", New: func() caddy.Module { return new(StackDepth) }}
}

// UnmarshalCaddyfile reads "stack_depth [KiB]".
func (s *StackDepth) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive
	if d.NextArg() {
		n, err := strconv.Atoi(d.Val())
		if err != nil || n < 0 {
			return d.Errf("stack_depth: %q is not a number of KiB", d.Val())
		}
		s.KiB = n
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

// sink keeps the frames' work from being optimised away.
var sink atomic.Uint32

// frames uses n frames of about 1 KiB each, writing one byte in each of
// their cache lines.
//
//go:noinline
func frames(n int) byte {
	var a [1000]byte
	for i := 0; i < len(a); i += 64 {
		a[i] = byte(i + n)
	}
	if n > 1 {
		return frames(n-1) + a[n]
	}
	return a[0]
}

// ServeHTTP answers 403 after using s.KiB KiB of stack.
func (s *StackDepth) ServeHTTP(w http.ResponseWriter, _ *http.Request, _ caddyhttp.Handler) error {
	if s.KiB > 0 {
		sink.Store(uint32(frames(s.KiB)))
	}
	w.WriteHeader(http.StatusForbidden)
	return nil
}

var (
	_ caddyhttp.MiddlewareHandler = (*StackDepth)(nil)
	_ caddyfile.Unmarshaler       = (*StackDepth)(nil)
)

func main() {
	caddycmd.Main()
}
