package evidence

import (
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImpersonateSignatures judges the navigations of browsers that cannot
// run here (Safari on macOS and iOS, Edge, Chrome on Android and macOS,
// Chrome 98 to 150, Firefox 91 to 144, Tor Browser) as curl-impersonate's
// signature files record them: the headers each browser sends when it
// loads a site it has not visited, over HTTPS. None is decisive evidence,
// and none is any evidence unless listed below with the reason.
//
// The files are not committed (they are another project's); point
// EVIDENCE_SIGNATURES at one or more tests/signatures directories of
// lwthiker/curl-impersonate or lexiforest/curl-impersonate, separated by
// the list separator:
//
//	EVIDENCE_SIGNATURES=/path/to/lwthiker/tests/signatures:/path/to/lexiforest/tests/signatures \
//		go test ./evidence -run TestImpersonateSignatures -v
func TestImpersonateSignatures(t *testing.T) {
	dirs := os.Getenv("EVIDENCE_SIGNATURES")
	if dirs == "" {
		t.Skip("EVIDENCE_SIGNATURES is not set")
	}
	// Signatures that are not what the browser sends by itself.
	known := map[string]Evidence{
		// A phone's User-Agent with Sec-CH-UA-Mobile ?0, which Chrome on a
		// phone does not send (it sends ?1, as the Pixel 6 signature
		// does): the profile's User-Agent looks edited, and a mismatch is
		// what it is.
		"chrome_131.0.6778.81_android14": SecCHUAPlatform,
	}
	n := 0
	for _, dir := range filepath.SplitList(dirs) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if len(files) == 0 {
			t.Fatalf("no signatures in %s", dir)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, sig := range readSignatures(string(b)) {
				ua := first(sig.header["User-Agent"])
				if ua == "" {
					continue
				}
				n++
				c := ParseClaim(ua)
				if !c.Judged() {
					t.Errorf("%s: %q is not judged", sig.name, ua)
				}
				v := Judge(c, "GET", sig.header, TLS{}, Secure)
				if v.Decisive() {
					t.Errorf("%s: decisive evidence against a real browser: %s\n%v", sig.name, v.Reason(), sig.header)
				} else if v.Evidence != known[sig.name] {
					t.Errorf("%s: evidence %q, want %q: %s", sig.name, v.Evidence, known[sig.name], v.Reason())
				}
				t.Logf("%-36s %-28s %s", sig.name, c, v.Evidence)
			}
		}
	}
	if n == 0 {
		t.Fatal("no signature with headers read")
	}
	t.Logf("%d browsers' navigations judged", n)
}

type signature struct {
	name   string
	header http.Header
}

// readSignatures reads the names and request headers of the signatures in
// a curl-impersonate YAML file: "name: ..." (or the browser's name,
// version and os), and the quoted "- 'name: value'" items of the first
// "headers:" list of each document (the HTTP/2 HEADERS frame of the
// navigation), folded quoted scalars included.
func readSignatures(src string) []signature {
	var out []signature
	for _, doc := range strings.Split("\n"+src, "\n---") {
		var sig signature
		var bname, bversion, bos string
		inHeaders, done := false, false
		lines := strings.Split(doc, "\n")
		for i := 0; i < len(lines); i++ {
			l := strings.TrimSpace(lines[i])
			switch {
			case strings.HasPrefix(l, "name:") && sig.name == "" && !strings.HasPrefix(lines[i], " "):
				sig.name = strings.TrimSpace(strings.TrimPrefix(l, "name:"))
			case strings.HasPrefix(l, "name:") && bname == "":
				bname = strings.TrimSpace(strings.TrimPrefix(l, "name:"))
			case strings.HasPrefix(l, "version:") && bversion == "":
				bversion = strings.TrimSpace(strings.TrimPrefix(l, "version:"))
			case strings.HasPrefix(l, "os:") && bos == "":
				bos = strings.TrimSpace(strings.TrimPrefix(l, "os:"))
			case l == "headers:" && !done:
				inHeaders, sig.header = true, http.Header{}
			case inHeaders && strings.HasPrefix(l, "- ") && len(l) > 2 && (l[2] == '\'' || l[2] == '"'):
				q := l[2]
				item := l[3:]
				for !closedQuote(item, q) && i+1 < len(lines) {
					i++
					item += " " + strings.TrimSpace(lines[i])
				}
				item = strings.TrimRight(strings.TrimSpace(item), " ")
				item = strings.TrimSuffix(item, string(q))
				if q == '\'' {
					item = strings.ReplaceAll(item, "''", "'")
				} else {
					item = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(item)
				}
				if k, v, ok := strings.Cut(item, ": "); ok {
					sig.header.Add(textproto.CanonicalMIMEHeaderKey(k), v)
				}
			case inHeaders:
				inHeaders, done = false, true
			}
		}
		if sig.name == "" {
			sig.name = bname + "_" + bversion + "_" + bos
		}
		if sig.header != nil {
			out = append(out, sig)
		}
	}
	return out
}

// closedQuote reports whether a quoted scalar's text (after its opening
// quote) ends with its closing quote.
func closedQuote(s string, q byte) bool {
	s = strings.TrimRight(s, " ")
	if !strings.HasSuffix(s, string(q)) {
		return false
	}
	if q == '\'' {
		// '' is an escaped quote: an odd run of quotes at the end closes.
		k := 0
		for k < len(s) && s[len(s)-1-k] == '\'' {
			k++
		}
		return k%2 == 1
	}
	return !strings.HasSuffix(s, `\"`)
}
