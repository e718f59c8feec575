package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// doctorSite makes a test directory with a copy of the demo site (its
// robots.txt disallows /private/ for every crawler) and returns the
// directory and the site's folder.
func doctorSite(t *testing.T) (dir, site string) {
	t.Helper()
	dir = t.TempDir()
	site = filepath.Join(dir, "site")
	copyDir(t, "../site", site)
	return dir, site
}

// doctor runs caddy robots doctor on config (a Caddyfile) and returns its
// output and exit status.
func doctor(t *testing.T, dir, name, config string, args ...string) (string, int) {
	t.Helper()
	file := writeTestFile(t, dir, name, config)
	return caddyCmd(t, dir, append([]string{"robots", "doctor", "--config", file}, args...)...)
}

// expectDoctor checks the doctor's verdict on a config: the exit status
// and the lines it must print.
func expectDoctor(t *testing.T, what, out string, code, wantCode int, wants ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("%s: doctor exited %d, want %d:\n%s", what, code, wantCode, out)
	}
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s: the doctor does not say %q:\n%s", what, w, out)
		}
	}
}

// TestDoctorAllGood: on a site whose guard works, the doctor says which
// robots.txt is enforced, that GPTBot is refused a path it disallows and
// a browser is served, and exits 0.
func TestDoctorAllGood(t *testing.T) {
	need(t)
	dir, site := doctorSite(t)
	out, code := doctor(t, dir, "Caddyfile", fmt.Sprintf(`{
	admin off
}
:%d {
	bind 127.0.0.1
	robots_guard {
		robots %s/robots.txt
		trap /private-archive/
	}
	root * %s
	file_server
}
`, freePort(t), site, site))
	expectDoctor(t, "a working guard", out, code, 0,
		"robots.txt: the file "+site+"/robots.txt, served by robots_guard",
		"ok: a browser (Firefox) is served / (200 OK,",
		"ok: GPTBot is refused /private/ (403 Forbidden, disallowed; robots.txt line",
		"all good: 1 site checked")
	if strings.Contains(out, "PROBLEM") {
		t.Errorf("problems on a working guard:\n%s", out)
	}
}

// TestDoctorAfterFileServer (issue 26, mistake 4): route { file_server;
// robots_guard } never reaches the guard; the doctor says so, with the
// fix; with the guard first, all is good.
func TestDoctorAfterFileServer(t *testing.T) {
	need(t)
	dir, site := doctorSite(t)
	config := func(route string) string {
		return fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\troot * %s\n\troute {\n%s\n\t}\n}\n", freePort(t), site, route)
	}
	guard := fmt.Sprintf("\t\trobots_guard {\n\t\t\trobots %s/robots.txt\n\t\t}", site)
	out, code := doctor(t, dir, "bad.Caddyfile", config("\t\tfile_server\n"+guard))
	bad := filepath.Join(dir, "bad.Caddyfile")
	expectDoctor(t, "file_server before robots_guard", out, code, 1,
		"PROBLEM: robots_guard is never reached: GPTBot got GET /private/, which robots.txt disallows for it, with 200 OK from file_server",
		"It comes after file_server ("+bad+":5) in the same route: file_server answers every request",
		"Fix: put robots_guard first in the route: replace "+bad+":4-9 with:",
		"1 problem found")
	out, code = doctor(t, dir, "good.Caddyfile", config(guard+"\n\t\tfile_server"))
	expectDoctor(t, "robots_guard before file_server", out, code, 0, "ok: GPTBot is refused /private/", "all good")
}

// TestDoctorMatcher (issue 26, mistake 3): a guard behind a matcher that
// no disallowed path passes guards nothing robots.txt disallows; the
// robots.txt file on the directive line fails before any request; the
// guard without a matcher is good.
func TestDoctorMatcher(t *testing.T) {
	need(t)
	dir, site := doctorSite(t)
	config := func(matcher string) string {
		return fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\trobots_guard %s{\n\t\trobots %s/robots.txt\n\t}\n\troot * %s\n\tfile_server\n}\n", freePort(t), matcher, site, site)
	}
	out, code := doctor(t, dir, "blog.Caddyfile", config("/blog/* "))
	expectDoctor(t, "robots_guard /blog/*", out, code, 1,
		"PROBLEM: robots_guard is never reached: GPTBot got GET /private/",
		"It runs only for requests that match path /blog/* ("+filepath.Join(dir, "blog.Caddyfile")+":3), and GET /private/ does not")
	file := filepath.Join(site, "robots.txt")
	out, code = doctor(t, dir, "file.Caddyfile", fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\trobots_guard %s\n\troot * %s\n\tfile_server\n}\n", freePort(t), file, site))
	expectDoctor(t, "robots_guard FILE", out, code, 1, "would be read as a request matcher", "robots_guard { robots "+file+" }")
	out, code = doctor(t, dir, "good.Caddyfile", config(""))
	expectDoctor(t, "robots_guard without a matcher", out, code, 0, "ok: GPTBot is refused /private/", "all good")
}

