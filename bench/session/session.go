// SPDX-License-Identifier: Apache-2.0

// Package session is what every benchmark subcommand starts from: the flags they share,
// the machine and the flags printed first (absolute times depend on both), a work
// directory, and the controller-manager built from this tree.
package session

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
	"unicode"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

// ErrUsage and ErrHelp end a subcommand whose flags were wrong or asked for help; the
// flag package has printed what to say.
var (
	ErrUsage = errors.New("usage")
	ErrHelp  = errors.New("help")
)

// Common holds the flags every subcommand has.
type Common struct {
	JSONPath    string
	manager     string
	managerArgs string
	keep        bool
}

// Register adds the common flags to fs; sub names the subcommand's default JSON file.
func (c *Common) Register(fs *flag.FlagSet, sub string) {
	fs.StringVar(&c.JSONPath, "json", filepath.Join("bench", "results", sub+".json"), "where to write the results as JSON (relative: to the repository root)")
	fs.StringVar(&c.manager, "manager", "", "controller-manager binary to measure (default: built from this tree into the work directory)")
	fs.StringVar(&c.managerArgs, "manager-args", "", "extra controller-manager flags, space-separated, appended to the defaults (e.g. \"--kube-api-qps=1000\")")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (controller logs, audit logs, kubeconfigs)")
}

// ManagerArgs are the --manager-args, split.
func (c *Common) ManagerArgs() []string { return strings.Fields(c.managerArgs) }

// Session is what every run starts from; reports embed it.
type Session struct {
	Machine Machine           `json:"machine"`
	Flags   map[string]string `json:"flags"`
	Started time.Time         `json:"started"`
	Dir     string            `json:"-"`
	Binary  string            `json:"-"`
	keep    bool
}

// Parse parses args into fs, printing usage on error.
func Parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(os.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: go -C bench run . %s [flags]\n", fs.Name())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ErrHelp
		}
		return ErrUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments %q\n", fs.Args())
		return ErrUsage
	}
	return nil
}

// Start prints the machine and flags, makes the work directory and builds the manager
// (or takes --manager). The caller ends the session with Finish, also on error.
func (c *Common) Start(ctx context.Context, fs *flag.FlagSet, sub string) (*Session, error) {
	s := &Session{Machine: describeMachine(ctx), Flags: map[string]string{}, Started: time.Now(), keep: c.keep}
	var flags []string // VisitAll visits them sorted
	fs.VisitAll(func(f *flag.Flag) {
		s.Flags[f.Name] = f.Value.String()
		flags = append(flags, fmt.Sprintf("--%s=%q", f.Name, f.Value))
	})
	m := s.Machine
	fmt.Printf("bench %s — %s\n", sub, s.Started.Format(time.RFC3339))
	fmt.Printf("machine: nproc=%d GOMAXPROCS=%d cpu=%q mem=%s kernel=%s\n", m.NProc, m.GOMAXPROCS, m.CPUModel, m.MemTotal, m.Kernel)
	fmt.Printf("go:      %s\ntree:    %s   load average at start: %s\n", m.GoVersion, m.Git, m.LoadAvgStart)
	fmt.Printf("flags:   %s\n", strings.Join(flags, " "))
	if m.NProc <= 2 {
		fmt.Println("note:    few cores — the API server, etcd, the controller and this program share them; read ratios, not absolute times")
	}
	dir, err := os.MkdirTemp("", "bench-"+sub+"-")
	if err != nil {
		return s, err
	}
	s.Dir = dir
	if c.manager != "" {
		if s.Binary, err = filepath.Abs(c.manager); err != nil {
			return s, err
		}
		if _, err := os.Stat(s.Binary); err != nil {
			return s, fmt.Errorf("--manager: %w", err)
		}
	} else {
		fmt.Println("building cmd/binding-controller-manager from this tree (CGO_ENABLED=0)…")
		if s.Binary, err = localplane.BuildManager(ctx, dir); err != nil {
			return s, err
		}
	}
	fmt.Printf("work dir: %s\n\n", dir)
	return s, nil
}

// Finish removes the work directory unless --keep.
func (s *Session) Finish() {
	if s == nil || s.Dir == "" {
		return
	}
	if s.keep {
		fmt.Printf("work directory kept: %s\n", s.Dir)
		return
	}
	_ = os.RemoveAll(s.Dir)
}

// Logf prints a progress line with the time of day.
func Logf(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// SplitList splits a comma-separated flag value, dropping blanks.
func SplitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

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
	m := Machine{NProc: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), LoadAvgStart: loadAvg(),
		CPUModel: procField("/proc/cpuinfo", "model name"), MemTotal: procField("/proc/meminfo", "MemTotal"),
		GoVersion: command(ctx, "go", "version"), Git: command(ctx, "git", "rev-parse", "--short", "HEAD")}
	if kernel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(kernel))
	}
	if m.GoVersion == "" {
		m.GoVersion = runtime.Version()
	}
	if m.Git != "" && command(ctx, "git", "status", "--porcelain", "--untracked-files=no") != "" {
		m.Git += " (modified tree)"
	}
	return m
}

// Finish records the load average at the end.
func (m *Machine) Finish() { m.LoadAvgEnd = loadAvg() }

// loadAvg is the 1, 5 and 15 minute load averages.
func loadAvg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

// procField is the value of the first "key: value" line of the /proc file path.
func procField(path, key string) string {
	data, _ := os.ReadFile(path)
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// command is what name args prints in the repository, trimmed; "" when it fails.
func command(ctx context.Context, name string, args ...string) string {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = envtestutil.RepoRoot()
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}
