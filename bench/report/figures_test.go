// SPDX-License-Identifier: Apache-2.0

package report

import (
	"encoding/json"
	"strings"
	"testing"
)

// A figure's JSON has a value per column label, a verdict only where there is one, and
// Detail for a name indented under the one before; the table prints them back.
func TestFiguresKeepValuesVerdictsAndDetail(t *testing.T) {
	f := &Figures{Labels: []string{"a", "b"}}
	f.Section("s")
	f.Add("ratio", Cells{Values: []string{"0.9", "1.2"}, Verdicts: []string{"pass", ""}}, "≤ 1")
	f.Add("  of which", Cells{Values: []string{"3", ""}}, "")
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
