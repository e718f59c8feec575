package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/robotsguard/robotsguard/enforce/redisstore/redistest"
)

// TestBlockReasons (issue 28): a block carries what made it, in the store
// (in process and in Redis), the admin API's JSON ("reason"), `caddy
// robots blocked` (REASON) and the decision log ("block_reason"): a trap
// hit, strikes for disallowed paths, a blocked class (block_class ai) and
// a bad agent, each from its own address.
func TestBlockReasons(t *testing.T) {
	need(t, "curl")
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			guard := "strikes 2\n\t\tblock_class ai"
			if store == "redis" {
				guard += "\n\t\tstore redis " + redistest.Start(t).URL
			}
			admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			s := start(t, options{trustProxy: true, admin: admin, guard: guard})
			const bot = "ReasonBot/1.0 (+https://bot.example/)"
			clients := []struct{ ip, ua, path, reason, token string }{
				{"192.0.2.1", bot, "/private-archive/x.html", "trap", ""},
				{"192.0.2.2", bot, "/private/report.html", "disallowed", "reasonbot"},
				{"192.0.2.3", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", "/about.html", "class", "gptbot"},
				{"192.0.2.4", "sqlmap/1.7", "/about.html", "bad_agent", ""},
			}
			for _, c := range clients {
				for range 3 {
					get(t, s.front, c.path, c.ip, c.ua)
				}
				if code, reason := get(t, s.front, "/index.html", c.ip, c.ua); code != 403 || reason != "blocked_client" {
					t.Errorf("%s (%s) is not blocked: %d %q", c.ip, c.reason, code, reason)
				}
			}
			// The admin API's JSON.
			var ans struct {
				Zones map[string][]struct {
					IP     string `json:"ip"`
					Token  string `json:"token"`
					Reason string `json:"reason"`
				} `json:"zones"`
			}
			body := adminGet(t, admin, "/robots_guard/blocked")
			if err := json.Unmarshal([]byte(body), &ans); err != nil {
				t.Fatalf("admin JSON: %v\n%s", err, body)
			}
			got := map[string]string{}
			for _, b := range ans.Zones[s.zone()] {
				got[b.IP+" "+b.Token] = b.Reason
			}
			// The CLI's table.
			out, err := exec.Command(caddyBin, "robots", "blocked", "--address", admin).CombinedOutput()
			if err != nil {
				t.Fatalf("caddy robots blocked: %v\n%s", err, out)
			}
			t.Logf("caddy robots blocked:\n%s", out)
			if !strings.Contains(string(out), "REASON") {
				t.Errorf("no REASON column")
			}
			for _, c := range clients {
				if r := got[c.ip+" "+c.token]; r != c.reason {
					t.Errorf("admin JSON: %s %q: reason %q, want %q (%s)", c.ip, c.token, r, c.reason, body)
				}
				token := c.token
				if token == "" {
					token = `\(whole IP\)`
				}
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(s.zone()) + ` +` + regexp.QuoteMeta(c.ip) + ` +` + token + ` +\S+ +` + c.reason + ` +1 `).Match(out) {
					t.Errorf("caddy robots blocked: no row for %s %s with reason %s", c.ip, token, c.reason)
				}
			}
			// The decision log.
			logged := map[string]string{}
			for _, e := range s.moduleEntries(t) {
				if r, ok := e["block_reason"].(string); ok {
					logged[e["client_ip"].(string)] = r
				}
			}
			for _, c := range clients {
				if logged[c.ip] != c.reason {
					t.Errorf("log: %s block_reason %q, want %q", c.ip, logged[c.ip], c.reason)
				}
			}
		})
	}
}
