package review

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// The page is one HTML file with its style and script inline: nothing is
// fetched from elsewhere, so it works offline and as a saved file.
var (
	//go:embed assets/page.html
	pageHTML string
	//go:embed assets/review.css
	pageCSS string
	//go:embed assets/review.js
	pageJS string
)

// metaCSP is the page's Content-Security-Policy: only its own inline style
// and script (by hash), requests to its own origin, nothing else. The page
// carries it in a meta element, so that a saved report has it too.
var metaCSP = "default-src 'none'; script-src '" + hash(pageJS) + "'; style-src '" + hash(pageCSS) +
	"'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'"

// CSP is the Content-Security-Policy header for the served page: the
// meta element's policy, and no framing (which only a header can say).
var CSP = metaCSP + "; frame-ancestors 'none'"

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// livePage is the page that loads its data from "stats" beside it.
var livePage = render("")

// LivePage returns the review page that the admin endpoint serves at
// /robots_guard/: it loads the statistics from /robots_guard/stats and
// offers unblocking.
func LivePage() []byte { return livePage }

// StaticPage returns the review page with the view embedded: one file that
// opens anywhere, for "caddy robots report --html".
func StaticPage(v *View) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(true) // no "</script>" can end the data early
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return render(`<script id="data" type="application/json">` + strings.TrimSpace(buf.String()) + `</script>`), nil
}

func render(data string) []byte {
	r := strings.NewReplacer("{{CSP}}", metaCSP, "{{CSS}}", pageCSS, "{{JS}}", pageJS, "{{DATA}}", data)
	return []byte(r.Replace(pageHTML))
}
