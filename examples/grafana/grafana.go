// Package grafana holds the Grafana dashboard for robots_guard's Prometheus
// metrics (robots_guard.json; import it in Grafana and pick the Prometheus
// data source) and reads it for the checks: its tests check that every panel
// is complete and that promtool (Debian's prometheus package) accepts every
// query; examples/e2e's TestGrafanaQueries runs the queries on a real
// Prometheus that scrapes the real binary.
package grafana

import (
	_ "embed"
	"encoding/json"
	"strings"
)

// JSON is the dashboard.
//
//go:embed robots_guard.json
var JSON []byte

// Dashboard is the part of a Grafana dashboard the checks read.
type Dashboard struct {
	UID    string  `json:"uid"`
	Title  string  `json:"title"`
	Panels []Panel `json:"panels"`
	// Templating holds the dashboard's variables.
	Templating struct {
		List []struct {
			Name string `json:"name"`
		} `json:"list"`
	} `json:"templating"`
}

// Panel is one panel.
type Panel struct {
	ID          int    `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Type        string `json:"type"`
	Datasource  struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
	} `json:"targets"`
}

// Parse reads the dashboard.
func Parse() (*Dashboard, error) {
	var d Dashboard
	err := json.Unmarshal(JSON, &d)
	return &d, err
}

// Queries returns every query of the dashboard, by panel title.
func (d *Dashboard) Queries() map[string][]string {
	out := map[string][]string{}
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			out[p.Title] = append(out[p.Title], t.Expr)
		}
	}
	return out
}

// Expand replaces Grafana's variables in a query with values Prometheus
// accepts, as Grafana would for a 6-hour range and every zone.
func Expand(expr string) string {
	return strings.NewReplacer("$__rate_interval", "1m", "$__range", "6h", "$__interval", "15s", "$zone", ".*").Replace(expr)
}
