// SPDX-License-Identifier: Apache-2.0

package report

import (
	"strings"
	"testing"
)

func TestTablePrint(t *testing.T) {
	tab := &Table{Header: []string{"figure", "ctl", "target", "result"}}
	tab.Section("a long section title that must not widen the first column")
	tab.Add("Works/s", "1200", "≥ 0.90", "pass")
	tab.Add("  of which ÷", "3", "", "")
	var b strings.Builder
	tab.Print(&b)
	want := `figure        ctl   target  result
------        ---   ------  ------
— a long section title that must not widen the first column
Works/s       1200  ≥ 0.90  pass
  of which ÷  3
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