// TestDoctorEmptyBackend (issue 26, mistake 5): a backend site written
// http://127.0.0.1:PORT matches no proxied Host, so every page is an empty
// 200; the doctor says why and how to write it; written :PORT with bind,
// the pages come back and all is good.
func TestDoctorEmptyBackend(t *testing.T) {
	need(t)
	dir, site := doctorSite(t)
	back := freePort(t)
	config := func(backend, bind string) string {
		return fmt.Sprintf(`:%d {
	bind 127.0.0.1
	robots_guard {
		robots %s/robots.txt
	}
	reverse_proxy 127.0.0.1:%d
}
%s {
%s	root * %s
	file_server
}
`, freePort(t), site, back, backend, bind, site)
	}
	out, code := doctor(t, dir, "bad.Caddyfile", config(fmt.Sprintf("http://127.0.0.1:%d", back), ""))
	expectDoctor(t, "backend http://127.0.0.1:PORT", out, code, 1,
		"PROBLEM: GET / came back 200 with an empty body",
		fmt.Sprintf("reverse_proxy sends Host: localhost to 127.0.0.1:%d, and the site there (server srv1) answers only host 127.0.0.1", back),
		fmt.Sprintf("Fix: write the backend site by its port,\n        :%d {\n            bind 127.0.0.1", back))
	out, code = doctor(t, dir, "good.Caddyfile", config(fmt.Sprintf(":%d", back), "\tbind 127.0.0.1\n"))
	expectDoctor(t, "backend :PORT with bind", out, code, 0, "ok: a browser (Firefox) is served / (200 OK,", "ok: GPTBot is refused /private/", "all good")
}

// TestDoctorMissingRobots (issue 26, mistake 2, as the doctor sees it): a
// typo in the robots path is a config error named with the path and its
// line.
func TestDoctorMissingRobots(t *testing.T) {
	need(t)
	dir, site := doctorSite(t)
	typo := filepath.Join(dir, "sitee", "robots.txt")
	out, code := doctor(t, dir, "Caddyfile", fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\trobots_guard {\n\t\trobots %s\n\t}\n\troot * %s\n\tfile_server\n}\n", freePort(t), typo, site))
	expectDoctor(t, "a robots path with a typo", out, code, 1, "robots_guard: robots: "+typo+" does not exist (a typo in the path?); to start without it on purpose, with no rules until it appears, add robots_optional, at "+filepath.Join(dir, "Caddyfile")+":4")
}

// TestDoctorNoRules (issue 26, mistakes 2 and 6, as the doctor sees
// them): a robots file missing on purpose (robots_optional) and a
// robots.txt without rules (empty, or a plain-text page) are findings,
// with the start's log line, and the doctor exits 1; the site's real file
// is all good.
func TestDoctorNoRules(t *testing.T) {
	need(t)
	dir, site := doctorSite(t)
	config := func(robots, extra string) string {
		return fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\trobots_guard {\n\t\trobots %s\n%s\t}\n\troot * %s\n\tfile_server\n}\n", freePort(t), robots, extra, site)
	}
	const nothing = "PROBLEM: the robots.txt robots_guard enforces disallows nothing for any crawler (traps aside): there is nothing to refuse."
	missing := filepath.Join(dir, "later", "robots.txt")
	out, code := doctor(t, dir, "optional.Caddyfile", config(missing, "\t\trobots_optional\n"))
	expectDoctor(t, "a robots file missing on purpose", out, code, 1,
		"PROBLEM: robots_guard logs at warn: robots.txt not found: no rules are enforced until it appears (RFC 9309: unavailable means allow all) (file: "+missing+")", nothing)
	empty := writeTestFile(t, dir, "empty/robots.txt", "")
	out, code = doctor(t, dir, "empty.Caddyfile", config(empty, ""))
	expectDoctor(t, "an empty robots.txt", out, code, 1,
		"PROBLEM: robots_guard logs at warn: robots.txt has no Allow or Disallow rules: every crawler may fetch everything; installed, as an empty robots.txt is a valid choice: restore the file if this was not meant (file: "+empty+")", nothing)
	plain := writeTestFile(t, dir, "plain/robots.txt", "Nothing to see here.\n")
	out, code = doctor(t, dir, "plain.Caddyfile", config(plain, ""))
	expectDoctor(t, "a plain-text robots.txt", out, code, 1, "robots.txt has no Allow or Disallow rules", nothing)
	out, code = doctor(t, dir, "good.Caddyfile", config(filepath.Join(site, "robots.txt"), ""))
	expectDoctor(t, "the site's robots.txt", out, code, 0, "all good")
}

