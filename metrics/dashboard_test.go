package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDashboardQueriesServedMetrics: every rocketmq_ metric the Grafana
// dashboard (docker/grafana-dashboard.json) queries is one this package
// serves, so the dashboard cannot drift from the endpoint.
func TestDashboardQueriesServedMetrics(t *testing.T) {
	b, err := os.ReadFile("../docker/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	served := map[string]bool{}
	for _, f := range families {
		served[f.name] = true
	}
	for _, s := range []string{"_bucket", "_count", "_sum"} {
		for _, h := range histograms {
			served[h+s] = true
		}
	}
	name := regexp.MustCompile(`rocketmq_[a-z_]+`)
	n := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				n++
				if !served[m] {
					t.Errorf("panel %q queries %s, which the endpoint does not serve", p.Title, m)
				}
			}
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q has an empty query", p.Title)
			}
		}
	}
	if n == 0 {
		t.Fatal("no rocketmq_ metric queried")
	}
}
