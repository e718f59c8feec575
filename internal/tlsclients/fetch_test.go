package tlsclients

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFetch: every installed client that can fetch gets a page and an
// error page from an HTTPS server over each HTTP version it speaks, in
// order, and reports what the server sent: status, version, a header,
// the body, and the headers it was told to send.
func TestFetch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the clients")
	}
	ca, err := NewCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Proto", r.Proto)
		if r.URL.Path == "/refused" {
			w.Header().Set("Retry-After", "7")
			http.Error(w, "refused: "+r.Header.Get("Sec-Fetch-Mode"), http.StatusTooManyRequests)
			return
		}
		w.Write([]byte("page " + r.URL.Path + " for " + r.UserAgent()))
	}))
	srv.EnableHTTP2 = true
	srv.TLS = ca.TLSConfig()
	srv.StartTLS()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	base := "https://localhost:" + port
	for _, c := range Clients {
		if c.fetch == nil || !c.Available() {
			continue
		}
		for k, proto := range c.Protos {
			// The last version with a header more, the others without.
			var header [][2]string
			mode := ""
			if k == len(c.Protos)-1 {
				header, mode = [][2]string{{"Sec-Fetch-Mode", "navigate"}}, "navigate"
			}
			got, err := c.Fetch(context.Background(), ca, t.TempDir(), Request{URLs: []string{base + "/a", base + "/refused", base + "/a"},
				UA: "fetch-test/" + c.Name, Header: header, Proto: proto})
			if err != nil {
				t.Errorf("%s %s: %v", c.Name, proto, err)
				continue
			}
			wantProto := map[string]string{"h1": "1.1", "h2": "2"}[proto]
			for i, r := range got {
				want, status := "page /a for fetch-test/"+c.Name, 200
				if i == 1 {
					want, status = "refused: "+mode+"\n", 429
				}
				if r.Status != status || r.Body != want || r.Proto != wantProto || !strings.HasPrefix(r.Header.Get("X-Proto"), "HTTP/"+wantProto[:1]) ||
					i == 1 && r.Header.Get("Retry-After") != "7" {
					t.Errorf("%s %s, answer %d: %d %q over %s %v, want %d %q over %s", c.Name, proto, i, r.Status, r.Body, r.Proto, r.Header, status, want, wantProto)
				}
			}
		}
	}
}
