// Command capture records the requests that real browsers and real HTTP
// clients send, for the fixtures of package evidence (testdata/captures).
//
// It starts a small site on three origins (HTTPS with a CA of its own,
// plain HTTP on a non-loopback address, plain HTTP on 127.0.0.1), then
//
//   - walks headless Chromium (Debian's chromium, trusting the CA through
//     an NSS database in its HOME) and Firefox ESR (a fresh profile whose
//     certificate database certutil makes trust the CA, driven over
//     WebDriver BiDi) through navigations (typed, reload, link, form,
//     redirect, cross-site, a download) and every
//     kind of subresource (img, CSS, font, script, iframe, favicon,
//     preload, prefetch, speculation rules, media, fetch GET/HEAD/POST,
//     a CORS preflight, XHR, beacon, worker, service worker, WebSocket,
//     CSP and Reporting API reports), with their own User-Agent and with a
//     changed one (a User-Agent switcher, DevTools);
//   - makes one request with each HTTP library and tool (curl, wget, Python
//     requests, httpx, aiohttp and urllib, Go net/http, Node https, Scrapy)
//     sending a Chrome and a Firefox User-Agent, and with curl sending all
//     of a browser's navigation headers;
//
// and writes one JSON file per client. Run it from the repository root:
//
//	go run ./evidence/internal/capture -out evidence/testdata/captures
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// desktopUA is an ordinary desktop User-Agent for Chromium on Linux, the
// one the installed Chromium sends when it is not headless (its major
// version, as "chromium --version" says it; 156 when that cannot be read),
// so that its client hints, which name the same version, agree with it.
var desktopUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + chromiumMajor() + ".0.0.0 Safari/537.36"

// chromiumMajor returns the installed Chromium's major version, or "156".
func chromiumMajor() string {
	out, err := exec.Command("chromium", "--version").Output()
	if err != nil {
		return "156"
	}
	for _, f := range strings.Fields(string(out)) {
		if major, _, ok := strings.Cut(f, "."); ok && major != "" && strings.Trim(major, "0123456789") == "" {
			return major
		}
	}
	return "156"
}

// Fixture is one client's file.
type Fixture struct {
	// Client names the client and its configuration.
	Client string `json:"client"`
	// Kind is "browser" or "library".
	Kind string `json:"kind"`
	// Software is the client's version, as it prints it.
	Software string `json:"software"`
	// Config says how the client was set up.
	Config string `json:"config"`
	// UAChanged: a real browser whose User-Agent was changed (a switcher
	// extension, a preference, DevTools). Such a browser may show a
	// mismatch, never decisive evidence.
	UAChanged bool `json:"ua_changed,omitempty"`
	// Copies names the browser whose headers a library copied.
	Copies string `json:"copies,omitempty"`
	// Made is when the capture was made.
	Made     string    `json:"made"`
	Requests []Request `json:"requests,omitempty"`
}