// TestDoctorTrustedProxies: a site behind a proxy that trusted_proxies
// does not name sees every client as the proxy; the doctor finds the
// X-Forwarded-For of the running server's access log, which the config
// writes; with trusted_proxies it is good. The running server is not
// touched: the doctor's requests are not in its log.
func TestDoctorTrustedProxies(t *testing.T) {
	need(t, "curl")
	for _, tc := range []struct {
		name    string
		servers string
		code    int
		want    string
	}{
		{"untrusted", "", 1, "PROBLEM: X-Forwarded-For arrives from 127.0.0.1 (3 requests in "},
		{"trusted", "\tservers {\n\t\ttrusted_proxies static 127.0.0.1/32\n\t\ttrusted_proxies_strict\n\t}\n", 0, "ok: no X-Forwarded-For from an untrusted peer in 1 access log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, site := doctorSite(t)
			front, proxy := freePort(t), freePort(t)
			access := filepath.Join(dir, "access.log")
			decisions := filepath.Join(dir, "robots_guard.log")
			config := writeTestFile(t, dir, "Caddyfile", fmt.Sprintf(`{
	admin off
	log robots_guard {
		output file %s
		format json
		include http.handlers.robots_guard
	}
%s}
:%d {
	bind 127.0.0.1
	log {
		output file %s
		format json
	}
	robots_guard {
		robots %s/robots.txt
		log_allowed 1
	}
	root * %s
	file_server
}
:%d {
	bind 127.0.0.1
	reverse_proxy 127.0.0.1:%d
}
`, decisions, tc.servers, front, access, site, site, proxy, front))
			cmd := exec.Command(caddyBin, "run", "--config", config)
			cmd.Dir = dir
			output := &syncBuffer{}
			cmd.Stdout, cmd.Stderr = output, output
			startProcess(t, cmd, "caddy", output, 5*time.Second)
			base := fmt.Sprintf("http://127.0.0.1:%d", proxy)
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if out, err := exec.Command("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", base+"/").Output(); err == nil && string(out) == "200" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("caddy did not start:\n%s", output.String())
				}
			}
			for _, p := range []string{"/about.html", "/docs/"} {
				if code, _, _ := curl(t, base, p, "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"); code != 200 {
					t.Fatalf("GET %s through the proxy: %d", p, code)
				}
			}
			out, code := caddyCmd(t, dir, "robots", "doctor", "--config", config)
			expectDoctor(t, tc.name, out, code, tc.code, tc.want)
			if tc.code == 1 {
				expectDoctor(t, tc.name, out, code, 1, "does not trust (trusted_proxies)", "servers { trusted_proxies static 127.0.0.1; trusted_proxies_strict }")
			}
			logged, err := os.ReadFile(decisions)
			if err != nil || strings.Contains(string(logged), "robotsguard-doctor") || strings.Contains(string(logged), "GPTBot") {
				t.Errorf("the doctor's requests reached the running server (%v):\n%s", err, logged)
			}
		})
	}
}

// TestDoctorRobotsURL: a robots.txt read from the application, a server of
// the same config, is fetched from the doctor's copy of it (its port
// follows), once that server listens.
func TestDoctorRobotsURL(t *testing.T) {
	need(t)
	dir, site := doctorSite(t)
	back := freePort(t)
	out, code := doctor(t, dir, "Caddyfile", fmt.Sprintf(`:%d {
	bind 127.0.0.1
	robots_guard {
		robots http://127.0.0.1:%d/robots.txt
	}
	reverse_proxy 127.0.0.1:%d
}
:%d {
	bind 127.0.0.1
	root * %s
	file_server
}
`, freePort(t), back, back, back, site))
	expectDoctor(t, "robots URL of a server of the config", out, code, 0,
		fmt.Sprintf("robots.txt: fetched from http://127.0.0.1:%d/robots.txt, served by robots_guard", back),
		"ok: GPTBot is refused /private/", "all good")
	// The application serves an empty robots.txt: the fetch that follows
	// the first failed one reloads it ("robots.txt reloaded", which makes
	// the failure good), and the warning that it has no rules, logged
	// after it, is a finding.
	writeTestFile(t, site, "robots.txt", "")
	out, code = doctor(t, dir, "empty.Caddyfile", fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\trobots_guard {\n\t\trobots http://127.0.0.1:%d/robots.txt\n\t}\n\treverse_proxy 127.0.0.1:%d\n}\n:%d {\n\tbind 127.0.0.1\n\troot * %s\n\tfile_server\n}\n", freePort(t), back, back, back, site))
	expectDoctor(t, "an empty robots.txt from a URL", out, code, 1,
		"PROBLEM: robots_guard logs at warn: robots.txt has no Allow or Disallow rules: every crawler may fetch everything; installed, as an empty robots.txt is a valid choice: restore the file if this was not meant (url: http://127.0.0.1:") // the doctor's copy listens on ports of its own
}
