package tlsclients

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	utls "github.com/refraction-networking/utls"
	"golang.org/x/net/http2"
)

// The uTLS client: what a capable scraper writes in Go in an afternoon. It
// copies Chrome's TLS hello exactly (refraction-networking/utls v1.8.2,
// HelloChrome_Auto) and speaks HTTP/2 with Go's own framing
// (golang.org/x/net/http2's Transport over the uTLS connection), or
// HTTP/1.1 with Go's net/http writer over a hello that offers only
// http/1.1. It sends the headers it is given, Chrome's in Chrome's order
// for one: Go's HTTP/2 encoder writes regular header fields in the order
// of its map (random) and its HTTP/1.1 writer sorts them, so no order of
// the caller's survives either.

// UTLS is the uTLS client as a Client: its TLS is Chromium's, its HTTP
// stack Go's. It is not in Clients, whose libraries the TLS table knows by
// their own stacks.
var UTLS = &Client{Name: "utls", Family: "chromium", Browser: false, Protos: []string{"h1", "h2"}, fetch: utlsFetch, run: utlsRun,
	Version: func(context.Context) string { return "uTLS v1.8.2 HelloChrome_Auto, Go " + goVersion() }}

// UTLSDialer dials a TLS connection with Chrome's hello (HelloChrome_Auto)
// to a server whose certificate the CA file caFile (PEM) signs; alpn
// replaces the hello's ALPN list when not nil ({"http/1.1"} for HTTP/1.1).
func UTLSDialer(caFile string, alpn []string) (func(ctx context.Context, network, addr string) (net.Conn, error), error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no certificate", caFile)
	}
	spec, err := utls.UTLSIdToSpec(utls.HelloChrome_Auto)
	if err != nil {
		return nil, err
	}
	if alpn != nil {
		for _, e := range spec.Extensions {
			if a, ok := e.(*utls.ALPNExtension); ok {
				a.AlpnProtocols = alpn
			}
		}
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		tcp, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		host, _, _ := net.SplitHostPort(addr)
		uc := utls.UClient(tcp, &utls.Config{ServerName: host, RootCAs: pool}, utls.HelloCustom)
		s := spec // each connection applies its own copy
		if err := uc.ApplyPreset(&s); err != nil {
			tcp.Close()
			return nil, err
		}
		if err := uc.HandshakeContext(ctx); err != nil {
			tcp.Close()
			return nil, err
		}
		return uc, nil
	}, nil
}

// UTLSClient returns an HTTP client that speaks proto ("h2" or "h1") over
// uTLS connections with Chrome's hello to servers the CA file signs; a
// request's headers go as set (see the package's uTLS notes).
func UTLSClient(caFile, proto string) (*http.Client, error) {
	if proto == "h1" {
		dial, err := UTLSDialer(caFile, []string{"http/1.1"})
		if err != nil {
			return nil, err
		}
		return &http.Client{Transport: &http.Transport{DialTLSContext: dial}, Timeout: 30 * time.Second}, nil
	}
	dial, err := UTLSDialer(caFile, nil)
	if err != nil {
		return nil, err
	}
	// x/net/http2's Transport, deprecated for net/http's, is what such a
	// program uses: net/http speaks HTTP/2 only over crypto/tls.
	//lint:ignore SA1019 the scraper's own choice, see above
	tr := &http2.Transport{DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
		return dial(ctx, network, addr)
	}}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}, nil
}

// utlsFetch is the uTLS client's Fetch: every URL in order on one
// connection, with the request's User-Agent and headers.
func utlsFetch(ctx context.Context, ca *CA, _ string, r Request) ([]Response, error) {
	c, err := UTLSClient(ca.CAFile, r.Proto)
	if err != nil {
		return nil, err
	}
	defer c.CloseIdleConnections()
	var got []Response
	for _, u := range r.URLs {
		req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
		if err != nil {
			return got, err
		}
		for _, h := range r.Header {
			req.Header[http.CanonicalHeaderKey(h[0])] = append(req.Header[http.CanonicalHeaderKey(h[0])], h[1])
		}
		req.Header.Set("User-Agent", r.UA)
		resp, err := c.Do(req)
		if err != nil {
			return got, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return got, err
		}
		got = append(got, Response{Status: resp.StatusCode, Proto: strings.TrimPrefix(resp.Proto, "HTTP/"), Header: resp.Header, Body: string(body)})
	}
	return got, nil
}

// utlsRun fetches url twice, each on a new connection.
func utlsRun(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
	for range 2 {
		if _, err := utlsFetch(ctx, ca, dir, Request{URLs: []string{url}, UA: ua, Proto: "h2"}); err != nil {
			return err
		}
	}
	return nil
}
