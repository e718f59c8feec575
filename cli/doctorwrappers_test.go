package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestCheckWrappers: the doctor names, for each server with robots_guard
// that serves HTTPS, each wrapper it has (ok) and each it lacks (a note
// with the one fix that names both in one servers block); HTTP/3's QUIC
// wrapper only where the server speaks HTTP/3 and a guard has quic on; a
// plain-HTTP server needs none, and a server without robots_guard is not
// named.
func TestCheckWrappers(t *testing.T) {
	guard := `"routes":[{"match":[{"host":["example.com"]}],"handle":[{"handler":"robots_guard"}]}]`
	cfg := mustTree(t, `{"apps":{"http":{"http_port":8080,"servers":{
		"srv0":{"listen":[":443"],"listener_wrappers":[{"wrapper":"robots_guard"}],"packet_conn_wrappers":[{"wrapper":"robots_guard_quic"}],`+guard+`},
		"srv1":{"listen":[":8443"],"listener_wrappers":[{"wrapper":"robots_guard"}],`+guard+`},
		"srv2":{"listen":[":9443"],"tls_connection_policies":[{}],"protocols":["h1","h2"],"routes":[{"handle":[{"handler":"robots_guard"}]}]},
		"srv3":{"listen":[":10443"],"tls_connection_policies":[{}],"routes":[{"handle":[{"handler":"robots_guard","quic":"off"}]}]},
		"srv4":{"listen":[":8080"],`+guard+`},
		"srv5":{"listen":[":11443"],"routes":[{"handle":[{"handler":"robots_guard"}]}]},
		"srv6":{"listen":[":12443"],"routes":[{"handle":[{"handler":"static_response"}]}]}}}}}`)
	var out bytes.Buffer
	d := &doctor{out: &out, orig: servers(cfg)}
	d.checkWrappers(findGuards(d.orig), intOf(dig(cfg, "apps", "http", "http_port")), 0)
	got := out.String()
	for _, want := range []string{
		"ok: server srv0 reads how clients speak HTTP/1.1 and HTTP/2 (listener wrapper robots_guard) and its HTTP/3 clients' QUIC stacks (packet conn wrapper robots_guard_quic)",
		"note: server srv1 lacks the packet conn wrapper robots_guard_quic",
		"note: server srv2 lacks the listener wrapper robots_guard",
		"note: server srv3 lacks the listener wrapper robots_guard",
		"ok: server srv4 serves plain HTTP",
		"ok: server srv5 serves plain HTTP",
		"servers { listener_wrappers { robots_guard } packet_conn_wrappers { robots_guard_quic } }",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("doctor's wrappers section lacks %q:\n%s", want, got)
		}
	}
	for _, srv := range []string{"srv2", "srv3"} { // no HTTP/3, or quic off
		if f := finding(got, srv); strings.Contains(f, "lacks the packet conn wrapper") || strings.Contains(f, "and the packet conn wrapper") {
			t.Errorf("%s: the QUIC wrapper is named: %s", srv, f)
		}
	}
	if strings.Contains(got, "srv6") || d.problems != 0 {
		t.Errorf("a server without robots_guard named, or a problem counted:\n%s", got)
	}
}

// finding returns the doctor's finding about a server: from its name to
// the next finding.
func finding(out, srv string) string {
	i := strings.Index(out, "server "+srv+" ")
	if i < 0 {
		return ""
	}
	f := out[i:]
	for _, next := range []string{"\n  ok:", "\n  note:", "\n  PROBLEM:"} {
		if j := strings.Index(f, next); j >= 0 {
			f = f[:j]
		}
	}
	return f
}
