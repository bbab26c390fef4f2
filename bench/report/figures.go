// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Figure is one figure of a report: a value per column (a controller, or a run), the
// target it is held against and each column's verdict.
type Figure struct {
	Section string `json:"section"`
	Name    string `json:"name"`
	// Detail marks a figure that details the one before it (indented in the table).
	Detail bool              `json:"detail,omitempty"`
	Values map[string]string `json:"values"`
	Target string            `json:"target,omitempty"`
	Result map[string]string `json:"result,omitempty"`
}

// Cells are one figure's value and verdict ("" when it has no target) per column.
type Cells struct{ Values, Verdicts []string }

// Figures collects the figures of a report, in sections, a value per column label; the
// JSON holds List, and the text table is printed from it.
type Figures struct {
	Labels  []string
	List    []Figure
	section string
}

// NewFigures collects figures of columns; with two, a third holds the first ÷ the second.
func NewFigures(columns ...string) *Figures {
	f := &Figures{Labels: columns}
	if len(columns) == 2 {
		f.Labels = append(f.Labels, columns[0]+" ÷ "+columns[1])
	}
	return f
}

// Section starts a section: the figures added after it are under title.
func (b *Figures) Section(title string) { b.section = title }

// Add adds a figure, a value per column in unit (Value). A name indented by two spaces
// details the figure above it.
func (b *Figures) Add(name, unit string, values ...float64) { b.Held(name, unit, "", nil, values...) }

// Held adds a figure each of whose values is held against target: ok says whether a
// value meets it. A value missing (NaN) misses it.
func (b *Figures) Held(name, unit, target string, ok func(float64) bool, values ...float64) {
	c := Cells{}
	for _, v := range values {
		c.Values = append(c.Values, Value(unit, v))
		if ok != nil {
			c.Verdicts = append(c.Verdicts, Verdict(!math.IsNaN(v) && ok(v)))
		}
	}
	if len(values) == 2 && len(b.Labels) == 3 {
		c.Values = append(c.Values, ratio(values[0]/values[1]))
	}
	b.AddCells(name, c, target)
}

// AddCells adds a figure as it is to be printed.
func (b *Figures) AddCells(name string, c Cells, target string) {
	f := Figure{Section: b.section, Name: strings.TrimSpace(name), Detail: strings.HasPrefix(name, "  "),
		Values: map[string]string{}, Target: target}
	for i, l := range b.Labels {
		if i < len(c.Values) && c.Values[i] != "" {
			f.Values[l] = c.Values[i]
		}
		if i < len(c.Verdicts) && c.Verdicts[i] != "" {
			if f.Result == nil {
				f.Result = map[string]string{}
			}
			f.Result[l] = c.Verdicts[i]
		}
	}
	b.List = append(b.List, f)
}

// Table lays out the figures, a column per label, each section under its title.
func (b *Figures) Table() *Table {
	t := &Table{Header: append(append([]string{"figure"}, b.Labels...), "target", "result")}
	for i, f := range b.List {
		if i == 0 || f.Section != b.List[i-1].Section {
			t.Section(f.Section)
		}
		name := f.Name
		if f.Detail {
			name = "  " + name
		}
		row := []string{name}
		var verdicts []string
		for _, l := range b.Labels {
			row = append(row, f.Values[l])
			if v := f.Result[l]; v != "" {
				verdicts = append(verdicts, v)
			}
		}
		t.Add(append(row, f.Target, strings.Join(verdicts, " / "))...)
	}
	return t
}

// Value formats v in unit, "s" for a duration or a format such as "%.1f MiB"; n/a when
// there is none.
func Value(unit string, v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case unit == "s":
		return Dur(time.Duration(v * float64(time.Second)))
	}
	return fmt.Sprintf(unit, v)
}

// ratio formats the first column ÷ the second: n/a when either is missing or the
// second is 0.
func ratio(r float64) string {
	switch {
	case math.IsNaN(r) || math.IsInf(r, 0):
		return "n/a"
	case r >= 100:
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.2g×", r)
}
