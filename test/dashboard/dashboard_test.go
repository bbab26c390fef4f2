// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`up`: {"up"},
		`sum by (kind, result) (rate(a_count{job=~"$job", namespace=~"$namespace"}[$__rate_interval]))`:   {"a_count"},
		`histogram_quantile(0.99, sum by (le, name) (rate(q_bucket{name=~"resourcebinding|x"}[5m])))`:     {"q_bucket"},
		`sum(rate(a_total[5m])) by (reason) / ignoring (reason) group_left sum(rate(b_total[5m]))`:        {"a_total", "b_total"},
		`count by (reason) (sum by (cluster, reason) (rate(f_total{cluster!="x"}[1m])) > 0) or vector(0)`: {"f_total"},
		`a and on (cluster) b unless c or d offset 5m`:                                                    {"a", "b", "c", "d"},
		`label_replace(a{l="}"}, "dst", "$1", "src", "(.*)")`:                                             {"a"},
		`max_over_time(rate(a[5m])[1h:1m]) > bool Inf`:                                                    {"a"},
		`sum without (instance) (a) * on () group_right (job) b + 1e3 - 0.5 * NaN`:                        {"a", "b"},
		`increase(a[$__range]) + ${var:regex} + [[old]] + rec:rule:sum # comment naming not_a_metric`:     {"a", "rec:rule:sum"},
		`a + a`: {"a"},
	} {
		got, err := MetricNames(expr)
		if err != nil {
			t.Errorf("MetricNames(%q): %v", expr, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("MetricNames(%q) (-want +got):\n%s", expr, diff)
		}
	}
}

func TestMetricNamesRefusesWhatItCannotRead(t *testing.T) {
	for _, expr := range []string{
		`{__name__="a"}`,
		`sum(rate(a{job="x}[5m]))`,
		`rate(a[5m)`,
		`sum(a{job="x"`,
	} {
		if names, err := MetricNames(expr); err == nil {
			t.Errorf("MetricNames(%q) = %q, want an error", expr, names)
		}
	}
}

// served is what a process serving the histogram h, the counter c_total and the gauge g
// exposes.
var served = map[string]bool{"h_bucket": true, "h_sum": true, "h_count": true, "c_total": true, "g": true}

func dashboardOf(t *testing.T, js string) *Dashboard {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.json")
	if err := os.WriteFile(path, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestProblemsNamesEveryMetricNotServed(t *testing.T) {
	d := dashboardOf(t, `{
	  "panels": [
	    {"id": 1, "type": "row", "title": "Row", "panels": [
	      {"id": 2, "type": "timeseries", "title": "Nested", "description": "d", "targets": [{"refId": "A", "expr": "rate(c_total[5m]) / rate(typo_total[5m])"}]}
	    ]},
	    {"id": 3, "type": "timeseries", "title": "Histogram by its own name", "description": "d",
	     "targets": [{"refId": "A", "expr": "histogram_quantile(0.5, rate(h_bucket[5m]))"}, {"refId": "B", "expr": "rate(h[5m])"}]},
	    {"id": 4, "type": "stat", "title": "Fine", "description": "d", "targets": [{"refId": "A", "expr": "sum(g) + rate(h_count[1m]) + h_sum"}]}
	  ],
	  "templating": {"list": [
	    {"name": "datasource", "type": "datasource", "query": "prometheus"},
	    {"name": "job", "type": "query", "query": {"query": "label_values(gone, job)"}},
	    {"name": "ns", "type": "query", "query": "label_values(g{job=~\"$job\"}, namespace)"}
	  ]}
	}`)
	want := []string{
		`panel "Nested" target A: metric typo_total is not served`,
		`panel "Histogram by its own name" target B: metric h is not served`,
		`variable "job": metric gone is not served`,
	}
	if diff := cmp.Diff(want, d.Problems(served)); diff != "" {
		t.Errorf("Problems (-want +got):\n%s", diff)
	}
}

func TestProblemsWantsATitleADescriptionAndAQuery(t *testing.T) {
	d := dashboardOf(t, `{
	  "panels": [
	    {"id": 1, "type": "timeseries", "description": "d", "targets": [{"refId": "A", "expr": "g"}]},
	    {"id": 2, "type": "timeseries", "title": "Says nothing", "targets": [{"refId": "A", "expr": "g"}]},
	    {"id": 3, "type": "timeseries", "title": "Asks nothing", "description": "d"},
	    {"id": 4, "type": "timeseries", "title": "Names nothing", "description": "d", "targets": [{"refId": "A", "expr": "vector(1)"}]},
	    {"id": 5, "type": "row"}
	  ],
	  "templating": {"list": [{"name": "any", "type": "query", "query": "label_values(job)"}]}
	}`)
	want := []string{
		`panel 1 has no title`,
		`panel "Says nothing" has no description saying what it answers`,
		`panel "Asks nothing" has no query`,
		`row 5 has no title`,
		`variable "any": query "label_values(job)" is not label_values(<metric selector>, <label>): a variable of any label across every metric could offer values no panel shows`,
	}
	if diff := cmp.Diff(want, d.Problems(served)); diff != "" {
		t.Errorf("Problems (-want +got):\n%s", diff)
	}
	d.Templating.List = nil
	if got := d.Problems(served); !slices.Contains(got, `panel "Names nothing" target A: "vector(1)" names no metric`) {
		t.Errorf("Problems = %q, want the query naming no metric", got)
	}
}

// TestShippedDashboardIsImportable checks what Grafana needs to import the dashboard into
// any instance: a Prometheus data source chosen on import, used by every panel and query.
// That its metrics are served is checked against the running manager in
// test/integration/dashboard.
func TestShippedDashboardIsImportable(t *testing.T) {
	path := filepath.Join("..", "..", "config", "grafana", "binding-controller.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var model struct {
		UID           string `json:"uid"`
		SchemaVersion int    `json:"schemaVersion"`
		Panels        []struct {
			Title      string          `json:"title"`
			Type       string          `json:"type"`
			Datasource json.RawMessage `json:"datasource"`
			Targets    []struct {
				Datasource json.RawMessage `json:"datasource"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &model); err != nil {
		t.Fatal(err)
	}
	if model.UID == "" || model.SchemaVersion < 39 {
		t.Errorf("uid %q, schemaVersion %d: want a fixed uid (links survive a re-import) and schema 39 or later", model.UID, model.SchemaVersion)
	}
	if len(model.Templating.List) == 0 || model.Templating.List[0].Name != "datasource" ||
		model.Templating.List[0].Type != "datasource" || model.Templating.List[0].Query != "prometheus" {
		t.Errorf("the first variable is %+v, want the Prometheus data source variable", model.Templating.List)
	}
	const ds = `{"type":"prometheus","uid":"${datasource}"}`
	for _, p := range model.Panels {
		if p.Type == "row" {
			continue
		}
		if compact(t, p.Datasource) != ds {
			t.Errorf("panel %q: datasource %s, want %s", p.Title, p.Datasource, ds)
		}
		for _, tg := range p.Targets {
			if compact(t, tg.Datasource) != ds {
				t.Errorf("panel %q: target datasource %s, want %s", p.Title, tg.Datasource, ds)
			}
		}
	}
	d, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := d.Queries()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if _, err := MetricNames(q.Expr); err != nil {
			t.Errorf("%s: %v", q.Where, err)
		}
	}
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
