package grafana

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDashboard: every panel has a title, a description, the dashboard's
// datasource variable and queries of robots_guard's metrics; ids are
// unique; the zone variable exists.
func TestDashboard(t *testing.T) {
	d, err := Parse()
	if err != nil {
		t.Fatal(err)
	}
	if d.UID == "" || d.Title == "" || len(d.Panels) < 8 {
		t.Fatalf("dashboard %q (%q) has %d panels", d.Title, d.UID, len(d.Panels))
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	if !vars["datasource"] || !vars["zone"] {
		t.Errorf("variables %v, want datasource and zone", vars)
	}
	metric := regexp.MustCompile(`caddy_robots_guard_[a-z_]+`)
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if p.Title == "" || p.Description == "" || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 || ids[p.ID] {
			t.Errorf("panel %d %q: incomplete or duplicate", p.ID, p.Title)
		}
		ids[p.ID] = true
		for _, q := range p.Targets {
			if !metric.MatchString(q.Expr) {
				t.Errorf("panel %q: query %q reads no robots_guard metric", p.Title, q.Expr)
			}
		}
	}
}

// TestPromQL: promtool accepts every query, as a recording rule.
func TestPromQL(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian: apt-get install prometheus)")
	}
	d, err := Parse()
	if err != nil {
		t.Fatal(err)
	}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: robots_guard_dashboard\n    rules:\n")
	n := 0
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			n++
			fmt.Fprintf(&rules, "      - record: robots_guard:dashboard_query_%d\n        expr: %q\n", n, Expand(q.Expr))
		}
	}
	file := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("SUCCESS: %d rules found", n)) {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
	t.Logf("promtool: %d queries valid", n)
}
