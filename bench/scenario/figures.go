// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"fmt"
	"math"
	"time"

	"github.com/binding-controller/binding-controller/bench/report"
)

// figures are a report's figures, a value per column (a side) in one unit (value). With
// two columns a third holds the first ÷ the second. A value missing (NaN) is n/a.
type figures struct{ report.Figures }

func newFigures(columns ...string) *figures {
	f := &figures{report.Figures{Labels: columns}}
	if len(columns) == 2 {
		f.Labels = append(f.Labels, columns[0]+" ÷ "+columns[1])
	}
	return f
}

// add adds a figure; a name indented by two spaces details the one above it.
func (f *figures) add(name, unit string, values ...float64) { f.held(name, unit, "", nil, values...) }

// held adds a figure each of whose values is held against target: ok says whether a
// value meets it.
func (f *figures) held(name, unit, target string, ok func(float64) bool, values ...float64) {
	c := report.Cells{}
	for _, v := range values {
		c.Values = append(c.Values, value(unit, v))
		if ok != nil {
			c.Verdicts = append(c.Verdicts, report.Verdict(!math.IsNaN(v) && ok(v)))
		}
	}
	if len(values) == 2 && len(f.Labels) == 3 {
		c.Values = append(c.Values, ratio(values[0]/values[1]))
	}
	f.Add(name, c, target)
}

// value formats v in unit, "s" for a duration or a format such as "%.1f MiB"; n/a when
// there is none.
func value(unit string, v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case unit == "s":
		return report.Dur(time.Duration(v * float64(time.Second)))
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

func mib(b int64) float64 { return float64(b) / (1 << 20) }
