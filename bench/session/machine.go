// SPDX-License-Identifier: Apache-2.0

package session

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"runtime"
	"slices"
	"strings"

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

// describeMachine collects Machine (the end load average is filled by Finish).
func describeMachine(ctx context.Context) Machine {
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

// flagValues returns every flag of fs with its value.
func flagValues(fs *flag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { out[f.Name] = f.Value.String() })
	return out
}

// printFlags writes the flags, one line, sorted.
func printFlags(w io.Writer, values map[string]string) {
	names := slices.Sorted(maps.Keys(values))
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("--%s=%q", n, values[n]))
	}
	fmt.Fprintf(w, "flags:   %s\n", strings.Join(parts, " "))
}
