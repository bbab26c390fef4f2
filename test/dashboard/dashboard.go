// SPDX-License-Identifier: Apache-2.0

// Package dashboard checks a Grafana dashboard against the metrics a process serves: every
// panel says what it answers, and every query, in panels and in template variables, names
// only metrics that are served.
package dashboard

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Dashboard is the part of Grafana's dashboard JSON model the checks read.
type Dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []Panel `json:"panels"`
	Templating struct {
		List []Variable `json:"list"`
	} `json:"templating"`
}

// Panel is a dashboard panel; a row holds the panels it collapses.
type Panel struct {
	ID          int      `json:"id"`
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Targets     []Target `json:"targets"`
	Panels      []Panel  `json:"panels"`
}

// Target is one query of a panel.
type Target struct {
	RefID string `json:"refId"`
	Expr  string `json:"expr"`
}

// Variable is a template variable. Query is a string in older dashboards and an object
// holding the string in newer ones.
type Variable struct {
	Name  string          `json:"name"`
	Type  string          `json:"type"`
	Query json.RawMessage `json:"query"`
}

// Read parses the dashboard at path. Fields the model does not name are ignored: Grafana's
// model is large, and only the parts read here are checked.
func Read(path string) (*Dashboard, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := &Dashboard{}
	if err := json.Unmarshal(raw, d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// Query is one PromQL query of the dashboard and where it is.
type Query struct {
	Where string
	Expr  string
}

// Queries returns the dashboard's PromQL: every panel target's expr, and the metric
// selector of every label_values(...) query variable.
func (d *Dashboard) Queries() ([]Query, error) {
	var qs []Query
	for _, p := range d.AllPanels() {
		for _, t := range p.Targets {
			qs = append(qs, Query{Where: fmt.Sprintf("panel %q target %s", p.Title, t.RefID), Expr: t.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, err := v.queryText()
		if err != nil {
			return nil, err
		}
		expr, err := variableSelector(q)
		if err != nil {
			return nil, fmt.Errorf("variable %q: %w", v.Name, err)
		}
		qs = append(qs, Query{Where: fmt.Sprintf("variable %q", v.Name), Expr: expr})
	}
	return qs, nil
}

// AllPanels returns the panels, each row followed by the panels it collapses.
func (d *Dashboard) AllPanels() []Panel {
	var all []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			all = append(all, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return all
}

func (v Variable) queryText() (string, error) {
	var s string
	if err := json.Unmarshal(v.Query, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(v.Query, &obj); err != nil {
		return "", fmt.Errorf("variable %q: query is neither a string nor an object with a query: %w", v.Name, err)
	}
	return obj.Query, nil
}

// labelValues is Grafana's label_values(selector, label) variable query; its selector is
// PromQL, its label is not.
var labelValues = regexp.MustCompile(`^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)

func variableSelector(q string) (string, error) {
	m := labelValues.FindStringSubmatch(q)
	if m == nil {
		return "", fmt.Errorf("query %q is not label_values(<metric selector>, <label>): a variable of any label across every metric could offer values no panel shows", q)
	}
	return m[1], nil
}

// Problems returns what is wrong with the dashboard: a panel without a title or a
// description, a panel with no query or an empty one, a query that does not parse, and
// every metric a query names that served does not hold.
func (d *Dashboard) Problems(served map[string]bool) []string {
	var problems []string
	for _, p := range d.AllPanels() {
		if p.Type == "row" {
			if strings.TrimSpace(p.Title) == "" {
				problems = append(problems, fmt.Sprintf("row %d has no title", p.ID))
			}
			continue
		}
		if strings.TrimSpace(p.Title) == "" {
			problems = append(problems, fmt.Sprintf("panel %d has no title", p.ID))
		}
		if strings.TrimSpace(p.Description) == "" {
			problems = append(problems, fmt.Sprintf("panel %q has no description saying what it answers", p.Title))
		}
		if len(p.Targets) == 0 {
			problems = append(problems, fmt.Sprintf("panel %q has no query", p.Title))
		}
	}
	qs, err := d.Queries()
	if err != nil {
		return append(problems, err.Error())
	}
	for _, q := range qs {
		names, err := MetricNames(q.Expr)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", q.Where, err))
			continue
		}
		if len(names) == 0 {
			problems = append(problems, fmt.Sprintf("%s: %q names no metric", q.Where, q.Expr))
		}
		for _, n := range names {
			if !served[n] {
				problems = append(problems, fmt.Sprintf("%s: metric %s is not served", q.Where, n))
			}
		}
	}
	return problems
}
