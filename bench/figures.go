// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"

	"github.com/binding-controller/binding-controller/bench/benchkit"
)

// tableBuilder collects the figures of the JSON report; the text table is printed
// from them (figureTable).
type tableBuilder struct {
	labels  []string
	figures []figure
	section string
}

func (b *tableBuilder) sectionRow(title string) { b.section = title }

// cells are one figure's value and verdict ("" when it has no target) per controller.
type cells struct{ values, verdicts []string }

func single(v string) cells { return cells{values: []string{v}} }

// row adds one figure: a value per controller, the target, and the verdicts. A name
// indented by two spaces details the figure above it.
func (b *tableBuilder) row(name string, c cells, target string) {
	f := figure{Section: b.section, Name: strings.TrimSpace(name), Detail: strings.HasPrefix(name, "  "),
		Values: map[string]string{}, Target: target}
	for i, l := range b.labels {
		if i < len(c.values) && c.values[i] != "" {
			f.Values[l] = c.values[i]
		}
		if i < len(c.verdicts) && c.verdicts[i] != "" {
			if f.Result == nil {
				f.Result = map[string]string{}
			}
			f.Result[l] = c.verdicts[i]
		}
	}
	b.figures = append(b.figures, f)
}

// figureTable lays out figures, a column per controller label, each section under its title.
func figureTable(labels []string, figures []figure) *benchkit.Table {
	t := &benchkit.Table{Header: append(append([]string{"figure"}, labels...), "target", "result")}
	section := ""
	for i, f := range figures {
		if i == 0 || f.Section != section {
			section = f.Section
			t.Section(section)
		}
		name := f.Name
		if f.Detail {
			name = "  " + name
		}
		row := []string{name}
		var verdicts []string
		for _, l := range labels {
			row = append(row, f.Values[l])
			if v := f.Result[l]; v != "" {
				verdicts = append(verdicts, v)
			}
		}
		t.Add(append(row, f.Target, strings.Join(verdicts, " / "))...)
	}
	return t
}

// each maps every controller's run of one load to a cell and a verdict.
func (b *tableBuilder) each(runs map[string]map[string]*runResult, load string, fn func(r *runResult) (string, string)) cells {
	values := make([]string, len(b.labels))
	verdicts := make([]string, len(b.labels))
	for i, l := range b.labels {
		r := runs[l][load]
		if r == nil {
			values[i] = "n/a"
			continue
		}
		values[i], verdicts[i] = fn(r)
	}
	return cells{values, verdicts}
}

// info drops the verdicts: the figure has no target.
func info(c cells) cells { return cells{values: c.values} }

func (rep *propagationReport) auditOn() bool {
	for _, rs := range rep.Runs {
		for _, r := range rs {
			if len(r.Requests.Audit) > 0 {
				return true
			}
		}
	}
	return false
}
