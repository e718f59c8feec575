package caddymodule

import (
	"bytes"
	"net/http"
)

// serveRobots answers GET and HEAD /robots.txt with the generated file, with
// an ETag and Last-Modified; http.ServeContent answers conditional requests
// (If-None-Match, If-Modified-Since) with 304.
func serveRobots(w http.ResponseWriter, r *http.Request, snap *snapshot) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("ETag", snap.etag)
	h.Set("Cache-Control", "public, max-age=300")
	h.Set(servedHeader, "generated") // so that a robots URL that leads back here is refused
	http.ServeContent(w, r, "robots.txt", snap.modTime, bytes.NewReader(snap.served))
}
