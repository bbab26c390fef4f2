// SPDX-License-Identifier: Apache-2.0

package benchkit

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/prometheus/procfs"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
)

// Machine describes where a run happened; with 2 cores and other builds around, the
// load average matters as much as the core count.
type Machine struct {
	NProc        int    `json:"nproc"`
	GOMAXPROCS   int    `json:"gomaxprocs"`
	CPUModel     string `json:"cpuModel"`
	MemTotal     string `json:"memTotal"`
	Kernel       string `json:"kernel"`
	GoVersion    string `json:"goVersion"`
	Git          string `json:"git"`
	LoadAvgStart string `json:"loadAvgStart"`
	LoadAvgEnd   string `json:"loadAvgEnd,omitempty"`
}

// DescribeMachine collects Machine (the end load average is filled by Finish).
func DescribeMachine(ctx context.Context) Machine {
	m := Machine{NProc: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	m.GoVersion = strings.TrimSpace(command(ctx, "go", "version"))
	if m.GoVersion == "" {
		m.GoVersion = runtime.Version()
	}
	commit := strings.TrimSpace(command(ctx, "git", "rev-parse", "--short", "HEAD"))
	if commit != "" {
		if strings.TrimSpace(command(ctx, "git", "status", "--porcelain", "--untracked-files=no")) != "" {
			commit += " (modified tree)"
		}
	}
	m.Git = commit
	m.LoadAvgStart = loadAvg()
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return m
	}
	if release, err := fs.SysctlStrings("kernel/osrelease"); err == nil && len(release) > 0 {
		m.Kernel = release[0]
	}
	if cpus, err := fs.CPUInfo(); err == nil && len(cpus) > 0 {
		m.CPUModel = cpus[0].ModelName
	}
	if mem, err := fs.Meminfo(); err == nil && mem.MemTotal != nil {
		m.MemTotal = fmt.Sprintf("%d kB", *mem.MemTotal)
	}
	return m
}

// Finish records the load average at the end.
func (m *Machine) Finish() { m.LoadAvgEnd = loadAvg() }

func loadAvg() string {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return ""
	}
	load, err := fs.LoadAvg()
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%.2f %.2f %.2f", load.Load1, load.Load5, load.Load15)
}

func command(ctx context.Context, name string, args ...string) string {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = envtestutil.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// Print writes the machine lines.
func (m Machine) Print(w io.Writer) {
	fmt.Fprintf(w, "machine: nproc=%d GOMAXPROCS=%d cpu=%q mem=%s kernel=%s\n", m.NProc, m.GOMAXPROCS, m.CPUModel, m.MemTotal, m.Kernel)
	fmt.Fprintf(w, "go:      %s\n", m.GoVersion)
	fmt.Fprintf(w, "tree:    %s   load average at start: %s\n", m.Git, m.LoadAvgStart)
}

// FlagValues returns every flag of fs with its value.
func FlagValues(fs *flag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { out[f.Name] = f.Value.String() })
	return out
}

// PrintFlags writes the flags, one line, sorted.
func PrintFlags(w io.Writer, values map[string]string) {
	names := slices.Sorted(maps.Keys(values))
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("--%s=%q", n, values[n]))
	}
	fmt.Fprintf(w, "flags:   %s\n", strings.Join(parts, " "))
}

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

// WriteJSON writes v, indented, to path (directories are created). A relative path is
// taken relative to the repository root.
func WriteJSON(path string, v any) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(envtestutil.RepoRoot(), path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, append(data, '\n'), 0o644)
}

// PrintResults prints a scenario's table and notes to standard output, then writes rep
// as JSON to jsonPath and says where, as "<name> results: <path>".
func PrintResults(name string, t *Table, notes []string, rep any, jsonPath string) error {
	fmt.Println()
	t.Print(os.Stdout)
	fmt.Println()
	for _, n := range notes {
		fmt.Println("note: " + n)
	}
	path, err := WriteJSON(jsonPath, rep)
	if err != nil {
		return err
	}
	fmt.Printf("%s results: %s\n", name, path)
	return nil
}

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of values: with fewer
// than 100 values, p99 is the maximum.
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	if rank < 1 {
		rank = 1
	}
	return s[rank-1]
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