func main() {
	out := flag.String("out", "evidence/testdata/captures", "the directory to write the fixtures to")
	ip := flag.String("ip", "", "a non-loopback IPv4 address of this machine to serve on (default: the first one)")
	only := flag.String("only", "", "capture only these clients (comma-separated names)")
	flag.Parse()
	log.SetFlags(0)
	if *ip == "" {
		*ip = firstIP()
	}
	if *ip == "" {
		log.Fatal("capture: no non-loopback IPv4 address; pass -ip")
	}
	tmp, err := os.MkdirTemp("", "evidence-capture-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	s, err := newSite(*ip, tmp)
	if err != nil {
		log.Fatal(err)
	}
	defer s.close()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	want := func(name string) bool {
		return *only == "" || strings.Contains(","+*only+",", ","+name+",")
	}
	made := time.Now().UTC().Format("2006-01-02")
	write := func(f Fixture) {
		f.Made = made
		sortRequests(f.Requests)
		b, err := marshal(f)
		if err != nil {
			log.Fatal(err)
		}
		path := filepath.Join(*out, f.Client+".json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			log.Fatal(err)
		}
		log.Printf("%s: %d requests", path, len(f.Requests))
	}
	full := []string{"secure", "insecure", "loopback"}
	short := []string{"secure", "insecure"}
	chromiumVersion := toolVersion([]string{"chromium", "--version"})
	navigation := map[string]http.Header{} // a browser's typed navigation over HTTPS, for the tools that copy it
	for _, r := range []struct {
		name, config string
		flags        []string
		cdpUA        string
		origins      []string
		changed      bool
	}{
		{"chromium", "--user-agent=" + desktopUA + " (an ordinary desktop User-Agent)", []string{"--user-agent=" + desktopUA}, "", full, false},
		{"chromium-headless-ua", "its own User-Agent (HeadlessChrome)", nil, "", short, false},
		{"chromium-windows-ua", "--user-agent=" + chromeUA + " (a User-Agent switcher)", []string{"--user-agent=" + chromeUA}, "", short, true},
		{"chromium-firefox-ua", "--user-agent=" + firefoxUA + " (a User-Agent switcher)", []string{"--user-agent=" + firefoxUA}, "", short, true},
		{"chromium-devtools-ua", "Emulation.setUserAgentOverride(" + chromeUA + ") without client-hint metadata (DevTools, automation)", nil, chromeUA, short, true},
	} {
		if !want(r.name) {
			continue
		}
		f := Fixture{Client: r.name, Kind: "browser", Software: chromiumVersion, Config: "headless; " + r.config, UAChanged: r.changed}
		s.start(r.name)
		for _, kind := range r.origins {
			b, err := startChromium(s, filepath.Join(tmp, r.name+"-"+kind), r.flags...)
			if err != nil {
				log.Fatalf("%s: %v", r.name, err)
			}
			if r.cdpUA != "" {
				if err := b.overrideUA(r.cdpUA); err != nil {
					log.Fatalf("%s: %v", r.name, err)
				}
			}
			log.Printf("%s: %s", r.name, kind)
			if len(r.origins) == len(full) {
				browse(s, b, kind, log.Printf)
			} else {
				browseShort(s, b, kind, log.Printf)
			}
			b.close()
		}
		f.Requests = s.take()
		keepNavigation(navigation, "chromium", r.name, f.Requests)
		write(f)
	}
	firefoxVersion := toolVersion([]string{"firefox-esr", "--version"})
	for _, r := range []struct {
		name, config string
		prefs        map[string]any
		origins      []string
		changed      bool
	}{
		{"firefox", "a fresh profile", nil, full, false},
		{"firefox-rfp", "privacy.resistFingerprinting and Global Privacy Control (as Tor Browser, Mullvad Browser, LibreWolf)",
			map[string]any{"privacy.resistFingerprinting": true, "privacy.globalprivacycontrol.enabled": true}, short, false},
		{"firefox-chrome-ua", "general.useragent.override=" + chromeUA + " (as a User-Agent switcher, or Firefox's own site-specific overrides)",
			map[string]any{"general.useragent.override": chromeUA}, short, true},
	} {
		if !want(r.name) {
			continue
		}
		f := Fixture{Client: r.name, Kind: "browser", Software: firefoxVersion, Config: "headless; " + r.config, UAChanged: r.changed}
		s.start(r.name)
		for _, kind := range r.origins {
			b, err := startFirefox(s, filepath.Join(tmp, r.name+"-"+kind), r.prefs)
			if err != nil {
				log.Fatalf("%s: %v", r.name, err)
			}
			log.Printf("%s: %s", r.name, kind)
			if len(r.origins) == len(full) {
				browse(s, b, kind, log.Printf)
			} else {
				browseShort(s, b, kind, log.Printf)
			}
			b.close()
		}
		f.Requests = s.take()
		keepNavigation(navigation, "firefox", r.name, f.Requests)
		write(f)
	}
	for _, t := range tools {
		if !want(t.name) {
			continue
		}
		f := Fixture{Client: t.name, Kind: "library", Software: toolVersion(t.version), Copies: t.copies}
		uas := []struct{ name, ua string }{{"chrome-ua", chromeUA}, {"firefox-ua", firefoxUA}}
		var header http.Header
		switch t.copies {
		case "chromium":
			uas, header = uas[:1], navigation["chromium"]
			f.Config = "a Chrome User-Agent and every other header of Chromium's typed navigation over HTTPS (" + chromiumVersion + ")"
		case "firefox":
			uas, header = uas[1:], navigation["firefox"]
			f.Config = "a Firefox User-Agent and every other header of Firefox's typed navigation over HTTPS (" + firefoxVersion + ")"
		default:
			f.Config = "a Chrome and a Firefox User-Agent, nothing else set"
		}
		if t.copies != "" && header == nil {
			log.Fatalf("%s: capture %s first (it copies its headers)", t.name, t.copies)
		}
		for _, u := range uas {
			run := t.name + "-" + u.name
			s.start(run)
			for _, base := range []string{fmt.Sprintf("https://%s:%d", s.ip, s.tlsPort), fmt.Sprintf("http://%s:%d", s.ip, s.httpPort)} {
				if err := t.fetch(tmp, s.caPEM, base+"/lib/page", u.ua, header); err != nil {
					log.Fatalf("%s: %v", run, err)
				}
			}
			f.Requests = append(f.Requests, s.take()...)
		}
		write(f)
	}
}

// marshal writes a fixture as JSON with one request a line, which keeps
// the files small and their diffs readable.
func marshal(f Fixture) ([]byte, error) {
	reqs := f.Requests
	f.Requests = nil
	head, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.Write(head[:len(head)-len("\n}")])
	b.WriteString(",\n  \"requests\": [")
	for i, r := range reqs {
		line, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		b.Write(line)
	}
	b.WriteString("\n  ]\n}\n")
	return []byte(b.String()), nil
}

// browseShort is a typed navigation with its subresources, then a link.
func browseShort(s *site, b browser, kind string, logf func(string, ...any)) {
	self := s.origin(kind, siteA)
	if err := b.navigate(self + "/page.html"); err != nil {
		logf("  %s navigate: %v", kind, err)
	}
	if !s.waitN(self+"/done?page", 1, 30*time.Second) {
		logf("  %s navigate: no /done?page in 30 s", kind)
	}
	if err := b.click("next"); err != nil {
		logf("  %s link: %v", kind, err)
	}
	if !s.waitN(self+"/done?next", 1, 30*time.Second) {
		logf("  %s link: no /done?next in 30 s", kind)
	}
}

// keepNavigation keeps the headers of the unchanged browser's typed
// navigation over HTTPS, for the tools that copy them.
func keepNavigation(nav map[string]http.Header, family, run string, rs []Request) {
	if run != family {
		return
	}
	for _, r := range rs {
		if r.Origin == "secure" && r.Case == "navigate" && strings.HasSuffix(r.URL, "/page.html") {
			nav[family] = r.Header
			return
		}
	}
}

func firstIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}
