package caddymodule

import (
	"bytes"
	"net/http"

	"github.com/robotsguard/robotsguard/source"
)

// serveRobots answers GET and HEAD /robots.txt with the generated file, with
// an ETag and Last-Modified; http.ServeContent answers conditional requests
// (If-None-Match, If-Modified-Since) with 304.
func serveRobots(w http.ResponseWriter, r *http.Request, snap *source.Snapshot) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("ETag", snap.ETag)
	h.Set("Cache-Control", "public, max-age=300")
	h.Set(source.ServedHeader, "generated") // so that a robots URL that leads back here is refused
	http.ServeContent(w, r, "robots.txt", snap.ModTime, bytes.NewReader(snap.Served))
}
