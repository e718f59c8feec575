package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/examples/grafana"
)

// TestGrafanaQueries: a real Prometheus scrapes the real binary's metrics
// after real traffic (refusals, a trap, a robots.txt reload), and every
// query of the Grafana dashboard runs on it without error; the panels that
// the traffic feeds return data.
func TestGrafanaQueries(t *testing.T) {
	need(t, "curl", "prometheus")
	d, err := grafana.Parse()
	if err != nil {
		t.Fatal(err)
	}
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := start(t, options{robots: politeRobots(t), admin: admin, guard: "strikes 100\n\t\tburst 100"})
	const gpt = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"

	promPort := freePort(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: caddy\n    static_configs:\n      - targets: [%q]\n", admin)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var promOut strings.Builder
	prom := exec.Command("prometheus", "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort))
	prom.Stdout, prom.Stderr = &promOut, &promOut
	startProcess(t, prom, "prometheus", &promOut, 10*time.Second)

	query := func(expr string) (string, int, error) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/api/v1/query?query=%s", promPort, url.QueryEscape(expr)))
		if err != nil {
			return "", 0, err
		}
		defer resp.Body.Close()
		var ans struct {
			Status string `json:"status"`
			Error  string `json:"error"`
			Data   struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
			return "", 0, err
		}
		if ans.Status != "success" {
			return ans.Status, 0, fmt.Errorf("%s", ans.Error)
		}
		return ans.Status, len(ans.Data.Result), nil
	}

	// Traffic over a few scrapes: allowed, refused, a trap, a reload.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, n, err := query(`up{job="caddy"} == 1`); err == nil && n == 1 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for i := range 6 {
		curl(t, s.front, "/about.html", gpt)
		curl(t, s.front, "/private/", gpt)
		curl(t, s.front, "/", "roguebot/1.0")
		if i == 2 {
			if err := os.WriteFile(s.robots, []byte(politeRobots(t)+"\nDisallow: /drafts/\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(700 * time.Millisecond)
	}
	curl(t, s.front, "/private-archive/", "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")
	time.Sleep(3 * time.Second)

	// Panels fed by this traffic must show data; the others must run.
	mustHaveData := map[string]bool{"Decisions by action": true, "Refusals by reason": true, "Decisions by class": true,
		"Top refused classes and reasons": true, "Refused share": true, "Bots refused per second": true, "robots.txt reloads": true, "Tarpit": true}
	for title, exprs := range d.Queries() {
		for _, e := range exprs {
			_, n, err := query(grafana.Expand(e))
			if err != nil {
				t.Errorf("panel %q: %s: %v", title, e, err)
				continue
			}
			if n == 0 && mustHaveData[title] {
				t.Errorf("panel %q: %s: no data after the traffic", title, e)
			}
			t.Logf("panel %q: %d series", title, n)
		}
	}
}
