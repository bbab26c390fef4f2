// SPDX-License-Identifier: Apache-2.0

package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A figure's JSON has a value per column label, a verdict only where there is one, and
// Detail for a name indented under the one before; the table prints them back.
func TestFiguresKeepValuesVerdictsAndDetail(t *testing.T) {
	f := &Figures{Labels: []string{"a", "b"}}
	f.Section("s")
	f.AddCells("ratio", Cells{Values: []string{"0.9", "1.2"}, Verdicts: []string{"pass", ""}}, "≤ 1")
	f.AddCells("  of which", Cells{Values: []string{"3", ""}}, "")
	data, err := json.Marshal(f.List)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"section":"s","name":"ratio","values":{"a":"0.9","b":"1.2"},"target":"≤ 1","result":{"a":"pass"}},` +
		`{"section":"s","name":"of which","detail":true,"values":{"a":"3"}}]`
	if string(data) != want {
		t.Errorf("JSON\n%s\nwant\n%s", data, want)
	}
	var b strings.Builder
	f.Table().Print(&b)
	if !strings.Contains(b.String(), "\n  of which  3") || !strings.Contains(b.String(), "≤ 1     pass") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for _, c := range []struct{ p, want float64 }{{50, 3}, {99, 5}, {1, 1}} {
		if got := Percentile(xs, c.p); got != c.want {
			t.Errorf("Percentile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("Median = %v, want 2.5", got)
	}
}

func TestValuesAndRatiosPrintInTheirUnits(t *testing.T) {
	for _, c := range []struct {
		unit string
		v    float64
		want string
	}{
		{"s", 12.345, "12.3s"}, {"s", 125, "2m5s"}, {"%.3g ms", 0.4567, "0.457 ms"}, {"%.1f MiB", 1234.56, "1234.6 MiB"}, {"%.0f/s", 812.6, "813/s"},
		{"%.0f", 41, "41"}, {"%.2f", 2.345, "2.35"}, {"s", math.NaN(), "n/a"}, {"%.0f", math.Inf(1), "n/a"},
	} {
		if got := Value(c.unit, c.v); got != c.want {
			t.Errorf("Value(%q, %v) = %q, want %q", c.unit, c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		a, b float64
		want string
	}{{1, 4, "0.25×"}, {30, 10, "3×"}, {0, 7, "0×"}, {1500, 10, "150×"}, {3, 0, "n/a"}, {0, 0, "n/a"}, {math.NaN(), 1, "n/a"}} {
		f := NewFigures("a", "b")
		f.Add("x", "%.0f", c.a, c.b)
		if got := f.List[0].Values["a ÷ b"]; got != c.want {
			t.Errorf("ratio of %v ÷ %v = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

// A figure held against a target has a verdict per column; a missing value misses it.
func TestHeldFiguresCarryTheirVerdicts(t *testing.T) {
	f := NewFigures("ours")
	f.Section("s")
	zero := func(v float64) bool { return v == 0 }
	f.Held("writes", "%.0f", "0", zero, 0)
	f.Held("reads", "%.0f", "0", zero, math.NaN())
	f.Add("  detail", "%.3f", 1)
	var b strings.Builder
	f.Table().Print(&b)
	want := `figure    ours   target  result
------    ----   ------  ------
— s
writes    0      0       pass
reads     n/a    0       MISS
  detail  1.000
`
	if b.String() != want {
		t.Errorf("table\n%s\nwant\n%s", b.String(), want)
	}
}
