package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestCheckFraming: the doctor names a server with robots_guard that has
// the listener wrapper (ok) and one that has not (a note with the fix);
// a server without robots_guard is not named.
func TestCheckFraming(t *testing.T) {
	cfg := mustTree(t, `{"apps":{"http":{"servers":{
		"srv0":{"listen":[":443"],"listener_wrappers":[{"wrapper":"robots_guard"}],"routes":[{"handle":[{"handler":"robots_guard"}]}]},
		"srv1":{"listen":[":8443"],"routes":[{"handle":[{"handler":"robots_guard"}]}]},
		"srv2":{"listen":[":9443"],"routes":[{"handle":[{"handler":"static_response"}]}]}}}}}`)
	var out bytes.Buffer
	d := &doctor{out: &out, orig: servers(cfg)}
	d.checkFraming(findGuards(d.orig))
	got := out.String()
	for _, want := range []string{"ok: server srv0 reads how clients speak HTTP/1.1 and HTTP/2", "note: server srv1 reads no HTTP framing", "servers { listener_wrappers { robots_guard } }"} {
		if !strings.Contains(got, want) {
			t.Errorf("doctor's framing section lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "srv2") || d.problems != 0 {
		t.Errorf("a server without robots_guard named, or a problem counted:\n%s", got)
	}
}
