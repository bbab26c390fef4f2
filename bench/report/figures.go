// SPDX-License-Identifier: Apache-2.0

package report

import "strings"

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

// Section starts a section: the figures added after it are under title.
func (b *Figures) Section(title string) { b.section = title }

// Add adds one figure. A name indented by two spaces details the figure above it.
func (b *Figures) Add(name string, c Cells, target string) {
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

// Last is the figure added last, for a target or verdict that is not per column.
func (b *Figures) Last() *Figure { return &b.List[len(b.List)-1] }

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
