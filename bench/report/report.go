// SPDX-License-Identifier: Apache-2.0

// Package report is what a benchmark run prints and writes: the figures, each a value
// per controller with its target and verdict, laid out as an aligned table and written
// as JSON, and the formats of the numbers in them.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
)

// Table is an aligned text table.
type Table struct {
	Header []string
	Rows   [][]string
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// Section appends a row holding only a title.
func (t *Table) Section(title string) { t.Rows = append(t.Rows, []string{"— " + title}) }

// Print writes the table aligned by text/tabwriter, two spaces between columns; section
// titles span the whole width and do not widen the first column.
func (t *Table) Print(w io.Writer) {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	dashes := make([]string, len(t.Header))
	for i, h := range t.Header {
		dashes[i] = strings.Repeat("-", utf8.RuneCountInString(h))
	}
	rows := append([][]string{t.Header, dashes}, t.Rows...)
	sections := map[int]string{}
	for i, r := range rows {
		if len(r) == 1 && strings.HasPrefix(r[0], "— ") {
			// A line of empty cells holds the title's place without ending the columns.
			sections[i] = r[0]
			r = make([]string, len(t.Header))
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush()
	for i, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if title, ok := sections[i]; ok {
			line = title
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

// Print prints a scenario's table and notes to standard output, then writes rep as
// indented JSON to path (relative: to the repository root, where bench/results is) and
// says where, as "<name> results: <path>".
func Print(name string, t *Table, notes []string, rep any, path string) error {
	fmt.Println()
	t.Print(os.Stdout)
	fmt.Println()
	for _, n := range notes {
		fmt.Println("note: " + n)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(envtestutil.RepoRoot(), path)
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = os.WriteFile(path, append(data, '\n'), 0o644)
	}
	if err == nil {
		fmt.Printf("%s results: %s\n", name, path)
	}
	return err
}

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of values: with fewer
// than 100 values, p99 is the maximum.
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(values))
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// Median is the median of xs, NaN when there are none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

// Dur formats a duration for tables: 3 significant digits.
func Dur(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + Dur(-d)
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	case d < time.Minute:
		return fmt.Sprintf("%.3gs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// Bytes formats a byte count in MiB or KiB.
func Bytes[T ~float64 | ~int64 | ~int](v T) string {
	n := float64(v)
	switch {
	case math.IsNaN(n):
		return "n/a"
	case math.Abs(n) >= 1<<20:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	case math.Abs(n) >= 1<<10:
		return fmt.Sprintf("%.1f KiB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f B", n)
}

// Verdict is "pass" or "MISS".
func Verdict(ok bool) string {
	if ok {
		return "pass"
	}
	return "MISS"
}

// Num is a float64 that marshals NaN and infinities ("no value") as JSON null.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}
